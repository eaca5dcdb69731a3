// Choice and ChoiceList (cells/coltypes/choice.ts).
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {columnType, convertValue as conv} from '../src/cells/coltypes/index.js';
import {parseChoiceList} from '../src/cells/coltypes/choice.js';
import {dumps} from '../src/cells/marshal.js';
import {makeTypedFormatter} from '../src/cells/types.js';

const US = {locale: 'en-US'};
const ctx = {settings: US, refLookup: () => null};

test('SQL types, defaults, typed form', () => {
  assert.equal(
    [columnType('Choice').sqlType, columnType('Choice').sqlDefault, columnType('Choice').defaultValue],
    ['TEXT', "''", ''],
  );
  assert.equal([columnType('ChoiceList').sqlType, columnType('ChoiceList').sqlDefault], ['TEXT', 'NULL']);
  assert.ok(columnType('ChoiceList').isList);
  assert.equal(makeTypedFormatter('ChoiceList')!(null), ['L']);
  const typed = makeTypedFormatter('ChoiceList')!;
  assert.is.not(typed(null), typed(null), 'each null gets its own list');
  assert.is(columnType('ChoiceList'), columnType('ChoiceList'), 'one object per type string');
  assert.is(makeTypedFormatter('Choice'), null);
});

test('encode/decode: lists of strings as JSON text, anything else marshalled', () => {
  const cl = columnType('ChoiceList');
  const enc = cl.encoder('TEXT');
  assert.is(enc(['L', 'a', 'b']), '["a","b"]');
  assert.equal(enc(['L', 'a', 1]), dumps(['L', 'a', 1]));
  for (const v of [['L', 'a', 'b'], ['L', 'a', 1], ['L'], 'a', '[not json', null]) {
    assert.equal(cl.decoder()(enc(v as any)), v, JSON.stringify(v));
  }
  // Text that looks like JSON but is not a list of strings stays text.
  assert.is(cl.decoder()('[1,2]'), '[1,2]');
});

test('convert: ChoiceList from JSON text and lists; Choice as Text', () => {
  assert.equal(conv('ChoiceList', '["a","b"]'), ['L', 'a', 'b']);
  assert.is(conv('ChoiceList', 'a'), 'a');
  assert.is(conv('ChoiceList', 'a,b'), 'a,b');
  assert.is(conv('ChoiceList', ''), null);
  assert.equal(conv('ChoiceList', ['L', 'x', 2]), ['L', 'x', '2']);
  assert.is(conv('Choice', 2), '2');
  assert.is(conv('Choice', false), 'False');
});

test('parse: JSON or CSV, blanks dropped', () => {
  assert.equal(parseChoiceList('a, b\nc'), ['L', 'a', 'b', 'c']);
  assert.equal(parseChoiceList('["x", null, "", 2]'), ['L', 'x', '2']);
  assert.equal(parseChoiceList('"a,b",c'), ['L', 'a,b', 'c']);
  assert.is(parseChoiceList('  '), null);
  assert.is(parseChoiceList('[]'), null);
  assert.is(columnType('Choice').parser({}, ctx), null);
});

test('format: choices as CSV, quoted where needed, and back', () => {
  const format = columnType('ChoiceList').formatter({}, US);
  assert.is(format(['L', 'x']), 'x');
  assert.is(format(['L', 'a,b', 'c']), '"a,b", c');
  assert.is(format(null), '');
  const parse = columnType('ChoiceList').parser({}, ctx)!;
  for (const v of [
    ['L', 'x', 'y'],
    ['L', 'a,b', 'c'],
  ]) {
    assert.equal(parse(format(v)), v);
  }
  assert.is(columnType('Choice').formatter({}, US)('x'), 'x');
});

test('table schema: string and array with the choices', () => {
  assert.equal(columnType('Choice').schemaType({choices: ['a']}, 'en-US'), {
    type: 'string',
    constraints: {enum: ['a']},
  });
  assert.equal(columnType('ChoiceList').schemaType({choices: ['a']}, 'en-US'), {
    type: 'array',
    constraints: {enum: ['a']},
  });
});

test.run();
