// The network-namespace harness itself (test/netns/harness.ts), before the fault-injection test
// relies on it: namespaces reach PostgreSQL through the proxy, the object store and each other;
// a cut link stops all of that and a restore brings it back; one real worker serves from a
// namespace and survives kill -9; and nothing is left behind afterwards.
import {execFileSync} from 'node:child_process';
import {randomBytes} from 'node:crypto';
import {createRequire} from 'node:module';
import {join} from 'node:path';
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {callApi} from './servers.js';
import {
  canRun,
  createNetwork,
  nsExec,
  PG_URL,
  pgTarget,
  pgQuery,
  pgUrlVia,
  S3_BUCKET,
  startS3,
  startTcpProxy,
} from './netns/harness.js';

const PG_MODULE = createRequire(import.meta.url).resolve('pg');
const KEY = 'h'.repeat(40);

/** A node script, run in a namespace, that connects to PostgreSQL at `url` and prints `select 1`. */
const pgScript = (url: string) => `
  const pg = require(${JSON.stringify(PG_MODULE)});
  const c = new pg.Client({connectionString: ${JSON.stringify(url)}, connectionTimeoutMillis: 1500});
  c.connect().then(() => c.query('select 1 as one')).then((r) => { console.log('pg ' + r.rows[0].one); return c.end(); })
    .catch((e) => { console.error(e.message); process.exit(1); });`;

/** Unsigned PUT then GET of one object (s3rver takes anonymous requests); prints what came back. */
const s3Script = (url: string, body: string) => `
  const u = ${JSON.stringify(url)};
  const t = () => AbortSignal.timeout(1500);
  fetch(u, {method: 'PUT', body: ${JSON.stringify(body)}, signal: t()})
    .then((r) => { if (r.status !== 200) throw new Error('PUT ' + r.status); return fetch(u, {signal: t()}); })
    .then((r) => r.text()).then((s) => console.log('s3 ' + s))
    .catch((e) => { console.error(e.message); process.exit(1); });`;

/** Our leftovers: namespaces and links whose names carry the run's tag. */
function leftovers(tag: string): string[] {
  const out =
    execFileSync('ip', ['netns', 'list'], {encoding: 'utf8'}) + execFileSync('ip', ['-o', 'link'], {encoding: 'utf8'});
  return out.split('\n').filter((l) => l.includes(tag));
}

test('namespaces reach PostgreSQL, the object store and each other; a cut link stops that until restored', async () => {
  if (!(await canRun('netns harness test'))) return;
  const net = await createNetwork(2);
  const s3 = await startS3(join(net.dir, 's3'), net.hostIp, 4568);
  const proxy = await startTcpProxy({host: net.hostIp, port: 5432}, pgTarget());
  const schema = `e2e_h_${randomBytes(4).toString('hex')}`;
  try {
    const [ns1, ns2] = [net.namespace(1), net.namespace(2)];
    const pgVia = pgUrlVia(PG_URL, net.hostIp, 5432);
    const obj = `${s3.url}/${S3_BUCKET}/probe-${net.tag}`;
    const node = (ns: string, script: string, ms = 5000) => nsExec(ns, [process.execPath, '-e', script], ms);

    for (const ns of [ns1, ns2]) {
      const r = await node(ns, pgScript(pgVia));
      assert.is(r.stdout.trim(), 'pg 1', `${ns} to PostgreSQL through the proxy: ${r.stderr}`);
      const s = await node(ns, s3Script(obj, `hello from ${ns}`));
      assert.is(s.stdout.trim(), `s3 hello from ${ns}`, `${ns} to s3rver: ${s.stderr}`);
    }
    // The root namespace cannot reach PostgreSQL's loopback from a namespace: only the proxy.
    const direct = await node(ns1, pgScript(PG_URL));
    assert.is.not(direct.code, 0, 'no PostgreSQL on the namespace loopback');

    // Cut: every attempt fails or hangs (then the 2 s timeout ends it); restore: all works again.
    net.cut(1);
    const cutPg = await node(ns1, pgScript(pgVia), 2000);
    const cutS3 = await node(ns1, s3Script(obj, 'cut'), 2000);
    assert.is.not(cutPg.code, 0, 'PostgreSQL unreachable while cut');
    assert.is.not(cutS3.code, 0, 's3rver unreachable while cut');
    const other = await node(ns2, pgScript(pgVia));
    assert.is(other.stdout.trim(), 'pg 1', 'the other namespace is unaffected');
    net.restore(1);
    const back = await node(ns1, pgScript(pgVia));
    assert.is(back.stdout.trim(), 'pg 1', `restored: ${back.stderr}`);

    // s3rver restarts as a new process over the same directory: objects survive.
    const pid = s3.pid;
    await s3.restart();
    assert.is.not(s3.pid, pid);
    const after = await fetch(obj);
    assert.is(await after.text(), `hello from ${ns2}`);

    // One real worker (no object store: documents stay in its data directory), through the proxy.
    const homeUrl = pgUrlVia(PG_URL, net.hostIp, 5432, schema);
    const env = {GRISTLITE_HOME_URL: homeUrl, GRISTLITE_API_KEY: KEY, GRISTLITE_LOG_LEVEL: 'warn'};
    const w = await net.startWorker(1, env);
    assert.is(w.url, `http://${net.workerIp(1)}:8484`);
    const api = (method: string, path: string, body?: unknown) => callApi(w.url, KEY, method, path, body);
    const orgs = (await api('GET', '/api/orgs')).json;
    const personal = orgs.find((o: {owner: unknown}) => o.owner) ?? orgs[0];
    const wsId = (await api('GET', `/api/orgs/${personal.id}/workspaces`)).json[0].id;
    const docId = (await api('POST', `/api/workspaces/${wsId}/docs`, {name: 'h1'})).json;
    const add = await api('POST', `/api/docs/${docId}/tables/Table1/records`, {records: [{fields: {A: 'one'}}]});
    assert.is(add.status, 200, JSON.stringify(add.json));
    // The worker is reachable from the other namespace too (peer to peer over the bridge).
    const peer = await node(ns2, `fetch('${w.url}/status').then((r) => console.log(String(r.status)))`);
    assert.is(peer.stdout.trim(), '200', `ns2 to worker 1: ${peer.stderr}`);

    const firstPid = w.pid;
    await w.kill9();
    assert.not.ok(w.running);
    await w.restart();
    assert.is.not(w.pid, firstPid);
    const rows = (await api('GET', `/api/docs/${docId}/tables/Table1/records`)).json.records;
    assert.equal(
      rows.map((r: {fields: {A: string}}) => r.fields.A),
      ['one'],
    );
    assert.is(w.unexpectedExits.length, 0);
  } finally {
    await proxy.close();
    await s3.stop();
    net.destroy();
    net.destroy(); // idempotent
    await pgQuery(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  }
  assert.equal(leftovers(net.tag), [], 'namespaces, veths and the bridge are gone');
});

test.run();
