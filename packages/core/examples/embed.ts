/**
 * Embedding gristlite in-process, without any HTTP: create a document, add records, query them,
 * run SQL, then typed rows, a transaction and a change subscription. Run with `pnpm example:embed`
 * (data goes to a temporary directory).
 */
import {mkdtempSync, rmSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {type DocChange, Engine} from '../src/index.js';

/** The fields of an Items record, for typed reads and writes. */
interface Item {
  Name: string;
  Qty: number;
}

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

  // Each committed change, after its commit, filtered by what this user may read.
  const seen: DocChange[] = [];
  const sub = await doc.subscribe((change) => seen.push(change));

  // Typed rows: fields are Item's (a misspelt column or a string Qty is a compile error).
  const items = doc.table<Item>('Items');
  const low = (await items.fetch({sort: 'Qty'})).filter((r) => r.fields.Qty < 10);
  console.log(
    'low stock',
    low.map((r) => r.fields.Name),
  );

  // A transaction: synchronous, one SQLite transaction; a throw inside undoes all of it.
  const restocked = await doc.transaction((tx) => {
    const t = tx.table<Item>('Items');
    t.update(low.map((r) => ({id: r.id, fields: {Qty: r.fields.Qty + 100}})));
    t.add([{Name: 'rivets', Qty: 50}]);
    return t.fetch({sort: 'Name'}).map((r) => `${r.fields.Name}=${r.fields.Qty}`);
  });
  console.log('after the transaction', restocked.join(' '));

  await new Promise((resolve) => setImmediate(resolve));
  sub.close();
  // One event for the one transaction: rows added and updated, with their new values.
  for (const change of seen) {
    for (const t of change.tables) {
      console.log(
        `change ${change.id} by ${change.actor?.email}: ${t.tableId} +${t.added.length} ~${t.updated.length}`,
      );
    }
  }
} finally {
  await engine.close();
  rmSync(dataDir, {recursive: true, force: true});
}
