/**
 * The scenarios of issue 6. Each measures gristlite and, in the same run, the physical limit it is
 * compared with: raw better-sqlite3 for the engine, a bare node:http server for the transport.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { Engine, GristDoc } from '@gristlite/core';
import { Pool } from 'undici';
import { COLUMNS, latencies, makeRows, now, peakRssMb, percentile, type Result } from './lib.js';

const ROWS = Number(process.env.BENCH_ROWS ?? 100_000);
const CSV_ROWS = Number(process.env.BENCH_CSV_ROWS ?? 1_000_000);
const TABLE = 'Items';

function result(r: Omit<Result, 'ratio' | 'met'> & { ratioTarget?: number; maxMs?: number; maxMb?: number; minRate?: number }): Result {
  const ratio = r.limit ? r.rate / r.limit : null;
  let met = true;
  if (r.ratioTarget !== undefined) met &&= ratio !== null && ratio >= r.ratioTarget;
  if (r.maxMs !== undefined) met &&= (r.p50Ms ?? Infinity) < r.maxMs;
  if (r.maxMb !== undefined) met &&= (r.peakRssMb ?? Infinity) < r.maxMb;
  if (r.minRate !== undefined) met &&= r.rate >= r.minRate;
  const { ratioTarget: _a, maxMs: _b, maxMb: _c, minRate: _d, ...rest } = r;
  return { ...rest, ratio, met };
}

// ------------------------------------------------------------------------------- raw limits

function rawDb(dir: string): Database.Database {
  const db = new Database(join(dir, `raw-${Math.random().toString(36).slice(2)}.sqlite`));
  db.pragma('journal_mode = WAL');
  db.exec(`CREATE TABLE ${TABLE} (id INTEGER PRIMARY KEY, manualSort NUMERIC, Name TEXT, Qty INTEGER, Price NUMERIC, Active BOOLEAN, Day DATE)`);
  return db;
}

function rawInsert(db: Database.Database, rows: ReturnType<typeof makeRows>, startId = 1): void {
  const stmt = db.prepare(`INSERT INTO ${TABLE} (id, manualSort, Name, Qty, Price, Active, Day) VALUES (?, ?, ?, ?, ?, ?, ?)`);
  db.transaction(() => {
    rows.forEach((r, i) => stmt.run(startId + i, startId + i, r.Name, r.Qty, r.Price, r.Active ? 1 : 0, r.Day));
  })();
}

/** Raw SELECT + JSON in the API's record shape: the limit for a fetch. */
function rawFetchJson(db: Database.Database, sql: string, params: unknown[] = []): string {
  const rows = db.prepare(sql).raw(true).all(...params) as unknown[][];
  const records = new Array(rows.length);
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i];
    records[i] = { id: r[0], fields: { Name: r[2], Qty: r[3], Price: r[4], Active: r[5] === 1, Day: r[6] } };
  }
  return JSON.stringify({ records });
}

const FILTER_SQL = `SELECT id, manualSort, Name, Qty, Price, Active, Day FROM ${TABLE} WHERE Active IN (1) ORDER BY Qty, Price DESC, id LIMIT 100`;

// ------------------------------------------------------------------------------- in-process

function addInBatches(doc: GristDoc, rows: ReturnType<typeof makeRows>, batch: number): void {
  for (let i = 0; i < rows.length; i += batch) doc.addRecords(TABLE, rows.slice(i, i + batch));
}

