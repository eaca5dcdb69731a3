// Issue 30 §3: a write with an Idempotency-Key, then kill -9 of the server, then the same request
// to a new server on the same data: the kept answer comes back byte for byte and nothing is applied
// twice (the key lives in the document, written in the write's own transaction).
import {mkdtempSync, rmSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {request} from 'undici';
import {callApi, serve, type Served} from './servers.js';

const KEY = 'idempotency-kill-key-0123456789';

async function keyed(base: string, path: string, key: string, body: unknown) {
  const res = await request(base + path, {
    method: 'POST',
    headers: {authorization: `Bearer ${KEY}`, 'content-type': 'application/json', 'idempotency-key': key},
    body: JSON.stringify(body),
  });
  return {
    status: res.statusCode,
    replayed: res.headers['idempotent-replayed'],
    bytes: Buffer.from(await res.body.arrayBuffer()),
  };
}

test('kill -9 between a keyed write and its repeat: the repeat answers the same bytes and applies nothing', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gl-idem-kill-'));
  const servers: Served[] = [];
  try {
    const first = await serve(dir, KEY);
    servers.push(first);
    const ws = (await callApi(first.url, KEY, 'GET', '/o/docs/api/orgs/current/workspaces')).json;
    const doc = (await callApi(first.url, KEY, 'POST', `/api/workspaces/${ws[0].id}/docs`, {name: 'K'})).json;
    const t = `/api/docs/${doc}/tables/Table1/records`;
    const body = {records: [{fields: {A: 'once'}}, {fields: {A: 'twice?'}}]};
    const answer = await keyed(first.url, t, 'retry-me', body);
    assert.is(answer.status, 200);
    const actions = [['AddRecord', 'Table1', null, {A: 'apply'}]];
    const applied = await keyed(first.url, `/api/docs/${doc}/apply`, 'apply-me', actions);
    assert.is(applied.status, 200);
    first.proc.kill('SIGKILL');
    await new Promise((r) => first.proc.once('exit', r));

    const second = await serve(dir, KEY);
    servers.push(second);
    const again = await keyed(second.url, t, 'retry-me', body);
    assert.is(again.status, 200);
    assert.equal(again.bytes, answer.bytes);
    assert.is(again.replayed, 'true');
    const applyAgain = await keyed(second.url, `/api/docs/${doc}/apply`, 'apply-me', actions);
    assert.equal(applyAgain.bytes, applied.bytes);
    const rows = (await callApi(second.url, KEY, 'GET', t)).json.records;
    assert.equal(
      rows.map((r: {fields: {A: string}}) => r.fields.A),
      ['once', 'twice?', 'apply'],
    );
  } finally {
    for (const s of servers) s.proc.kill('SIGKILL');
    rmSync(dir, {recursive: true, force: true});
  }
});

test.run();
