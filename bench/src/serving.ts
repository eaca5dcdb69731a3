/**
 * Issue 43 §2's serving rows: adding records over HTTP in batches of 500, and revalidating a page
 * (304) at concurrency 8, each beside a bare node:http server doing the transport's share of the
 * same requests. `BENCH_ONLY=serving` runs them alone on a fresh server (quick A/B runs, profiles
 * with BENCH_SERVER_NODE_ARGS); the http group runs the same functions in its sequence.
 */
import {createHash} from 'node:crypto';
import {createServer} from 'node:http';
import {join} from 'node:path';
import {GristDoc, historySettingsFromEnv} from '@gristlite/core/internal';
import type {Pool} from 'undici';
import {COLUMNS, clientPool, cpuMs, fmt, makeRows, now, type Result} from './lib.js';
import {call, loadTest, newDoc, rawDb, result, type Server, startServer} from './scenarios.js';

const ROWS = Number(process.env.BENCH_ROWS ?? 100_000);
/**
 * Batches each side of the HTTP add gets untimed first: a fresh server's first 20 batches cost
 * ~3.5x the later ones (measured in-process: 6 ms of CPU a batch, then 1.7), its JIT compiling
 * the add path, which a running server has long done (the bench's steady-state rule).
 */
const WARM_BATCHES = 20;
const TABLE = 'Items';

/** Starts a bare server (in the bench process) from `handler`; returns a pool to it and its close. */
async function bare(
  handler: Parameters<typeof createServer>[1],
  connections: number,
): Promise<{pool: Pool; close(): Promise<void>}> {
  const server = createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const pool = clientPool(`http://127.0.0.1:${(server.address() as {port: number}).port}`, connections);
  return {
    pool,
    close: async () => {
      await pool.close();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/**
 * Adds `rows` to `table` through `server` in batches of 500, one request after another; then the
 * same bodies to a bare server that reads and parses each and answers its ids (the transport and
 * JSON limit: same client, requests and bodies, no insert); then to one that also inserts them
 * raw, one transaction a request, 100 rows a prepared INSERT (what no implementation can remove:
 * transport, JSON and SQLite). Rates in rows/s.
 */
export async function httpAdd(
  dir: string,
  pool: Pool,
  server: Server,
  path: string,
  rows: ReturnType<typeof makeRows>,
): Promise<{
  addRate: number;
  parseRate: number;
  parseInsertRate: number;
  parseEngineRate: number;
  cpuPerBatchMs: number;
}> {
  const body = (i: number) => ({records: rows.slice(i, i + 500).map((fields) => ({fields}))});
  const warmBodies = Array.from({length: Math.min(WARM_BATCHES, Math.ceil(rows.length / 500))}, (_, k) =>
    body(k * 500),
  );
  // The server warms on a table of its own, so that the timed one grows from empty as before.
  const tables = path.replace(/\/tables\/[^/]+\/records$/, '/tables');
  await call(pool, server.key, 'POST', tables, {tables: [{id: 'WarmAdd', columns: COLUMNS}]});
  for (const b of warmBodies) await call(pool, server.key, 'POST', `${tables}/WarmAdd/records`, b);
  const cpu0 = cpuMs(server.proc.pid!);
  const t = now();
  for (let i = 0; i < rows.length; i += 500) await call(pool, server.key, 'POST', path, body(i));
  const addRate = rows.length / ((now() - t) / 1000);
  const cpuPerBatchMs = (cpuMs(server.proc.pid!) - cpu0) / Math.ceil(rows.length / 500);
  const parser = await bare((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const n = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as {records: unknown[]}).records.length;
      res.writeHead(200, {'Content-Type': 'application/json; charset=utf-8'});
      res.end(JSON.stringify({records: Array.from({length: n}, (_, i) => ({id: i + 1}))}));
    });
  }, 4);
  const send = async (to: Pool) => {
    for (const b of warmBodies) await call(to, server.key, 'POST', '/warm', b);
    const t0 = now();
    for (let i = 0; i < rows.length; i += 500) await call(to, server.key, 'POST', '/records', body(i));
    return rows.length / ((now() - t0) / 1000);
  };
  let parseRate: number;
  try {
    parseRate = await send(parser.pool);
  } finally {
    await parser.close();
  }
  const db = rawDb(dir);
  const cols = '(id, manualSort, Name, Qty, Price, Active, Day)';
  const many = db.prepare(
    `INSERT INTO ${TABLE} ${cols} VALUES ${new Array(100).fill('(?, ?, ?, ?, ?, ?, ?)').join(', ')}`,
  );
  const one = db.prepare(`INSERT INTO ${TABLE} ${cols} VALUES (?, ?, ?, ?, ?, ?, ?)`);
  let nextId = 1;
  const insert = db.transaction((records: {fields: ReturnType<typeof makeRows>[number]}[]) => {
    const ids: number[] = [];
    for (let start = 0; start < records.length; ) {
      const n = records.length - start >= 100 ? 100 : 1;
      const params: unknown[] = [];
      for (let i = start; i < start + n; i++) {
        const f = records[i].fields;
        const id = nextId++;
        ids.push(id);
        params.push(id, id, f.Name, f.Qty, f.Price, f.Active ? 1 : 0, f.Day);
      }
      (n === 1 ? one : many).run(...params);
      start += n;
    }
    return ids;
  });
  // Its warm-up inserts and rolls back, so that the timed inserts start on the same empty table.
  const rolledBack = new Error('warm-up');
  const warmInsert = db.transaction((records: {fields: ReturnType<typeof makeRows>[number]}[]) => {
    insert(records);
    throw rolledBack;
  });
  const inserter = await bare((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const records = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as {records: []}).records;
      if (req.url === '/warm') {
        const first = nextId;
        try {
          warmInsert(records);
        } catch (e) {
          if (e !== rolledBack) throw e;
        }
        nextId = first;
        res.writeHead(200, {'Content-Type': 'application/json; charset=utf-8'});
        res.end(JSON.stringify({records: records.map((_, i) => ({id: first + i}))}));
        return;
      }
      const ids = insert(records);
      res.writeHead(200, {'Content-Type': 'application/json; charset=utf-8'});
      res.end(JSON.stringify({records: ids.map((id) => ({id}))}));
    });
  }, 4);
  let parseInsertRate: number;
  try {
    parseInsertRate = await send(inserter.pool);
  } finally {
    await inserter.close();
    db.close();
  }
  // The engine's own write with nothing of the server around it (D155): the same parse, then
  // GristDoc.addRecords in this process, with the action history as the server keeps it.
  const doc = GristDoc.create(join(dir, 'serving-engine.grist'), {history: historySettingsFromEnv(process.env)});
  doc.addTables([
    {id: 'WarmAdd', columns: COLUMNS},
    {id: TABLE, columns: COLUMNS},
  ]);
  const adder = await bare((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const records = (
        JSON.parse(Buffer.concat(chunks).toString('utf8')) as {records: {fields: ReturnType<typeof makeRows>[number]}[]}
      ).records;
      const ids = doc.addRecords(
        req.url === '/warm' ? 'WarmAdd' : TABLE,
        records.map((r) => r.fields),
      );
      res.writeHead(200, {'Content-Type': 'application/json; charset=utf-8'});
      res.end(JSON.stringify({records: ids.map((id) => ({id}))}));
    });
  }, 4);
  let parseEngineRate: number;
  try {
    parseEngineRate = await send(adder.pool);
  } finally {
    await adder.close();
    doc.close();
  }
  return {addRate, parseRate, parseInsertRate, parseEngineRate, cpuPerBatchMs};
}