/** Scenarios 1-3 on `doc` (an engine-owned document, so that SQL can run on it afterwards). */
export async function inProcess(dir: string, doc: GristDoc): Promise<{ results: Result[]; raw: Database.Database }> {
  doc.addTables([{ id: TABLE, columns: COLUMNS }]);
  const results: Result[] = [];
  const rows = makeRows(ROWS);

  // 1. bulk add, batches of 500, vs raw prepared INSERTs in one transaction.
  const raw = rawDb(dir);
  let t = now();
  rawInsert(raw, rows);
  const rawInsertRate = ROWS / ((now() - t) / 1000);
  t = now();
  addInBatches(doc, rows, 500);
  const addRate = ROWS / ((now() - t) / 1000);
  results.push(result({ scenario: `1. add ${ROWS} records (batches of 500), in-process`, unit: 'rows/s', rate: addRate, limit: rawInsertRate, target: '>= 0.5 of raw', ratioTarget: 0.5 }));

  // 2. fetch all, and filter + two-column sort + limit, vs raw SELECT + JSON.
  const rawAll = await latencies(5, () => rawFetchJson(raw, `SELECT id, manualSort, Name, Qty, Price, Active, Day FROM ${TABLE} ORDER BY id`));
  const engAll = await latencies(5, () => JSON.stringify(doc.fetchRecords(TABLE)));
  results.push(result({
    scenario: `2a. fetch ${ROWS} records + JSON, in-process`, unit: 'rows/s',
    rate: ROWS / (percentile(engAll, 50) / 1000), limit: ROWS / (percentile(rawAll, 50) / 1000),
    p50Ms: percentile(engAll, 50), p99Ms: percentile(engAll, 99), target: '>= 0.5 of raw', ratioTarget: 0.5,
  }));
  const rawQ = await latencies(50, () => rawFetchJson(raw, FILTER_SQL));
  const engQ = await latencies(50, () =>
    JSON.stringify(doc.fetchRecords(TABLE, { filter: { Active: [true] }, sort: 'Qty,-Price', limit: 100 })),
  );
  results.push(result({
    scenario: '2b. filter + 2-col sort + limit 100, in-process', unit: 'queries/s',
    rate: 1000 / percentile(engQ, 50), limit: 1000 / percentile(rawQ, 50),
    p50Ms: percentile(engQ, 50), p99Ms: percentile(engQ, 99), target: '>= 0.5 of raw', ratioTarget: 0.5,
  }));

  // 3. add-or-update of 10k records keyed on Text against the table, vs raw lookup+update/insert.
  const upserts = makeRows(10_000, ROWS - 5_000).map((r) => ({ require: { Name: r.Name }, fields: { Qty: r.Qty + 1, Price: r.Price } }));
  raw.exec(`CREATE INDEX raw_name ON ${TABLE}(Name)`);
  const find = raw.prepare(`SELECT id FROM ${TABLE} WHERE Name = ?`);
  const upd = raw.prepare(`UPDATE ${TABLE} SET Qty = ?, Price = ? WHERE id = ?`);
  const ins = raw.prepare(`INSERT INTO ${TABLE} (Name, Qty, Price) VALUES (?, ?, ?)`);
  t = now();
  raw.transaction(() => {
    for (const u of upserts) {
      const hit = find.get(u.require.Name) as { id: number } | undefined;
      if (hit) upd.run(u.fields.Qty, u.fields.Price, hit.id);
      else ins.run(u.require.Name, u.fields.Qty, u.fields.Price);
    }
  })();
  const rawUpsertRate = upserts.length / ((now() - t) / 1000);
  t = now();
  doc.upsertRecords(TABLE, upserts);
  const upsertMs = now() - t;
  results.push(result({
    scenario: `3. add-or-update 10k records vs ${ROWS}-row table`, unit: 'rows/s', rate: upserts.length / (upsertMs / 1000),
    limit: rawUpsertRate, p50Ms: upsertMs, target: 'report (raw uses an index)',
  }));
  return { results, raw };
}

