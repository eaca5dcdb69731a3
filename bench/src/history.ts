/**
 * Issue 42 §1: the cost of recording each write in the action history (D120). Each scenario runs
 * the same writes on two documents, one recording (the default) and one opened with
 * `history: {enabled: false}` (GRISTLITE_HISTORY=0), alternating between them so that both see the
 * same machine; the ratio is the rate with history over the rate without.
 */
import {join} from 'node:path';
import {GristDoc} from '@gristlite/core/internal';
import {COLUMNS, latencies, makeRows, percentile, type Result} from './lib.js';
import {result} from './scenarios.js';

const TABLE = 'Items';
/** Rows in the table before the writes (a document of some size, as a user's is). */
const BASE_ROWS = Math.min(10_000, Number(process.env.BENCH_ROWS ?? 10_000));

function makeDoc(dir: string, name: string, history: boolean): GristDoc {
  const path = join(dir, `${name}.grist`);
  GristDoc.create(path).close();
  const doc = GristDoc.open(path, {history: {enabled: history}});
  doc.addTables([{id: TABLE, columns: COLUMNS}]);
  const rows = makeRows(BASE_ROWS);
  for (let i = 0; i < rows.length; i += 500) doc.addRecords(TABLE, rows.slice(i, i + 500));
  return doc;
}

/** Median ms of `write` on each document, measured in alternating rounds. */
async function paired(
  docs: {on: GristDoc; off: GristDoc},
  rounds: number,
  reps: number,
  write: (doc: GristDoc, i: number) => void,
): Promise<{on: number; off: number}> {
  const on: number[] = [];
  const off: number[] = [];
  let i = 0;
  for (let r = 0; r < rounds; r++) {
    off.push(...(await latencies(reps, () => write(docs.off, i++))));
    on.push(...(await latencies(reps, () => write(docs.on, i++))));
  }
  return {on: percentile(on, 50), off: percentile(off, 50)};
}

export async function historyScenarios(dir: string): Promise<Result[]> {
  const docs = {on: makeDoc(dir, 'history-on', true), off: makeDoc(dir, 'history-off', false)};
  const results: Result[] = [];
  try {
    // Warm both (JIT, statement caches).
    await paired(docs, 1, 50, (d, i) => d.updateRecords(TABLE, [{id: 1 + (i % 100), fields: {Qty: i}}]));
    const cell = await paired(docs, 10, 100, (d, i) =>
      d.updateRecords(TABLE, [{id: 1 + (i % BASE_ROWS), fields: {Name: `n${i}`}}]),
    );
    results.push(
      result({
        scenario: `H1. one-cell write with history recorded (${BASE_ROWS}-row table), vs without`,
        unit: 'writes/s',
        rate: 1000 / cell.on,
        limit: 1000 / cell.off,
        p50Ms: cell.on,
        target: 'cost <= 1.15x (>= 0.87 of without)',
        ratioTarget: 1 / 1.15,
        note: `p50 ${cell.on.toFixed(3)} ms with, ${cell.off.toFixed(3)} ms without (GRISTLITE_HISTORY=0)`,
      }),
    );
    const batch = makeRows(500, BASE_ROWS);
    const add = await paired(docs, 5, 10, (d) => d.addRecords(TABLE, batch));
    results.push(
      result({
        scenario: 'H2. 500-row add with history recorded, vs without',
        unit: 'rows/s',
        rate: (500 * 1000) / add.on,
        limit: (500 * 1000) / add.off,
        p50Ms: add.on,
        target: 'cost <= 1.3x (>= 0.77 of without)',
        ratioTarget: 1 / 1.3,
        note: `p50 ${add.on.toFixed(2)} ms with, ${add.off.toFixed(2)} ms without`,
      }),
    );
  } finally {
    docs.on.close();
    docs.off.close();
  }
  return results;
}
