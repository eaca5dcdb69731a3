/**
 * Change-feed scenarios (issue 23, D63), in-process through a Session: the same writes with no
 * subscriber (the limit, measured in the same run, alternating) and with subscribers, so the
 * ratio is what a feed costs a writer: the event built inside the write (rows read back) and
 * each subscriber's filtering after the commit.
 */
import {join} from 'node:path';
import {Engine, type SessionDoc, type Subscription} from '@gristlite/core/internal';
import {percentile, type Result} from './lib.js';
import {result} from './scenarios.js';

const ROWS = Math.min(Number(process.env.BENCH_ROWS ?? 100_000), 10_000);
const RUNS = 200;

async function setup(dir: string): Promise<{engine: Engine; doc: SessionDoc}> {
  const engine = await Engine.open({dataDir: join(dir, 'feeds')});
  const ada = await engine.forUser('ada@example.com', 'Ada');
  const docId = await ada.createDoc((await ada.personalWorkspace()).id, {name: 'feeds'});
  const doc = await ada.doc(docId);
  await doc.addTables([
    {
      id: 'Items',
      columns: [
        {id: 'Name', fields: {type: 'Text'}},
        {id: 'Qty', fields: {type: 'Int'}},
        {id: 'Total', fields: {type: 'Numeric', isFormula: true, formula: '$Qty * 2'}},
      ],
    },
  ]);
  for (let i = 0; i < ROWS; i += 1000) {
    await doc.addRecords(
      'Items',
      Array.from({length: Math.min(1000, ROWS - i)}, (_, j) => ({Name: `item-${i + j}`, Qty: i + j})),
    );
  }
  return {engine, doc};
}

/** Median ms of `write`, alternating runs with and without `subscribers` listening. */
async function withAndWithout(
  doc: SessionDoc,
  subscribers: number,
  write: (n: number) => Promise<unknown>,
): Promise<{bare: number; fed: number}> {
  const bare: number[] = [];
  const fed: number[] = [];
  let n = 0;
  for (let round = 0; round < 4; round++) {
    for (const listening of [false, true]) {
      const subs: Subscription[] = [];
      if (listening) for (let i = 0; i < subscribers; i++) subs.push(await doc.subscribe(() => {}));
      for (let i = 0; i < RUNS / 4; i++) {
        const t = performance.now();
        await write(++n);
        (listening ? fed : bare).push(performance.now() - t);
      }
      for (const s of subs) s.close();
    }
  }
  return {bare: percentile(bare, 50), fed: percentile(fed, 50)};
}

export async function feedScenarios(dir: string): Promise<Result[]> {
  const {engine, doc} = await setup(dir);
  try {
    const results: Result[] = [];
    const one = await withAndWithout(doc, 10, (n) => doc.updateRecords('Items', [{id: 1, fields: {Qty: n}}]));
    results.push(
      result({
        scenario: 'E1. one-cell update (with its formula) while 10 subscribers listen',
        unit: 'writes/s',
        rate: 1000 / one.fed,
        limit: 1000 / one.bare,
        ratioTarget: 0.8,
        target: '>= 0.8 of the same write with no subscriber',
        p50Ms: one.fed,
      }),
    );
    const ids = Array.from({length: 100}, (_, i) => i + 1);
    const many = await withAndWithout(doc, 10, (n) =>
      doc.updateRecords(
        'Items',
        ids.map((id) => ({id, fields: {Qty: n + id}})),
      ),
    );
    results.push(
      result({
        scenario: 'E2. 100-row update while 10 subscribers listen (values read back for the event)',
        unit: 'writes/s',
        rate: 1000 / many.fed,
        limit: 1000 / many.bare,
        ratioTarget: 0.67,
        target: '>= 0.67 of the same write with no subscriber',
        p50Ms: many.fed,
      }),
    );
    return results;
  } finally {
    await engine.close();
  }
}
