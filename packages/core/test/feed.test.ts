// Change subscriptions (issue 23 §2, beyond Grist): each committed write reported once, in order,
// with values (formula results included) and who made it; filtered by access rules; surviving an
// idle close; resumable over a bounded history.
import {mkdtempSync, rmSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {Engine, type DocChange, type EngineOptions, type Session, type SessionDoc} from '../src/internal.js';

interface World {
  dir: string;
  engine: Engine;
  ada: Session;
  doc: SessionDoc;
  docId: string;
}

async function world(opts: Partial<EngineOptions> = {}): Promise<World> {
  const dir = mkdtempSync(join(tmpdir(), 'gl-feed-'));
  const engine = await Engine.open({dataDir: dir, ...opts});
  const ada = await engine.forUser('ada@example.com', 'Ada');
  const docId = await ada.createDoc((await ada.personalWorkspace()).id, {name: 'Feed'});
  const doc = await ada.doc(docId);
  await doc.addTables([
    {
      id: 'Tasks',
      columns: [
        {id: 'Title', fields: {type: 'Text'}},
        {id: 'Hours', fields: {type: 'Numeric'}},
        {id: 'Owner', fields: {type: 'Text'}},
        {id: 'Double', fields: {type: 'Numeric', isFormula: true, formula: '$Hours * 2'}},
      ],
    },
  ]);
  return {dir, engine, ada, doc, docId};
}

async function done(w: World): Promise<void> {
  await w.engine.close();
  rmSync(w.dir, {recursive: true, force: true});
}

async function until(what: string, cond: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** The data part of events: table -> [added, updated, removed] ids, for compact comparisons. */
function shape(changes: DocChange[]) {
  return changes.map((c) =>
    Object.fromEntries(
      c.tables.map((t) => [t.tableId, [t.added.map((r) => r.id), t.updated.map((r) => r.id), t.removed]]),
    ),
  );
}

test('each committed write is one event, in order, with new values, formula results, columns and who wrote', async () => {
  const w = await world();
  try {
    const got: DocChange[] = [];
    const sub = await w.doc.subscribe((c) => got.push(c));
    await w.doc.addRecords('Tasks', [
      {Title: 'a', Hours: 1, Owner: 'ada@example.com'},
      {Title: 'b', Hours: 2},
    ]);
    await w.doc.updateRecords('Tasks', [{id: 2, fields: {Hours: 5}}]);
    await w.doc.removeRecords('Tasks', [1]);
    await until('three events', () => got.length === 3);
    assert.equal(shape(got), [{Tasks: [[1, 2], [], []]}, {Tasks: [[], [2], []]}, {Tasks: [[], [], [1]]}]);
    // Values as GET /records gives them: the first event's rows are the rows read then.
    await w.doc.addRecords('Tasks', [{Title: 'c', Hours: 3, Owner: 'x'}]);
    await until('four events', () => got.length === 4);
    const read = await w.doc.fetchRecords('Tasks');
    assert.equal(
      got[3].tables[0].added,
      read.filter((r) => r.id === 3),
    );
    assert.equal(got[0].tables[0].added[1].fields.Double, 4);
    // An update carries the columns it set, the formula's new value among them.
    assert.equal(got[1].tables[0].columns?.sort(), ['Double', 'Hours']);
    // With the values those columns held before the write (D106).
    assert.equal(got[1].tables[0].updated, [{id: 2, fields: {Hours: 5, Double: 10}, previous: {Hours: 2, Double: 4}}]);
    assert.equal(got[0].actor?.email, 'ada@example.com');
    assert.ok(got.every((c) => c.kind === 'change' && c.docId === w.docId && !Number.isNaN(Date.parse(c.time))));
    // Ids increase; the subscription knows the last one delivered.
    assert.is(sub.lastEventId, got[3].id);
    assert.equal(new Set(got.map((c) => c.id)).size, 4, 'distinct ids');
    // Structure changes are flagged, without user-table rows.
    await w.doc.addColumns('Tasks', [{id: 'Due', fields: {type: 'Date'}}]);
    await until('a schema event', () => got.length === 5);
    assert.ok(got[4].schemaChanged);
    sub.close();
    await w.doc.addRecords('Tasks', [{Title: 'after close'}]);
    await new Promise((r) => setImmediate(r));
    assert.is(got.length, 5, 'nothing after close()');
    assert.is(await sub.ended, 'closed');
  } finally {
    await done(w);
  }
});

test('a write that rolls back is never reported', async () => {
  const w = await world();
  try {
    const got: DocChange[] = [];
    await w.doc.subscribe((c) => got.push(c));
    await w.doc.addRecords('Tasks', [{Title: 'ok'}]);
    // The second action fails: the whole bundle rolls back.
    let failed = false;
    try {
      await w.doc.applyUserActions([
        ['AddRecord', 'Tasks', null, {Title: 'undone'}],
        ['UpdateRecord', 'Tasks', 999, {Title: 'x'}],
      ]);
    } catch {
      failed = true;
    }
    assert.ok(failed, 'the bundle was refused');
    await w.doc.addRecords('Tasks', [{Title: 'ok too'}]);
    await until('two events', () => got.length === 2);
    await new Promise((r) => setImmediate(r));
    assert.equal(
      got.map((c) => c.tables[0].added.map((r) => r.fields.Title)),
      [['ok'], ['ok too']],
    );
  } finally {
    await done(w);
  }
});

test('no event lost or reordered across idle closes; resuming replays the history after an id', async () => {
  const w = await world({docIdleMs: 1});
  try {
    const it = await w.doc.changes();
    const seen: DocChange[] = [];
    const reading = (async () => {
      for await (const c of it) {
        seen.push(c);
        if (seen.length === 40) break;
      }
    })();
    let closes = 0;
    for (let i = 0; i < 40; i++) {
      await w.doc.addRecords('Tasks', [{Title: `t${i}`, Hours: i}]);
      if (i % 4 === 0) {
        // The document is closed when idle (as the engine's sweep does), then reopened by the next write.
        w.engine.closeIdle();
        await until('the document closed', () => w.engine.openDocCount === 0);
        closes++;
      }
    }
    await reading;
    assert.ok(closes >= 10);
    assert.equal(
      seen.map((c) => c.tables[0].added[0].fields.Title),
      Array.from({length: 40}, (_, i) => `t${i}`),
    );
    assert.ok(it.isEnded, 'leaving the loop ends the subscription');
    // Resume after the 30th event: the last ten come again, in order.
    const again = await w.doc.changes({after: seen[29].id});
    const replayed: DocChange[] = [];
    for await (const c of again) {
      replayed.push(c);
      if (replayed.length === 10) break;
    }
    assert.equal(
      replayed.map((c) => c.id),
      seen.slice(30).map((c) => c.id),
    );
    // An id the feed does not know: a reset first, then live changes.
    const lost = await w.doc.changes({after: 'zzzzzzzz.3'});
    const first = await lost[Symbol.asyncIterator]().next();
    assert.is(first.value?.kind, 'reset');
    assert.match(String(first.value?.reason), /earlier feed/);
    lost.close();
  } finally {
    await done(w);
  }
});

test('history is bounded: a position older than it resumes with a reset', async () => {
  const w = await world({env: {GRISTLITE_FEED_HISTORY: '5'}});
  try {
    const got: DocChange[] = [];
    const sub = await w.doc.subscribe((c) => got.push(c));
    for (let i = 0; i < 8; i++) await w.doc.addRecords('Tasks', [{Title: `t${i}`}]);
    await until('8 events', () => got.length === 8);
    sub.close();
    const old = await w.doc.changes({after: got[1].id});
    const first = await old[Symbol.asyncIterator]().next();
    assert.is(first.value?.kind, 'reset');
    assert.match(String(first.value?.reason), /no longer kept/);
    old.close();
    const recent = await w.doc.changes({after: got[3].id});
    const next = await recent[Symbol.asyncIterator]().next();
    assert.is(next.value?.id, got[4].id);
    recent.close();
  } finally {
    await done(w);
  }
});

test('a subscriber that falls behind gets a reset in place of what it missed; big writes carry counts only', async () => {
  const w = await world({env: {GRISTLITE_FEED_QUEUE: '3', GRISTLITE_FEED_MAX_ROWS: '10'}});
  try {
    const it = await w.doc.changes();
    for (let i = 0; i < 5; i++) await w.doc.addRecords('Tasks', [{Title: `t${i}`}]);
    const reader = it[Symbol.asyncIterator]();
    const first = (await reader.next()).value as DocChange;
    assert.is(first.kind, 'reset');
    assert.match(String(first.reason), /GRISTLITE_FEED_QUEUE/);
    // What came after the reset follows it.
    assert.is(((await reader.next()).value as DocChange).tables[0].added[0].fields.Title, 't4');
    await w.doc.addRecords(
      'Tasks',
      Array.from({length: 11}, (_, i) => ({Title: `bulk${i}`})),
    );
    const big = (await reader.next()).value as DocChange;
    assert.equal(big.tables[0].truncated, {added: 11, updated: 0, removed: 0});
    assert.equal(big.tables[0].added, []);
    it.close();
  } finally {
    await done(w);
  }
});

test('under access rules, a subscriber never receives a row, column or table it may not read', async () => {
  const w = await world();
  try {
    await w.doc.addTables([{id: 'Secrets', columns: [{id: 'S', fields: {type: 'Text'}}]}]);
    await w.doc.addColumns('Tasks', [{id: 'Pay', fields: {type: 'Numeric'}}]);
    await w.ada.updateDocAccess(w.docId, {users: {'kiwi@example.com': 'editors'}});
    await w.doc.applyUserActions([
      ['AddRecord', '_grist_ACLResources', -1, {tableId: 'Tasks', colIds: '*'}],
      ['AddRecord', '_grist_ACLResources', -2, {tableId: 'Tasks', colIds: 'Pay'}],
      ['AddRecord', '_grist_ACLResources', -3, {tableId: 'Secrets', colIds: '*'}],
      ['AddRecord', '_grist_ACLRules', null, {resource: -2, aclFormula: 'user.Access != OWNER', permissionsText: '-R'}],
      ['AddRecord', '_grist_ACLRules', null, {resource: -3, aclFormula: 'user.Access != OWNER', permissionsText: '-R'}],
      [
        'AddRecord',
        '_grist_ACLRules',
        null,
        {resource: -1, aclFormula: 'user.Access != OWNER and rec.Owner != user.Email', permissionsText: '-R'},
      ],
    ]);
    const kiwi = await w.engine.forUser('kiwi@example.com', 'Kiwi');
    const kiwiDoc = await kiwi.doc(w.docId);
    const kiwiSaw: DocChange[] = [];
    const adaSaw: DocChange[] = [];
    await kiwiDoc.subscribe((c) => kiwiSaw.push(c));
    await w.doc.subscribe((c) => adaSaw.push(c));
    await w.doc.addRecords('Tasks', [
      {Title: 'mine', Owner: 'kiwi@example.com', Pay: 10},
      {Title: 'later-mine', Owner: 'ada@example.com', Pay: 20},
    ]);
    await w.doc.addRecords('Secrets', [{S: 'hidden'}]);
    // Row 2 becomes kiwi's (arrives whole, as added); row 1 stops being kiwi's (removed for kiwi).
    await w.doc.updateRecords('Tasks', [{id: 2, fields: {Owner: 'kiwi@example.com'}}]);
    await w.doc.updateRecords('Tasks', [{id: 1, fields: {Owner: 'ada@example.com'}}]);
    // A change to a row kiwi cannot read, then its removal: nothing for kiwi.
    await w.doc.updateRecords('Tasks', [{id: 1, fields: {Title: 'renamed'}}]);
    await w.doc.removeRecords('Tasks', [1]);
    await until('ada sees six events', () => adaSaw.length === 6);
    await new Promise((r) => setImmediate(r));
    assert.equal(shape(adaSaw), [
      {Tasks: [[1, 2], [], []]},
      {Secrets: [[1], [], []]},
      {Tasks: [[], [2], []]},
      {Tasks: [[], [1], []]},
      {Tasks: [[], [1], []]},
      {Tasks: [[], [], [1]]},
    ]);
    assert.equal(shape(kiwiSaw), [{Tasks: [[1], [], []]}, {Tasks: [[2], [], []]}, {Tasks: [[], [], [1]]}]);
    const json = JSON.stringify(kiwiSaw);
    for (const leak of ['hidden', 'renamed', '"Pay"', 'Secrets']) assert.not.ok(json.includes(leak), leak);
    assert.equal(kiwiSaw[0].tables[0].added[0].fields, {Title: 'mine', Hours: 0, Owner: 'kiwi@example.com', Double: 0});
    assert.equal(kiwiSaw[1].tables[0].added[0].fields, {
      Title: 'later-mine',
      Hours: 0,
      Owner: 'kiwi@example.com',
      Double: 0,
    });
    // Ada (owner) sees the hidden column and table.
    assert.is(adaSaw[0].tables[0].added[1].fields.Pay, 20);
    // Losing access to the document ends the subscription at the next check.
    const sub = await kiwiDoc.changes();
    await w.ada.updateDocAccess(w.docId, {users: {'kiwi@example.com': null}});
    await w.engine.feeds.recheckNow();
    assert.match(await sub.ended, /access|No view/i);
  } finally {
    await done(w);
  }
});

test('previous values (D106): the columns set, as they were; under rules hidden as current values, censored as the old row was', async () => {
  const w = await world();
  try {
    await w.doc.addColumns('Tasks', [
      {id: 'Pay', fields: {type: 'Numeric'}},
      {id: 'Note', fields: {type: 'Text'}},
    ]);
    await w.ada.updateDocAccess(w.docId, {users: {'kiwi@example.com': 'editors'}});
    await w.doc.applyUserActions([
      ['AddRecord', '_grist_ACLResources', -1, {tableId: 'Tasks', colIds: '*'}],
      ['AddRecord', '_grist_ACLResources', -2, {tableId: 'Tasks', colIds: 'Pay'}],
      ['AddRecord', '_grist_ACLResources', -3, {tableId: 'Tasks', colIds: 'Note'}],
      [
        'AddRecord',
        '_grist_ACLRules',
        null,
        {resource: -2, aclFormula: 'user.Access != OWNER and rec.Hours > 100', permissionsText: '-R'},
      ],
      ['AddRecord', '_grist_ACLRules', null, {resource: -3, aclFormula: 'user.Access != OWNER', permissionsText: '-R'}],
      [
        'AddRecord',
        '_grist_ACLRules',
        null,
        {resource: -1, aclFormula: 'user.Access != OWNER and rec.Owner != user.Email', permissionsText: '-R'},
      ],
    ]);
    const kiwi = await w.engine.forUser('kiwi@example.com', 'Kiwi');
    const kiwiSaw: DocChange[] = [];
    const adaSaw: DocChange[] = [];
    await (await kiwi.doc(w.docId)).subscribe((c) => kiwiSaw.push(c));
    await w.doc.subscribe((c) => adaSaw.push(c));
    await w.doc.addRecords('Tasks', [
      {Title: 'one', Owner: 'kiwi@example.com', Hours: 200, Pay: 1, Note: 'n1'},
      {Title: 'two', Owner: 'ada@example.com', Hours: 1, Pay: 2, Note: 'n2'},
    ]);
    // Readable before and after: Pay was censored in the old row (Hours > 100), not in the new.
    await w.doc.updateRecords('Tasks', [{id: 1, fields: {Hours: 5, Pay: 3, Note: 'secret-old'}}]);
    await w.doc.updateRecords('Tasks', [{id: 1, fields: {Note: 'secret-new'}}]);
    // Row 2 comes into view (whole, as added: no previous values); row 1 leaves it (removed).
    await w.doc.updateRecords('Tasks', [{id: 2, fields: {Owner: 'kiwi@example.com', Title: 'two!'}}]);
    await w.doc.updateRecords('Tasks', [{id: 1, fields: {Owner: 'ada@example.com', Title: 'gone'}}]);
    await until('ada sees five events', () => adaSaw.length === 5);
    await new Promise((r) => setImmediate(r));
    // The owner sees every column set, with its old value.
    assert.equal(adaSaw[1].tables[0].updated, [
      {
        id: 1,
        fields: {Hours: 5, Pay: 3, Note: 'secret-old', Double: 10},
        previous: {Hours: 200, Pay: 1, Note: 'n1', Double: 400},
      },
    ]);
    assert.equal(adaSaw[3].tables[0].updated[0].previous, {Owner: 'ada@example.com', Title: 'two'});
    // Kiwi: the hidden column never appears, old or new; the censored old cell stays censored.
    // (The update of Note alone reaches kiwi as an update with no columns, as before this issue.)
    assert.equal(shape(kiwiSaw), [
      {Tasks: [[1], [], []]},
      {Tasks: [[], [1], []]},
      {Tasks: [[], [1], []]},
      {Tasks: [[2], [], []]},
      {Tasks: [[], [], [1]]},
    ]);
    assert.equal(kiwiSaw[2].tables[0].updated, [{id: 1, fields: {}, previous: {}}]);
    assert.equal(kiwiSaw[1].tables[0].updated, [
      {id: 1, fields: {Hours: 5, Pay: 3, Double: 10}, previous: {Hours: 200, Pay: ['C'], Double: 400}},
    ]);
    assert.equal(kiwiSaw[1].tables[0].columns?.sort(), ['Double', 'Hours', 'Pay']);
    assert.is(kiwiSaw[3].tables[0].added[0].previous, undefined);
    assert.equal(kiwiSaw[3].tables[0].added[0].fields.Title, 'two!');
    const json = JSON.stringify(kiwiSaw);
    for (const leak of ['secret-', 'n1', 'n2', '"Note"', 'gone', '"two"']) assert.not.ok(json.includes(leak), leak);
  } finally {
    await done(w);
  }
});

test('previous values are kept for as many rows as an event carries (GRISTLITE_FEED_MAX_ROWS), not beyond', async () => {
  const w = await world({env: {GRISTLITE_FEED_MAX_ROWS: '3'}});
  try {
    const got: DocChange[] = [];
    await w.doc.subscribe((c) => got.push(c));
    await w.doc.addRecords('Tasks', [{Hours: 1}, {Hours: 2}, {Hours: 3}, {Hours: 4}]);
    // Three rows: within the bound, each with its old values.
    await w.doc.updateRecords(
      'Tasks',
      [1, 2, 3].map((id) => ({id, fields: {Title: `t${id}`}})),
    );
    // Four rows: counts only.
    await w.doc.updateRecords(
      'Tasks',
      [1, 2, 3, 4].map((id) => ({id, fields: {Title: 'x'}})),
    );
    await until('three events', () => got.length === 3);
    assert.equal(
      got[1].tables[0].updated.map((r) => r.previous),
      [{Title: ''}, {Title: ''}, {Title: ''}],
    );
    assert.equal(got[2].tables[0].updated, []);
    assert.equal(got[2].tables[0].truncated, {added: 0, updated: 4, removed: 0});
  } finally {
    await done(w);
  }
});

test('a document whose content is replaced sends its subscribers a reset; older positions cannot resume', async () => {
  const w = await world();
  try {
    const other = await w.ada.createDoc((await w.ada.personalWorkspace()).id, {name: 'Source'});
    const got: DocChange[] = [];
    await w.doc.subscribe((c) => got.push(c));
    await w.doc.addRecords('Tasks', [{Title: 'before'}]);
    await until('the write', () => got.length === 1);
    await w.engine.withDoc(w.docId, (open) => w.engine.replaceDocContent(open, other));
    await until('the reset', () => got.length === 2);
    assert.equal([got[1].kind, got[1].reason], ['reset', "The document's content was replaced"]);
    const old = await w.doc.changes({after: got[0].id.replace(/\.\d+$/, '.0')});
    assert.is((await old[Symbol.asyncIterator]().next()).value?.kind, 'reset');
    old.close();
  } finally {
    await done(w);
  }
});

test('bounded: subscriptions beyond GRISTLITE_FEED_MAX_SUBSCRIBERS are refused with 503; engine.close() ends them', async () => {
  const w = await world({env: {GRISTLITE_FEED_MAX_SUBSCRIBERS: '2'}});
  const a = await w.doc.changes();
  await w.doc.changes();
  const err = await w.doc.changes().then(
    () => null,
    (e: {status?: number; message?: string}) => e,
  );
  assert.is(err?.status, 503);
  assert.match(String(err?.message), /GRISTLITE_FEED_MAX_SUBSCRIBERS/);
  await done(w);
  assert.match(await a.ended, /shutting down/);
});

test.run();
