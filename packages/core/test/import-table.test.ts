// Imports into an existing table (issue 42 §3, D108), in-process: an upsert planned before its
// transaction is followed only when nothing wrote meanwhile; a write during the planning makes
// the transaction match again (no duplicate row for a key the write added); batches on both sides
// of their size; the row bound on both sides.
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {suite} from 'uvu';
import * as assert from 'uvu/assert';
import {Engine} from '../src/engine/engine.js';
import {GristDoc} from '../src/doc/gristdoc.js';
import {importIntoTable, type TableImportOptions} from '../src/import/into-table.js';
import {DEFAULT_IMPORT_SETTINGS} from '../src/import/settings.js';

const test = suite('import-table');
let dir = '';
test.before(() => {
  dir = mkdtempSync(join(tmpdir(), 'gl-import-table-'));
});
test.after(() => rmSync(dir, {recursive: true, force: true}));

function newDoc(): GristDoc {
  const doc = GristDoc.create(join(dir, `${Math.random()}.grist`));
  doc.addTables([
    {
      id: 'T',
      columns: [
        {id: 'K', fields: {type: 'Text'}},
        {id: 'N', fields: {type: 'Numeric'}},
      ],
    },
  ]);
  return doc;
}

async function run(doc: GristDoc, csv: string, options: TableImportOptions, settings = {}) {
  const path = join(dir, `${Math.random()}.csv`);
  writeFileSync(path, csv);
  return importIntoTable({
    grist: doc,
    access: null,
    role: 'owners',
    tableId: 'T',
    file: {path, fileName: 'f.csv', format: 'csv'},
    options,
    settings: {...DEFAULT_IMPORT_SETTINGS, ...settings},
    tmpDir: dir,
  });
}

const rowsOf = (doc: GristDoc) => doc.fetchRecords('T').records.map((r) => [r.fields.K, r.fields.N]);

test('upsert planned before the transaction: added, updated, unchanged; nothing written for unchanged rows', async () => {
  const doc = newDoc();
  try {
    doc.addRecords('T', [
      {K: 'a', N: 1},
      {K: 'b', N: 2},
    ]);
    const writes: number[] = [];
    doc.onWrite((w) => {
      writes.push(w.changes.filter((c) => c.tableId === 'T').length);
      return undefined;
    });
    const r = await run(doc, 'K,N\na,1\nb,20\nc,3\n', {mode: 'upsert', keys: ['K']}, {batchRows: 2});
    assert.equal([r.added, r.updated, r.unchanged], [1, 1, 1]);
    assert.equal(rowsOf(doc), [
      ['a', 1],
      ['b', 20],
      ['c', 3],
    ]);
    assert.is(writes.length, 1, 'one write');
    // All unchanged: planned, and nothing to write at all.
    const again = await run(doc, 'K,N\na,1\nb,20\nc,3\n', {mode: 'upsert', keys: ['K']});
    assert.equal([again.added, again.updated, again.unchanged], [0, 0, 3]);
  } finally {
    doc.close();
  }
});

test('a write during the planning: the transaction matches again, so the key it added is updated, not doubled', async () => {
  const doc = newDoc();
  try {
    const lines = Array.from({length: 40}, (_, i) => `k${i},${i}`).join('\n');
    // The planning asks the data version when it starts and after each of its steps: the write
    // lands right after it started, so the plan (made without k39 in the table) must not be followed.
    const version = doc.dataVersion.bind(doc);
    let calls = 0;
    let wrote = false;
    doc.dataVersion = () => {
      if (++calls === 2) {
        wrote = true;
        doc.addRecords('T', [{K: 'k39', N: -1}]);
      }
      return version();
    };
    const pending = run(doc, `K,N\n${lines}\n`, {mode: 'upsert', keys: ['K']}, {batchRows: 1});
    const r = await pending;
    assert.ok(wrote);
    assert.equal([r.added, r.updated, r.unchanged], [39, 1, 0]);
    const rows = rowsOf(doc);
    assert.is(rows.length, 40);
    assert.equal(
      rows.filter((x) => x[0] === 'k39'),
      [['k39', 39]],
    );
  } finally {
    doc.close();
  }
});

test('GRISTLITE_IMPORT_MAX_ROWS: exactly the bound imports, one row more is refused with nothing written', async () => {
  const doc = newDoc();
  try {
    const file = (n: number) => `K\n${Array.from({length: n}, (_, i) => `r${i}`).join('\n')}\n`;
    assert.is((await run(doc, file(5), {}, {maxRows: 5, batchRows: 2})).added, 5);
    try {
      await run(doc, file(6), {}, {maxRows: 5, batchRows: 2});
      assert.unreachable('over the bound');
    } catch (e) {
      assert.match((e as Error).message, /more than 5 rows.*GRISTLITE_IMPORT_MAX_ROWS/);
    }
    assert.is(rowsOf(doc).length, 5);
  } finally {
    doc.close();
  }
});

test('replace and dry runs: the counts of the real import, nothing left by the dry run', async () => {
  const doc = newDoc();
  try {
    doc.addRecords('T', [{K: 'old'}]);
    const dry = await run(doc, 'K,N\nx,1\ny,oops\n', {mode: 'replace', dryRun: true}, {batchRows: 1});
    assert.equal([dry.dryRun, dry.added, dry.removed], [true, 2, 1]);
    assert.equal(dry.problems, {N: {count: 1, examples: [{row: 2, value: 'oops'}]}});
    assert.equal(rowsOf(doc), [['old', 0]]);
    const real = await run(doc, 'K,N\nx,1\ny,oops\n', {mode: 'replace'}, {batchRows: 1});
    assert.equal([real.added, real.removed], [2, 1]);
    assert.equal(rowsOf(doc), [
      ['x', 1],
      ['y', 'oops'],
    ]);
  } finally {
    doc.close();
  }
});

test('SessionDoc.importIntoTable: as the HTTP route, for editors only', async () => {
  const engine = await Engine.open({dataDir: join(dir, 'engine')});
  try {
    const ada = await engine.forUser('ada@example.com', 'Ada');
    const docId = await ada.createDoc((await ada.personalWorkspace()).id, {name: 'S'});
    const doc = await ada.doc(docId);
    await doc.addTables([{id: 'T', columns: [{id: 'K', fields: {type: 'Text'}}]}]);
    const path = join(dir, 's.json');
    writeFileSync(path, JSON.stringify([{K: 'one'}, {K: 'two'}]));
    const r = await doc.importIntoTable('T', {path, fileName: 's.json'});
    assert.equal([r.added, r.columns], [2, [{source: 'K', target: 'K'}]]);
    await ada.updateDocAccess(docId, {users: {'kiwi@example.com': 'viewers'}});
    const kiwi = await (await engine.forUser('kiwi@example.com', 'Kiwi')).doc(docId);
    try {
      await kiwi.importIntoTable('T', {path, fileName: 's.json'});
      assert.unreachable('a viewer imported');
    } catch (e) {
      assert.is((e as {status?: number}).status, 403);
    }
  } finally {
    await engine.close();
  }
});

test.run();
