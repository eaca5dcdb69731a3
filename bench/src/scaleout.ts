/**
 * Scale-out on one machine (issue 43 §3): the several-machine deployment of cluster.ts, each worker
 * in a cgroup of its own with a fixed CPU quota (BENCH_SCALEOUT_QUOTA cores, 0.3), so that 1, 2 and 3
 * workers are 0.3, 0.6 and 0.9 cores whatever else runs, and the load generator, PostgreSQL and
 * s3rver have the rest of the box.
 *
 * SO1-SO3  24 clients writing one record at a time to 24 documents through 1, 2, 3 workers. The
 *          documents are created through a round-robin front and stay where the cluster placed them
 *          (the worker that first opens a document holds it); the client sends each request to the
 *          worker that answered the last one for that document (`X-Gristlite-Worker`), as a
 *          document-aware load balancer would, and to a random worker while it does not know.
 *          Target: >= 0.8 x linear (1.6x at 2, 2.4x at 3) of SO1. Reported per worker: documents
 *          held (placement table), requests served, CPU against its quota, throttled periods.
 * SO4      the SO3 deployment under the same load, kill -9 of the worker holding the most documents:
 *          time until every one of the 24 documents answers through the survivors, and every
 *          acknowledged write (unique values) read back afterwards.
 *
 * Needs root, a cgroup cpu controller (v1 or v2) and PostgreSQL; otherwise skipped with the reason.
 */
import {readdirSync, readFileSync} from 'node:fs';
import {join} from 'node:path';
import pg from 'pg';
import {
  type CpuController,
  type CpuGroup,
  cpuController,
  createCpuGroup,
  type Throttling,
  throttlingSince,
} from './cgroup.js';
import {addPath, Deployment, envFor, PG_URL, pgReachable, startS3, withSchema, workspaceOf} from './cluster.js';
import {cpuMs, now, percentile, type Result} from './lib.js';

const DOCS = 24;
/** Concurrent clients of the load generator, whatever the number of workers (BENCH_SCALEOUT_CLIENTS). */
const CLIENTS = Number(process.env.BENCH_SCALEOUT_CLIENTS ?? 24);
/**
 * Each group's weight, in plain processes: on a box shared with other work a quota is only an upper
 * bound, and a worker that gets less than its quota measures the box, not gristlite.
 */
const WEIGHT = Number(process.env.BENCH_SCALEOUT_WEIGHT ?? 8);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Busy and total jiffies of the whole machine (/proc/stat), to tell how much CPU was left idle. */
function machineTicks(): {idle: number; total: number} {
  const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  return {idle: cpu[3] + cpu[4], total: cpu.reduce((s, x) => s + x, 0)};
}

/** CPU ms used so far by every PostgreSQL process on the machine (shared: others' queries count too). */
function postgresCpuMs(): number {
  let total = 0;
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      if (readFileSync(`/proc/${pid}/comm`, 'utf8').startsWith('postgres')) total += cpuMs(Number(pid));
    } catch {} // exited meanwhile
  }
  return total;
}

/** Which worker to send a document's requests to: the one that answered the last one. */
class Router {
  private readonly route = new Map<string, string>();
  constructor(private readonly d: Deployment) {}
  pick(doc: string): string {
    const url = this.route.get(doc);
    if (url && this.d.workers.some((w) => w.url === url)) return url;
    return this.d.workers[Math.floor(Math.random() * this.d.workers.length)].url;
  }
  learn(doc: string, worker: unknown): void {
    if (typeof worker === 'string') this.route.set(doc, worker);
  }
  forget(doc: string): void {
    this.route.delete(doc);
  }
}

interface LoadStats {
  acked: number;
  errors: number;
  forwarded: number;
  servedBy: Map<string, number>;
  lat: number[];
}

/**
 * CLIENTS clients writing unique values to random documents until `until()`; every acknowledged
 * value is added to `acked` (per document) for the loss check.
 */
