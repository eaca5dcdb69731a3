// Issue 37: a regular expression in a formula cannot hold the server. V8's backtracking cannot be
// interrupted by the budget's clock, so patterns that may backtrack without bound run under a
// watchdog (formula/modules/re-guard.ts); the rest run directly, with the same answers.
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {rateRegex, runsDirectly, underWatchdog} from '../src/modules/re-guard.js';
import {translate} from '../src/modules/re.js';
import {pyrepr} from './formula-helpers.js';

const rate = (pyPattern: string) => rateRegex(translate(pyPattern, 0).source);

test('ratings: nested quantifiers, quantified alternations and backreferences are exponential', () => {
  for (const p of ['(a*)*b', '(\\w+\\s?)+$', '(a|aa)+c', '(a*)*\\1b', '(?P<x>a)(?P=x)', '((ab)*c)+', '(a+){2,5}']) {
    assert.ok(rate(p).exponential, p);
  }
  for (const p of ['a*b', '\\d+\\.\\d+', '(ab)+', '^\\w+@\\w+$', '\\bfoo\\b', '[a-z]{2,5}', '(?:abc){3}', 'x?y?']) {
    assert.not.ok(rate(p).exponential, p);
  }
  assert.is(rate('a*b').degree, 1);
  assert.is(rate('\\d+\\.\\d+').degree, 2);
  assert.is(rate('[a-z]{2,5}').degree, 0, 'a narrow range is a constant factor');
  assert.is(rate('[a-z]{2,500}').degree, 1, 'a wide range counts as unbounded');
});

test('which texts run directly: short ones for few quantifiers, never for exponential patterns', () => {
  assert.ok(runsDirectly(rate('\\s+'), 2000));
  assert.ok(runsDirectly(rate('\\d+\\.\\d+'), 100));
  assert.not.ok(runsDirectly(rate('\\d+\\.\\d+'), 100_000));
  assert.not.ok(runsDirectly(rate('(a*)*b'), 3));
});

test('catastrophic patterns end as TimeoutError within the cell budget', () => {
  const cases = [
    're.match("(a*)*b", "a" * 40)',
    're.search(r"(\\w+\\s?)+$", "a" * 60 + "!")',
    're.match(r"(a*)*\\1b", "a" * 40)',
    're.search(r"(?=(a+)+b)", "a" * 40)',
    're.findall(r"(x+x+)+y", "x" * 50)',
    're.sub(r"(a|aa)+c", "", "a" * 60)',
    're.search("a*a*a*a*a*a*b", "a" * 20000)',
  ];
  for (const c of cases) {
    const t0 = Date.now();
    assert.match(pyrepr(`import re\n${c}`, {maxCellMs: 100}), /^!TimeoutError: regular expression took too long/, c);
    // Generous: the watchdog fires at 100 ms; this only shows it is the budget that ended it.
    assert.ok(Date.now() - t0 < 5000, c);
  }
});

test('a catastrophic pattern is a budget error: IFERROR does not swallow it', () => {
  assert.match(pyrepr('import re\nIFERROR(re.match("(a*)*b", "a" * 40), 1)', {maxCellMs: 50}, true), /^!TimeoutError/);
});

test('guarded and direct matching give the same answers', () => {
  const texts = ['', 'abc', 'aaa bbb', 'foo@bar.com x@y.z', 'ab\nab\n', 'ééé 12.5 x', 'a'.repeat(300)];
  const patterns = ['a+', '(a|b)+', '(\\w+)@(\\w+)\\.(\\w+)', '^ab$', '(?P<n>\\d+)\\.(\\d*)', '\\b\\w', '(a*)*', '$'];
  for (const p of patterns) {
    const src = translate(p, 0).source;
    for (const t of texts) {
      for (const flags of ['dug', 'duy']) {
        const direct = new RegExp(src, flags);
        const guarded = new RegExp(src, flags);
        for (let i = 0; i < 3; i++) {
          const a = direct.exec(t);
          const b = underWatchdog(() => guarded.exec(t));
          assert.equal(b && [...b], a && [...a], `${p} on ${JSON.stringify(t)}`);
          assert.equal(b?.indices && [...b.indices], a?.indices && [...a.indices]);
          assert.equal(b?.groups, a?.groups);
          assert.is(guarded.lastIndex, direct.lastIndex);
          if (!a) break;
        }
      }
    }
  }
});

test('re functions under the guard keep their Python answers', () => {
  const cases: Array<[string, string]> = [
    ['re.findall(r"(a|b)+", "abab cab")', "['b', 'b']"],
    ['re.sub(r"(\\w+\\s?)+", "-", "hello big world")', "'-'"],
    ['re.split(r"(,\\s*)+", "a, b,,c")', "['a', ', ', 'b', ',', 'c']"],
    ['re.match(r"(?P<w>a+)(?P=w)", "aaaa").group("w")', "'aa'"],
    ['len(re.findall(r"\\d+\\.\\d+", "1.5 " * 30000))', '30000'],
  ];
  for (const [src, want] of cases) assert.is(pyrepr(`import re\n${src}`), want, src);
});

test('str.strip and TRIM are linear in the whitespace they keep (a regex "[ws]+$" was quadratic)', () => {
  // 200,000 spaces: 30 s with the quadratic regex, milliseconds in a loop. The bound is 100 times
  // what a linear strip needs on any machine; it tells the two apart, it is not a speed target.
  const src = '("x" + " " * 200000 + "x").strip(), TRIM("x" + " " * 200000 + "y")';
  const t0 = Date.now();
  assert.is(pyrepr(src, {maxCellMs: 5000}, true), `('x${' '.repeat(200000)}x', 'x y')`);
  assert.ok(Date.now() - t0 < 3000, `took ${Date.now() - t0} ms`);
});

test.run();
