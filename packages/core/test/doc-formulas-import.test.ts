// Formulas of imported and never-computed documents are computed once, as Grist does on open
// (issue 14; docs/decisions.md).
import Database from 'better-sqlite3';
import {suite} from 'uvu';
import * as assert from 'uvu/assert';
import {GristDoc} from '../src/doc/index.js';
import {importUpload} from '../src/import/index.js';
import {copyFixture, tempPath, useHomeWorld, withFixtures} from './doc-helpers.js';

const test = suite('doc-formulas-import');
const ftest = withFixtures(test);
const world = useHomeWorld(test, 'gl-fimport-');

/** A document file whose formula column `Total` holds stale values (0), as a file from elsewhere may. */
function staleFile(): string {
  const path = tempPath();
  const doc = GristDoc.create(path);
  doc.addTables([
    {
      id: 'T',
      columns: [
        {id: 'A', fields: {type: 'Numeric', isFormula: false}},
        {id: 'Total', fields: {type: 'Numeric', isFormula: true, formula: '$A * 2'}},
      ],
    },
  ]);
  doc.addRecords('T', [{A: 1}, {A: 2}]);
  doc.close();
  blank(path);
  return path;
}

function blank(path: string): void {
  const db = new Database(path);
  db.exec('UPDATE "T" SET "Total" = 0; DROP TABLE IF EXISTS "_gristlite_formulas"');
  db.close();
}

test('importing a .grist file recomputes every formula', async () => {
  const {id} = await importUpload(world.engine, world.wid, world.owner, {fileName: 'stale.grist', path: staleFile()});
  const doc = world.engine.openDoc(id).grist;
  assert.equal(doc.fetchColumns('T').Total, [2, 4]);
  assert.is(doc.needsFormulaRecompute, false);
});

test('a document never computed by gristlite is computed when the server opens it', async () => {
  const {id} = await importUpload(world.engine, world.wid, world.owner, {fileName: 'stale.grist', path: staleFile()});
  blank(world.engine.docPath(id)); // before the server first opens it
  const doc = world.engine.openDoc(id).grist;
  assert.equal(doc.fetchColumns('T').Total, [2, 4]);
  assert.is(doc.needsFormulaRecompute, false);
  const direct = GristDoc.open(staleFile());
  assert.is(direct.needsFormulaRecompute, true);
  assert.is(direct.recomputeFormulas(), 2);
  assert.equal(direct.fetchColumns('T').Total, [2, 4]);
  direct.close();
});

ftest('a real Grist document imports with its formulas recomputed as Grist stored them', async () => {
  const src = copyFixture('World.grist');
  const before = GristDoc.open(src, {readonly: true});
  const tables = before.listTables().map((t) => t.id);
  const expected = tables.map((t) => before.fetchColumns(t));
  before.close();
  const {id} = await importUpload(world.engine, world.wid, world.owner, {fileName: 'World.grist', path: src});
  const doc = world.engine.openDoc(id).grist;
  tables.forEach((t, i) => assert.equal(doc.fetchColumns(t), expected[i], t));
});

test.run();
