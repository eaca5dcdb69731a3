import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {dumps, loads} from '../src/doc/marshal.js';
import {formatG15, pyFloatRepr, pyStr} from '../src/doc/pyformat.js';
import {
  convertValue, makeDecoder, makeEncoder, makeTypedFormatter, sqlDefaultFor, sqlTypeFor,
} from '../src/doc/types.js';

const conv = convertValue;

test('SQL types and defaults per Grist type (SPEC 7.2), DateTime:<tz> is BLOB', () => {
  const cases: Array<[string, string, string]> = [
    ['Any', 'BLOB', 'NULL'], ['Text', 'TEXT', "''"], ['Choice', 'TEXT', "''"], ['Numeric', 'NUMERIC', '0'],
    ['Int', 'INTEGER', '0'], ['Bool', 'BOOLEAN', '0'], ['Date', 'DATE', 'NULL'], ['DateTime', 'DATETIME', 'NULL'],
    ['DateTime:UTC', 'BLOB', 'NULL'], ['Ref:T', 'INTEGER', '0'], ['RefList:T', 'TEXT', 'NULL'],
    ['Attachments', 'TEXT', 'NULL'], ['ChoiceList', 'TEXT', 'NULL'], ['ManualSortPos', 'NUMERIC', '1e999'],
    ['PositionNumber', 'NUMERIC', '1e999'], ['Id', 'INTEGER', '0'], ['Blob', 'BLOB', 'NULL'],
  ];
  for (const [type, sql, dflt] of cases) {
    assert.is(sqlTypeFor(type), sql, type);
    assert.is(sqlDefaultFor(type), dflt, type);
  }
});

test('engine conversion with noparse: Numeric float(), Int int(float()) in 32 bits (SPEC 7.4)', () => {
  assert.is(conv('Numeric', '12'), 12);
  assert.is(conv('Numeric', '1e3'), 1000);
  assert.is(conv('Numeric', true), 1);
  assert.is(conv('Numeric', ''), null);
  assert.is(conv('Numeric', '$55'), '$55');
  assert.is(conv('Numeric', ' 7 '), 7);
  assert.is(conv('Int', 1.7), 1);
  assert.is(conv('Int', -2.5), -2);
  assert.is(conv('Int', '12'), 12);
  assert.is(conv('Int', '1.9'), 1);
  assert.is(conv('Int', 3000000000), '3000000000');
  assert.is(conv('Int', null), null);
  assert.is(conv('Int', 'abc'), 'abc');
});

test('engine conversion: Bool', () => {
  assert.is(conv('Bool', null), false);
  assert.is(conv('Bool', 0), false);
  assert.is(conv('Bool', 2), true);
  assert.is(conv('Bool', 'Yes'), true);
  assert.is(conv('Bool', 'FALSE'), false);
  assert.is(conv('Bool', '1'), true);
  assert.is(conv('Bool', 'maybe'), 'maybe');
  assert.is(conv('Bool', ''), false);
});

test('engine conversion: Date and DateTime take numbers and ISO strings', () => {
  assert.is(conv('Date', '2024-02-14'), 1707868800);
  assert.is(conv('Date', '2024-02-14T10:00:00'), 1707868800);
  assert.is(conv('Date', '14/02/2024'), '14/02/2024');
  assert.is(conv('Date', ''), null);
  assert.is(conv('Date', 86400), 86400);
  assert.is(conv('Date', ['d', 86400]), 86400);
  assert.is(conv('DateTime:UTC', '1970-01-02 12:00'), 129600);
  assert.is(conv('DateTime:America/New_York', '2024-02-14 00:00:00'), 1707868800 + 5 * 3600);
  assert.is(conv('DateTime:America/New_York', '2024-07-14T00:00:00Z'), 1720915200);
  assert.is(conv('DateTime:UTC', 'noon'), 'noon');
});

test('engine conversion: Text formats numbers as the engine does, booleans as Python', () => {
  assert.is(conv('Text', 2), '2');
  assert.is(conv('Text', 2.5), '2.5');
  assert.is(conv('Text', 1 / 3), '0.333333333333333');
  assert.is(conv('Text', 1e20), '100000000000000000000');
  assert.is(conv('Text', 1e-7), '1e-07');
  assert.is(conv('Text', true), 'True');
  assert.is(conv('Text', null), null);
  assert.is(conv('Text', ['L', 'a', 1]), "['a', 1]");
});

test('engine conversion: ChoiceList, Ref, RefList', () => {
  assert.equal(conv('ChoiceList', '["a","b"]'), ['L', 'a', 'b']);
  assert.is(conv('ChoiceList', 'a'), 'a');
  assert.is(conv('ChoiceList', 'a,b'), 'a,b');
  assert.is(conv('ChoiceList', ''), null);
  assert.equal(conv('ChoiceList', ['L', 'x', 2]), ['L', 'x', '2']);
  assert.is(conv('Ref:T', 3), 3);
  assert.is(conv('Ref:T', ['L', 4]), 4);
  assert.is(conv('Ref:T', null), 0);
  assert.is(conv('Ref:T', '3'), '3');
  assert.is(conv('Ref:T', 2.5), '2.5');
  assert.equal(conv('RefList:T', ['L', 1, 2]), ['L', 1, 2]);
  assert.equal(conv('RefList:T', '[3, 4]'), ['L', 3, 4]);
  assert.is(conv('RefList:T', ['L']), null);
  assert.is(conv('RefList:T', 'abc'), 'abc');
  assert.equal(conv('Attachments', ['L', 7]), ['L', 7]);
});

