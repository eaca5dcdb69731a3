/**
 * Embedding gristlite in-process, without any HTTP: create a document, add records, query them,
 * run SQL. Run with `pnpm example:embed` (data goes to a temporary directory).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Engine } from '../src/index.js';

const dataDir = mkdtempSync(join(tmpdir(), 'gristlite-embed-'));
const engine = await Engine.open({ dataDir });
try {
  // A user with a personal org and its "Home" workspace; the principal is who acts.
  const user = await engine.home.ensureUser('ada@example.com', 'Ada');
  const me = engine.home.principalFor(user, true);
  const [home] = await engine.store.listWorkspaces((await engine.store.getPersonalOrg(user.id))!.id);

  // A real .grist file in dataDir/docs, with Grist's starter table Table1.
  const docId = await engine.createDoc(home.id, me, { name: 'Inventory' });
  const doc = engine.openDoc(docId).grist;
  doc.addTables([{ id: 'Items', columns: [{ id: 'Name', fields: { type: 'Text' } }, { id: 'Qty', fields: { type: 'Int' } }] }]);
  const ids = doc.addRecords('Items', [{ Name: 'bolts', Qty: 40 }, { Name: 'nuts', Qty: '12' }, { Name: 'washers', Qty: 7 }]);
  console.log('added rows', ids);

  // Records as the REST API returns them, filtered and sorted in SQLite.
  console.log(JSON.stringify(doc.fetchRecords('Items', { filter: { Qty: [12, 40] }, sort: '-Qty' })));

  // Add-or-update keyed on Name.
  console.log(JSON.stringify(doc.upsertRecords('Items', [{ require: { Name: 'nuts' }, fields: { Qty: 13 } }, { require: { Name: 'pins' }, fields: { Qty: 1 } }])));

  // Read-only SQL, in the sandboxed worker pool with a timeout.
  console.log(JSON.stringify(await engine.runSql(docId, 'select Name, Qty from Items where Qty > ? order by Qty', [5])));
} finally {
  await engine.close();
  rmSync(dataDir, { recursive: true, force: true });
}
