// Typed rows and transactions for embedders (issue 23 §2).
import {mkdtempSync, rmSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {type DocChange, Engine, type Session, type SessionDoc} from '../src/internal.js';

interface Task {
  Title: string;
  Hours: number;
  Done: boolean;
}

async function world(): Promise<{dir: string; engine: Engine; ada: Session; doc: SessionDoc; docId: string}> {
  const dir = mkdtempSync(join(tmpdir(), 'gl-tx-'));
  const engine = await Engine.open({dataDir: dir});
  const ada = await engine.forUser('ada@example.com', 'Ada');
  const docId = await ada.createDoc((await ada.personalWorkspace()).id, {name: 'Tx'});
  const doc = await ada.doc(docId);
  await doc.addTables([
    {
      id: 'Tasks',
      columns: [
        {id: 'Title', fields: {type: 'Text'}},
        {id: 'Hours', fields: {type: 'Numeric'}},
        {id: 'Done', fields: {type: 'Bool'}},
      ],
    },
  ]);
  return {dir, engine, ada, doc, docId};
}

async function rejection(p: Promise<unknown>): Promise<{status?: number; message: string}> {
  return p.then(
    () => {
      throw new Error('expected a rejection');
    },
    (e: {status?: number; message: string}) => e,
  );
}

test('typed tables: add, fetch, update, upsert and remove with typed fields', async () => {
  const w = await world();
  try {
    const tasks = w.doc.table<Task>('Tasks');
    const ids = await tasks.add([
      {Title: 'write', Hours: 2},
      {Title: 'test', Hours: 1, Done: true},
    ]);
    await tasks.update([{id: ids[0], fields: {Hours: 3}}]);
    const up = await tasks.upsert([{require: {Title: 'ship'}, fields: {Hours: 5}}]);
    assert.equal(up.addRecordIds, [3]);
    await tasks.remove([ids[1]]);
    const rows = await tasks.fetch({sort: 'Title'});
    // Typed access: `fields.Hours` is a number here (a compile error if Task said otherwise).
    const hours: number[] = rows.map((r) => r.fields.Hours);
    assert.equal(hours, [5, 3]);
    assert.equal(
      rows.map((r) => [r.id, r.fields.Title, r.fields.Done]),
      [
        [3, 'ship', false],
        [1, 'write', false],
      ],
    );
    // @ts-expect-error a field Task does not have is a compile error (the document would refuse it too)
    const bad = tasks.add([{Nope: 1}]);
    assert.match((await rejection(bad)).message, /Nope/);
  } finally {
    await w.engine.close();
    rmSync(w.dir, {recursive: true, force: true});
  }
});

test('a transaction commits its writes together, reads its own writes, and is one change event', async () => {
  const w = await world();
  try {
    const events: DocChange[] = [];
    await w.doc.subscribe((c) => events.push(c));
    const result = await w.doc.transaction((tx) => {
      const tasks = tx.table<Task>('Tasks');
      const [a] = tasks.add([{Title: 'a', Hours: 1}]);
      tasks.update([{id: a, fields: {Hours: 4}}]);
      const seen = tasks.fetch().map((r) => r.fields.Hours);
      const applied = tx.apply([
        ['AddRecord', 'Tasks', -1, {Title: 'b'}],
        ['UpdateRecord', 'Tasks', -1, {Hours: 7}],
      ]);
      return {seen, applied: applied.retValues};
    });
    assert.equal(result, {seen: [4], applied: [2, null]});
    const rows = await w.doc.fetchRecords('Tasks');
    assert.equal(
      rows.map((r) => [r.fields.Title, r.fields.Hours]),
      [
        ['a', 4],
        ['b', 7],
      ],
    );
    await new Promise((r) => setImmediate(r));
    assert.is(events.length, 1, 'one write, one event');
    assert.equal(
      events[0].tables[0].added.map((r) => r.id),
      [1, 2],
    );
  } finally {
    await w.engine.close();
    rmSync(w.dir, {recursive: true, force: true});
  }
});

test('inside a transaction, reads see formulas and summaries computed for its own writes', async () => {
  // Issue 37 §6: Total read 6 after Qty became 5 (the value from before the transaction).
  const run = async (readBetween: boolean) => {
    const w = await world();
    try {
      await w.doc.addTables([
        {
          id: 'Items',
          columns: [
            {id: 'Kind', fields: {type: 'Text'}},
            {id: 'Price', fields: {type: 'Numeric'}},
            {id: 'Qty', fields: {type: 'Numeric'}},
            {id: 'Total', fields: {type: 'Numeric', isFormula: true, formula: '$Price * $Qty'}},
          ],
        },
      ]);
      const tableRef = (await w.doc.listTables()).find((t) => t.id === 'Items')!.fields.tableRef;
      const kindRef = (await w.doc.listColumns('Items')).find((c) => c.id === 'Kind')!.fields.colRef;
      await w.doc.applyUserActions([['CreateViewSection', tableRef, 0, 'record', [kindRef], null]]);
      const [summary] = (await w.doc.listTables()).filter((t) => t.id.startsWith('Items_summary'));
      await w.doc.addColumns(summary.id, [
        {id: 'Sum', fields: {type: 'Numeric', isFormula: true, formula: 'SUM($group.Total)'}},
      ]);
      await w.doc.addRecords('Items', [{Kind: 'a', Price: 2, Qty: 3}]);
      const seen: unknown[] = [];
      await w.doc.transaction((tx) => {
        const look = () => {
          if (!readBetween) return;
          seen.push(tx.fetchRecords('Items').map((r) => r.fields.Total));
          seen.push(tx.fetchRecords(summary.id, {sort: 'Kind'}).map((r) => [r.fields.Kind, r.fields.Sum]));
        };
        tx.updateRecords('Items', [{id: 1, fields: {Qty: 5}}]);
        look();
        tx.addRecords('Items', [
          {Kind: 'a', Price: 4, Qty: 4},
          {Kind: 'b', Price: 1, Qty: 1},
        ]);
        look();
        tx.updateRecords('Items', [{id: 3, fields: {Kind: 'a'}}]);
        look();
      });
      const after = {
        items: (await w.doc.fetchRecords('Items')).map((r) => r.fields),
        summary: (await w.doc.fetchRecords(summary.id, {sort: 'Kind'})).map((r) => r.fields),
      };
      return {seen, after};
    } finally {
      await w.engine.close();
      rmSync(w.dir, {recursive: true, force: true});
    }
  };
  const read = await run(true);
  assert.equal(read.seen, [
    [10],
    [['a', 10]],
    [10, 16, 1],
    [
      ['a', 26],
      ['b', 1],
    ],
    [10, 16, 1],
    [['a', 27]],
  ]);
  // Reading inside changes nothing of what commits.
  assert.equal(read.after, (await run(false)).after);
});

test('a transaction that throws, or returns a promise, writes nothing', async () => {
  const w = await world();
  try {
    await w.doc.addRecords('Tasks', [{Title: 'kept'}]);
    const thrown = await rejection(
      w.doc.transaction((tx) => {
        tx.addRecords('Tasks', [{Title: 'undone'}]);
        tx.updateRecords('Tasks', [{id: 1, fields: {Title: 'changed'}}]);
        throw new Error('changed my mind');
      }),
    );
    assert.is(thrown.message, 'changed my mind');
    // A failing call inside (Grist's own error) undoes what came before it.
    const failed = await rejection(
      w.doc.transaction((tx) => {
        tx.addRecords('Tasks', [{Title: 'undone too'}]);
        tx.updateRecords('Tasks', [{id: 99, fields: {Title: 'x'}}]);
      }),
    );
    assert.is(failed.status, 400);
    const async = await rejection(
      w.doc.transaction(async (tx) => {
        tx.addRecords('Tasks', [{Title: 'not with await'}]);
      }),
    );
    assert.equal(
      [async.status, async.message],
      [400, 'A transaction function must be synchronous (it returned a promise); nothing was written'],
    );
    assert.equal(
      (await w.doc.fetchRecords('Tasks')).map((r) => r.fields.Title),
      ['kept'],
    );
  } finally {
    await w.engine.close();
    rmSync(w.dir, {recursive: true, force: true});
  }
});

test('transactions check access as each call would: viewers refused, access rules undo the whole write', async () => {
  const w = await world();
  try {
    await w.ada.updateDocAccess(w.docId, {users: {'vic@example.com': 'viewers', 'ed@example.com': 'editors'}});
    const vic = await (await w.engine.forUser('vic@example.com')).doc(w.docId);
    assert.is((await rejection(vic.transaction((tx) => tx.fetchRecords('Tasks')))).status, 403);
    // Editors may not mark tasks done (rule on the Done column).
    await w.doc.applyUserActions([
      ['AddRecord', '_grist_ACLResources', -1, {tableId: 'Tasks', colIds: 'Done'}],
      [
        'AddRecord',
        '_grist_ACLRules',
        null,
        {resource: -1, aclFormula: 'user.Access != OWNER and newRec.Done', permissionsText: '-U'},
      ],
    ]);
    await w.doc.addRecords('Tasks', [{Title: 'x'}]);
    const ed = await (await w.engine.forUser('ed@example.com')).doc(w.docId);
    const refused = await rejection(
      ed.transaction((tx) => {
        tx.addRecords('Tasks', [{Title: 'by ed'}]);
        tx.updateRecords('Tasks', [{id: 1, fields: {Done: true}}]);
      }),
    );
    assert.is(refused.status, 403);
    assert.equal(
      (await w.doc.fetchRecords('Tasks')).map((r) => [r.fields.Title, r.fields.Done]),
      [['x', false]],
    );
    // Without the forbidden part, the same transaction goes through.
    await ed.transaction((tx) => tx.addRecords('Tasks', [{Title: 'by ed'}]));
    assert.is((await w.doc.fetchRecords('Tasks')).length, 2);
  } finally {
    await w.engine.close();
    rmSync(w.dir, {recursive: true, force: true});
  }
});

test.run();
