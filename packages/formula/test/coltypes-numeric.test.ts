// The Numeric, Int and position types (cells/coltypes/numeric.ts): storage, conversion, parsing, display.
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {columnType, convertValue as conv} from '../src/cells/coltypes/index.js';
import {parseNumber} from '../src/cells/coltypes/numeric.js';
import {dumps} from '../src/cells/marshal.js';

const US = {locale: 'en-US'};
const ctx = {
  settings: US,
  refLookup: () => {
    throw new Error('no lookups for numbers');
  },
};
const fmt = (type: string, options: object, v: any) => columnType(type).formatter(options as any, US)(v);

test('SQL types and defaults', () => {
  assert.equal([columnType('Numeric').sqlType, columnType('Numeric').sqlDefault], ['NUMERIC', '0']);
  assert.equal([columnType('Int').sqlType, columnType('Int').sqlDefault], ['INTEGER', '0']);
  for (const type of ['ManualSortPos', 'PositionNumber']) {
    assert.equal(
      [columnType(type).sqlType, columnType(type).sqlDefault, columnType(type).defaultValue],
      ['NUMERIC', '1e999', Infinity],
    );
  }
  assert.is(columnType('Numeric').defaultValue, 0);
  assert.ok(columnType('Numeric').holdsFloats);
  assert.not.ok(columnType('Int').holdsFloats);
  assert.is(columnType('Int').typed, null);
});

test('encode/decode: strings raw unless SQLite could read them as a number; NaN and -0 marshalled', () => {
  const enc = (type: string, v: any) => columnType(type).encoder(columnType(type).sqlType)(v);
  assert.is(enc('Numeric', 'abc'), 'abc');
  assert.equal(enc('Numeric', '12'), dumps('12'));
  assert.equal(enc('Numeric', ' x'), dumps(' x'));
  assert.equal(enc('Int', '-x'), dumps('-x'));
  assert.equal(enc('Numeric', NaN), dumps(NaN));
  assert.equal(enc('Numeric', -0), dumps(-0));
  assert.is(enc('Numeric', 1.5), 1.5);
  assert.equal(enc('Numeric', true), dumps(true));
  const round = (type: string, v: any) => columnType(type).decoder()(enc(type, v));
  for (const v of ['12', -0, 1.5, 'abc', NaN, null]) {
    assert.equal(round('Numeric', v), v, String(v));
  }
  for (const v of [3, -7, '1e3']) {
    assert.equal(round('Int', v), v, String(v));
  }
});

test('convert with noparse: Numeric float(), Int int(float()) in 32 bits (SPEC 7.4)', () => {
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
  // Out of 32 bits: alt-text. Grist's marshal hands such an API number to its engine as a float,
  // so the text is str(3000000000.0); a Python int (an Int column's value) prints in full.
  assert.is(conv('Int', 3000000000), '3000000000.0');
  assert.is(conv('Int', 3000000000, {sourceIsFloat: false}), '3000000000');
  assert.is(conv('Int', null), null);
  assert.is(conv('Int', 'abc'), 'abc');
  assert.is(conv('ManualSortPos', null), Infinity);
  assert.is(conv('PositionNumber', '2.5'), 2.5);
  // Alt-text from a float column prints as Python floats do.
  assert.is(conv('Int', 3e9, {sourceIsFloat: true}), '3000000000.0');
});

test('parse: currency, grouping, percent, parentheses (noparse off)', () => {
  assert.is(parseNumber('$4', US)?.value, 4);
  assert.is(parseNumber('12', US)?.value, 12);
  assert.is(parseNumber('(1,234.50)', US)?.value, -1234.5);
  assert.is(parseNumber('12%', US)?.value, 0.12);
  assert.is(parseNumber('-$5', US)?.value, -5);
  assert.is(parseNumber('1e3', US)?.value, 1000);
  assert.is(parseNumber('12,34', US), null, 'bad grouping');
  assert.is(parseNumber('abc', US), null);
  assert.is(parseNumber('', US), null);
  assert.is(parseNumber('0x10', US), null);
  assert.is(parseNumber('€7', {locale: 'fr-FR'})?.value, 7);
  assert.is(parseNumber('1 234,5', {locale: 'fr-FR'})?.value, 1234.5);
  // The column's parser: text that does not parse stays text; the column's currency counts.
  const parse = columnType('Numeric').parser({}, ctx)!;
  assert.is(parse('$1,000'), 1000);
  assert.is(parse('n/a'), 'n/a');
  assert.is(columnType('Int').parser({currency: 'EUR'}, ctx)!('€5'), 5);
  assert.is(columnType('ManualSortPos').parser({}, ctx), null);
});

test('format: numbers by their options, Int with no decimals minimum only', () => {
  assert.is(fmt('Numeric', {}, 0.1 + 0.2), '0.3');
  assert.is(fmt('Numeric', {}, 1e21), '1000000000000000000000');
  assert.is(fmt('Numeric', {decimals: 2}, 1), '1.00');
  assert.is(fmt('Numeric', {maxDecimals: 0}, 2.5), '3');
  assert.is(fmt('Numeric', {numMode: 'currency', currency: 'JPY'}, 1234.5), '¥1,235');
  assert.is(fmt('Numeric', {numSign: 'parens'}, 5), ' 5 ');
  assert.is(fmt('Numeric', {numSign: 'parens'}, -5), '(5)');
  assert.is(fmt('Numeric', {}, 'abc'), 'abc');
  assert.is(fmt('Numeric', {}, null), '');
  assert.is(columnType('Numeric').formatter({numMode: 'currency'}, {locale: 'fr-FR'})(1234.5), '1\u202f234,50\u00a0€');
  assert.is(fmt('Int', {}, 12.7), '12.7'); // Grist's Int format only sets a minimum of 0 decimals
  assert.is(fmt('Int', {numMode: 'decimal'}, 1234567), '1,234,567');
});

test('parse and format round trip through the same options', () => {
  const options = {numMode: 'currency', decimals: 2};
  const parse = columnType('Numeric').parser(options, ctx)!;
  const format = columnType('Numeric').formatter(options, US);
  for (const text of ['$1,234.50', '-$0.25', '$0.00']) {
    assert.is(format(parse(text)), text);
  }
});

test('table schema: number and integer with the locale separators', () => {
  assert.equal(columnType('Numeric').schemaType({numMode: 'decimal'}, 'de-DE'), {
    type: 'number',
    bareNumber: true,
    groupChar: '.',
    decimalChar: ',',
  });
  assert.equal(columnType('Int').schemaType({}, 'en-US'), {type: 'integer', bareNumber: false, groupChar: ','});
});

test.run();
