// A change subscription to one table with a `where` condition (issue 40 §1, D123): a subscriber
// who applies its events to what `fetchRecords({where})` gave at the start holds, after every
// write, exactly what `fetchRecords({where})` gives then, for conditions SQL answers and for
// conditions the formula engine evaluates, with and without access rules.
import {mkdtempSync, rmSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {type DocChange, Engine, type EngineOptions, type Session, type SessionDoc} from '../src/internal.js';

interface World {
  dir: string;
  engine: Engine;
  ada: Session;
  doc: SessionDoc;
  docId: string;
}

async function world(opts: Partial<EngineOptions> = {}): Promise<World> {
  const dir = mkdtempSync(join(tmpdir(), 'gl-feedwhere-'));
  const engine = await Engine.open({dataDir: dir, ...opts});
  const ada = await engine.forUser('ada@example.com', 'Ada');
  const docId = await ada.createDoc((await ada.personalWorkspace()).id, {name: 'Feed'});
  const doc = await ada.doc(docId);
  await doc.addTables([
    {id: 'Projects', columns: [{id: 'Name', fields: {type: 'Text'}}]},
    {
      id: 'Tasks',
      columns: [
        {id: 'Title', fields: {type: 'Text'}},
        {id: 'Hours', fields: {type: 'Numeric'}},
        {id: 'Owner', fields: {type: 'Text'}},
        {id: 'Project', fields: {type: 'Ref:Projects'}},
        {id: 'Double', fields: {type: 'Numeric', isFormula: true, formula: '$Hours * 2'}},
      ],
    },
  ]);
  await doc.addRecords('Projects', [{Name: 'red'}, {Name: 'blue'}]);
  return {dir, engine, ada, doc, docId};
}

async function done(w: World): Promise<void> {
  await w.engine.close();
  rmSync(w.dir, {recursive: true, force: true});
}

async function settle(): Promise<void> {
  for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
}

type Row = Record<string, unknown>;

/** What a subscriber keeps: rows by id, from a first read, then each event applied. */
class Mirror {
  readonly rows = new Map<number, Row>();
  resets = 0;
  constructor(records: Array<{id: number; fields: Row}>) {
    for (const r of records) this.rows.set(r.id, {...r.fields});
  }
  apply(c: DocChange): void {
    if (c.kind === 'reset') {
      this.resets++;
      return;
    }
    for (const t of c.tables) {
      assert.is(t.tableId, 'Tasks', 'only the table asked for');
      for (const r of t.added) this.rows.set(r.id, {...r.fields});
      for (const r of t.updated) {
        const had = this.rows.get(r.id);
        assert.ok(had, `an update of row ${r.id} the subscriber did not hold`);
        Object.assign(had, r.fields);
      }
      for (const id of t.removed) {
        assert.ok(this.rows.delete(id), `a removal of row ${id} the subscriber did not hold`);
      }
    }
  }
  snapshot(): Array<{id: number; fields: Row}> {
    return [...this.rows].sort((a, b) => a[0] - b[0]).map(([id, fields]) => ({id, fields}));
  }
}

/** A seeded sequence of writes of every kind: adds, updates moving rows in and out, removals. */
function writes(seed: number): Array<(doc: SessionDoc) => Promise<unknown>> {
  let s = seed;
  const rnd = (n: number) => {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    return s % n;
  };
  const titles = ['apple', 'Avocado', 'banana', '', 'cherry'];
  const owners = ['ada@example.com', 'kiwi@example.com', ''];
  const fields = () => ({
    Title: titles[rnd(titles.length)],
    Hours: [0, 1, 2.5, 4, 9][rnd(5)],
    Owner: owners[rnd(owners.length)],
    Project: rnd(3),
  });
  const out: Array<(doc: SessionDoc) => Promise<unknown>> = [];
  let next = 1;
  for (let i = 0; i < 40; i++) {
    const k = rnd(10);
    if (k < 4 || next < 4) {
      const n = 1 + rnd(3);
      next += n;
      out.push((doc) => doc.addRecords('Tasks', Array.from({length: n}, fields)));
    } else if (k < 8) {
      const ids = [...new Set([1 + rnd(next - 1), 1 + rnd(next - 1)])];
      out.push(async (doc) => {
        const have = new Set((await doc.fetchRecords('Tasks')).map((r) => r.id));
        const live = ids.filter((id) => have.has(id));
        if (live.length)
          await doc.updateRecords(
            'Tasks',
            live.map((id) => ({id, fields: fields()})),
          );
      });
    } else {
      const id = 1 + rnd(next - 1);
      out.push(async (doc) => {
        const have = new Set((await doc.fetchRecords('Tasks')).map((r) => r.id));
        if (have.has(id)) await doc.removeRecords('Tasks', [id]);
      });
    }
  }
  return out;
}

// SQL answers the first three; the formula engine the last two (a method SQL does not translate).
const CONDITIONS = [
  '$Hours > 2',
  '$Double >= 5 or not $Owner',
  '$Project.Name == "red"',
  '$Title.lower().startswith("a")',
  '$Owner.upper().endswith(".COM") and $Hours',
];

for (const where of CONDITIONS) {
  test(`where=${where}: the events keep a subscriber's rows equal to fetchRecords({where}) after every write`, async () => {
    const w = await world();
    try {
      const got: DocChange[] = [];
      const sub = await w.doc.subscribe((c) => got.push(c), {tableId: 'Tasks', where});
      const mirror = new Mirror(await w.doc.fetchRecords('Tasks', {where}));
      let entered = 0;
      let left = 0;
      for (const write of writes(where.length * 7919)) {
        const before = new Set(mirror.rows.keys());
        await write(w.doc);
        await settle();
        for (const c of got.splice(0)) mirror.apply(c);
        const now = new Set(mirror.rows.keys());
        entered += [...now].filter((id) => !before.has(id)).length;
        left += [...before].filter((id) => !now.has(id)).length;
        assert.equal(mirror.snapshot(), await w.doc.fetchRecords('Tasks', {where}));
      }
      assert.ok(entered > 3 && left > 1, `rows entered (${entered}) and left (${left}) the condition`);
      assert.is(mirror.resets, 0);
      // Another table's writes are not sent; a change of structure is.
      await w.doc.addRecords('Projects', [{Name: 'green'}]);
      await w.doc.addColumns('Tasks', [{id: 'Note', fields: {type: 'Text'}}]);
      await settle();
      assert.equal(
        got.map((c) => [c.schemaChanged, c.tables.length]),
        [[true, 0]],
      );
      sub.close();
    } finally {
      await done(w);
    }
  });
}

test('under access rules: hidden columns cannot be named, unreadable rows never arrive, censored cells stay censored', async () => {
  const w = await world();
  try {
    await w.doc.addColumns('Tasks', [{id: 'Pay', fields: {type: 'Numeric'}}]);
    await w.ada.updateDocAccess(w.docId, {users: {'kiwi@example.com': 'editors'}});
    await w.doc.applyUserActions([
      ['AddRecord', '_grist_ACLResources', -1, {tableId: 'Tasks', colIds: '*'}],
      ['AddRecord', '_grist_ACLResources', -2, {tableId: 'Tasks', colIds: 'Pay'}],
      ['AddRecord', '_grist_ACLResources', -3, {tableId: 'Tasks', colIds: 'Title'}],
      ['AddRecord', '_grist_ACLRules', null, {resource: -2, aclFormula: 'user.Access != OWNER', permissionsText: '-R'}],
      ['AddRecord', '_grist_ACLRules', null, {resource: -3, aclFormula: 'rec.Hours > 8', permissionsText: '-R'}],
      [
        'AddRecord',
        '_grist_ACLRules',
        null,
        {resource: -1, aclFormula: 'user.Access != OWNER and rec.Owner != user.Email', permissionsText: '-R'},
      ],
    ]);
    const kiwi = await (await w.engine.forUser('kiwi@example.com', 'Kiwi')).doc(w.docId);
    const err = await kiwi.subscribe(() => {}, {tableId: 'Tasks', where: '$Pay > 1'}).catch((e) => e);
    assert.is(err?.status, 400);
    assert.match(String(err?.message), /Pay/);
    const where = '$Hours >= 2';
    const got: DocChange[] = [];
    await kiwi.subscribe((c) => got.push(c), {tableId: 'Tasks', where});
    const mirror = new Mirror(await kiwi.fetchRecords('Tasks', {where}));
    for (const write of writes(20261129)) {
      await write(w.doc);
      await settle();
      for (const c of got.splice(0)) mirror.apply(c);
      assert.equal(mirror.snapshot(), await kiwi.fetchRecords('Tasks', {where}));
    }
    const json = JSON.stringify([...mirror.rows.values()]);
    assert.not.ok(json.includes('"Pay"'));
    assert.ok(mirror.rows.size > 0, 'kiwi holds some rows');
    for (const row of mirror.rows.values()) assert.is(row.Owner, 'kiwi@example.com');
  } finally {
    await done(w);
  }
});

test('bad input: where without a table, an unknown table or column, a malformed condition; refused before subscribing', async () => {
  const w = await world();
  try {
    const cases: Array<[Record<string, string>, number, RegExp]> = [
      [{where: '$Hours > 1'}, 400, /needs the table/],
      [{tableId: 'Nope', where: '$Hours > 1'}, 404, /Nope/],
      [{tableId: 'Tasks', where: '$Nope > 1'}, 400, /Nope/],
      [{tableId: 'Tasks', where: '$Hours >'}, 400, /SyntaxError/],
      [{tableId: '_grist_Tables', where: 'True'}, 400, /meta tables/],
      [{tableId: 'Tasks', where: 'x'.repeat(20_000)}, 400, /GRISTLITE_WHERE_MAX_CHARS/],
    ];
    for (const [opts, status, message] of cases) {
      const err = await w.doc.subscribe(() => {}, opts).catch((e) => e);
      assert.is(err?.status, status, JSON.stringify(opts).slice(0, 80));
      assert.match(String(err?.message), message);
    }
    assert.is(w.engine.feeds.size, 0);
  } finally {
    await done(w);
  }
});

test('a condition that cannot be evaluated at a write ends its subscription with why; the write commits', async () => {
  const w = await world({env: {GRISTLITE_WHERE_MAX_MSEC: '20'}});
  try {
    const sub = await w.doc.changes({tableId: 'Tasks', where: '$Hours > 0 and len(str(list(range(10 ** 7)))) > 0'});
    const plain: DocChange[] = [];
    await w.doc.subscribe((c) => plain.push(c));
    await w.doc.addRecords('Tasks', [{Title: 'x', Hours: 1}]);
    assert.match(await sub.ended, /could not be evaluated/);
    await settle();
    assert.is(plain.length, 1);
    assert.is((await w.doc.fetchRecords('Tasks')).length, 1);
  } finally {
    await done(w);
  }
});

test('resuming: a condition lingers after its stream drops, so a resume is filtered; one never asked resumes with a reset', async () => {
  const w = await world();
  try {
    const where = '$Hours > 2';
    const first = await w.doc.changes({tableId: 'Tasks', where});
    await w.doc.addRecords('Tasks', [{Title: 'a', Hours: 5}]);
    const one = await first[Symbol.asyncIterator]().next();
    first.close();
    // Written while nobody listens: one row that matches, one that does not.
    await w.doc.addRecords('Tasks', [{Title: 'b', Hours: 1}]);
    await w.doc.addRecords('Tasks', [{Title: 'c', Hours: 3}]);
    const again = await w.doc.changes({tableId: 'Tasks', where, after: one.value!.id});
    const replayed = (await again[Symbol.asyncIterator]().next()).value as DocChange;
    // 'b' never matched: its event is not sent; 'c' arrives.
    assert.is(replayed.kind, 'change');
    assert.equal(
      replayed.tables.map((t) => t.added.map((r) => r.fields.Title)),
      [['c']],
    );
    again.close();
    // A condition nobody asked before those writes cannot filter them: a reset says to read again.
    const other = await w.doc.changes({tableId: 'Tasks', where: '$Hours > 4', after: one.value!.id});
    const r = await other[Symbol.asyncIterator]().next();
    assert.is(r.value?.kind, 'reset');
    other.close();
  } finally {
    await done(w);
  }
});

test('bounded: distinct conditions per document beyond GRISTLITE_FEED_MAX_CONDITIONS are refused (503); one caller shares one', async () => {
  const w = await world({env: {GRISTLITE_FEED_MAX_CONDITIONS: '1', GRISTLITE_FEED_LINGER_MSEC: '600000'}});
  try {
    const a = await w.doc.changes({tableId: 'Tasks', where: '$Hours > 1'});
    const b = await w.doc.changes({tableId: 'Tasks', where: '$Hours > 1'});
    const err = await w.doc.changes({tableId: 'Tasks', where: '$Hours > 2'}).catch((e) => e);
    assert.is(err?.status, 503);
    assert.match(String(err?.message), /GRISTLITE_FEED_MAX_CONDITIONS/);
    a.close();
    b.close();
    // Once no subscription uses it, a new condition may take the place of the lingering one.
    const c = await w.doc.changes({tableId: 'Tasks', where: '$Hours > 2'});
    c.close();
  } finally {
    await done(w);
  }
});

test.run();
