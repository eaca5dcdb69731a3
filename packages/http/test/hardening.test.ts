// Issue 11, over the whole in-process API: alias hijack, owner-only metadata, nothing reported
// failed after it committed, and the malformed inputs the fuzzer found.
import {mkdtempSync, rmSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {suite} from 'uvu';
import * as assert from 'uvu/assert';
import {Engine} from '@gristlite/core';
import {createApiHandler, type Handler} from '../src/index.js';

const s = suite('hardening');
let dir = '';
let engine: Engine;
let handle: Handler;
const keys: Record<string, string> = {};
const homes: Record<string, number> = {};

interface Res { status: number, json: any }

async function call(as: string, method: string, url: string, body?: unknown, headers: Record<string, string> = {}): Promise<Res> {
  const h: Record<string, string> = {host: '127.0.0.1', authorization: `Bearer ${keys[as]}`, ...headers};
  let raw: Uint8Array | undefined;
  if (body !== undefined) {
    h['content-type'] = 'application/json';
    raw = new TextEncoder().encode(typeof body === 'string' ? body : JSON.stringify(body));
  }
  const res = await handle({method, url, headers: h, body: raw});
  const text = typeof res.body === 'string' ? res.body : Buffer.from(res.body as Uint8Array).toString();
  let json: unknown = text;
  try { json = text ? JSON.parse(text) : undefined; } catch { /* not JSON */ }
  return {status: res.status, json};
}

function ok(res: Res): any {
  assert.is(res.status, 200, JSON.stringify(res.json));
  return res.json;
}

function err(res: Res, status: number, match: RegExp | string): void {
  assert.is(res.status, status, JSON.stringify(res.json));
  if (typeof match === 'string') { assert.is(res.json.error, match); } else { assert.match(res.json.error, match); }
}

async function newDoc(as: string, name = 'Doc', wid = homes[as]): Promise<string> {
  return ok(await call(as, 'POST', `/api/workspaces/${wid}/docs`, {name}));
}

s.before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gl-hardening-'));
  engine = await Engine.open({dataDir: dir});
  handle = createApiHandler(engine, {env: {}, onError: (e) => { throw e; }});
  for (const name of ['owner', 'attacker', 'editor']) {
    const user = await engine.home.ensureUser(`${name}@example.com`, name);
    keys[name] = await engine.home.setApiKey(user.id);
    const ws = ok(await call(name, 'GET', `/api/orgs/docs-${user.id}/workspaces`));
    homes[name] = ws.find((w: any) => w.name === 'Home').id;
  }
});

s.after(async () => {
  await engine.close();
  rmSync(dir, {recursive: true, force: true});
});

s('issue 11.2: a urlId held by another user\'s document cannot be taken, seen or not', async () => {
  const victim = await newDoc('owner', 'Budget');
  ok(await call('owner', 'PATCH', `/api/docs/${victim}`, {urlId: 'budget'}));
  const mine = await newDoc('attacker', 'Trap');
  // The attacker cannot see the victim's document: same 400 as Grist's "urlId already in use".
  err(await call('attacker', 'GET', '/api/docs/budget'), 403, /access/i);
  err(await call('attacker', 'PATCH', `/api/docs/${mine}`, {urlId: 'budget'}), 400, 'urlId already in use');
  err(await call('attacker', 'POST', `/api/workspaces/${homes.attacker}/docs`, {name: 'T', urlId: 'budget'}), 400, 'urlId already in use');
  err(await call('attacker', 'PATCH', `/api/docs/${mine}`, {urlId: victim}), 400, 'urlId already in use as document id');
  // The victim's former alias is not free for someone else either.
  ok(await call('owner', 'PATCH', `/api/docs/${victim}`, {urlId: 'budget-2025'}));
  err(await call('attacker', 'PATCH', `/api/docs/${mine}`, {urlId: 'budget'}), 400, 'urlId already in use');
  // Even shared with the owner, the attacker's document never answers to the owner's alias.
  const owner = (await engine.store.getUserByEmail('owner@example.com'))!;
  ok(await call('attacker', 'PATCH', `/api/docs/${mine}/access`, {delta: {users: {'owner@example.com': 'owners'}}}));
  assert.is(ok(await call('owner', 'GET', '/api/docs/budget')).id, victim);
  assert.is(ok(await call('owner', 'GET', `/api/orgs/docs-${owner.id}`)).id, (await engine.store.getPersonalOrg(owner.id))!.id);
  ok(await call('owner', 'POST', '/api/docs/budget/tables/Table1/records', {records: [{fields: {A: 'mine'}}]}));
  const rows = ok(await call('owner', 'GET', `/api/docs/${victim}/tables/Table1/records`)).records;
  assert.equal(rows.map((r: any) => r.fields.A), ['mine'], 'the write landed in the owner\'s document');
  assert.equal(ok(await call('attacker', 'GET', `/api/docs/${mine}/tables/Table1/records`)).records, []);
  // The owner's own new document may take back the owner's former alias (Grist's alias reuse).
  const again = await newDoc('owner', 'Budget v2');
  ok(await call('owner', 'PATCH', `/api/docs/${again}`, {urlId: 'budget'}));
  assert.is(ok(await call('owner', 'GET', '/api/docs/budget')).id, again);
});

s.run();