async function load(
  d: Deployment,
  router: Router,
  docs: string[],
  tag: string,
  until: () => boolean,
  acked: Map<string, string[]>,
) {
  const stats: LoadStats = {acked: 0, errors: 0, forwarded: 0, servedBy: new Map(), lat: []};
  let seq = 0;
  await Promise.all(
    Array.from({length: CLIENTS}, async () => {
      while (!until()) {
        const doc = docs[Math.floor(Math.random() * docs.length)];
        const via = router.pick(doc);
        const value = `${tag}-${seq++}`;
        const t = now();
        try {
          const r = await d.call(via, 'POST', addPath(doc), {records: [{fields: {A: value}}]});
          if (r.status !== 200) throw new Error(`status ${r.status}`);
          stats.lat.push(now() - t);
          stats.acked++;
          acked.get(doc)!.push(value);
          const by = r.headers['x-gristlite-worker'];
          router.learn(doc, by);
          if (by !== via) stats.forwarded++;
          stats.servedBy.set(String(by), (stats.servedBy.get(String(by)) ?? 0) + 1);
        } catch {
          // A worker killed under it, or a 503 while a document moves: not acknowledged.
          stats.errors++;
          router.forget(doc);
          await sleep(5);
        }
      }
    }),
  );
  return stats;
}

async function heldBy(schema: string): Promise<Map<string, number>> {
  const c = new pg.Client({connectionString: PG_URL});
  await c.connect();
  try {
    const {rows} = await c.query(
      `SELECT worker, count(*)::int AS n FROM ${pg.escapeIdentifier(schema)}.gristlite_placement GROUP BY worker`,
    );
    return new Map(rows.map((r) => [r.worker as string, r.n as number]));
  } finally {
    await c.end();
  }
}

/**
 * PostgreSQL's own counters: transactions committed in the bench's database (every client of it,
 * other users' too) and, per table of the run's schema (ours alone), the scans and inserted rows.
 * A backend reports its counters when idle, at most once a second (PostgreSQL 15's
 * PGSTAT_MIN_INTERVAL), so a reading is taken after the load has been still for longer than that.
 */
interface PgCounters {
  commits: number;
  tables: Map<string, {scans: number; inserted: number}>;
}

async function pgCounters(schema: string): Promise<PgCounters> {
  const c = new pg.Client({connectionString: PG_URL});
  await c.connect();
  try {
    const db = await c.query(
      'SELECT xact_commit::float8 AS n FROM pg_stat_database WHERE datname = current_database()',
    );
    const t = await c.query(
      `SELECT relname, (coalesce(seq_scan, 0) + coalesce(idx_scan, 0))::float8 AS scans, n_tup_ins::float8 AS ins
       FROM pg_stat_user_tables WHERE schemaname = $1`,
      [schema],
    );
    return {
      commits: db.rows[0].n,
      tables: new Map(t.rows.map((r) => [r.relname as string, {scans: r.scans as number, inserted: r.ins as number}])),
    };
  } finally {
    await c.end();
  }
}

/** Per acknowledged write: PostgreSQL commits, and each table's scans (s) and inserted rows (i) where nonzero. */
function perWrite(a: PgCounters, b: PgCounters, writes: number): {commits: number; tables: string} {
  const tables: string[] = [];
  for (const [name, x] of b.tables) {
    const y = a.tables.get(name) ?? {scans: 0, inserted: 0};
    const s = (x.scans - y.scans) / writes;
    const i = (x.inserted - y.inserted) / writes;
    if (s >= 0.01 || i >= 0.01) tables.push(`${name} ${s.toFixed(2)}s${i >= 0.01 ? `/${i.toFixed(2)}i` : ''}`);
  }
  return {commits: (b.commits - a.commits) / writes, tables: tables.sort().join(', ')};
}

interface WorkerFigures {
  name: string;
  held: number;
  served: number;
  /** CPU used over the measurement / (quota x elapsed). */
  quotaUse: number;
  throttling: Throttling;
}

