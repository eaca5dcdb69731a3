// Issue 17 on loopback: `gristlite serve` workers with private data directories share documents
// through S3 (s3rver here) and PostgreSQL placement. Forwarding is signed, a crashed holder is
// replaced at once, a stalled one when its lease ends, and no acknowledged write is lost.
// (The same with network namespaces, cuts and many faults: netns-e2e.test.ts.)
import {spawnSync, type ChildProcess} from 'node:child_process';
import {existsSync, mkdtempSync, readdirSync, rmSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import pg from 'pg';
import {request} from 'undici';
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {waitFor} from '@gristlite/core/testing';
import {MAIN, PG_URL, callApi, pgReachable, serve, withSchema, type Served} from './servers.js';

const KEY = 'd'.repeat(40);
const LEASE = 1500;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const dir = mkdtempSync(join(tmpdir(), 'gl-cluster-'));
const schema = `gl_cl_${process.pid}_${Date.now().toString(36)}`;
const procs: ChildProcess[] = [];
let s3: {close(): Promise<void>} | null = null;
let env: Record<string, string> = {};

/**
 * Starts s3rver and sets `env` when PostgreSQL answers. Called by the test, not by a `before` hook:
 * uvu 0.5 swallows an error thrown by a hook, and under CI an unreachable PostgreSQL must fail.
 */
async function setup(): Promise<boolean> {
  if (!(await pgReachable('several-machine (S3 + PostgreSQL) test'))) return false;
  // s3rver ships no types; this is all the test uses of it.
  const {default: S3rver} = (await import('s3rver' as string)) as {
    default: new (o: object) => {run(): Promise<{port: number}>; close(): Promise<void>};
  };
  const server = new S3rver({
    port: 0,
    address: '127.0.0.1',
    directory: join(dir, 's3'),
    silent: true,
    configureBuckets: [{name: 'gl-docs'}],
  });
  const {port} = await server.run();
  s3 = server;
  env = {
    GRISTLITE_HOME_URL: withSchema(PG_URL, schema),
    GRISTLITE_DOC_STORE: 's3://gl-docs/test',
    GRISTLITE_S3_ENDPOINT: `http://127.0.0.1:${port}`,
    AWS_ACCESS_KEY_ID: 'S3RVER',
    AWS_SECRET_ACCESS_KEY: 'S3RVER',
    AWS_REGION: 'us-east-1',
    GRISTLITE_LEASE_MSEC: String(LEASE),
    GRISTLITE_SNAPSHOT_MSEC: '200',
    GRISTLITE_METRICS: '1',
  };
  return true;
}

test.after(async () => {
  for (const p of procs) p.kill('SIGKILL');
  await s3?.close();
  if (env.GRISTLITE_HOME_URL) {
    const c = new pg.Client({connectionString: PG_URL});
    await c.connect();
    await c.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`);
    await c.end();
  }
  rmSync(dir, {recursive: true, force: true});
});

async function worker(name: string): Promise<Served> {
  const w = await serve(join(dir, name), KEY, {env});
  procs.push(w.proc);
  return w;
}

const api = (base: string, method: string, path: string, body?: unknown) => callApi(base, KEY, method, path, body);
const add = (base: string, docId: string, A: string) =>
  api(base, 'POST', `/api/docs/${docId}/tables/Table1/records`, {records: [{fields: {A}}]});
const values = async (base: string, docId: string) =>
  ((await api(base, 'GET', `/api/docs/${docId}/tables/Table1/records`)).json.records as {fields: {A: string}}[]).map(
    (r) => r.fields.A,
  );

/** Generous: how long a takeover may take here is a liveness deadline, not a speed check (bench C1-C8). */
const DEADLINE = 60_000;

/** Retries a write until it is acknowledged (fresh values each try; returns the acknowledged one). */
async function addUntilAcked(base: string, docId: string, prefix: string, ms = DEADLINE) {
  const t0 = Date.now();
  for (let i = 0; Date.now() - t0 < ms; i++) {
    const r = await add(base, docId, `${prefix}-${i}`).catch(() => null);
    if (r?.status === 200) return {value: `${prefix}-${i}`, ms: Date.now() - t0, res: r};
    await sleep(50);
  }
  throw new Error(`no write acknowledged through ${base} within ${ms} ms`);
}

/** Runs one statement on the deployment's PostgreSQL schema. */
async function pgRun(sql: string, params: unknown[] = []): Promise<pg.QueryResult> {
  const c = new pg.Client({connectionString: env.GRISTLITE_HOME_URL.replace(/[?&]schema=[^&]*/, '')});
  await c.connect();
  try {
    return await c.query(sql.replaceAll('$schema', pg.escapeIdentifier(schema)), params);
  } finally {
    await c.end();
  }
}

test('workers with private disks: forwarded and signed, failover after kill -9 and SIGSTOP, nothing acknowledged lost', async () => {
  if (!(await setup())) return;
  const a = await worker('a');
  const b = await worker('b');
  const orgs = (await api(a.url, 'GET', '/api/orgs')).json;
  const ws = (await api(a.url, 'GET', `/api/orgs/${orgs[0].id}/workspaces`)).json[0].id;
  const docId = (await api(b.url, 'POST', `/api/workspaces/${ws}/docs`, {name: 'shared'})).json;
  const acked: string[] = [];

  // Created through B: B holds it; A forwards, and says so.
  const first = await add(a.url, docId, 'first');
  assert.is(first.status, 200);
  acked.push('first');
  assert.is(first.headers['x-gristlite-forwarded-to'], b.url);
  assert.is(first.headers['x-gristlite-worker'], b.url);
  assert.is(first.headers['x-gristlite-epoch'], '1');

  // The holder trusts only a header signed with the deployment's secret.
  const forged = await request(`${b.url}/api/docs/${docId}/tables/Table1/records`, {
    headers: {'x-gristlite-internal': 'e30.AAAA'},
  });
  assert.is(forged.statusCode, 401);
  await forged.body.text();

  for (let i = 0; i < 10; i++) {
    assert.is((await add(i % 2 ? a.url : b.url, docId, `w${i}`)).status, 200);
    acked.push(`w${i}`);
  }

  // kill -9 of the holder: its PostgreSQL session ends with it, A takes over at once. "At once"
  // is shown without a clock: the lease is pushed an hour ahead first, so only the session check
  // (D46) can free the document within the deadline.
  b.proc.kill('SIGKILL');
  await new Promise((r) => b.proc.once('exit', r));
  await pgRun(
    `UPDATE $schema.gristlite_placement SET lease_until = clock_timestamp() + interval '1 hour' WHERE doc_id = $1`,
    [docId],
  );
  const afterKill = await addUntilAcked(a.url, docId, 'after-kill');
  acked.push(afterKill.value);
  assert.is(afterKill.res.headers['x-gristlite-worker'], a.url);
  assert.is(afterKill.res.headers['x-gristlite-epoch'], '2');
  const metrics = await (await request(`${a.url}/metrics`)).body.text();
  assert.match(metrics, /gristlite_cluster_takeovers_total 1\b/);
  assert.match(metrics, /gristlite_cluster_log_bytes \d+/);

  // B again, with its disk wiped: it forwards to A.
  rmSync(join(dir, 'b'), {recursive: true, force: true});
  const b2 = await worker('b');
  // Until acknowledged: on a loaded machine the first forward may find A busy (503, retried).
  const viaB2 = await addUntilAcked(b2.url, docId, 'via-b2');
  acked.push(viaB2.value);
  assert.is(viaB2.res.headers['x-gristlite-forwarded-to'], a.url);

  // SIGSTOP of the holder (A): B2 waits at most about a lease, then takes over.
  a.proc.kill('SIGSTOP');
  const afterStop = await addUntilAcked(b2.url, docId, 'after-stop');
  acked.push(afterStop.value);
  assert.is(afterStop.res.headers['x-gristlite-worker'], b2.url);
  a.proc.kill('SIGCONT');
  // Woken up, A is no longer the holder: its write goes to B2, never to its stale copy.
  const stale = await addUntilAcked(a.url, docId, 'woken');
  acked.push(stale.value);
  assert.is(stale.res.headers['x-gristlite-worker'], b2.url);

  const got = await values(a.url, docId);
  assert.equal(await values(b2.url, docId), got);
  for (const v of acked) assert.is(got.filter((x) => x === v).length, 1, `${v} once`);

  // Snapshots reach the store; deleting the document removes them and its placement.
  const objects = join(dir, 's3', 'gl-docs', 'test', 'docs', docId);
  const recorded = async () =>
    (await pgRun('SELECT snapshot_key FROM $schema.gristlite_placement WHERE doc_id = $1', [docId])).rows[0]
      ?.snapshot_key as string | undefined;
  // The snapshot recorded now covers writes after the takeovers (epoch 3 or later: B2's).
  await waitFor(
    async () => /^test\/docs\/[^/]+\/0*[3-9]\d*-/.test((await recorded()) ?? ''),
    'a snapshot by the last holder',
  );
  const key = (await recorded())!;
  assert.ok(
    readdirSync(objects).some((n) => n.startsWith(key.slice(key.lastIndexOf('/') + 1))),
    'the recorded snapshot is in the object store',
  );
  assert.is((await api(a.url, 'DELETE', `/api/docs/${docId}`)).status, 200);
  const left = await pgRun('SELECT count(*)::int AS n FROM $schema.gristlite_placement');
  assert.is(left.rows[0].n, 0);
  const remaining = existsSync(objects) ? readdirSync(objects).filter((n) => !n.startsWith('.')) : [];
  assert.equal(remaining, [], 'snapshot objects deleted');
});

test('commands on local document files refuse with several machines, and serve needs PostgreSQL', () => {
  const run = (args: string[], extra: Record<string, string>) =>
    spawnSync(process.execPath, [MAIN, ...args], {
      env: {...process.env, GRISTLITE_DATA_DIR: join(dir, 'cli'), NODE_NO_WARNINGS: '1', ...extra},
      encoding: 'utf8',
    });
  const store = {GRISTLITE_DOC_STORE: 's3://gl-docs/x'};
  for (const args of [
    ['backup', 'doc', join(dir, 'out.grist')],
    ['docs', 'list'],
    ['import', MAIN],
  ]) {
    const r = run(args, store);
    assert.is(r.status, 2, `${args[0]}: ${r.stderr}`);
    assert.match(r.stderr, /GRISTLITE_DOC_STORE \(several machines\)/);
  }
  const serveAlone = run(['serve', '--port', '0'], {...store, GRISTLITE_HOME_URL: ''});
  assert.not.equal(serveAlone.status, 0);
  assert.match(serveAlone.stderr, /GRISTLITE_DOC_STORE needs GRISTLITE_HOME_URL/);
});

test.run();
