// True division with an int operand beyond 2**53 (the exactly scaled path): a zero numerator gave
// an endless loop (found by issue 43's formula-sql property test). Expected values from CPython 3.11.
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {pyrepr} from './formula-helpers.js';

const CASES: Array<[string, string]> = [
  ['0 / 9223372036854775809', '0.0'],
  ['0 / -9223372036854775809', '-0.0'],
  ['(2 - 2) / (2**63 + 5)', '0.0'],
  ['3 / -9223372036854775809', '-3.2526065174565133e-19'],
  ['-(2**70) / 3', '-3.935305402391371e+20'],
];

test('int / int with a big operand, zero numerator included, gives what CPython gives', () => {
  assert.equal(
    CASES.filter(([e, want]) => pyrepr(e) !== want).map(([e]) => `${e} -> ${pyrepr(e)}`),
    [],
  );
});

test.run();
