// Incremental oracle: the real documents' formulas, recomputed after edits through the engine's
// dependency tracking, must equal a fresh engine recomputing everything from the edited data.
// Edits (seeded, deterministic): cells set to other rows' values, rows removed, rows added.
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import type {CellValue} from '@gristlite/formula';
import {FormulaEngine} from '@gristlite/formula';
import {type LoadedTable, VOLATILE, loadEngine, readDoc, withDocCopy} from './formula-oracle-run.js';
import {skipOrFail} from '../src/testing/fixtures.js';
import {ORACLE_MIN_DOCS, oracleDocs} from './formula-oracle-run.js';
import {seededRandom as rng} from '../src/testing/random.js';

const found = oracleDocs();
const docs = 'docs' in found ? found.docs : [];

/** Applies edits to the engine and to `tables` (kept as the data a fresh engine would load). */
function edit(engine: FormulaEngine, tables: LoadedTable[], seed: number): number {
  const rand = rng(seed);
  const pick = <T>(xs: T[]): T => xs[Math.floor(rand() * xs.length)];
  let edits = 0;
  for (const t of tables) {
    if (t.meta || t.spec.summarySourceTable || t.rowIds.length < 2) {
      continue;
    }
    const dataCols = t.cols.filter((c) => !c.isFormula && c.colId !== 'manualSort');
    for (let n = 0; n < 12 && dataCols.length; n++) {
      const c = pick(dataCols);
      const i = Math.floor(rand() * t.rowIds.length);
      const v = t.values[c.colId][Math.floor(rand() * t.rowIds.length)];
      t.values[c.colId][i] = v;
      engine.updateRecords(t.tableId, [t.rowIds[i]], {[c.colId]: [v]});
      edits++;
    }
    // Remove one row, add a copy of another under a new id.
    const gone = Math.floor(rand() * t.rowIds.length);
    engine.removeRecords(t.tableId, [t.rowIds[gone]]);
    t.rowIds.splice(gone, 1);
    for (const vs of Object.values(t.values)) {
      vs.splice(gone, 1);
    }
    const from = Math.floor(rand() * t.rowIds.length);
    const id = Math.max(...t.rowIds) + 1;
    const added: {[colId: string]: CellValue[]} = {};
    for (const [colId, vs] of Object.entries(t.values)) {
      vs.push(vs[from]);
      added[colId] = [vs[from]];
    }
    t.rowIds.push(id);
    engine.addRecords(t.tableId, [id], added);
    edits += 2;
  }
  engine.recalc();
  return edits;
}

/** Formula cells of `engine` that differ from a fresh engine's full recomputation of `tables`. */
function compareWithFresh(engine: FormulaEngine, tables: LoadedTable[], doc: string, diffs: string[]): number {
  let cells = 0;
  // Trigger columns are data: keep the incremental engine's values for the fresh one.
  for (const t of tables) {
    for (const c of t.cols) {
      if (!c.isFormula && c.formula.trim()) {
        t.values[c.colId] = t.rowIds.map((r) => engine.getCell(t.tableId, c.colId, r)!);
      }
    }
  }
  const fresh = loadEngine(tables);
  for (const t of tables) {
    for (const c of t.cols) {
      if (!c.isFormula || VOLATILE.test(c.formula)) {
        continue;
      }
      for (const r of t.rowIds) {
        cells++;
        const a = JSON.stringify(engine.getCell(t.tableId, c.colId, r));
        const b = JSON.stringify(fresh.getCell(t.tableId, c.colId, r));
        if (a !== b && diffs.length < 20) {
          diffs.push(`${doc.split('/').pop()} ${t.tableId}.${c.colId}[${r}]: ${a} != ${b}`);
        }
      }
    }
  }
  return cells;
}

/**
 * The tables as a document would store them after gristlite computed every formula (the values a
 * full recomputation gives), loaded into an engine that trusts them (`trustStored`).
 */
function loadTrusted(tables: LoadedTable[]): {engine: FormulaEngine; statics: number; columns: number} {
  const full = loadEngine(tables);
  for (const t of tables) {
    for (const c of t.cols) {
      if (c.isFormula) t.values[c.colId] = t.rowIds.map((r) => full.getCell(t.tableId, c.colId, r)!);
    }
  }
  const engine = new FormulaEngine();
  for (const t of tables) {
    engine.loadTable(t.spec, t.rowIds, t.values);
  }
  const counts = engine.trustStored();
  engine.recalc();
  return {engine, statics: counts.static, columns: counts.static + counts.computed};
}

if ('missing' in found) {
  test('incremental oracle', () => skipOrFail('incremental oracle', found.missing));
} else {
  test(`incremental oracle: ${docs.length} real documents edited, recomputed incrementally = recomputed from scratch`, () => {
    assert.ok(docs.length >= ORACLE_MIN_DOCS, `${docs.length} documents, fewer than ${ORACLE_MIN_DOCS}`);
    const diffs: string[] = [];
    let cells = 0,
      edits = 0;
    for (const doc of docs) {
      withDocCopy(doc, (db) => {
        const tables = readDoc(db);
        const engine = loadEngine(tables);
        edits += edit(engine, tables, 14);
        cells += compareWithFresh(engine, tables, doc, diffs);
      });
    }
    console.log(`incremental oracle: ${cells} formula cells after ${edits} edits`);
    assert.equal(diffs, []);
  });

  test('incremental oracle, opened warm: stored values trusted, static dependencies only, then edited = recomputed from scratch', () => {
    const diffs: string[] = [];
    let cells = 0,
      edits = 0,
      statics = 0,
      columns = 0;
    for (const doc of docs) {
      withDocCopy(doc, (db) => {
        const tables = readDoc(db);
        const trusted = loadTrusted(tables);
        statics += trusted.statics;
        columns += trusted.columns;
        for (const seed of [14, 15]) edits += edit(trusted.engine, tables, seed);
        cells += compareWithFresh(trusted.engine, tables, doc, diffs);
      });
    }
    console.log(
      `warm incremental oracle: ${statics} of ${columns} formula columns static, ${cells} cells after ${edits} edits`,
    );
    // Most real formulas are of the static shapes; if none were, this test would check nothing new.
    assert.ok(statics * 2 > columns, `only ${statics} of ${columns} formula columns static`);
    assert.equal(diffs, []);
  });
}

test.run();
