// Ref, RefList and Id (cells/coltypes/ref.ts).
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {columnType, convertValue as conv} from '../src/cells/coltypes/index.js';
import type {CellValue} from '../src/cells/types.js';
import {dumps} from '../src/cells/marshal.js';
import {makeTypedFormatter} from '../src/cells/types.js';

const US = {locale: 'en-US'};
/** A lookup that records what the parser asked for. */
function lookupCtx() {
  const asked: Array<[string[], string, boolean]> = [];
  return {
    asked,
    ctx: {
      settings: US,
      refLookup: (texts: string[], raw: string, list: boolean): CellValue => {
        asked.push([texts, raw, list]);
        return ['l', list ? ['L', ...texts] : texts[0], {column: 'Name', raw}];
      },
    },
  };
}

test('SQL types and defaults; the target table parsed from the type', () => {
  const ref = columnType('Ref:People');
  assert.equal(
    [ref.sqlType, ref.sqlDefault, ref.defaultValue, ref.target, ref.displayTarget],
    ['INTEGER', '0', 0, 'People', 'People'],
  );
  const refList = columnType('RefList:People');
  assert.equal([refList.sqlType, refList.sqlDefault, refList.target, refList.isList], ['TEXT', 'NULL', 'People', true]);
  assert.equal([columnType('Id').sqlType, columnType('Id').sqlDefault], ['INTEGER', '0']);
  assert.is(columnType('Ref').target, null);
});

test('typed form (SPEC 7.3)', () => {
  assert.equal(makeTypedFormatter('Ref:Table1')!(1), ['R', 'Table1', 1]);
  assert.equal(makeTypedFormatter('Ref:Table1')!(0), ['R', 'Table1', 0]);
  assert.equal(makeTypedFormatter('RefList:Table1')!(['L', 2, 1]), ['r', 'Table1', [2, 1]]);
  assert.equal(makeTypedFormatter('RefList:Table1')!(null), ['r', 'Table1', []]);
  assert.is(makeTypedFormatter('Id'), null);
});

test('encode/decode: lists of ids as JSON text', () => {
  const rl = columnType('RefList:T');
  const enc = rl.encoder('TEXT');
  assert.is(enc(['L', 1, 2]), '[1,2]');
  assert.equal(enc(['L', 'a']), dumps(['L', 'a']));
  assert.equal(rl.decoder()('[3]'), ['L', 3]);
  assert.is(rl.decoder()('[oops'), '[oops');
  for (const v of [['L', 1, 2], ['L', 'a'], 'alt', null]) {
    assert.equal(rl.decoder()(enc(v as any)), v, JSON.stringify(v));
  }
  const ref = columnType('Ref:T');
  for (const v of [3, 0, 'alt']) {
    assert.equal(ref.decoder()(ref.encoder('INTEGER')(v)), v);
  }
});

test('convert: ids only (no floats or digit strings); a list stands for its first id', () => {
  assert.is(conv('Ref:T', 3), 3);
  assert.is(conv('Ref:T', ['L', 4]), 4);
  assert.is(conv('Ref:T', null), 0);
  assert.is(conv('Ref:T', '3'), '3');
  assert.is(conv('Ref:T', 2.5), '2.5');
  assert.is(conv('Ref:T', ['R', 'T', 7]), 7);
  assert.equal(conv('RefList:T', ['L', 1, 2]), ['L', 1, 2]);
  assert.equal(conv('RefList:T', '[3, 4]'), ['L', 3, 4]);
  assert.is(conv('RefList:T', ['L']), null);
  assert.is(conv('RefList:T', 'abc'), 'abc');
  assert.is(conv('Id', 5), 5);
});

test('parse: display texts become lookups in the visible column', () => {
  const {asked, ctx} = lookupCtx();
  assert.is(columnType('Ref:T').parser({}, ctx)!(''), 0);
  assert.equal(columnType('Ref:T').parser({}, ctx)!('Ann'), ['l', 'Ann', {column: 'Name', raw: 'Ann'}]);
  assert.equal(columnType('RefList:T').parser({}, ctx)!('Ann, "B, C"'), [
    'l',
    ['L', 'Ann', 'B, C'],
    {column: 'Name', raw: 'Ann, "B, C"'},
  ]);
  assert.equal(columnType('RefList:T').parser({}, ctx)!('["Ann", 2]'), [
    'l',
    ['L', 'Ann', '2'],
    {column: 'Name', raw: '["Ann", 2]'},
  ]);
  assert.is(columnType('RefList:T').parser({}, ctx)!('  '), null);
  assert.equal(
    asked.map(([, , list]) => list),
    [false, true, true],
  );
  assert.is(columnType('Id').parser({}, ctx), null);
});

test('format: row ids as Table[id], or through the visible column; alt-text as its text', () => {
  const fmt = (type: string, v: any, visible?: (v: CellValue) => string) =>
    columnType(type).formatter({}, US, visible)(v);
  assert.is(fmt('Ref:T', 3), 'T[3]');
  assert.is(fmt('Ref:T', 0), '');
  assert.is(fmt('RefList:T', ['L', 3, 4]), 'T[3], T[4]');
  assert.is(fmt('Ref:T', 'Ann', String), 'Ann');
  assert.is(fmt('RefList:T', ['L', 'Ann', 'B, C'], String), 'Ann, "B, C"');
  assert.is(fmt('Ref:T', ['E', 'InvalidTypedValue', 'Ref', 'hello']), 'hello');
  assert.is(columnType('Id').formatter({tableId: 'People'}, US)(2), 'People[2]');
});

test('table schema: integer and array', () => {
  assert.equal(columnType('Ref:T').schemaType({}, 'en-US'), {type: 'integer'});
  assert.equal(columnType('RefList:T').schemaType({}, 'en-US'), {type: 'array'});
});

test.run();
