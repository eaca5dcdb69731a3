/**
 * Several machines (issue 17): `gristlite serve` workers with private data directories, documents
 * in S3 (s3rver, its own process) and placement in PostgreSQL, all on this one machine.
 *
 * C1-C3  writes to 24 documents through 1, 2 and 3 workers (each request to a random worker, so
 *        with n workers (n-1)/n of them are forwarded): requests/s, p99, worker CPU per request;
 *        the limit is the 1-worker rate (the ratio says what adding workers gives on this box).
 * C4     a forwarded write against a direct one, in worker CPU per request (target <= 1.5x).
 * C5-C7  takeover of a 1, 10 and 50 MB document after kill -9 of its holder, against downloading
 *        its snapshot from the same store (the physical part of a takeover).
 * C8     snapshot lag: from an acknowledged write to a recorded snapshot holding it, against the
 *        configured snapshot delay.
 *
 * Needs PostgreSQL (GRISTLITE_TEST_PG_URL, default postgres://postgres@127.0.0.1:5432/test);
 * without it the scenarios are skipped with a note.
 */
import {spawn, type ChildProcess} from 'node:child_process';
import {rmSync} from 'node:fs';
import {createRequire} from 'node:module';
import {join} from 'node:path';
import {fileURLToPath} from 'node:url';
import pg from 'pg';
import type {Pool} from 'undici';
import {S3ObjectStore} from '@gristlite/store-s3';
import {clientPool, cpuMs, now, percentile, request, type Result} from './lib.js';

export const PG_URL = process.env.GRISTLITE_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const MAIN = fileURLToPath(new URL('../../packages/cli/dist/src/main.js', import.meta.url));
const KEY = 'b'.repeat(40);
const DOCS = 24;
const BUCKET = 'gl-bench';
const SNAPSHOT_MS = 5000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface Worker {
  url: string;
  proc: ChildProcess;
  name: string;
  /** The last ~8 kB the worker wrote to stderr (why it died, when it did). */
  stderrTail(): string;
}

/** Bytes of a worker's stderr kept for when it dies. */
const STDERR_TAIL_BYTES = 8192;

export class Deployment {
  readonly workers: Worker[] = [];
  /** Workers this deployment killed (an exit of any other is reported with its stderr). */
  private readonly killed = new WeakSet<ChildProcess>();
  private readonly pools = new Map<string, Pool>();
  constructor(
    readonly dir: string,
    readonly env: Record<string, string>,
  ) {}

  /** Starts a worker; `wrap` may run it inside something (a cgroup: `CpuGroup.wrap`). */
  async start(
    name: string,
    wrap?: (command: string, args: string[]) => {command: string; args: string[]},
  ): Promise<Worker> {
    const argv = [MAIN, 'serve', '--port', '0', '--data', join(this.dir, name)];
    const {command, args} = wrap ? wrap(process.execPath, argv) : {command: process.execPath, args: argv};
    const proc = spawn(command, args, {
      env: {...process.env, ...this.env, GRISTLITE_API_KEY: KEY, GRISTLITE_LOG_LEVEL: 'error'},
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      proc.stdout!.on('data', (d) => {
        out += d;
        const m = /listening on (http:\/\/\S+)/.exec(out);
        if (m) resolve(m[1]);
      });
      proc.once('exit', (code) => reject(new Error(`worker exited (${code}): ${out}`)));
    });
    // Kept, not dropped: a worker that died during a run (once in 11 scale-out runs) left no trace.
    const tail: string[] = [];
    let tailBytes = 0;
    proc.stderr!.on('data', (d: Buffer) => {
      tail.push(d.toString('utf8'));
      tailBytes += d.length;
      while (tailBytes > STDERR_TAIL_BYTES && tail.length > 1) tailBytes -= Buffer.byteLength(tail.shift()!);
    });
    proc.once('exit', (code, signal) => {
      if (!this.killed.has(proc))
        console.error(
          `bench: worker ${name} exited by itself (${signal ?? `code ${code}`}); its stderr ends:\n${tail.join('')}`,
        );
    });
    const w = {url, proc, name, stderrTail: () => tail.join('')};
    this.workers.push(w);
    return w;
  }