export async function sqlInProcess(engine: Engine, docId: string, raw: Database.Database): Promise<Result[]> {
  const out: Result[] = [];
  const cases = [
    { name: '6a. SQL trivial query', sql: `SELECT id, Name FROM ${TABLE} WHERE id = 42` },
    { name: '6b. SQL aggregate over the table', sql: `SELECT Active, count(*) AS n, sum(Price) AS total, avg(Qty) AS q FROM ${TABLE} GROUP BY Active` },
  ];
  for (const c of cases) {
    await engine.runSql(docId, c.sql, null); // warm the worker's connection
    const mine = await latencies(c.name.startsWith('6a') ? 300 : 20, () => engine.runSql(docId, c.sql, null));
    const base = await latencies(c.name.startsWith('6a') ? 300 : 20, () => JSON.stringify(raw.prepare(`select * from (${c.sql})`).all()));
    out.push(result({
      scenario: `${c.name}, in-process`, unit: 'queries/s', rate: 1000 / percentile(mine, 50), limit: 1000 / percentile(base, 50),
      p50Ms: percentile(mine, 50), p99Ms: percentile(mine, 99),
      target: c.name.startsWith('6a') ? 'report (process hop)' : '>= 0.67 of raw (within 1.5x)',
      ...(c.name.startsWith('6a') ? {} : { ratioTarget: 1 / 1.5 }),
    }));
  }
  return out;
}

// ------------------------------------------------------------------------------- over HTTP

interface Server {
  url: string;
  proc: ChildProcess;
  key: string;
}

/** Starts `gristlite serve` as its own process, as `pnpm start` does. */
async function startServer(dataDir: string): Promise<Server> {
  const key = 'b'.repeat(40);
  const main = new URL('../../packages/cli/dist/src/main.js', import.meta.url).pathname;
  const proc = spawn(process.execPath, [main, 'serve', '--port', '0'], {
    env: { ...process.env, GRISTLITE_DATA_DIR: dataDir, GRISTLITE_API_KEY: key },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let buf = '';
    proc.stdout!.on('data', (d) => {
      buf += d;
      const m = /listening on (http:\/\/\S+)/.exec(buf);
      if (m) resolve(m[1]);
    });
    proc.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
  });
  return { url, proc, key };
}