test('errors are never converted', () => {
  for (const type of ['Numeric', 'Text', 'Bool', 'Ref:T', 'Date']) {
    assert.equal(conv(type, ['E', 'ZeroDivisionError']), ['E', 'ZeroDivisionError']);
  }
});

test('storage encoding (SPEC 7.2)', () => {
  const enc = (type: string, v: any, decl = type === 'Any' ? 'BLOB' : sqlTypeFor(type)) => makeEncoder(type, decl)(v);
  assert.is(enc('ChoiceList', ['L', 'a', 'b']), '["a","b"]');
  assert.is(enc('RefList:T', ['L', 1, 2]), '[1,2]');
  assert.is(enc('Attachments', ['L', 1]), '[1]');
  assert.equal(enc('ChoiceList', ['L', 'a', 1]), dumps(['L', 'a', 1]));
  assert.equal(enc('Any', ['E', 'X']), dumps(['E', 'X']));
  assert.is(enc('Text', null), null);
  // Strings in numeric columns: raw unless they could be read as a number.
  assert.is(enc('Numeric', 'abc'), 'abc');
  assert.equal(enc('Numeric', '12'), dumps('12'));
  assert.equal(enc('Numeric', ' x'), dumps(' x'));
  assert.equal(enc('Int', '-x'), dumps('-x'));
  // Numbers in text columns, NaN and -0 are marshalled.
  assert.equal(enc('Text', 5), dumps(5));
  assert.equal(enc('Numeric', NaN), dumps(NaN));
  assert.equal(enc('Numeric', -0), dumps(-0));
  assert.is(enc('Numeric', 1.5), 1.5);
  // Booleans raw only in Bool columns; 0/1 numbers in Bool columns are marshalled.
  assert.is(enc('Bool', true), 1);
  assert.equal(enc('Bool', 1), dumps(1));
  assert.equal(enc('Text', true), dumps(true));
  // Integers land as INTEGER in BLOB-declared columns.
  assert.is(enc('Any', 5), 5n);
  assert.is(enc('Any', 2.5), 2.5);
});

test('storage decoding reverses encoding', () => {
  const round = (type: string, v: any) => makeDecoder(type)(makeEncoder(type, sqlTypeFor(type))(v));
  const cases: Array<[string, any]> = [
    ['ChoiceList', ['L', 'a', 'b']], ['RefList:T', ['L', 1, 2]], ['Bool', true], ['Bool', false],
    ['Numeric', '12'], ['Text', 5], ['Any', ['E', 'ValueError']], ['Text', true], ['Numeric', -0],
    ['ChoiceList', ['L', 'a', 1]], ['Any', ['O', {a: 1}]], ['Text', 'x'], ['Date', 1707868800],
  ];
  for (const [type, v] of cases) { assert.equal(round(type, v), v, `${type} ${JSON.stringify(v)}`); }
  assert.is(makeDecoder('Bool')(1), true);
  assert.is(makeDecoder('Bool')(dumps(0)), false);
  assert.equal(makeDecoder('RefList:T')('[3]'), ['L', 3]);
  assert.is(makeDecoder('RefList:T')('[oops'), '[oops');
  assert.equal(loads(dumps(['L', 1])), ['L', 1]);
});

test('typed cell format (SPEC 7.3)', () => {
  assert.equal(makeTypedFormatter('Date')!(1707868800), ['d', 1707868800]);
  assert.equal(makeTypedFormatter('DateTime:America/New_York')!(1707868800), ['D', 1707868800, 'America/New_York']);
  assert.equal(makeTypedFormatter('Ref:Table1')!(1), ['R', 'Table1', 1]);
  assert.equal(makeTypedFormatter('Ref:Table1')!(0), ['R', 'Table1', 0]);
  assert.equal(makeTypedFormatter('RefList:Table1')!(['L', 2, 1]), ['r', 'Table1', [2, 1]]);
  assert.equal(makeTypedFormatter('RefList:Table1')!(null), ['r', 'Table1', []]);
  assert.equal(makeTypedFormatter('Attachments')!(['L', 1, 2]), ['r', '_grist_Attachments', [1, 2]]);
  assert.equal(makeTypedFormatter('ChoiceList')!(null), ['L']);
  assert.is(makeTypedFormatter('Int'), null);
  assert.is(makeTypedFormatter('Date')!('alt text'), 'alt text');
});

test('Python number formatting', () => {
  assert.is(pyFloatRepr(1.0), '1.0');
  assert.is(pyFloatRepr(0.0001), '0.0001');
  assert.is(pyFloatRepr(0.00001), '1e-05');
  assert.is(pyFloatRepr(1e16), '1e+16');
  assert.is(pyFloatRepr(123456789012345.6), '123456789012345.6');
  assert.is(pyFloatRepr(-2.5), '-2.5');
  assert.is(formatG15(1e16), '1e+16');
  assert.is(formatG15(0.1), '0.1');
  assert.is(formatG15(123.456), '123.456');
  assert.is(pyStr(['L', 'a', "it's"]), `['a', "it's"]`);
  assert.is(pyStr(['L', 'a'], {tuples: true}), "('a',)");
  assert.is(pyStr(5, {isFloat: true}), '5.0');
  assert.is(pyStr(['d', 1707868800]), '2024-02-14');
});

test.run();
