// Formula time budgets are settings of the engine (issue 37, D86): an operator who cannot let one
// recalculation hold the event loop for the default 30 s lowers GRISTLITE_FORMULA_RECALC_MSEC.
import {mkdtempSync, rmSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {Engine} from '../src/internal.js';

const ROWS = 400;

/** The errors of a formula column added to ROWS rows, each cell a few milliseconds of work. */
async function slowColumnErrors(env: Record<string, string>): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'gl-budget-'));
  const engine = await Engine.open({dataDir: dir, env});
  try {
    const ada = await engine.forUser('ada@example.com', 'Ada');
    const docId = await ada.createDoc((await ada.personalWorkspace()).id, {name: 'Budget'});
    const doc = await ada.doc(docId);
    await doc.addTables([{id: 'T', columns: [{id: 'N', fields: {type: 'Numeric'}}]}]);
    await doc.addRecords(
      'T',
      Array.from({length: ROWS}, (_, i) => ({N: i})),
    );
    await doc.addColumns('T', [{id: 'Slow', fields: {isFormula: true, formula: 'sum(range(30000)) + $N'}}]);
    const rows = await doc.fetchRecords('T');
    assert.is(rows.length, ROWS);
    return rows.flatMap((r) => (r.errors?.Slow ? [String(r.errors.Slow)] : []));
  } finally {
    await engine.close();
    rmSync(dir, {recursive: true, force: true});
  }
}

test('GRISTLITE_FORMULA_RECALC_MSEC ends a long recalculation in TimeoutError cells', async () => {
  const errors = await slowColumnErrors({GRISTLITE_FORMULA_RECALC_MSEC: '1'});
  assert.ok(errors.length > 0, 'cells timed out');
  assert.ok(
    errors.every((e) => e === 'TimeoutError'),
    errors[0],
  );
});

test('the default budget computes every cell of the same column', async () => {
  assert.equal(await slowColumnErrors({}), []);
});

test('a setting that is not a positive integer stops start-up with its name', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gl-budget-'));
  try {
    await Engine.open({dataDir: dir, env: {GRISTLITE_FORMULA_CELL_MSEC: '0'}}).then(
      () => assert.unreachable('opened'),
      (e: Error) => assert.match(e.message, /GRISTLITE_FORMULA_CELL_MSEC must be an integer of at least 1/),
    );
  } finally {
    rmSync(dir, {recursive: true, force: true});
  }
});

test.run();
