// Any, Blob and unknown type names (cells/coltypes/any.ts), and what the registry does for every type.
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {columnType, convertValue as conv} from '../src/cells/coltypes/index.js';
import {dumps} from '../src/cells/marshal.js';

const US = {locale: 'en-US'};

test('SQL types and defaults of every type (SPEC 7.2), DateTime:<tz> is BLOB', () => {
  const cases: Array<[string, string, string]> = [
    ['Any', 'BLOB', 'NULL'],
    ['Text', 'TEXT', "''"],
    ['Choice', 'TEXT', "''"],
    ['Numeric', 'NUMERIC', '0'],
    ['Int', 'INTEGER', '0'],
    ['Bool', 'BOOLEAN', '0'],
    ['Date', 'DATE', 'NULL'],
    ['DateTime', 'DATETIME', 'NULL'],
    ['DateTime:UTC', 'BLOB', 'NULL'],
    ['Ref:T', 'INTEGER', '0'],
    ['RefList:T', 'TEXT', 'NULL'],
    ['Attachments', 'TEXT', 'NULL'],
    ['ChoiceList', 'TEXT', 'NULL'],
    ['ManualSortPos', 'NUMERIC', '1e999'],
    ['PositionNumber', 'NUMERIC', '1e999'],
    ['Id', 'INTEGER', '0'],
    ['Blob', 'BLOB', 'NULL'],
    ['Reference', 'INTEGER', 'NULL'],
    ['Foo', 'BLOB', 'NULL'],
    ['constructor', 'BLOB', 'NULL'],
  ];
  for (const [type, sql, dflt] of cases) {
    assert.is(columnType(type).sqlType, sql, type);
    assert.is(columnType(type).sqlDefault, dflt, type);
  }
});

test('encode/decode: integers land as INTEGER in BLOB columns, other values marshalled', () => {
  const any = columnType('Any');
  const enc = any.encoder('BLOB');
  assert.is(enc(5), 5n);
  assert.is(enc(2.5), 2.5);
  assert.equal(enc(['E', 'X']), dumps(['E', 'X']));
  for (const v of [['E', 'ValueError'], ['O', {a: 1}], ['L', 1, 'a'], 'x', 2.5, true, null]) {
    assert.equal(any.decoder()(enc(v as any)), v, JSON.stringify(v));
  }
});

test('convert: values kept as they are; errors are never converted, whatever the type', () => {
  assert.equal(conv('Any', ['L', 1]), ['L', 1]);
  assert.is(conv('Blob', 'x'), 'x');
  for (const type of ['Numeric', 'Text', 'Bool', 'Ref:T', 'Date']) {
    assert.equal(conv(type, ['E', 'ZeroDivisionError']), ['E', 'ZeroDivisionError']);
  }
});

test('parse: none; format as Grist shows decoded values; table schema: string', () => {
  assert.is(columnType('Any').parser({}, {settings: US, refLookup: () => null}), null);
  const format = columnType('Any').formatter({}, US);
  assert.is(format(['L', 1, 'a']), '1, a');
  assert.is(format(['d', 86400]), '1970-01-02');
  assert.is(format(null), '');
  assert.is(columnType('Blob').formatter({}, US)('x,y'), 'x,y');
  assert.equal(columnType('Any').schemaType({}, 'en-US'), {type: 'string'});
});

test.run();
