// The Text type (cells/coltypes/text.ts) and Choice, which converts and displays as Text.
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {columnType, convertValue as conv} from '../src/cells/coltypes/index.js';
import {dumps} from '../src/cells/marshal.js';

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
  // API numbers reach Grist's engine as ints within 32 bits and as floats otherwise (its marshal),
  // so Text.do_convert prints these as floats: integral below 2**53, else "%.15g".
  assert.is(conv('Text', 1e20), '1e+20');
  assert.is(conv('Text', 1e16), '1e+16');
  assert.is(conv('Text', 123456789012345680000), '1.23456789012346e+20');
  assert.is(conv('Text', 3000000000), '3000000000');
  assert.is(conv('Text', 2 ** 53 + 2), '9.00719925474099e+15');
  assert.is(conv('Text', -0), '0');
  assert.is(conv('Text', 0.1), '0.1');
  assert.is(conv('Text', 1e-7), '1e-07');
  // Python ints (an Int column's values) print in full.
  assert.is(conv('Text', 1e20, {sourceIsFloat: false}), '100000000000000000000');
  // str() of list items and alt-text follow the same rule: str(1e20) is '1e+20', str(3e9) '3000000000.0'.
  assert.equal(conv('ChoiceList', ['L', 1e20, 3000000000, 7, -0]), ['L', '1e+20', '3000000000.0', '7', '-0.0']);
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
