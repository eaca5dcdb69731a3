import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {dumps, loads} from '../src/cells/marshal.js';
import {pyStr} from '../src/cells/pyformat.js';
import {floatRepr as pyFloatRepr, formatG15} from '../src/pyvalues/numbers.js';

// Each column type's storage, conversion, parsing and display: coltypes-*.test.ts.

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
  assert.equal(loads(dumps(['L', 1])), ['L', 1]);
});

test.run();
