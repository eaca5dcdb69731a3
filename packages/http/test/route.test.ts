// Route matching and parameter helpers (Express defaults: case-insensitive, non-strict).
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {ApiError} from '@gristlite/core/internal';
import {compileRoute, flag, intParam, matchRoute, oneOf, type Route} from '../src/route.js';

const noop = async () => null;
const routes = (
  [
    {method: 'GET', path: '/api/orgs', summary: '', tag: 't', handler: noop},
    {method: 'GET', path: '/api/orgs/:oid', summary: '', tag: 't', handler: noop},
    {method: 'DELETE', path: '/api/orgs/:oid/:name', summary: '', tag: 't', handler: noop},
    {method: 'GET', path: '/api/docs/:docId/download/table-schema', summary: '', tag: 't', handler: noop},
    {method: 'GET', path: '/api/a.b', summary: '', tag: 't', handler: noop},
  ] as Route[]
).map(compileRoute);

const match = (method: string, path: string) => {
  const m = matchRoute(routes, method, path);
  return m ? [m.route.path, m.params] : null;
};

test('paths match case-insensitively, with or without a trailing slash', () => {
  assert.equal(match('GET', '/api/orgs'), ['/api/orgs', {}]);
  assert.equal(match('GET', '/api/orgs/'), ['/api/orgs', {}]);
  assert.equal(match('GET', '/API/Orgs'), ['/api/orgs', {}]);
  assert.equal(match('GET', '/api/ORGS/Nasa/'), ['/api/orgs/:oid', {oid: 'Nasa'}]);
  assert.equal(match('GET', '/api/Docs/abc/DOWNLOAD/Table-Schema'), [
    '/api/docs/:docId/download/table-schema',
    {docId: 'abc'},
  ]);
});

test('methods must match; params never span a slash; no partial matches', () => {
  assert.is(match('POST', '/api/orgs'), null);
  assert.is(match('GET', '/api/orgs/1/extra'), null);
  assert.is(match('GET', '/api/orgs//'), null);
  assert.is(match('GET', '/api/orgsx'), null);
  assert.is(match('GET', '/xapi/orgs'), null);
  assert.is(match('GET', '/api/orgs/1//'), null);
  assert.equal(match('DELETE', '/api/orgs/5/My%20Org'), ['/api/orgs/:oid/:name', {oid: '5', name: 'My Org'}]);
});

test('literal segments are not regular expressions', () => {
  assert.equal(match('GET', '/api/a.b'), ['/api/a.b', {}]);
  assert.is(match('GET', '/api/aXb'), null);
});

test('intParam reads like parseInt and names the parameter when it cannot', () => {
  assert.is(intParam('wid', '12'), 12);
  assert.is(intParam('wid', '12abc'), 12);
  assert.is(intParam('wid', '-3'), -3);
  for (const [value, shown] of [
    ['abc', 'abc'],
    ['', ''],
    [null, 'null'],
    [undefined, 'undefined'],
  ] as const) {
    try {
      intParam('attId', value);
      assert.unreachable();
    } catch (e) {
      assert.instance(e, ApiError);
      assert.is((e as ApiError).status, 400);
      assert.is((e as ApiError).message, `attId parameter cannot be understood as an integer: ${shown}`);
    }
  }
});

test('flag: 1, on, true, yes (any case) are affirmative; anything else is not', () => {
  const q = new URLSearchParams('a=1&b=ON&c=True&d=yes&e=0&f=no&g=&h=2');
  assert.equal(
    ['a', 'b', 'c', 'd'].map((k) => flag(q, k)),
    [true, true, true, true],
  );
  assert.equal(
    ['e', 'f', 'g', 'h', 'missing'].map((k) => flag(q, k)),
    [false, false, false, false, false],
  );
});

test('oneOf: the default when absent, the value when allowed, Grist wording otherwise', () => {
  const allowed = ['first', 'none', 'all'] as const;
  assert.is(oneOf('onmany', null, allowed, 'first'), 'first');
  assert.is(oneOf('onmany', '', allowed, 'first'), 'first');
  assert.is(oneOf('onmany', 'all', allowed, 'first'), 'all');
  assert.throws(
    () => oneOf('onmany', 'foo', allowed, 'first'),
    (e: ApiError) => e.status === 400 && e.message === 'onmany parameter foo should be one of first,none,all',
  );
});

test.run();