  pool(url: string): Pool {
    let p = this.pools.get(url);
    if (!p) this.pools.set(url, (p = clientPool(url, 32)));
    return p;
  }

  async call(url: string, method: string, path: string, body?: unknown) {
    const res = await request(this.pool(url), {
      path,
      method: method as 'GET',
      headers: {authorization: `Bearer ${KEY}`, 'content-type': 'application/json'},
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.body.text();
    return {status: res.statusCode, headers: res.headers, json: text ? JSON.parse(text) : null};
  }

  async kill(w: Worker): Promise<void> {
    this.killed.add(w.proc);
    w.proc.kill('SIGKILL');
    await new Promise((r) => (w.proc.exitCode !== null ? r(null) : w.proc.once('exit', r)));
    this.workers.splice(this.workers.indexOf(w), 1);
    await this.pools.get(w.url)?.destroy();
    this.pools.delete(w.url);
  }

  async stop(): Promise<void> {
    for (const w of [...this.workers]) await this.kill(w);
    for (const p of this.pools.values()) await p.destroy();
  }
}

export async function pgReachable(): Promise<string | null> {
  const c = new pg.Client({connectionString: PG_URL, connectionTimeoutMillis: 3000});
  try {
    await c.connect();
    return null;
  } catch (e) {
    return (e as Error).message;
  } finally {
    await c.end().catch(() => {});
  }
}

/** s3rver in a process of its own, so that its work is not the client's. */
export async function startS3(dir: string): Promise<{endpoint: string; proc: ChildProcess}> {
  const s3rver = createRequire(import.meta.url).resolve('s3rver');
  const script = `
    const {default: S3rver} = await import(${JSON.stringify(s3rver)});
    const s = new S3rver({port: 0, address: '127.0.0.1', directory: ${JSON.stringify(dir)}, silent: true,
      configureBuckets: [{name: ${JSON.stringify(BUCKET)}}]});
    const {port} = await s.run();
    console.log('port ' + port);
    process.stdin.on('end', () => process.exit(0)).resume();`;
  const proc = spawn(process.execPath, ['--input-type=module', '-e', script], {stdio: ['pipe', 'pipe', 'inherit']});
  const port = await new Promise<number>((resolve, reject) => {
    proc.stdout!.on('data', (d) => {
      const m = /port (\d+)/.exec(String(d));
      if (m) resolve(Number(m[1]));
    });
    proc.once('exit', (code) => reject(new Error(`s3rver exited (${code})`)));
  });
  return {endpoint: `http://127.0.0.1:${port}`, proc};
}

export async function withSchema<T>(fn: (url: string, schema: string) => Promise<T>): Promise<T> {
  const schema = `gl_bench_${process.pid}_${Date.now().toString(36)}`;
  const admin = new pg.Client({connectionString: PG_URL});
  await admin.connect();
  try {
    return await fn(`${PG_URL}${PG_URL.includes('?') ? '&' : '?'}schema=${schema}`, schema);
  } finally {
    await admin.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`).catch(() => {});
    await admin.end();
  }
}

export async function workspaceOf(d: Deployment, url: string): Promise<number> {
  const orgs = (await d.call(url, 'GET', '/api/orgs')).json;
  return (await d.call(url, 'GET', `/api/orgs/${orgs[0].id}/workspaces`)).json[0].id;
}

export const addPath = (docId: string) => `/api/docs/${docId}/tables/Table1/records`;

/** 16 clients writing one record at a time to a random document through a random worker. */
async function load(
  d: Deployment,
  docs: string[],
  n: number,
  seconds: number,
  done: (ok: boolean, ms: number) => void,
) {
  const end = now() + seconds * 1000;
  let seq = 0;
  await Promise.all(
    Array.from({length: 16}, async () => {
      while (now() < end) {
        const doc = docs[Math.floor(Math.random() * DOCS)];
        const w = d.workers[Math.floor(Math.random() * n)];
        const t = now();
        const r = await d.call(w.url, 'POST', addPath(doc), {records: [{fields: {A: `v${seq++}`}}]});
        done(r.status === 200, now() - t);
      }
    }),
  );
}

/** C1-C3: concurrent writes to 24 documents through n workers. */
async function writesThrough(dir: string, endpoint: string, n: number, seconds: number) {
  return withSchema(async (homeUrl) => {
    const d = new Deployment(join(dir, `c${n}`), envFor(homeUrl, endpoint, `c${n}`));
    try {
      for (let i = 0; i < n; i++) await d.start(`w${i}`);
      const ws = await workspaceOf(d, d.workers[0].url);
      const docs: string[] = [];
      for (let i = 0; i < DOCS; i++) {
        const via = d.workers[i % n].url; // created (and so held) round-robin
        docs.push((await d.call(via, 'POST', `/api/workspaces/${ws}/docs`, {name: `d${i}`})).json);
      }
      for (const doc of docs) await d.call(d.workers[0].url, 'POST', addPath(doc), {records: [{fields: {A: 'w'}}]});
      // Warm-up through every worker (JIT), as long as the measurement.
      await load(d, docs, n, seconds, () => {});
      const cpu0 = d.workers.map((w) => cpuMs(w.proc.pid!));
      const lat: number[] = [];
      let errors = 0;
      const t0 = now();
      await load(d, docs, n, seconds, (ok, ms) => (ok ? lat.push(ms) : errors++));
      const elapsed = (now() - t0) / 1000;
      const cpu = d.workers.reduce((s, w, i) => s + cpuMs(w.proc.pid!) - cpu0[i], 0);
      return {
        rate: lat.length / elapsed,
        p50: percentile(lat, 50),
        p99: percentile(lat, 99),
        cpuPerReq: cpu / lat.length,
        errors,
      };
    } finally {
      await d.stop();
    }
  });
}

export function envFor(homeUrl: string, endpoint: string, prefix: string): Record<string, string> {
  return {
    GRISTLITE_HOME_URL: homeUrl,
    GRISTLITE_DOC_STORE: `s3://${BUCKET}/${prefix}`,
    GRISTLITE_S3_ENDPOINT: endpoint,
    AWS_ACCESS_KEY_ID: 'S3RVER',
    AWS_SECRET_ACCESS_KEY: 'S3RVER',
    AWS_REGION: 'us-east-1',
    GRISTLITE_SNAPSHOT_MSEC: String(SNAPSHOT_MS),
    GRISTLITE_MAX_BODY_BYTES: String(8 * 1024 * 1024),
    GRISTLITE_LEASE_MSEC: '5000',
  };
}

/** C4: sequential writes to one document, direct to its holder and through another worker. */
async function forwardCost(d: Deployment, doc: string, holder: Worker, other: Worker, n: number) {
  const measure = async (via: Worker) => {
    const cpu0 = cpuMs(holder.proc.pid!) + cpuMs(other.proc.pid!);
    const lat: number[] = [];
    for (let i = 0; i < n; i++) {
      const t = now();
      const r = await d.call(via.url, 'POST', addPath(doc), {records: [{fields: {A: `f${i}`}}]});
      if (r.status !== 200) throw new Error(`write answered ${r.status}`);
      lat.push(now() - t);
    }
    return {cpu: (cpuMs(holder.proc.pid!) + cpuMs(other.proc.pid!) - cpu0) / n, p50: percentile(lat, 50)};
  };
  // Warm-up: the forwarding path keeps getting cheaper for a few thousand requests (JIT); the
  // first hundreds cost twice the steady state.
  for (let i = 0; i < 3; i++) {
    await measure(holder);
    await measure(other);
  }
  // Alternating rounds, the median of each: this box's noise moves single rounds by 20%.
  const direct: {cpu: number; p50: number}[] = [];
  const forwarded: {cpu: number; p50: number}[] = [];
  for (let round = 0; round < 5; round++) {
    direct.push(await measure(holder));
    forwarded.push(await measure(other));
  }
  const median = (xs: {cpu: number; p50: number}[]) => ({
    cpu: percentile(
      xs.map((x) => x.cpu),
      50,
    ),
    p50: percentile(
      xs.map((x) => x.p50),
      50,
    ),
  });
  return {direct: median(direct), forwarded: median(forwarded)};
}

/** Waits until the document's newest write is in a recorded snapshot; returns ms waited. */
async function snapshotCovers(homeUrl: string, schema: string, doc: string, timeoutMs: number): Promise<number> {
  const c = new pg.Client({connectionString: homeUrl.replace(/[?&]schema=[^&]*/, '')});
  await c.connect();
  const t0 = now();
  try {
    const s = pg.escapeIdentifier(schema);
    const target = Number(
      (
        await c.query(
          `SELECT greatest((SELECT coalesce(max(seq), 0) FROM ${s}.gristlite_doc_log WHERE doc_id = $1),
                           (SELECT snapshot_seq FROM ${s}.gristlite_placement WHERE doc_id = $1)) AS n`,
          [doc],
        )
      ).rows[0].n,
    );
    while (now() - t0 < timeoutMs) {
      const {rows} = await c.query(`SELECT snapshot_seq FROM ${s}.gristlite_placement WHERE doc_id = $1`, [doc]);
      if (Number(rows[0].snapshot_seq) >= target) return now() - t0;
      await sleep(20);
    }
    throw new Error(`no snapshot of ${doc} within ${timeoutMs} ms`);
  } finally {
    await c.end();
  }
}

export async function clusterScenarios(dir: string): Promise<Result[]> {
  const why = await pgReachable();
  if (why) {
    console.log(`cluster scenarios skipped: PostgreSQL unreachable at ${PG_URL} (${why})`);
    return [];
  }
  const results: Result[] = [];
  const s3 = await startS3(join(dir, 's3'));
  const seconds = Number(process.env.BENCH_CLUSTER_SECONDS ?? 5);
  try {
    const runs: Awaited<ReturnType<typeof writesThrough>>[] = [];
    for (const n of [1, 2, 3]) {
      const r = await writesThrough(dir, s3.endpoint, n, seconds);
      runs.push(r);
      results.push({
        scenario: `C${n} writes to ${DOCS} docs through ${n} worker${n > 1 ? 's' : ''}`,
        unit: 'req/s',
        rate: r.rate,
        limit: runs[0].rate,
        ratio: r.rate / runs[0].rate,
        target: 'report (limit: 1 worker)',
        met: r.errors === 0,
        p50Ms: r.p50,
        p99Ms: r.p99,
        note: `${r.cpuPerReq.toFixed(2)} ms worker CPU/req${r.errors ? `, ${r.errors} errors` : ''}; ${n > 1 ? `${Math.round(((n - 1) / n) * 100)}% forwarded` : 'all direct'}`,
      });
    }

    await withSchema(async (homeUrl, schema) => {
      const d = new Deployment(join(dir, 'ct'), envFor(homeUrl, s3.endpoint, 'ct'));
      try {
        const a = await d.start('a');
        const b = await d.start('b');
        const ws = await workspaceOf(d, a.url);
        const doc = (await d.call(a.url, 'POST', `/api/workspaces/${ws}/docs`, {name: 'fwd'})).json;
        const f = await forwardCost(d, doc, a, b, Number(process.env.BENCH_FORWARD_N ?? 400));
        const ratio = f.forwarded.cpu / f.direct.cpu;
        results.push({
          scenario: 'C4 forwarded write (CPU of both workers)',
          unit: 'us CPU/req',
          rate: f.forwarded.cpu * 1000,
          limit: f.direct.cpu * 1000,
          ratio,
          target: '<= 1.5 x direct',
          met: ratio <= 1.5,
          p50Ms: f.forwarded.p50,
          note: `direct p50 ${f.direct.p50.toFixed(2)} ms; latency ${(f.forwarded.p50 / f.direct.p50).toFixed(2)}x`,
        });

        // C8 on this small document: the lag of the default schedule.
        await d.call(a.url, 'POST', addPath(doc), {records: [{fields: {A: 'lag'}}]});
        const lag = await snapshotCovers(homeUrl, schema, doc, SNAPSHOT_MS * 4);

        // C5-C7: takeover after kill -9, by size. Rows of ~2 KB, 1 MB per request.
        const store = new S3ObjectStore({
          bucket: BUCKET,
          endpoint: s3.endpoint,
          accessKeyId: 'S3RVER',
          secretAccessKey: 'S3RVER',
        });
        let holder = a;
        let other = b;
        let next = 0;
        const sizes = (process.env.BENCH_TAKEOVER_MB ?? '1,10,50').split(',').map(Number);
        for (const mb of sizes) {
          const big = (await d.call(holder.url, 'POST', `/api/workspaces/${ws}/docs`, {name: `big${mb}`})).json;
          const row = 'x'.repeat(2000);
          for (let i = 0; i < mb; i++) {
            const records = Array.from({length: 500}, (_, k) => ({fields: {A: `${i}-${k}-${row}`}}));
            const r = await d.call(holder.url, 'POST', addPath(big), {records});
            if (r.status !== 200) throw new Error(`filling ${big}: ${r.status} ${JSON.stringify(r.json)}`);
          }
          await snapshotCovers(homeUrl, schema, big, 60_000);
          const s = pg.escapeIdentifier(schema);
          const admin = new pg.Client({connectionString: PG_URL});
          await admin.connect();
          const snap = (
            await admin.query(`SELECT snapshot_key, snapshot_size FROM ${s}.gristlite_placement WHERE doc_id = $1`, [
              big,
            ])
          ).rows[0];
          await admin.end();
          // The limit: the same snapshot downloaded from the same store.
          const tmp = join(dir, `raw-${mb}.grist`);
          const r0 = now();
          await store.getFile(snap.snapshot_key, tmp);
          const rawMs = now() - r0;
          rmSync(tmp, {force: true});
          await d.kill(holder);
          const t0 = now();
          let status = 0;
          while (status !== 200 && now() - t0 < 60_000) {
            status = (await d.call(other.url, 'GET', `${addPath(big)}?limit=1`).catch(() => ({status: 0}))).status;
          }
          const takeover = now() - t0;
          results.push({
            scenario: `C${5 + sizes.indexOf(mb)} takeover of a ${mb} MB document after kill -9`,
            unit: 'ms',
            rate: takeover,
            limit: rawMs,
            ratio: takeover / rawMs,
            target: 'report (limit: its snapshot downloaded)',
            met: status === 200,
            note: `snapshot ${(Number(snap.snapshot_size) / 2 ** 20).toFixed(1)} MB`,
          });
          const restarted = await d.start(`r${next++}`);
          holder = other;
          other = restarted;
        }
        store.close();
        results.push({
          scenario: 'C8 snapshot lag (write to recorded snapshot)',
          unit: 'ms',
          rate: lag,
          limit: SNAPSHOT_MS,
          ratio: lag / SNAPSHOT_MS,
          target: '<= delay + 1 s',
          met: lag <= SNAPSHOT_MS + 1000,
          note: 'GRISTLITE_SNAPSHOT_MSEC=5000; a crash meanwhile loses nothing (the log has it)',
        });
      } finally {
        await d.stop();
      }
    });
  } finally {
    s3.proc.kill('SIGKILL');
  }
  return results;
}
