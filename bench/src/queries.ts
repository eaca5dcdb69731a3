/**
 * Conditions, counts, aggregates and writes by condition (issue 40, Q1-Q5), in-process on 100k
 * rows (BENCH_QUERY_ROWS=1000000 for the 1M run), each against the same question asked of
 * SQLite directly on the document's own connection, measured in the same run (the limit):
 * Q1 a `where` SQL answers against the same SELECT plus JSON.stringify of its records, Q2 a
 * count against `count(*)`, Q3 an aggregate against the same GROUP BY plus JSON.stringify, Q4 an
 * update by condition of 10k rows against the same update with the ids listed, Q5 a condition
 * the formula engine evaluates (reported against the SQL condition of Q1's size, no target).
 */
import {join} from 'node:path';
import {GristDoc} from '@gristlite/core/internal';
import {COLUMNS, gc, latencies, makeRows, percentile, type Result} from './lib.js';
import {result} from './scenarios.js';

const ROWS = Number(process.env.BENCH_QUERY_ROWS ?? 100_000);
const RUNS = Number(process.env.BENCH_QUERY_RUNS ?? 9);

/** Median ms of `a` and of `b`, run alternately (both meet the same state of the process). */
async function paired(
  a: () => unknown,
  b: () => unknown,
  before: () => unknown,
  runs = RUNS,
): Promise<[number, number]> {
  const as: number[] = [];
  const bs: number[] = [];
  for (let i = 0; i < runs; i++) {
    as.push(...(await latencies(1, a, before)));
    bs.push(...(await latencies(1, b, before)));
  }
  return [percentile(as, 50), percentile(bs, 50)];
}