async function call(pool: Pool, key: string, method: string, path: string, body?: unknown): Promise<{ status: number; text: string }> {
  const res = await pool.request({
    method: method as 'GET',
    path,
    headers: { authorization: `Bearer ${key}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.body.text();
  if (res.statusCode >= 400) throw new Error(`${method} ${path}: ${res.statusCode} ${text}`);
  return { status: res.statusCode, text };
}

/** Requests/s for `total` requests at a given concurrency, with latencies. */
async function loadTest(concurrency: number, total: number, fn: () => Promise<unknown>) {
  const lat: number[] = [];
  let next = 0;
  const t = now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next++ < total) {
        const s = now();
        await fn();
        lat.push(now() - s);
      }
    }),
  );
  return { rate: total / ((now() - t) / 1000), p50: percentile(lat, 50), p99: percentile(lat, 99) };
}

/** A bare node:http server answering every request with the same bytes: the transport limit. */
async function bareServer(bytes: string): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    req.resume();
    res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8' });
    res.end(bytes);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const addr = server.address() as { port: number };
  return { url: `http://127.0.0.1:${addr.port}`, close: () => new Promise((r) => server.close(() => r())) };
}

export async function overHttp(dir: string, raw: Database.Database): Promise<Result[]> {
  const results: Result[] = [];
  const server = await startServer(join(dir, 'server'));
  const pool = new Pool(server.url, { connections: 32 });
  try {
    const wsList = JSON.parse((await call(pool, server.key, 'GET', '/api/orgs/docs/workspaces')).text);
    const docId = JSON.parse((await call(pool, server.key, 'POST', `/api/workspaces/${wsList[0].id}/docs`, { name: 'bench' })).text);
    const base = `/api/docs/${docId}/tables`;
    await call(pool, server.key, 'POST', `/api/docs/${docId}/tables`, { tables: [{ id: TABLE, columns: COLUMNS }] });

    // Target: adding in batches of 500 over HTTP >= 25% of the raw insert rate.
    const rows = makeRows(ROWS);
    const rawT = now();
    rawInsert(rawDb(dir), rows);
    const rawInsertRate = ROWS / ((now() - rawT) / 1000);
    let t = now();
    for (let i = 0; i < rows.length; i += 500) {
      await call(pool, server.key, 'POST', `${base}/${TABLE}/records`, { records: rows.slice(i, i + 500).map((fields) => ({ fields })) });
    }
    const addRate = ROWS / ((now() - t) / 1000);
    results.push(result({ scenario: `add ${ROWS} records over HTTP, batches of 500`, unit: 'rows/s', rate: addRate, limit: rawInsertRate, target: '>= 0.25 of raw', ratioTarget: 0.25 }));

    // 5. add in batches of 100 through the Node adapter.
    const small = makeRows(20_000, ROWS);
    t = now();
    for (let i = 0; i < small.length; i += 100) {
      await call(pool, server.key, 'POST', `${base}/${TABLE}/records`, { records: small.slice(i, i + 100).map((fields) => ({ fields })) });
    }
    results.push(result({ scenario: '5. add records over HTTP, batches of 100', unit: 'rows/s', rate: small.length / ((now() - t) / 1000), limit: rawInsertRate, target: 'report' }));
    await call(pool, server.key, 'POST', `${base}/${TABLE}/records/delete`, Array.from({ length: small.length }, (_, i) => ROWS + 1 + i));

    // Fetch the whole table over HTTP (client JSON parse included) vs raw SELECT + JSON.stringify.
    const rawFetch = await latencies(5, () => rawFetchJson(raw, `SELECT id, manualSort, Name, Qty, Price, Active, Day FROM ${TABLE} ORDER BY id`));
    const httpFetch = await latencies(5, async () => JSON.parse((await call(pool, server.key, 'GET', `${base}/${TABLE}/records`)).text));
    results.push(result({
      scenario: `fetch ${ROWS} records over HTTP (+ client parse)`, unit: 'rows/s', rate: ROWS / (percentile(httpFetch, 50) / 1000),
      limit: ROWS / (percentile(rawFetch, 50) / 1000), p50Ms: percentile(httpFetch, 50), target: '>= 0.85 of raw', ratioTarget: 0.85,
    }));

    // Filter + two-column sort + limit 100 under 5 ms.
    const q = `${base}/${TABLE}/records?filter=${encodeURIComponent('{"Active":[true]}')}&sort=Qty,-Price&limit=100`;
    const fq = await latencies(100, () => call(pool, server.key, 'GET', q));
    results.push(result({ scenario: 'filter + 2-col sort + limit 100 over HTTP', unit: 'req/s', rate: 1000 / percentile(fq, 50), limit: null, p50Ms: percentile(fq, 50), p99Ms: percentile(fq, 99), target: 'p50 < 5 ms', maxMs: 5 }));

    // Trivial SQL under 2 ms; aggregate SQL over HTTP.
    const sq = await latencies(200, () => call(pool, server.key, 'GET', `/api/docs/${docId}/sql?q=${encodeURIComponent(`select id, Name from ${TABLE} where id = 42`)}`));
    results.push(result({ scenario: '6c. SQL trivial query over HTTP', unit: 'req/s', rate: 1000 / percentile(sq, 50), limit: null, p50Ms: percentile(sq, 50), p99Ms: percentile(sq, 99), target: 'p50 < 2 ms', maxMs: 2 }));
    const aggSql = `SELECT Active, count(*) AS n, sum(Price) AS total FROM ${TABLE} GROUP BY Active`;
    const ag = await latencies(20, () => call(pool, server.key, 'GET', `/api/docs/${docId}/sql?q=${encodeURIComponent(aggSql)}`));
    const agRaw = await latencies(20, () => JSON.stringify(raw.prepare(aggSql).all()));
    results.push(result({ scenario: '6d. SQL aggregate over HTTP', unit: 'queries/s', rate: 1000 / percentile(ag, 50), limit: 1000 / percentile(agRaw, 50), p50Ms: percentile(ag, 50), target: 'report' }));

    // 1000-row pages at concurrency 8 above 300 req/s.
    const page = `${base}/${TABLE}/records?sort=Name&limit=1000`;
    const pages = await loadTest(8, 400, () => call(pool, server.key, 'GET', page));
    results.push(result({ scenario: '1000-row pages, concurrency 8', unit: 'req/s', rate: pages.rate, limit: null, p50Ms: pages.p50, p99Ms: pages.p99, target: '> 300 req/s', minRate: 300 }));

    // Add-or-update of 2000 records keyed on Text (1000 matching, 1000 new) under 100 ms.
    const up = makeRows(2000, ROWS - 1000).map((r) => ({ require: { Name: r.Name }, fields: { Qty: r.Qty + 2 } }));
    t = now();
    await call(pool, server.key, 'PUT', `${base}/${TABLE}/records`, { records: up });
    const upMs = now() - t;
    results.push(result({ scenario: 'add-or-update 2000 (1000 match) over HTTP', unit: 'ms', rate: upMs, limit: null, p50Ms: upMs, target: '< 100 ms', maxMs: 100 }));

    // 4. fetch of a 10k-row table, concurrency 1 and 32, vs a bare server sending the same bytes.
    await call(pool, server.key, 'POST', `/api/docs/${docId}/tables`, { tables: [{ id: 'Small', columns: COLUMNS }] });
    const tenK = makeRows(10_000);
    for (let i = 0; i < tenK.length; i += 500) {
      await call(pool, server.key, 'POST', `${base}/Small/records`, { records: tenK.slice(i, i + 500).map((fields) => ({ fields })) });
    }
    const bytes = (await call(pool, server.key, 'GET', `${base}/Small/records`)).text;
    const bare = await bareServer(bytes);
    const barePool = new Pool(bare.url, { connections: 32 });
    try {
      for (const c of [1, 32]) {
        const n = c === 1 ? 100 : 400;
        const mine = await loadTest(c, n, () => call(pool, server.key, 'GET', `${base}/Small/records`));
        const lim = await loadTest(c, n, async () => (await barePool.request({ method: 'GET', path: '/' })).body.text());
        results.push(result({ scenario: `4. fetch 10k rows over HTTP, concurrency ${c}`, unit: 'req/s', rate: mine.rate, limit: lim.rate, p50Ms: mine.p50, p99Ms: mine.p99, target: '>= 0.5 of bare (within 2x)', ratioTarget: 0.5 }));
      }
    } finally {
      await barePool.close();
      await bare.close();
    }

    // 7. CSV download of a large table: throughput and the server's peak RSS.
    const csvRes = await pool.request({ method: 'GET', path: `/api/docs/${docId}/download/csv?tableId=${TABLE}`, headers: { authorization: `Bearer ${server.key}` } });
    if (csvRes.statusCode === 200) {
      // Grow the table to CSV_ROWS first.
      await csvRes.body.dump();
      for (let done = ROWS; done < CSV_ROWS; done += 500) {
        await call(pool, server.key, 'POST', `${base}/${TABLE}/records`, { records: makeRows(Math.min(500, CSV_ROWS - done), done).map((fields) => ({ fields })) });
      }
      t = now();
      const res = await pool.request({ method: 'GET', path: `/api/docs/${docId}/download/csv?tableId=${TABLE}`, headers: { authorization: `Bearer ${server.key}` } });
      let bytesRead = 0;
      for await (const chunk of res.body) bytesRead += chunk.length;
      const secs = (now() - t) / 1000;
      results.push(result({ scenario: `7. CSV download of ${CSV_ROWS} rows`, unit: 'rows/s', rate: CSV_ROWS / secs, limit: null, peakRssMb: peakRssMb(server.proc.pid!), target: 'peak RSS < 300 MB', maxMb: 300, note: `${(bytesRead / 1e6).toFixed(0)} MB` }));
    } else {
      await csvRes.body.dump();
      results.push({ scenario: '7. CSV download', unit: '-', rate: NaN, limit: null, ratio: null, target: 'peak RSS < 300 MB', met: false, note: `CSV export answered ${csvRes.statusCode}` });
    }
  } finally {
    await pool.close();
    server.proc.kill();
  }
  return results;
}

export function tempDir(): { dir: string; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'gristlite-bench-'));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