/** The row comparing an HTTP add with the bare server parsing the same bodies (issue 43 §2). */
export function httpAddVsBare(addRate: number, parseRate: number): Result {
  return result({
    scenario: '  same, vs a bare server that parses the same bodies',
    unit: 'rows/s',
    rate: addRate,
    limit: parseRate,
    target: '>= 0.7 of bare (issue 43)',
    ratioTarget: 0.7,
    note: 'the transport and JSON limit: the same client, requests and bodies, no insert',
  });
}

/**
 * The add's own limit (issue 43 §2: the part no implementation could remove, measured as its own
 * row): a bare server that parses the same bodies and inserts them raw, one transaction each.
 */
export function httpAddVsParseInsert(addRate: number, parseInsertRate: number): Result {
  return result({
    scenario: '  same, vs a bare server that parses and inserts raw',
    unit: 'rows/s',
    rate: addRate,
    limit: parseInsertRate,
    target: 'report (the limit of the row above)',
    note: 'transport + JSON + SQLite: the bare server above plus 100-row prepared INSERTs, a transaction a request',
  });
}

/**
 * What the server spends beyond the engine (D155): against a bare server that parses the same
 * bodies and adds them through the engine in its own process (the write, its checks and action
 * history; no routing, authentication, access checks, validation, log line or answer pipeline).
 */
export function httpAddVsParseEngine(addRate: number, parseEngineRate: number): Result {
  return result({
    scenario: '  same, vs a bare server that parses and adds through the engine',
    unit: 'rows/s',
    rate: addRate,
    limit: parseEngineRate,
    target: 'report (the server pipeline share)',
    note: 'transport + JSON + GristDoc.addRecords in the bare server (in the bench process), history on',
  });
}

/**
 * 8 clients revalidating `page` with its ETag (304s) against a bare node:http server answering
 * 304 with no body to the same clients, in the same run (issue 28, D66; issue 43 §2).
 */
