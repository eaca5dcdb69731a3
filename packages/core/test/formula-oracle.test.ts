// Oracle: every non-volatile formula cell of ~100 real Grist documents, recomputed by the engine
// from blanked formula columns, compared with what Grist stored (storage class and value).
// Set GRISTLITE_ORACLE_VERBOSE=1 to print every document and mismatching column.
import {existsSync, readFileSync} from 'node:fs';
import {dirname, join} from 'node:path';
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {type Blank, type DocResult, oracleDoc} from './formula-oracle-run.js';
import {skipOrFail} from '../src/testing/fixtures.js';
import {ORACLE_MIN_DOCS, oracleDocs} from './formula-oracle-run.js';

const found = oracleDocs();
const docs = 'docs' in found ? found.docs : [];

/** The overall share of formula cells reproduced exactly (raise it as the engine improves). */
const MIN_CELL_RATE = 0.998;
/** Columns that may differ: the `Doc/Table.col` rows of docs/formulas.md's `## Oracle` table, each with its reason. */
function explainedColumns(): Set<string> {
  let dir = dirname(new URL(import.meta.url).pathname);
  while (!existsSync(join(dir, 'docs/formulas.md'))) {
    if (dirname(dir) === dir) {
      throw new Error('docs/formulas.md not found');
    }
    dir = dirname(dir);
  }
  const text = readFileSync(join(dir, 'docs/formulas.md'), 'utf8');
  const section = text.slice(text.indexOf('\n## Oracle'));
  const end = section.indexOf('\n## ', 5);
  const names = [...(end < 0 ? section : section.slice(0, end)).matchAll(/^\| `([^`]+\/[^`]+)` \| \S/gm)].map(
    (m) => m[1],
  );
  return new Set(names);
}

if ('missing' in found) {
  test('oracle', () => skipOrFail('oracle', found.missing));
} else {
  // Formula cells blanked to NULL (as other writers leave them) and to the type's default: what
  // is stored after recomputing (the cells reported changed written over the blank) is Grist's.
  for (const blank of ['null', 'default'] as Blank[]) oracleTest(blank);
}

function oracleTest(blank: Blank): void {
  test(`oracle: ${docs.length} real documents, formula cells blanked to ${blank}, recomputed as Grist stored them`, () => {
    assert.ok(docs.length >= ORACLE_MIN_DOCS, `${docs.length} documents, fewer than ${ORACLE_MIN_DOCS}`);
    const explained = explainedColumns();
    const results: DocResult[] = docs.map((d) => oracleDoc(d, blank));
    let cells = 0,
      matched = 0,
      columns = 0,
      columnsMatched = 0;
    let vCells = 0,
      vMatched = 0,
      vShape = 0;
    const unexplained: string[] = [];
    const stale = new Set(explained);
    const verbose = Boolean(process.env.GRISTLITE_ORACLE_VERBOSE);
    for (const r of results) {
      cells += r.cells;
      matched += r.matched;
      columns += r.columns;
      columnsMatched += r.columnsMatched;
      vCells += r.volatile.cells;
      vMatched += r.volatile.matched;
      vShape += r.volatile.sameShape;
      if (verbose) {
        for (const m of r.volatile.mismatches) {
          console.log(
            `  volatile ${r.doc}/${m.tableId}.${m.colId}: ${m.matched}/${m.cells} ${JSON.stringify(m.formula.slice(0, 100))}`,
          );
          for (const s of m.samples) {
            console.log(`    row ${s.row}: grist ${s.grist} | ours ${s.ours}`);
          }
        }
      }
      if (verbose) {
        console.log(
          `${r.doc}: ${r.matched}/${r.cells} cells, ${r.columnsMatched}/${r.columns} columns, ${r.ms.toFixed(0)} ms`,
        );
      }
      for (const m of r.mismatches) {
        const name = `${r.doc.replace(/\.grist$/, '')}/${m.tableId}.${m.colId}`;
        if (verbose) {
          console.log(`  ${name}: ${m.matched}/${m.cells} ${JSON.stringify(m.formula.slice(0, 100))}`);
          for (const s of m.samples) {
            console.log(`    row ${s.row}: grist ${s.grist} | ours ${s.ours}`);
          }
        }
        if (!explained.has(name)) {
          unexplained.push(name);
        }
        stale.delete(name);
      }
    }
    const rate = matched / cells;
    console.log(
      `oracle (blanked to ${blank}): ${matched}/${cells} cells (${(rate * 100).toFixed(2)}%), ${columnsMatched}/${columns} columns, ${docs.length} documents`,
    );
    console.log(
      `oracle, NOW()/TODAY() with the clock at each document's last action: ${vMatched}/${vCells} cells equal, ${vShape}/${vCells} of the same shape`,
    );
    assert.ok(rate >= MIN_CELL_RATE, `cell match rate ${rate}`);
    // Volatile cells: same storage class, type and zone everywhere (NOW() is stored to the microsecond).
    assert.is(vShape, vCells, 'volatile cells of the shape Grist stored');
    assert.equal(unexplained, [], 'mismatching columns not explained in docs/formulas.md');
    assert.equal([...stale], [], 'columns listed in docs/formulas.md that now match: remove them');
  });
}

test.run();
