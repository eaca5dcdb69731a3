// The Python value layer (issue 26 §5): one implementation of Python's text of numbers and of zone
// offsets, used by the document layer and the formula engine alike. Every number -> text path
// gives what CPython and Grist give.
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {GristDoc} from '../src/doc/index.js';
import {zoneOffsetSeconds} from '@gristlite/formula';
import {formatMoment} from '@gristlite/formula';
import {IanaTz} from '@gristlite/formula';
import {repr} from '@gristlite/formula';
import {floatRepr, formatG15, pyNumberStr} from '@gristlite/formula';
import {strRepr} from '@gristlite/formula';
import {zoneOffsetMs} from '@gristlite/formula';
import {tempPath} from './doc-helpers.js';

/**
 * [value, repr(v), "%.15g" % v, Grist's Text.do_convert(v)] as CPython 3.11 computed them once
 * (the third column with sandbox/grist/usertypes.py's Text.do_convert copied into the generator:
 * integral floats below 2**53 as ints, else "%.15g", str() for inf and nan).
 */
const FLOATS: Array<[number, string, string, string]> = [
  [1e20, '1e+20', '1e+20', '1e+20'],
  [1e-5, '1e-05', '1e-05', '1e-05'],
  [0.1, '0.1', '0.1', '0.1'],
  [123456789.0, '123456789.0', '123456789', '123456789'],
  [123456789.5, '123456789.5', '123456789.5', '123456789.5'],
  [Infinity, 'inf', 'inf', 'inf'],
  [-Infinity, '-inf', '-inf', '-inf'],
  [NaN, 'nan', 'nan', 'nan'],
  [-0, '-0.0', '-0', '0'],
  [0.0, '0.0', '0', '0'],
  [1e16, '1e+16', '1e+16', '1e+16'],
  [1000000000000000.0, '1000000000000000.0', '1e+15', '1000000000000000'],
  [9999999999999998.0, '9999999999999998.0', '1e+16', '1e+16'],
  [0.0001, '0.0001', '0.0001', '0.0001'],
  [0.00012345, '0.00012345', '0.00012345', '0.00012345'],
  [1.5e300, '1.5e+300', '1.5e+300', '1.5e+300'],
  [5e-324, '5e-324', '4.94065645841247e-324', '4.94065645841247e-324'],
  [9007199254740992.0, '9007199254740992.0', '9.00719925474099e+15', '9.00719925474099e+15'],
  [9007199254740994.0, '9007199254740994.0', '9.00719925474099e+15', '9.00719925474099e+15'],
  [0.30000000000000004, '0.30000000000000004', '0.3', '0.3'],
  [0.3333333333333333, '0.3333333333333333', '0.333333333333333', '0.333333333333333'],
  [-1e22, '-1e+22', '-1e+22', '-1e+22'],
  [3000000000.0, '3000000000.0', '3000000000', '3000000000'],
  [100.0, '100.0', '100', '100'],
  [7.0, '7.0', '7', '7'],
  [1.2345678901234567e19, '1.2345678901234567e+19', '1.23456789012346e+19', '1.23456789012346e+19'],
  [1.7976931348623157e308, '1.7976931348623157e+308', '1.79769313486232e+308', '1.79769313486232e+308'],
  [2.5e-7, '2.5e-07', '2.5e-07', '2.5e-07'],
  [1234.5678, '1234.5678', '1234.5678', '1234.5678'],
  [-0.5, '-0.5', '-0.5', '-0.5'],
];

test('repr/str of floats and "%.15g" are CPython\'s, on both sides', () => {
  for (const [v, r, g] of FLOATS) {
    assert.is(floatRepr(v), r, `repr(${v})`);
    assert.is(repr(v), r, `formula repr(${v})`);
    assert.is(pyNumberStr(v, true), r, `str(${v}) of a float cell`);
    assert.is(formatG15(v), g, `"%.15g" % ${v}`);
  }
  // Held as a Python int: printed in full (Int cells; API numbers within 32 bits).
  assert.is(pyNumberStr(1e20, false), '100000000000000000000');
  assert.is(pyNumberStr(7), '7');
  assert.is(pyNumberStr(3000000000), '3000000000.0');
  assert.is(strRepr("it's"), '"it\'s"');
  assert.is(strRepr('a\n\'"'), "'a\\n\\'\"'");
});

test("every number -> text path of a document gives Grist's text", () => {
  // SQLite keeps neither NaN (NULL) nor the sign of -0.0: those two are for the functions above.
  const cases = FLOATS.filter(([v]) => !Number.isNaN(v) && !Object.is(v, -0));
  const doc = GristDoc.create(tempPath());
  try {
    doc.addTables([
      {
        id: 'T',
        columns: [
          {id: 'N', fields: {type: 'Numeric', isFormula: false}},
          {id: 'A', fields: {type: 'Any', isFormula: false}},
          {id: 'X', fields: {type: 'Text', isFormula: false}},
          {id: 'F', fields: {type: 'Text', isFormula: true, formula: '$N'}},
          {id: 'S', fields: {type: 'Text', isFormula: true, formula: 'str($N)'}},
          {id: 'P', fields: {type: 'Text', isFormula: true, formula: '"%s" % $N'}},
        ],
      },
    ]);
    doc.addRecords(
      'T',
      cases.map(([v]) => ({N: v, A: v, X: v})),
    );
    const text = cases.map(([, , , t]) => t);
    const reprs = cases.map(([, r]) => r);
    let cols = doc.fetchColumns('T');
    assert.equal(cols.X, text, 'a number written to a Text column');
    assert.equal(cols.F, text, 'a formula result converted to Text');
    assert.equal(cols.S, reprs, 'str() of a Numeric cell');
    assert.equal(cols.P, reprs, '"%s" % a Numeric cell');
    // Type changes convert the stored numbers as Grist's ModifyColumn does (Any holds them as
    // Grist's marshalling hands them over: floats, except 32-bit integers).
    doc.applyUserActions([
      ['ModifyColumn', 'T', 'N', {type: 'Text'}],
      ['ModifyColumn', 'T', 'A', {type: 'Text'}],
    ]);
    cols = doc.fetchColumns('T');
    assert.equal(cols.N, text, 'Numeric -> Text');
    assert.equal(cols.A, text, 'Any -> Text');
  } finally {
    doc.close();
  }
});

test('one zone computation: 29 February in a zone west of UTC', () => {
  // CPython: datetime(2020, 2, 29, 12, tzinfo=timezone.utc).astimezone(ZoneInfo('America/New_York'))
  // is 2020-02-29 07:00-05:00. Date.UTC(0, 1, 29) is 1 March 1900, which once put this day a day off.
  const at = Date.UTC(2020, 1, 29, 12);
  assert.is(zoneOffsetMs('America/New_York', at), -5 * 3_600_000);
  assert.is(zoneOffsetSeconds('America/New_York', at), -5 * 3600);
  assert.is(IanaTz.get('America/New_York').offsetAt(at), -5 * 3_600_000);
  assert.is(formatMoment(at, 'America/New_York', 'YYYY-MM-DD HH:mm Z'), '2020-02-29 07:00 -05:00');
  assert.is(zoneOffsetMs('Asia/Kolkata', Date.UTC(2024, 1, 29, 20)), 5.5 * 3_600_000);
  assert.is(zoneOffsetMs('No/Such_Zone', at), 0);
});

test.run();