export async function revalidation(pool: Pool, server: Server, page: string, dir: string): Promise<Result[]> {
  const etag = (await pool.request({method: 'GET', path: page, headers: {authorization: `Bearer ${server.key}`}}))
    .headers.etag as string;
  let answered = 0;
  const revalidate = async () => {
    const res = await pool.request({
      method: 'GET',
      path: page,
      headers: {authorization: `Bearer ${server.key}`, 'if-none-match': etag},
    });
    await res.body.dump();
    if (res.statusCode !== 304) throw new Error(`revalidation answered ${res.statusCode}`);
    answered++;
  };
  const bare304 = await bare((req, res) => {
    req.resume();
    res.writeHead(304, {ETag: etag, 'Cache-Control': 'private, no-cache'});
    res.end();
  }, 32);
  // The tag's inputs (D156): the data stamp of a document (one read transaction on a file in
  // WAL mode, as gristlite's) and the sha256 of the same parts as revalidate.ts `dataEtag`.
  const stampDb = rawDb(dir);
  const stamp = stampDb
    .prepare(`SELECT total_changes(), (SELECT data_version FROM pragma_data_version),
      (SELECT schema_version FROM pragma_schema_version)`)
    .raw(true);
  const tagged304 = await bare((req, res) => {
    req.resume();
    const parts = [
      'run',
      'docId',
      'name',
      (stamp.get() as number[]).join('.'),
      5,
      'chimpy@getgrist.com',
      'owners',
      null,
      req.method,
      req.url,
      '',
      ...['x-sort', 'x-limit', 'host', 'x-forwarded-host', 'x-forwarded-proto'].map((h) => req.headers[h] ?? null),
    ];
    const tag = `"${createHash('sha256').update(JSON.stringify(parts)).digest('base64url').slice(0, 32)}"`;
    const current = req.headers['if-none-match'] === tag;
    res.writeHead(current ? 304 : 200, {ETag: tag, 'Cache-Control': 'private, no-cache'});
    res.end();
  }, 32);
  try {
    const cpu0 = cpuMs(server.proc.pid!);
    const mine = await loadTest(8, revalidate);
    // The server's CPU per 304 (untimed second included): steadier than the rate on a shared machine.
    const cpuUs = ((cpuMs(server.proc.pid!) - cpu0) / answered) * 1000;
    const lim = await loadTest(8, async () => {
      await (await bare304.pool.request({method: 'GET', path: '/'})).body.dump();
    });
    const first = await tagged304.pool.request({method: 'GET', path: page});
    await first.body.dump();
    const tag = first.headers.etag as string;
    const tagLim = await loadTest(8, async () => {
      const res = await tagged304.pool.request({method: 'GET', path: page, headers: {'if-none-match': tag}});
      await res.body.dump();
      if (res.statusCode !== 304) throw new Error(`the tagged bare server answered ${res.statusCode}`);
    });
    const row = result({
      scenario: 'revalidate a 1000-row page (If-None-Match -> 304), concurrency 8',
      unit: 'req/s',
      rate: mine.rate,
      limit: lim.rate,
      p50Ms: mine.p50,
      p99Ms: mine.p99,
      target: '>= 0.6 of bare (issue 43)',
      ratioTarget: 0.6,
      note: `limit: a bare node:http server answering 304 (in the bench process); server CPU ${fmt(cpuUs)} µs a 304`,
    });
    return [
      row,
      result({
        scenario: '  same, vs a bare server that also computes the tag from a data stamp',
        unit: 'req/s',
        rate: mine.rate,
        limit: tagLim.rate,
        target: 'report (the 304 row above without authentication, access or the log line)',
        note: 'the bare 304 server plus, per request, one SQLite read of a data stamp and the sha256 of the same parts',
      }),
    ];
  } finally {
    await bare304.close();
    await tagged304.close();
    stampDb.close();
  }
}

/** `BENCH_ONLY=serving`: the two rows alone, on a fresh server and document. */
export async function servingScenarios(dir: string): Promise<Result[]> {
  const server = await startServer(join(dir, 'serving'));
  const pool = clientPool(server.url, 32);
  const results: Result[] = [];
  try {
    const docId = await newDoc(pool, server.key, 'serving');
    const base = `/api/docs/${docId}/tables`;
    await call(pool, server.key, 'POST', base, {tables: [{id: TABLE, columns: COLUMNS}]});
    const {addRate, parseRate, parseInsertRate, parseEngineRate, cpuPerBatchMs} = await httpAdd(
      dir,
      pool,
      server,
      `${base}/${TABLE}/records`,
      makeRows(ROWS),
    );
    results.push(
      result({
        scenario: `add ${ROWS} records over HTTP, batches of 500`,
        unit: 'rows/s',
        rate: addRate,
        limit: null,
        target: 'report',
        note: `a bare server parsing the same bodies: ${fmt(parseRate)} rows/s; server CPU ${fmt(cpuPerBatchMs, 2)} ms a batch`,
      }),
      httpAddVsBare(addRate, parseRate),
      httpAddVsParseInsert(addRate, parseInsertRate),
      httpAddVsParseEngine(addRate, parseEngineRate),
      ...(await revalidation(pool, server, `${base}/${TABLE}/records?sort=Name&limit=1000`, dir)),
    );
  } finally {
    await pool.close();
    server.proc.kill();
  }
  return results;
}
