/**
 * Mixed realistic load (issue 28): 8 clients for 30 s on one document over HTTP, against
 * `gristlite serve` in its own process. The document holds the bench's 100k-row table with one
 * formula column; every request is drawn from a fixed mix of reads, writes, add-or-updates and
 * SQL by a seeded generator, so that runs are comparable. Writes retire cached answers as they come,
 * so most reads are computed, not replayed. Judged absolutely (>= 810 req/s, no error, p99 <= 30 ms):
 * the request pipeline is what it measures, and the same run reports its CPU per request.
 */
import {join} from 'node:path';
import {seededRandom} from '@gristlite/core/testing';
import {COLUMNS, clientPool, cpuMs, makeRows, now, percentile, request, type Result} from './lib.js';
import {call, drive, newDoc, result, startServer} from './scenarios.js';

const ROWS = Number(process.env.BENCH_ROWS ?? 100_000);
const SECONDS = Number(process.env.BENCH_MIXED_SECONDS ?? 30);
const CLIENTS = 8;

/** The mix, by weight (percent): what one client asks next. */
type Kind = 'byIds' | 'firstPage' | 'filtered' | 'sql' | 'columns' | 'patch' | 'add' | 'upsert';
const MIX: Array<[Kind, number]> = [
  ['byIds', 25], // GET /records?filter={"id":[20 ids]}: a form or a card reading its rows
  ['firstPage', 15], // GET /records?limit=100: a list's first page
  ['filtered', 5], // GET /records filtered, sorted on two columns, limit 100: a dashboard (scans the table)
  ['sql', 10], // GET /sql: one row by id
  ['columns', 5], // GET /columns: a client learning the schema
  ['patch', 20], // PATCH 1-5 records
  ['add', 10], // POST 10 records
  ['upsert', 10], // PUT 10 records keyed on Name, half of them existing
];

export async function mixedScenarios(dir: string): Promise<Result[]> {
  const server = await startServer(join(dir, 'mixed-server'));
  const pool = clientPool(server.url, 32);
  const req = (method: string, path: string, body?: unknown) => call(pool, server.key, method, path, body);
  try {
    const docId = await newDoc(pool, server.key, 'mixed');
    const base = `/api/docs/${docId}`;
    await req('POST', `${base}/tables`, {tables: [{id: 'Items', columns: COLUMNS}]});
    for (let i = 0; i < ROWS; i += 10_000) {
      await req('POST', `${base}/tables/Items/records`, {
        records: makeRows(Math.min(10_000, ROWS - i), i).map((fields) => ({fields})),
      });
    }
    await req('POST', `${base}/tables/Items/columns`, {
      columns: [{id: 'Total', fields: {type: 'Numeric', isFormula: true, formula: '$Qty * $Price'}}],
    });

    let added = ROWS;
    const send = async (kind: Kind, rnd: () => number): Promise<number> => {
      const id = 1 + Math.floor(rnd() * ROWS);
      let method = 'GET';
      let path: string;
      let body: unknown;
      switch (kind) {
        case 'byIds':
          path = `${base}/tables/Items/records?filter=${encodeURIComponent(
            JSON.stringify({id: Array.from({length: 20}, (_, i) => ((id + i * 37) % ROWS) + 1)}),
          )}`;
          break;
        case 'firstPage':
          path = `${base}/tables/Items/records?limit=100`;
          break;
        case 'filtered':
          path = `${base}/tables/Items/records?filter=${encodeURIComponent(
            JSON.stringify({Active: [rnd() < 0.5]}),
          )}&sort=Qty,-Price&limit=100`;
          break;
        case 'sql':
          path = `${base}/sql?q=${encodeURIComponent(`select id, Name, Qty from Items where id = ${id}`)}`;
          break;
        case 'columns':
          path = `${base}/tables/Items/columns`;
          break;
        case 'patch':
          method = 'PATCH';
          path = `${base}/tables/Items/records`;
          body = {
            records: Array.from({length: 1 + Math.floor(rnd() * 5)}, (_, i) => ({
              id: ((id + i * 101) % ROWS) + 1,
              fields: {Qty: Math.floor(rnd() * 1000), Active: rnd() < 0.5},
            })),
          };
          break;
        case 'add':
          method = 'POST';
          path = `${base}/tables/Items/records`;
          body = {records: makeRows(10, (added += 10)).map((fields) => ({fields}))};
          break;
        case 'upsert':
          method = 'PUT';
          path = `${base}/tables/Items/records`;
          // Half of the keys exist (rows of the initial table), half are new.
          body = {
            records: makeRows(10, id).map((r, i) => ({
              require: {Name: i % 2 ? r.Name : `new-${id}-${i}`},
              fields: {Qty: r.Qty + 1},
            })),
          };
          break;
      }
      const res = await request(pool, {
        method: method as 'GET',
        path,
        headers: {
          authorization: `Bearer ${server.key}`,
          ...(body ? {'content-type': 'application/json'} : {}),
        },
        body: body ? JSON.stringify(body) : undefined,
      });
      await res.body.dump();
      return res.statusCode;
    };
    const total = MIX.reduce((n, [, w]) => n + w, 0);
    const pick = (r: number): Kind => {
      let x = r * total;
      for (const [kind, w] of MIX) if ((x -= w) < 0) return kind;
      return MIX[MIX.length - 1][0];
    };
    let errors = 0;
    // Each client draws from its own generator, the same sequence in each phase.
    const run = (ms: number, lat?: number[]) => {
      const rnds = Array.from({length: CLIENTS}, (_, c) => seededRandom(c + 1));
      return drive(
        CLIENTS,
        ms,
        async (c) => {
          if ((await send(pick(rnds[c]()), rnds[c])) >= 400) errors++;
        },
        lat,
      );
    };
    await run(Math.min(2, SECONDS) * 1000);
    errors = 0;
    const lat: number[] = [];
    const cpu0 = cpuMs(server.proc.pid!);
    const t = now();
    const done = await run(SECONDS * 1000, lat);
    const elapsed = (now() - t) / 1000;
    const cpuUs = ((cpuMs(server.proc.pid!) - cpu0) * 1000) / done;
    const rate = done / elapsed;
    const p99 = percentile(lat, 99);
    return [
      result({
        scenario: `mixed load, ${CLIENTS} clients, ${SECONDS} s, one ${ROWS}-row document`,
        unit: 'req/s',
        rate,
        limit: null,
        p50Ms: percentile(lat, 50),
        p99Ms: p99,
        target: '>= 810 req/s, 0 errors, p99 <= 30 ms',
        minRate: errors === 0 && p99 <= 30 ? 810 : Infinity,
        note: `${errors} errors of ${done}; server CPU ${cpuUs.toFixed(0)} us/request; mix ${MIX.map(([k, w]) => `${k} ${w}%`).join(', ')}`,
      }),
    ];
  } finally {
    await pool.close();
    server.proc.kill();
  }
}
