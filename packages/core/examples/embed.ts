/**
 * Embedding gristlite in-process, without any HTTP: create a document, add records, query them,
 * run SQL. Run with `pnpm example:embed` (data goes to a temporary directory).
 */
import {mkdtempSync, rmSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {Engine} from '../src/index.js';

const dataDir = mkdtempSync(join(tmpdir(), 'gristlite-embed-'));
const engine = await Engine.open({dataDir});
try {
  // A user (created with a personal org and its "Home" workspace on first use). Everything done
  // through the session is checked as the same request over HTTP would be.
  const ada = await engine.forUser('ada@example.com', 'Ada');
  const home = await ada.personalWorkspace();

  // A real .grist file in dataDir/docs, with Grist's starter table Table1.
  const docId = await ada.createDoc(home.id, {name: 'Inventory'});
  const doc = await ada.doc(docId);
  await doc.addTables([
    {
      id: 'Items',
      columns: [
        {id: 'Name', fields: {type: 'Text'}},
        {id: 'Qty', fields: {type: 'Int'}},
      ],
    },
  ]);
  const ids = await doc.addRecords('Items', [
    {Name: 'bolts', Qty: 40},
    {Name: 'nuts', Qty: '12'},
    {Name: 'washers', Qty: 7},
  ]);
  console.log('added rows', ids);

  // Records as the REST API returns them, filtered and sorted in SQLite.
  console.log(JSON.stringify(await doc.fetchRecords('Items', {filter: {Qty: [12, 40]}, sort: '-Qty'})));

  // Add-or-update keyed on Name.
  console.log(
    JSON.stringify(
      await doc.upsertRecords('Items', [
        {require: {Name: 'nuts'}, fields: {Qty: 13}},
        {require: {Name: 'pins'}, fields: {Qty: 1}},
      ]),
    ),
  );

  // Read-only SQL, in the sandboxed worker pool with a timeout.
  console.log(JSON.stringify(await doc.runSql('select Name, Qty from Items where Qty > ? order by Qty', {args: [5]})));
} finally {
  await engine.close();
  rmSync(dataDir, {recursive: true, force: true});
}
