// Issue 40 §2 under access rules: an aggregate takes only what the caller can read. A hidden
// column is an unknown column; rows a row rule hides are never counted, whether SQLite applies
// the rule (table S) or rows are checked one by one (table J); cells a rule censors make their
// own group (["C"], as /records shows them) and are left out of sums.
import {rmSync} from 'node:fs';
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {KIWI, type RulesWorld, rulesWorld} from './rules-world.js';

function world(): Promise<RulesWorld> {
  return rulesWorld(
    Array.from({length: 12}, (_, k) => ({
      Owner: k % 3 === 0 ? KIWI : 'ada@example.com',
      Val: k + 1,
      Secret: k % 2 ? 'odd' : 'even',
    })),
  );
}

test('aggregates under access rules: hidden column, row rules in SQL and row by row, censored cells', async () => {
  const w = await world();
  try {
    // The owner sees every row: Val 1..12.
    assert.equal(await w.ada.aggregate('S', {agg: ['count', 'sum:Val']}), [{fields: {count: 12, sum_Val: 78}}]);
    for (const table of ['S', 'J']) {
      // Kiwi reads rows 1, 4, 7, 10 only (Val 1, 4, 7, 10).
      assert.equal(
        await w.kiwi.aggregate(table, {groupBy: ['Owner'], agg: ['count', 'sum:Val', 'max:Val']}),
        [{fields: {Owner: KIWI, count: 4, sum_Val: 22, max_Val: 10}}],
        table,
      );
      assert.equal(await w.kiwi.aggregate(table, {agg: ['count'], where: '$Val > 3', having: 'count > 2'}), [
        {fields: {count: 3}},
      ]);
    }
    // S's Secret is hidden from kiwi: the error of a column that does not exist.
    for (const q of [{groupBy: ['Secret']}, {agg: ['count_distinct:Secret']}, {having: 'count_distinct_Secret > 0'}]) {
      try {
        await w.kiwi.aggregate('S', q);
        assert.unreachable(JSON.stringify(q));
      } catch (e) {
        assert.match(String(e), "Table 'S' has no column 'Secret'");
        assert.is((e as {status?: number}).status, 400);
      }
    }
    // J's Secret: rows 1 and 4 read even/odd (Val 1 even, Val 4 odd), rows 7 and 10 are censored.
    assert.equal(await w.kiwi.aggregate('J', {groupBy: ['Secret'], agg: ['count', 'sum:Val']}), [
      {fields: {Secret: 'even', count: 1, sum_Val: 1}},
      {fields: {Secret: 'odd', count: 1, sum_Val: 4}},
      {fields: {Secret: ['C'], count: 2, sum_Val: 17}},
    ]);
    // Censored cells are left out of aggregates of their column.
    assert.equal(await w.kiwi.aggregate('J', {agg: ['count', 'count_distinct:Secret', 'max:Secret']}), [
      {fields: {count: 4, count_distinct_Secret: 2, max_Secret: 'odd'}},
    ]);
    // The owner sees them all.
    assert.equal(await w.ada.aggregate('J', {groupBy: ['Secret'], agg: ['count']}), [
      {fields: {Secret: 'even', count: 6}},
      {fields: {Secret: 'odd', count: 6}},
    ]);
  } finally {
    await w.engine.close();
    rmSync(w.dir, {recursive: true, force: true});
  }
});

test.run();
