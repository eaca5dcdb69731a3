// The Text type (doc/coltypes/text.ts) and Choice, which converts and displays as Text.
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {columnType, convertValue as conv} from '../src/doc/coltypes/index.js';
import {dumps} from '../src/doc/marshal.js';

const US = {locale: 'en-US'};
const ctx = {
  settings: US,
  refLookup: () => {
    throw new Error('no lookups for text');
  },
};

test('SQL type and default', () => {
  assert.equal(
    [columnType('Text').sqlType, columnType('Text').sqlDefault, columnType('Text').defaultValue],
    ['TEXT', "''", ''],
  );
});

test('encode/decode: numbers and booleans marshalled, strings as they are', () => {
  const text = columnType('Text');
  const enc = text.encoder('TEXT');
  assert.is(enc(null), null);
  assert.is(enc('12'), '12');
  assert.equal(enc(5), dumps(5));
  assert.equal(enc(true), dumps(true));
  for (const v of ['x', '12', 5, true, null, ['L', 'a']]) {
    assert.equal(text.decoder()(enc(v as any)), v, JSON.stringify(v));
  }
});

test('convert: numbers as the engine prints them, booleans as Python', () => {
  assert.is(conv('Text', 2), '2');
  assert.is(conv('Text', 2.5), '2.5');
  assert.is(conv('Text', 1 / 3), '0.333333333333333');
  assert.is(conv('Text', 1e20), '100000000000000000000');
  assert.is(conv('Text', 1e-7), '1e-07');
  assert.is(conv('Text', true), 'True');
  assert.is(conv('Text', null), null);
  assert.is(conv('Text', ['L', 'a', 1]), "['a', 1]");
  // Floats from a Numeric column: integral ones print as integers below 2**53.
  assert.is(conv('Text', 2 ** 53, {sourceIsFloat: true}), '9.00719925474099e+15');
});

test('parse: text is never parsed', () => {
  assert.is(columnType('Text').parser({}, ctx), null);
});

test('format: strings as they are, other values as Grist shows them', () => {
  const format = columnType('Text').formatter({}, US);
  assert.is(format('a, b'), 'a, b');
  assert.is(format(null), '');
  assert.is(format(12), '12');
  assert.is(format(['L', 'a', 'b']), 'a, b');
  assert.is(format(conv('Text', 2.5) as string), '2.5');
});

test('table schema: string, uri for links', () => {
  assert.equal(columnType('Text').schemaType({}, 'en-US'), {type: 'string', format: 'default'});
  assert.equal(columnType('Text').schemaType({widget: 'HyperLink'}, 'en-US'), {type: 'string', format: 'uri'});
});

test.run();