interface RunResult {
  n: number;
  rate: number;
  p50: number;
  p99: number;
  errors: number;
  forwarded: number;
  workers: WorkerFigures[];
  /** The load generator's (this process's) CPU over the measurement, in cores. */
  generatorCores: number;
  /** Share of the machine's CPU left idle over the measurement. */
  idle: number;
  quota: number;
  /** PostgreSQL's CPU over the measurement, in cores (all its processes: other users' too). */
  pgCores: number;
  /** From a counting phase after the measurement: PostgreSQL commits and table work per write. */
  pgPerWrite: {commits: number; tables: string};
  kill?: KillResult;
}

interface KillResult {
  victim: string;
  victimHeld: number;
  /** ms from the kill until every document had answered a read through a survivor. */
  allServingMs: number;
  /** ms from the kill until each of the victim's documents answered, median. */
  victimDocsP50Ms: number;
  rateAfter: number;
  errors: number;
  acked: number;
  lost: number;
}

async function run(
  dir: string,
  ctl: CpuController,
  quota: number,
  s3: string,
  n: number,
  seconds: number,
  withKill: boolean,
): Promise<RunResult> {
  return withSchema(async (homeUrl, schema) => {
    const env = envFor(homeUrl, s3, `so${n}`);
    if (process.env.BENCH_SCALEOUT_SNAPSHOT_MSEC)
      env.GRISTLITE_SNAPSHOT_MSEC = process.env.BENCH_SCALEOUT_SNAPSHOT_MSEC;
    const d = new Deployment(join(dir, `so${n}`), env);
    const groups: CpuGroup[] = [];
    try {
      for (let i = 0; i < n; i++) {
        const g = createCpuGroup(ctl, `so${n}-w${i}`, quota, WEIGHT);
        groups.push(g);
        await d.start(`w${i}`, g.wrap);
      }
      const ws = await workspaceOf(d, d.workers[0].url);
      const docs: string[] = [];
      for (let i = 0; i < DOCS; i++) {
        // A round-robin front: whichever worker gets the creation holds the document.
        const via = d.workers[i % n].url;
        docs.push((await d.call(via, 'POST', `/api/workspaces/${ws}/docs`, {name: `d${i}`})).json);
      }
      const acked = new Map(docs.map((doc) => [doc, [] as string[]]));
      const router = new Router(d);
      const forSeconds = (s: number) => {
        const end = now() + s * 1000;
        return () => now() >= end;
      };
      // Warm-up (JIT, routes learned), as long as the measurement.
      await load(d, router, docs, 'warm', forSeconds(seconds), acked);

      const held = await heldBy(schema);
      const cpu0 = d.workers.map((w) => cpuMs(w.proc.pid!));
      const stat0 = groups.map((g) => g.stat());
      const gen0 = process.cpuUsage();
      const m0 = machineTicks();
      const pg0 = postgresCpuMs();
      const t0 = now();
      const s = await load(d, router, docs, 'm', forSeconds(seconds), acked);
      const elapsed = (now() - t0) / 1000;
      const m1 = machineTicks();
      const pgCores = (postgresCpuMs() - pg0) / 1000 / elapsed;
      const gen = process.cpuUsage(gen0);
      const workers = d.workers.map((w, i) => ({
        name: w.name,
        held: held.get(w.url) ?? 0,
        served: s.servedBy.get(w.url) ?? 0,
        quotaUse: (cpuMs(w.proc.pid!) - cpu0[i]) / (quota * elapsed * 1000),
        throttling: throttlingSince(stat0[i], groups[i].stat()),
      }));
      const result: RunResult = {
        n,
        rate: s.acked / elapsed,
        p50: percentile(s.lat, 50),
        p99: percentile(s.lat, 99),
        errors: s.errors,
        forwarded: s.forwarded / Math.max(1, s.acked),
        workers,
        generatorCores: (gen.user + gen.system) / 1e6 / elapsed,
        idle: (m1.idle - m0.idle) / Math.max(1, m1.total - m0.total),
        pgCores,
        quota,
        pgPerWrite: await countingPhase(d, router, docs, schema, seconds, acked),
      };
      if (withKill) result.kill = await killRun(d, router, docs, acked, held, seconds);
      return result;
    } finally {
      await d.stop();
      for (const g of groups) g.remove();
    }
  });
}

