import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {floatRepr, hashKey, pyEquals, repr, PyTuple, PyDict, truthy, bindArgs, PyException} from '../src/values.js';

test('floatRepr follows Python repr', () => {
  assert.is(floatRepr(6), '6.0');
  assert.is(floatRepr(0.1 + 0.2), '0.30000000000000004');
  assert.is(floatRepr(1e16), '1e+16');
  assert.is(floatRepr(1e-5), '1e-05');
  assert.is(floatRepr(0.0001), '0.0001');
  assert.is(floatRepr(-0), '-0.0');
  assert.is(floatRepr(Infinity), 'inf');
  assert.is(floatRepr(123456789012345.6), '123456789012345.6');
});

test('equality and hashing agree across int, float and bool', () => {
  assert.ok(pyEquals(1n, 1.0));
  assert.ok(pyEquals(true, 1n));
  assert.not.ok(pyEquals('1', 1n));
  assert.is(hashKey(1n), hashKey(1.0));
  assert.is(hashKey(true), hashKey(1n));
  assert.is.not(hashKey(1.5), hashKey(1n));
  const d = new PyDict();
  d.set(1n, 'a');
  assert.is(d.get(1.0), 'a');
  assert.ok(pyEquals(new PyTuple([1n, 'x']), new PyTuple([1.0, 'x'])));
  assert.throws(
    () => hashKey([1n]),
    (e: unknown) => e instanceof PyException && e.type === 'TypeError',
  );
});

test('repr and truthiness', () => {
  assert.is(repr([1n, 2.5, 'a', null, true]), "[1, 2.5, 'a', None, True]");
  assert.is(repr(new PyTuple([1n])), '(1,)');
  assert.is(repr("it's"), '"it\'s"');
  assert.not.ok(truthy(0.0));
  assert.ok(truthy(NaN));
  assert.not.ok(truthy(''));
  assert.not.ok(truthy(new PyTuple([])));
});

test('bindArgs binds positional, keyword, defaults and rest', () => {
  assert.equal(bindArgs('f', ['a', 'b', '*rest'], [1n, 2n, 3n], null), {a: 1n, b: 2n, rest: [3n]});
  assert.equal(bindArgs('f', ['a', 'b'], [1n], {b: 'x'}), {a: 1n, b: 'x'});
  assert.equal(bindArgs('f', ['a', 'b'], [1n], null, {b: null}), {a: 1n, b: null});
  assert.throws(() => bindArgs('f', ['a'], [], null), /missing required/);
  assert.throws(() => bindArgs('f', ['a'], [1n], {z: 1n}), /unexpected keyword/);
});

test.run();
