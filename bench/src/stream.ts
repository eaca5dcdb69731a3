/**
 * Streamed answers (issue 28, D61): GET /records and GET /data of a 1M-row table from a fresh
 * `gristlite serve` process, as fast as the client reads and with a client that reads slowly:
 * throughput against raw SELECT + JSON of the same rows measured in the same run (the limit), and
 * the server's resident memory growth (target < 64 MB). The same reads with streaming turned off
 * (GRISTLITE_STREAM_MIN_CELLS beyond the table) show what building the answer whole costs.
 */
import {once} from 'node:events';
import {readFileSync} from 'node:fs';
import {join} from 'node:path';
import Database from 'better-sqlite3';
import {clientPool, COLUMNS, makeRows, now, request, type Result} from './lib.js';
import {result, startServer, type Server} from './scenarios.js';

const ROWS = Number(process.env.BENCH_STREAM_ROWS ?? process.env.BENCH_ROWS ?? 1_000_000);
const TABLE = 'Items';
const RUNS = Number(process.env.BENCH_STREAM_RUNS ?? 2);

function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : Number.NaN;
}

async function api(s: Server, method: string, path: string, body?: unknown): Promise<unknown> {
  const pool = clientPool(s.url, 1);
  try {
    const res = await request(pool, {
      method: method as 'GET',
      path,
      headers: {authorization: `Bearer ${s.key}`, ...(body ? {'content-type': 'application/json'} : {})},
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await res.body.text();
    if (res.statusCode >= 400) throw new Error(`${method} ${path}: ${res.statusCode} ${text}`);
    return text ? JSON.parse(text) : null;
  } finally {
    await pool.close();
  }
}

/** One GET read to the end (pausing `pauseMs` after each chunk): seconds, bytes, peak RSS growth. */
export async function read(
  s: Server,
  path: string,
  pauseMs: number,
): Promise<{secs: number; bytes: number; growthMb: number}> {
  const pool = clientPool(s.url, 1);
  try {
    // Opened, column statistics known: the baseline is the server at rest with the document open.
    await (
      await request(pool, {method: 'GET', path: `${path}?limit=1`, headers: {authorization: `Bearer ${s.key}`}})
    ).body.text();
    await new Promise((r) => setTimeout(r, 300));
    const before = rssMb(s.proc.pid!);
    let peak = before;
    const timer = setInterval(() => {
      peak = Math.max(peak, rssMb(s.proc.pid!));
    }, 10);
    const t = now();
    let bytes = 0;
    try {
      const res = await request(pool, {method: 'GET', path, headers: {authorization: `Bearer ${s.key}`}});
      for await (const chunk of res.body) {
        bytes += chunk.length;
        if (pauseMs) await new Promise((r) => setTimeout(r, pauseMs));
      }
    } finally {
      clearInterval(timer);
    }
    peak = Math.max(peak, rssMb(s.proc.pid!));
    return {secs: (now() - t) / 1000, bytes, growthMb: peak - before};
  } finally {
    await pool.close();
  }
}

/** Raw SELECT + records + JSON.stringify of the same rows (the limit of a whole-table fetch). */
function rawLimit(file: string): number {
  const db = new Database(file, {readonly: true});
  try {
    const t = now();
    const rows = db
      .prepare(`SELECT id, Name, Qty, Price, Active, Day FROM ${TABLE} ORDER BY id`)
      .raw(true)
      .all() as unknown[][];
    const records = new Array(rows.length);
    for (let i = 0; i < rows.length; i++) {
      const r = rows[i];
      records[i] = {id: r[0], fields: {Name: r[1], Qty: r[2], Price: r[3], Active: r[4] === 1, Day: r[5]}};
    }
    const bytes = Buffer.byteLength(JSON.stringify({records}));
    if (!bytes) throw new Error('empty');
    return rows.length / ((now() - t) / 1000);
  } finally {
    db.close();
  }
}

/** A `gristlite serve` data directory holding a document with ROWS rows in TABLE; its id. */
export async function prepareStreamDoc(dataDir: string): Promise<string> {
  const s = await startServer(dataDir, {GRISTLITE_MAX_BODY_BYTES: String(32 * 1024 * 1024)});
  try {
    const org = ((await api(s, 'GET', '/api/orgs')) as {id: number}[])[0].id;
    const ws = ((await api(s, 'GET', `/api/orgs/${org}/workspaces`)) as {id: number}[])[0].id;
    const docId = (await api(s, 'POST', `/api/workspaces/${ws}/docs`, {name: 'stream'})) as string;
    await api(s, 'POST', `/api/docs/${docId}/tables`, {tables: [{id: TABLE, columns: COLUMNS}]});
    for (let i = 0; i < ROWS; i += 20_000) {
      const records = makeRows(Math.min(20_000, ROWS - i), i).map((fields) => ({fields}));
      await api(s, 'POST', `/api/docs/${docId}/tables/${TABLE}/records`, {records});
    }
    return docId;
  } finally {
    s.proc.kill();
    await once(s.proc, 'exit');
  }
}

export async function streamScenarios(dir: string): Promise<Result[]> {
  const dataDir = join(dir, 'stream-server');
  const docId = await prepareStreamDoc(dataDir);
  let s: Server;
  const limit = Math.max(
    rawLimit(join(dataDir, 'docs', `${docId}.grist`)),
    rawLimit(join(dataDir, 'docs', `${docId}.grist`)),
  );
  const results: Result[] = [];
  const records = `/api/docs/${docId}/tables/${TABLE}/records`;
  const data = `/api/docs/${docId}/tables/${TABLE}/data`;
  // Streamed whatever the size (smoke runs too), or never.
  const on = {GRISTLITE_STREAM_MIN_CELLS: '1'};
  const off = {GRISTLITE_STREAM_MIN_CELLS: String(1e15)};
  const cases: Array<[string, string, number, Record<string, string>]> = [
    ['S1. GET /records of 1M rows, streamed', records, 0, on],
    ['S4. GET /records built whole (streaming off)', records, 0, off],
    ['S2. same as S1, client pausing 2 ms a chunk', records, 2, on],
    ['S3. GET /data of 1M rows, streamed', data, 0, on],
    ['S5. GET /data built whole (streaming off)', data, 0, off],
  ];
  // Each case RUNS times, the cases alternating (this machine's load drifts): the fastest run's
  // rate, the largest RSS growth of all runs.
  const runs = new Map<string, {secs: number; bytes: number; growthMb: number}>();
  for (let run = 0; run < RUNS; run++) {
    for (const [name, path, pauseMs, env] of cases) {
      // A fresh process for each, so that what one read leaves behind does not hide the next one's.
      s = await startServer(dataDir, env);
      try {
        const r = await read(s, path, pauseMs);
        const best = runs.get(name);
        runs.set(name, {
          secs: Math.min(best?.secs ?? Infinity, r.secs),
          bytes: r.bytes,
          growthMb: Math.max(best?.growthMb ?? 0, r.growthMb),
        });
      } finally {
        s.proc.kill();
        await once(s.proc, 'exit');
      }
    }
  }
  for (const [name, path, pauseMs, env] of cases) {
    const r = runs.get(name)!;
    const streamed = env === on;
    results.push(
      result({
        scenario: name.replace('1M', ROWS.toLocaleString('en-US')) + ' (peak MB: RSS growth)',
        unit: 'rows/s',
        rate: ROWS / r.secs,
        limit: pauseMs ? null : limit,
        peakRssMb: r.growthMb,
        ...(streamed ? {maxMb: 64} : {}),
        ...(streamed && !pauseMs && path === records ? {ratioTarget: 0.95} : {}),
        target: streamed
          ? `RSS growth < 64 MB${!pauseMs && path === records ? '; >= 0.95 of raw SELECT + JSON' : ''}`
          : 'report (before)',
        note: `${(r.bytes / 1e6).toFixed(0)} MB in ${r.secs.toFixed(2)} s (best of ${RUNS})`,
      }),
    );
  }
  return results;
}