/**
 * The same load for half the measurement's time between two quiet pauses, so that PostgreSQL's
 * counters (reported when a backend is idle, at most once a second) cover exactly its writes.
 * Apart from the measurement, whose timing it does not touch.
 */
async function countingPhase(
  d: Deployment,
  router: Router,
  docs: string[],
  schema: string,
  seconds: number,
  acked: Map<string, string[]>,
) {
  await sleep(1500);
  const a = await pgCounters(schema);
  const end = now() + (seconds * 1000) / 2;
  const s = await load(d, router, docs, 'c', () => now() >= end, acked);
  await sleep(1500);
  return perWrite(a, await pgCounters(schema), Math.max(1, s.acked));
}

/** SO4: kill -9 of the busiest holder under load; every document must answer, nothing acknowledged lost. */
async function killRun(
  d: Deployment,
  router: Router,
  docs: string[],
  acked: Map<string, string[]>,
  held: Map<string, number>,
  seconds: number,
): Promise<KillResult> {
  const victim = [...d.workers].sort((a, b) => (held.get(b.url) ?? 0) - (held.get(a.url) ?? 0))[0];
  // Its documents by what the router learned (the placement table says the same before the kill).
  const victimDocs = docs.filter((doc) => router.pick(doc) === victim.url);
  let stop = false;
  let killedAt = 0;
  let ackedAtKill = 0;
  const loadDone = load(d, router, docs, 'k', () => stop, acked);
  await sleep((seconds * 1000) / 2);
  ackedAtKill = [...acked.values()].reduce((s, v) => s + v.length, 0);
  killedAt = now();
  await d.kill(victim);
  // A reader beside the writers: each document through a random survivor until it answers.
  const answeredAfter = new Map<string, number>();
  const deadline = killedAt + 120_000;
  await Promise.all(
    docs.map(async (doc) => {
      while (now() < deadline) {
        const w = d.workers[Math.floor(Math.random() * d.workers.length)];
        const r = await d.call(w.url, 'GET', `${addPath(doc)}?limit=1`).catch(() => ({status: 0}));
        if (r.status === 200) {
          answeredAfter.set(doc, now() - killedAt);
          return;
        }
        await sleep(10);
      }
    }),
  );
  const allServingMs = answeredAfter.size === docs.length ? Math.max(...answeredAfter.values()) : Number.NaN;
  await sleep((seconds * 1000) / 2);
  stop = true;
  const s = await loadDone;
  const rateAfter =
    ([...acked.values()].reduce((sum, v) => sum + v.length, 0) - ackedAtKill) / ((now() - killedAt) / 1000);
  // Every acknowledged value must be in its document, read through the survivors.
  let lost = 0;
  let total = 0;
  for (const doc of docs) {
    const r = await d.call(d.workers[0].url, 'GET', addPath(doc));
    if (r.status !== 200) throw new Error(`reading ${doc} after the kill: ${r.status}`);
    const present = new Set((r.json.records as {fields: {A: string}}[]).map((x) => x.fields.A));
    for (const v of acked.get(doc)!) {
      total++;
      if (!present.has(v)) lost++;
    }
  }
  return {
    victim: victim.name,
    victimHeld: held.get(victim.url) ?? victimDocs.length,
    allServingMs,
    victimDocsP50Ms: percentile(
      victimDocs.map((doc) => answeredAfter.get(doc) ?? Number.NaN),
      50,
    ),
    rateAfter,
    errors: s.errors,
    acked: total,
    lost,
  };
}

