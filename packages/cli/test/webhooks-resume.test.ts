// Issue 11 item 7: webhook events pending when the server is killed are delivered by the next
// server at start, with no request made to it.
import type {ChildProcess} from 'node:child_process';
import {createServer, type Server} from 'node:http';
import type {AddressInfo} from 'node:net';
import {mkdtempSync, rmSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {callApi, serve} from './servers.js';

const KEY = 'resume-test-key-0123456789';

const start = (dataDir: string, env: Record<string, string>) => serve(dataDir, KEY, {env});

async function api(base: string, method: string, path: string, body?: unknown) {
  const res = await callApi(base, KEY, method, path, body);
  if (res.status !== 200) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.json)}`);
  return res.json;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('events pending at kill -9 are delivered by the next server with no request made', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gl-resume-'));
  // A port for the receiver, closed while the first server runs (the receiver is down).
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  const port = (probe.address() as AddressInfo).port;
  await new Promise((r) => probe.close(r));
  const env = {GRISTLITE_ALLOWED_WEBHOOK_DOMAINS: `127.0.0.1:${port}`, GRIST_TRIGGER_WAIT_DELAY: '50'};
  const procs: ChildProcess[] = [];
  let receiver: Server | undefined;
  try {
    const first = await start(dir, env);
    procs.push(first.proc);
    const ws = await api(first.url, 'GET', '/o/docs/api/orgs/current/workspaces');
    const docs: string[] = [];
    for (let d = 0; d < 3; d++) {
      const doc = await api(first.url, 'POST', `/api/workspaces/${ws[0].id}/docs`, {name: `D${d}`});
      await api(first.url, 'POST', `/api/docs/${doc}/tables`, {tables: [{id: 'T', columns: [{id: 'A'}]}]});
      await api(first.url, 'POST', `/api/docs/${doc}/webhooks`, {
        webhooks: [{fields: {url: `http://127.0.0.1:${port}/hook`, tableId: 'T', eventTypes: ['add'], enabled: true}}],
      });
      docs.push(doc);
    }
    const expected = new Set<string>();
    for (let i = 0; i < 5; i++) {
      for (const [d, doc] of docs.entries()) {
        const records = [0, 1].map((j) => ({fields: {A: `d${d}-${i}-${j}`}}));
        await api(first.url, 'POST', `/api/docs/${doc}/tables/T/records`, {records});
        for (const r of records) expected.add(r.fields.A);
      }
    }
    await sleep(100); // delivery is failing (connection refused) and retrying
    first.proc.kill('SIGKILL');
    await new Promise((r) => first.proc.once('exit', r));

    const received: string[] = [];
    receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        for (const e of JSON.parse(Buffer.concat(chunks).toString())) received.push(e.A);
        res.end();
      });
    });
    await new Promise<void>((r) => receiver!.listen(port, '127.0.0.1', r));
    const second = await start(dir, env); // and no request is made to it
    procs.push(second.proc);
    const end = Date.now() + 60_000; // generous: a deadline, not a speed check
    while (new Set(received).size < expected.size && Date.now() < end) await sleep(20);
    assert.equal(new Set(received), expected, `${new Set(received).size} of ${expected.size} delivered`);
  } finally {
    for (const p of procs) p.kill('SIGKILL');
    receiver?.closeAllConnections();
    if (receiver) await new Promise((r) => receiver!.close(r));
    rmSync(dir, {recursive: true, force: true});
  }
});

test.run();
