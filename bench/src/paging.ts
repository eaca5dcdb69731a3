/**
 * Cursor pagination (issue 30 §1), in-process: a page read through a cursor at the end of a
 * 1M-row table against the same page size at its start, measured in the same run (the limit).
 * Keyset cursors make both the same work: in id order a range seek on the primary key, sorted
 * one pass over the table keeping the page's rows (an offset would read every row before it).
 */
import {randomBytes} from 'node:crypto';
import {join} from 'node:path';
import {CursorCodec, GristDoc, cursorBinding, type PageEnd} from '@gristlite/core/internal';
import {gc, latencies, makeRows, percentile, type Result} from './lib.js';
import {result} from './scenarios.js';

const ROWS = Number(process.env.BENCH_PAGING_ROWS ?? process.env.BENCH_ROWS ?? 1_000_000);
const PAGE = 100;

export async function pagingScenarios(dir: string): Promise<Result[]> {
  const doc = GristDoc.create(join(dir, 'paging.grist'));
  doc.addTables([
    {id: 'Tick', columns: [{id: 'N', fields: {type: 'Int'}}]},
    {
      id: 'Items',
      columns: [
        {id: 'Name', fields: {type: 'Text'}},
        {id: 'Qty', fields: {type: 'Int'}},
        {id: 'Price', fields: {type: 'Numeric'}},
      ],
    },
  ]);
  doc.addRecords('Tick', [{N: 0}]);
  for (let i = 0; i < ROWS; i += 50_000) {
    const part = makeRows(Math.min(50_000, ROWS - i), i);
    doc.addColumnar(
      'Items',
      {Name: part.map((r) => r.Name), Qty: part.map((r) => r.Qty), Price: part.map((r) => r.Price)},
      {parse: false},
    );
  }
  const codec = new CursorCodec(randomBytes(32));
  let tick = 0;
  // A write before each read retires the cached answer (readcache.ts): every read runs.
  const cold = () => doc.updateRecords('Tick', [{id: 1, fields: {N: ++tick}}]);
  const results: Result[] = [];
  for (const [name, sort, n] of [
    ['P1. page of 100 in id order', undefined, 200],
    ['P2. page of 100 sorted by Qty', 'Qty', 5],
  ] as const) {
    const binding = cursorBinding('bench', 'Items', undefined, sort);
    // The cursor of the page before the last one: the position of the row PAGE from the end.
    // Found once, before any timing; what they leave behind (a million records) is collected
    // before the timing starts, so that no collection of it lands in either read's samples.
    let all: number[] | null = doc.fetchColumns('Items', {sort}).id as number[];
    const [firstId, endId] = [all[0], all[ROWS - PAGE]];
    all = null;
    let page: PageEnd | null = {next: null};
    doc.fetchRecords('Items', {sort, limit: ROWS - PAGE}, page);
    const cursor = codec.seal(binding, page.next!);
    page = null;
    gc();
    const read = (withCursor: boolean) => () => {
      const end: PageEnd = {next: null};
      const after = withCursor ? codec.open(binding, cursor) : undefined;
      const json = doc.fetchRecordsJson('Items', {sort, limit: PAGE, after}, end);
      if (!json.includes(`"id":${withCursor ? endId : firstId},`)) throw new Error('wrong page');
      return json;
    };
    // Alternating, so that both reads meet the same state of the process.
    const starts: number[] = [];
    const ends: number[] = [];
    for (let i = 0; i < n; i++) {
      starts.push(...(await latencies(1, read(false), cold)));
      ends.push(...(await latencies(1, read(true), cold)));
    }
    const start = percentile(starts, 50);
    const end = percentile(ends, 50);
    results.push(
      result({
        scenario: `${name} at the end of ${ROWS} rows (cursor)`,
        unit: 'pages/s',
        rate: 1000 / end,
        limit: 1000 / start,
        ratioTarget: 0.8,
        target: '>= 0.8 of the first page (the same cost)',
        p50Ms: end,
      }),
    );
  }
  doc.close();
  return results;
}