function workerNote(r: RunResult): string {
  const cpuPerReq = (r.workers.reduce((sum, w) => sum + w.quotaUse, 0) * r.quota * 1000) / r.rate;
  const per = r.workers
    .map(
      (w) =>
        `${w.name}: ${w.held} docs, ${w.served} req, CPU ${(w.quotaUse * 100).toFixed(0)}% of quota, throttled ${w.throttling.throttled}/${w.throttling.periods} periods (${(w.throttling.throttledMs / 1000).toFixed(1)} s)`,
    )
    .join('; ');
  return `${cpuPerReq.toFixed(2)} ms worker CPU/req; ${per}; generator ${r.generatorCores.toFixed(2)} cores, PostgreSQL ${r.pgCores.toFixed(2)} cores, machine ${(r.idle * 100).toFixed(0)}% idle; per write: ${r.pgPerWrite.commits.toFixed(2)} PostgreSQL commits (whole database), ${r.pgPerWrite.tables}; ${(r.forwarded * 100).toFixed(1)}% forwarded${r.errors ? `, ${r.errors} errors` : ''}`;
}

export async function scaleoutScenarios(dir: string): Promise<Result[]> {
  const ctl = cpuController();
  if ('skip' in ctl) {
    console.log(`scale-out scenarios skipped: ${ctl.skip}`);
    return [];
  }
  const why = await pgReachable();
  if (why) {
    console.log(`scale-out scenarios skipped: PostgreSQL unreachable at ${PG_URL} (${why})`);
    return [];
  }
  const quota = Number(process.env.BENCH_SCALEOUT_QUOTA ?? 0.3);
  const seconds = Number(process.env.BENCH_SCALEOUT_SECONDS ?? 8);
  // The load generator (this process) and s3rver (its child): no quota, the same weight as a worker.
  const rest = createCpuGroup(ctl, 'generator', null, WEIGHT);
  rest.enter();
  let s3: Awaited<ReturnType<typeof startS3>> | undefined;
  const results: Result[] = [];
  try {
    s3 = await startS3(join(dir, 's3-scaleout'));
    const runs: RunResult[] = [];
    // BENCH_SCALEOUT_WORKERS: the worker counts to run (1,2,3; the kill run goes with 3).
    const counts = (process.env.BENCH_SCALEOUT_WORKERS ?? '1,2,3').split(',').map(Number);
    for (const n of counts) {
      const r = await run(dir, ctl, quota, s3.endpoint, n, seconds, n === 3);
      if (process.env.BENCH_SCALEOUT_VERBOSE) console.error(JSON.stringify(r));
      runs.push(r);
      const ratio = r.rate / runs[0].rate;
      results.push({
        scenario: `SO${n} writes to ${DOCS} docs, ${n} worker${n > 1 ? 's' : ''} at ${quota} core each (cgroup v${ctl.version})`,
        unit: 'req/s',
        rate: r.rate,
        limit: runs[0].rate,
        ratio,
        target: n === 1 ? 'report (limit of SO2-SO3)' : `>= ${(0.8 * n).toFixed(1)} x 1 worker`,
        met: r.errors === 0 && (n === 1 || ratio >= 0.8 * n),
        p50Ms: r.p50,
        p99Ms: r.p99,
        note: workerNote(r),
      });
    }
    const k = runs.find((r) => r.kill)?.kill;
    if (k)
      results.push({
        scenario: `SO4 kill -9 of 1 of 3 workers under load: every doc answers`,
        unit: 'ms',
        rate: k.allServingMs,
        limit: null,
        ratio: null,
        target: 'all 24 docs answer, 0 acknowledged writes lost',
        met: Number.isFinite(k.allServingMs) && k.lost === 0,
        note: `${k.victim} held ${k.victimHeld} docs; its docs answered after p50 ${k.victimDocsP50Ms.toFixed(0)} ms; ${k.acked} acknowledged writes, ${k.lost} lost; ${k.errors} requests failed at the kill; ${k.rateAfter.toFixed(0)} req/s from the kill on (2 workers)`,
      });
  } finally {
    if (s3) {
      s3.proc.kill('SIGKILL');
      await new Promise((r) =>
        s3!.proc.exitCode !== null || s3!.proc.signalCode ? r(null) : s3!.proc.once('exit', r),
      );
    }
    rest.remove();
  }
  return results;
}
