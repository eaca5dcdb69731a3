// The Bool type (cells/coltypes/bool.ts).
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {columnType, convertValue as conv} from '../src/cells/coltypes/index.js';
import {dumps} from '../src/cells/marshal.js';

const US = {locale: 'en-US'};

test('SQL type and default', () => {
  const bool = columnType('Bool');
  assert.equal([bool.sqlType, bool.sqlDefault, bool.defaultValue], ['BOOLEAN', '0', false]);
});

test('encode/decode: booleans as 0/1 (BigInt where declared BLOB), numbers 0/1 marshalled', () => {
  const bool = columnType('Bool');
  assert.is(bool.encoder('BOOLEAN')(true), 1);
  assert.is(bool.encoder('BLOB')(false), 0n);
  assert.equal(bool.encoder('BOOLEAN')(1), dumps(1));
  assert.is(bool.decoder()(1), true);
  assert.is(bool.decoder()(dumps(0)), false);
  for (const v of [true, false, 1, 0, 'yes', null]) {
    assert.equal(bool.decoder()(bool.encoder('BOOLEAN')(v)), v === 1 ? true : v === 0 ? false : v, String(v));
  }
});

test('convert: truthiness and yes/no words', () => {
  assert.is(conv('Bool', null), false);
  assert.is(conv('Bool', 0), false);
  assert.is(conv('Bool', 2), true);
  assert.is(conv('Bool', 'Yes'), true);
  assert.is(conv('Bool', 'FALSE'), false);
  assert.is(conv('Bool', '1'), true);
  assert.is(conv('Bool', 'maybe'), 'maybe');
  assert.is(conv('Bool', ''), false);
});

test('parse: none (the engine converts the words)', () => {
  assert.is(columnType('Bool').parser({}, {settings: US, refLookup: () => null}), null);
});

test('format: true/false, other values as they are shown', () => {
  const format = columnType('Bool').formatter({}, US);
  assert.is(format(false), 'false');
  assert.is(format(null), '');
  assert.is(format(1), '1');
  assert.is(format(conv('Bool', 'yes')), 'true');
  assert.is(format('maybe'), 'maybe');
});

test('table schema: boolean with TRUE/FALSE', () => {
  assert.equal(columnType('Bool').schemaType({}, 'en-US'), {
    type: 'boolean',
    trueValue: ['TRUE'],
    falseValue: ['FALSE'],
  });
});

test.run();
