// Issue 23 §2: the root of @gristlite/core is the supported surface for embedders; gristlite's
// internals (clusters, WAL shipping, SQL workers, rule evaluation, storage) live under
// @gristlite/core/internal.
import {readFileSync} from 'node:fs';
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import * as root from '../src/index.js';
import * as internal from '../src/internal.js';

test('the root exports what embedders use, and no internals', () => {
  const names = Object.keys(root).sort();
  for (const needed of [
    'Engine',
    'Session',
    'SessionDoc',
    'DocTransaction',
    'Subscription',
    'ApiError',
    'EngineClosed',
  ]) {
    assert.ok(names.includes(needed), needed);
  }
  for (const inner of [
    'Cluster',
    'WalTail',
    'SqlPool',
    'RuleSet',
    'AccessContext',
    'GristDoc',
    'DocStorage',
    'ChangeFeeds',
  ]) {
    assert.not.ok(names.includes(inner), `${inner} is internal`);
  }
  // Values only (types vanish at run time): a few dozen, not the 260 names of before.
  assert.ok(names.length <= 25, `${names.length} runtime exports: ${names.join(', ')}`);
});

test('internal is a superset of the root, and the package exports both', () => {
  for (const [name, value] of Object.entries(root)) assert.is((internal as Record<string, unknown>)[name], value, name);
  assert.ok('Cluster' in internal && 'GristDoc' in internal);
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
  assert.equal(Object.keys(pkg.exports).sort(), ['.', './internal', './testing']);
});

test.run();