export async function queryScenarios(dir: string): Promise<Result[]> {
  const path = join(dir, 'queries.grist');
  GristDoc.create(path).close();
  // Q5 measures the engine path's rate: at 1M rows it needs about the 1 s a request's condition may
  // take by default (GRISTLITE_WHERE_MAX_MSEC), so the bench lifts that bound (to the formula one).
  const doc = GristDoc.open(path, {where: {maxMs: 60_000}});
  doc.addTables([
    {id: 'Tick', columns: [{id: 'N', fields: {type: 'Int'}}]},
    {id: 'Items', columns: COLUMNS},
  ]);
  doc.addRecords('Tick', [{N: 0}]);
  for (let i = 0; i < ROWS; i += 50_000) {
    const part = makeRows(Math.min(50_000, ROWS - i), i);
    const col = <K extends keyof (typeof part)[0]>(k: K) => part.map((r) => r[k]);
    doc.addColumnar(
      'Items',
      {Name: col('Name'), Qty: col('Qty'), Price: col('Price'), Active: col('Active'), Day: col('Day')},
      {parse: false},
    );
  }
  let tick = 0;
  // A write before each read retires the read cache's answer (readcache.ts): every read runs.
  const cold = () => doc.updateRecords('Tick', [{id: 1, fields: {N: ++tick}}]);
  const db = doc.db;
  const results: Result[] = [];
  gc();

  // Q1: rows with Qty > 990 (about 0.9%) and Price < 500.
  const rawWhere = db.prepare(
    'SELECT id, Name, Qty, Price, Active, Day FROM Items WHERE Qty > 990 AND Price < 500 ORDER BY id',
  );
  const raw1 = () => {
    const records = (rawWhere.raw(true).all() as unknown[][]).map((r) => ({
      id: r[0],
      fields: {Name: r[1], Qty: r[2], Price: r[3], Active: r[4] === 1, Day: r[5]},
    }));
    return JSON.stringify({records});
  };
  const where1 = '$Qty > 990 and $Price < 500';
  const eng1 = () => doc.fetchRecordsJson('Items', {where: where1});
  if (JSON.parse(eng1()).records.length !== JSON.parse(raw1()).records.length) throw new Error('Q1: not the same rows');
  const [e1, r1] = await paired(eng1, raw1, cold);
  results.push(
    result({
      scenario: `Q1. where (SQL) on ${ROWS} rows, records as JSON`,
      unit: 'reads/s',
      rate: 1000 / e1,
      limit: 1000 / r1,
      ratioTarget: 1 / 1.5,
      target: '>= 1/1.5 of raw SELECT + JSON',
      p50Ms: e1,
    }),
  );

  // Q2: how many rows have Qty > 500.
  const rawCount = db.prepare('SELECT count(*) FROM Items WHERE Qty > 500').pluck();
  const eng2 = () => doc.countRecords('Items', {where: '$Qty > 500'});
  if (eng2() !== rawCount.get()) throw new Error('Q2: not the same count');
  const [e2, r2] = await paired(eng2, () => rawCount.get(), cold);
  results.push(
    result({
      scenario: `Q2. count where (SQL) on ${ROWS} rows`,
      unit: 'counts/s',
      rate: 1000 / e2,
      limit: 1000 / r2,
      ratioTarget: 1 / 1.5,
      target: '>= 1/1.5 of raw count(*)',
      p50Ms: e2,
    }),
  );

  // Q3: 1000 groups (Qty) with count, sum and average of Price.
  const rawGroup = db.prepare(
    'SELECT Qty, count(*), sum(Price), avg(Price) FROM Items GROUP BY Qty ORDER BY Qty LIMIT 10001',
  );
  const raw3 = () => {
    const records = (rawGroup.raw(true).all() as unknown[][]).map((r) => ({
      fields: {Qty: r[0], count: r[1], sum_Price: r[2], avg_Price: r[3]},
    }));
    return JSON.stringify({records});
  };
  const eng3 = () =>
    JSON.stringify(doc.aggregate('Items', {groupBy: ['Qty'], agg: ['count', 'sum:Price', 'avg:Price']}));
  if (eng3() !== raw3()) throw new Error('Q3: not the same groups');
  const [e3, r3] = await paired(eng3, raw3, cold);
  results.push(
    result({
      scenario: `Q3. aggregate, 1000 groups of ${ROWS} rows`,
      unit: 'answers/s',
      rate: 1000 / e3,
      limit: 1000 / r3,
      ratioTarget: 1 / 1.5,
      target: '>= 1/1.5 of raw GROUP BY + JSON',
      p50Ms: e3,
    }),
  );

  // Q4: the 10k rows with Qty < 100 (of 100k; 100k of 1M: Qty < 10), a new Price each time.
  const cut = Math.max(1, Math.round((10_000 / ROWS) * 1000));
  const ids = (db.prepare(`SELECT id FROM Items WHERE Qty < ${cut} ORDER BY id`).pluck().all() as number[]).slice();
  let price = 1;
  const byWhere = () => doc.updateRecordsWhere('Items', `$Qty < ${cut}`, {Price: ++price});
  const byIds = () => {
    const p = ++price;
    doc.updateRecords(
      'Items',
      ids.map((id) => ({id, fields: {Price: p}})),
    );
  };
  if (byWhere().length !== ids.length) throw new Error('Q4: not the same rows');
  const [e4, r4] = await paired(byWhere, byIds, () => undefined, Math.max(3, Math.floor(RUNS / 2)));
  results.push(
    result({
      scenario: `Q4. update by condition, ${ids.length} of ${ROWS} rows`,
      unit: 'writes/s',
      rate: 1000 / e4,
      limit: 1000 / r4,
      ratioTarget: 1 / 2,
      target: '>= 1/2 of the listed-ids update',
      p50Ms: e4,
    }),
  );

  // Q5: a condition SQL does not translate (a text method): the engine evaluates every row.
  const where5 = '$Name.upper().endswith("77")';
  const eng5 = () => doc.fetchRecordsJson('Items', {where: where5});
  const [e5, s5] = await paired(eng5, eng1, cold, 3);
  results.push(
    result({
      scenario: `Q5. where through the formula engine, ${ROWS} rows evaluated`,
      unit: 'rows/s',
      rate: (ROWS * 1000) / e5,
      limit: null,
      target: 'reported (no target)',
      p50Ms: e5,
      note: `the SQL where of Q1: ${s5.toFixed(1)} ms`,
    }),
  );
  doc.close();
  return results;
}
