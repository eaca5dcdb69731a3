// The fast paths of record reads and writes keep Grist's semantics: sort and filter SQL simplified
// by the storage classes a column holds, the cache of those classes, one-pass matching of
// add-or-update, and multi-row inserts.
import Database from 'better-sqlite3';
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {
  ANY_CLASS,
  BLOB_CLASS,
  ColumnClasses,
  NULL_CLASS,
  NUM_CLASS,
  StoredValues,
  TEXT_CLASS,
} from '../src/doc/colstats.js';
import {GristDoc, marshalDumps} from '../src/doc/index.js';
import {findMatches} from '../src/doc/lookup.js';
import {loadMeta} from '../src/doc/meta.js';
import {ReadCache} from '../src/doc/readcache.js';
import {compileFilter, compileSort} from '../src/doc/query.js';
import type {CellValue} from '@gristlite/formula';
import {tempPath} from './doc-helpers.js';

/** Stored values of each storage class, with ties, case variants and signs. */
const SAMPLES: Record<number, unknown[]> = {
  [NULL_CLASS]: [null, null],
  [NUM_CLASS]: [3, -1, 2.5, 0, 1, 3, 1e300],
  [TEXT_CLASS]: ['b', 'B', 'a', '', 'apple', 'a', '10', '9'],
  [BLOB_CLASS]: [marshalDumps(['L', 'x']), marshalDumps('12abc'), marshalDumps(true), marshalDumps(['L', 'x'])],
};

const TYPES = ['Int', 'Numeric', 'Text', 'Bool', 'ChoiceList', 'Any'];

/** A table with one column per type, every row holding the same raw value in all of them. */
function docWithValues(values: unknown[]): GristDoc {
  const doc = GristDoc.create(tempPath());
  doc.addTables([{id: 'T', columns: TYPES.map((type) => ({id: type, fields: {type, isFormula: false}}))}]);
  const insert = doc.db.prepare(
    `INSERT INTO T (id, manualSort, ${TYPES.join(', ')}) VALUES (?, ?${', ?'.repeat(TYPES.length)})`,
  );
  // manualSort runs against id, so that ties show whether it is used.
  values.forEach((v, i) => insert.run(i + 1, values.length - i, ...TYPES.map(() => v)));
  return doc;
}

function sortedIds(doc: GristDoc, sort: string[], classesOf: (colId: string) => number): number[] {
  const table = loadMeta(doc.db).tables.get('T')!;
  const s = compileSort(table, sort, classesOf);
  return doc.db
    .prepare(`SELECT id FROM T ORDER BY ${s.sql}`)
    .pluck()
    .all(...s.params) as number[];
}

test('sort SQL simplified by storage classes orders exactly as the full typed compare', () => {
  for (let mask = 1; mask <= ANY_CLASS; mask++) {
    const values = [NULL_CLASS, NUM_CLASS, TEXT_CLASS, BLOB_CLASS].filter((c) => mask & c).flatMap((c) => SAMPLES[c]);
    const doc = docWithValues(values);
    const classes = new ColumnClasses(doc.db);
    for (const type of TYPES) {
      if (type === 'Any') {
        assert.is(classes.of('T', type), mask);
      } // No affinity to convert values.
      for (const spec of [type, `-${type}`, `${type}:naturalSort`, `-${type}:emptyLast`]) {
        const exact = sortedIds(doc, [spec, 'id'], () => ANY_CLASS);
        const fast = sortedIds(doc, [spec, 'id'], (colId) => classes.of('T', colId));
        assert.equal(fast, exact, `${spec} with classes ${mask}`);
      }
    }
    doc.close();
  }
});

test('filter SQL simplified by storage classes matches exactly as with every stored form', () => {
  const wanted: CellValue[][] = [
    [1],
    [true],
    [false],
    [0],
    ['a'],
    ['1'],
    [null],
    ['12abc'],
    [['L', 'x']],
    [2.5, 'b', null],
    [3],
  ];
  for (let mask = 1; mask <= ANY_CLASS; mask++) {
    const values = [NULL_CLASS, NUM_CLASS, TEXT_CLASS, BLOB_CLASS].filter((c) => mask & c).flatMap((c) => SAMPLES[c]);
    const doc = docWithValues(values);
    const table = loadMeta(doc.db).tables.get('T')!;
    const classes = new ColumnClasses(doc.db);
    for (const type of TYPES) {
      for (const w of wanted) {
        const ids = (classesOf: (colId: string) => number) => {
          const f = compileFilter(table, {[type]: w}, classesOf);
          return doc.db
            .prepare(`SELECT id FROM T WHERE ${f.sql} ORDER BY id`)
            .pluck()
            .all(...f.params);
        };
        assert.equal(
          ids((colId) => classes.of('T', colId)),
          ids(() => ANY_CLASS),
          `${type} in ${JSON.stringify(w)}, classes ${mask}`,
        );
      }
    }
    doc.close();
  }
});

test('filters on id use the primary key and keep Python equality', () => {
  const doc = GristDoc.create(tempPath());
  doc.addRecords('Table1', [{A: 'x'}, {A: 'y'}, {A: 'z'}]);
  const ids = (values: unknown[]) => doc.fetchRecords('Table1', {filter: {id: values}}).records.map((r) => r.id);
  assert.equal(ids([3, 1]), [1, 3]);
  assert.equal(ids([true]), [1]);
  assert.equal(ids(['2', 2.5, null]), []);
  const table = loadMeta(doc.db).tables.get('Table1')!;
  const f = compileFilter(table, {id: [3, 1]});
  const plan = doc.db.prepare(`EXPLAIN QUERY PLAN SELECT id FROM Table1 WHERE ${f.sql}`).all(...f.params) as Array<{
    detail: string;
  }>;
  assert.match(plan.map((p) => p.detail).join(' '), /INTEGER PRIMARY KEY|rowid/);
  doc.close();
});

test('storage classes follow writes: tracked record writes, direct SQL, schema changes, rollbacks', () => {
  const doc = GristDoc.create(tempPath());
  doc.addTables([
    {
      id: 'T',
      columns: [
        {id: 'N', fields: {type: 'Int'}},
        {id: 'S', fields: {type: 'Text'}},
      ],
    },
  ]);
  doc.addRecords('T', [
    {N: 2, S: 'b'},
    {N: 1, S: 'a'},
  ]);
  const order = (sort: string) => doc.fetchRecords('T', {sort}).records.map((r) => r.fields[sort.replace('-', '')]);
  assert.equal(order('N'), [1, 2]);
  // Alt-text and null in the Int column, through the engine: numbers < null < strings.
  doc.addRecords('T', [{N: 'zz'}, {N: null}], {parse: false});
  assert.equal(order('N'), [1, 2, null, 'zz']);
  assert.equal(order('-N'), ['zz', null, 2, 1]);
  doc.updateRecords('T', [{id: 3, fields: {N: 0}}]);
  assert.equal(order('N'), [0, 1, 2, null]);
  // A write the engine did not make is noticed too.
  doc.db.prepare(`UPDATE T SET N = 'aa' WHERE id = 1`).run();
  assert.equal(order('N'), [0, 1, null, 'aa']);
  doc.db.prepare(`UPDATE T SET S = ? WHERE id = 2`).run(marshalDumps(['L', 'q']));
  assert.equal(order('S'), [['L', 'q'], '', '', 'b'], 'lists before strings');
  // A failed bundle rolls back a change that made the column numbers only.
  doc.updateRecords('T', [
    {id: 1, fields: {N: 5}},
    {id: 4, fields: {N: 6}},
  ]);
  assert.equal(order('N'), [0, 1, 5, 6]);
  doc.db.prepare(`UPDATE T SET N = 'aa' WHERE id = 1`).run();
  assert.throws(() =>
    doc.applyUserActions([
      ['UpdateRecord', 'T', 1, {N: 7}],
      ['UpdateRecord', 'T', 99, {N: 1}],
    ]),
  );
  assert.equal(order('N'), [0, 1, 6, 'aa']);
  // Removing and re-adding a column of another type.
  doc.removeColumn('T', 'N');
  doc.addColumns('T', [{id: 'N', fields: {type: 'Text', isFormula: false}}]);
  assert.equal(order('N'), ['', '', '', '']);
  doc.close();
});

test('ColumnClasses: merges tracked writes, forgets on anything else', () => {
  const db = new Database(':memory:');
  db.exec(`CREATE TABLE t (id INTEGER PRIMARY KEY, a, b, r DEFAULT (iif(random() & 1, 'x', 1)))`);
  db.prepare('INSERT INTO t VALUES (1, 1, ?, 1)').run('x');
  const c = new ColumnClasses(db);
  assert.is(c.of('t', 'a'), NUM_CLASS);
  assert.is(c.of('t', 'b'), TEXT_CLASS);
  assert.is(c.of('t', 'id'), NUM_CLASS);
  // A tracked insert of two rows: its classes are merged, unlisted columns hold their default.
  let w = c.track('t');
  db.prepare('INSERT INTO t (id, a, b) VALUES (2, ?, NULL), (3, 4, NULL)').run('s');
  const stored = (...values: unknown[]) => {
    const s = new StoredValues('');
    values.forEach((v) => s.add(v));
    return s;
  };
  w.done(new Map([['a', stored('s', 4)]]), 2, 2);
  assert.is(c.of('t', 'a'), NUM_CLASS | TEXT_CLASS);
  assert.is(c.of('t', 'b'), TEXT_CLASS | NULL_CLASS, 'read from a new row');
  // A default that is an expression may differ between rows: that column is scanned again.
  db.exec(`UPDATE t SET r = 1`);
  assert.is(c.of('t', 'r'), NUM_CLASS);
  w = c.track('t');
  const add = db.prepare('INSERT INTO t (id, a, b) VALUES (?, 1, 1)');
  for (let id = 10; id < 74; id++) {
    add.run(id);
  }
  // (Given a new row holding a number: learnt from it, the column would seem to hold numbers only.)
  const numberRow = db.prepare(`SELECT id FROM t WHERE id >= 10 AND r = 1`).pluck().get() as number;
  w.done(
    new Map([
      ['a', stored(1)],
      ['b', stored(1)],
    ]),
    64,
    numberRow,
  );
  assert.is(c.of('t', 'r'), NUM_CLASS | TEXT_CLASS);
  // A tracked write that changed more rows than it said: everything is rescanned.
  w = c.track('t');
  db.exec(`UPDATE t SET a = x'00'`);
  w.done(new Map([['a', stored(1)]]), 1);
  assert.is(c.of('t', 'a'), BLOB_CLASS);
  // Another connection's commit.
  db.close();
});

test("ColumnClasses: writes set aside (the history's rows) keep a valid cache valid and a stale one stale", () => {
  const db = new Database(':memory:');
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, a); CREATE TABLE h (id INTEGER PRIMARY KEY, x)');
  db.prepare('INSERT INTO t VALUES (1, 1)').run();
  const c = new ColumnClasses(db);
  const addH = () => db.prepare('INSERT INTO h (x) VALUES (1), (2)').run().changes;
  assert.is(c.of('t', 'a'), NUM_CLASS);
  // A row of t written behind the cache's back, then its text made a number again: the cache is
  // stale only by the count of changes, which the aside must not absorb.
  db.prepare(`UPDATE t SET a = 'x' WHERE id = 1`).run();
  let n = 0;
  c.aside(
    () => (n = addH()),
    () => n,
  );
  assert.is(c.of('t', 'a'), TEXT_CLASS, 'stale before the aside: read again');
  // Valid before: the aside's two rows are discounted and the cache kept (no rescan: a value
  // written behind its back after would not be seen, which is what shows it was kept).
  c.aside(
    () => (n = addH()),
    () => n,
  );
  const w = c.track('t');
  db.prepare('UPDATE t SET a = 2 WHERE id = 1').run();
  w.done(new Map(), 1);
  assert.is(c.of('t', 'a'), TEXT_CLASS, 'kept across the aside and the tracked write');
  // The aside reporting fewer rows than it changed makes the cache stale.
  c.aside(
    () => addH(),
    () => 1,
  );
  assert.is(c.of('t', 'a'), NUM_CLASS);
  db.close();
});

test('ColumnClasses: commits by other connections and schema changes invalidate', () => {
  const path = tempPath('c.sqlite');
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, a)');
  db.prepare('INSERT INTO t VALUES (1, 1)').run();
  const c = new ColumnClasses(db);
  assert.is(c.of('t', 'a'), NUM_CLASS);
  const other = new Database(path);
  other.prepare(`INSERT INTO t VALUES (2, 'x')`).run();
  assert.is(c.of('t', 'a'), NUM_CLASS | TEXT_CLASS);
  other.exec(`ALTER TABLE t ADD COLUMN b DEFAULT 'q'`);
  assert.is(c.of('t', 'b'), TEXT_CLASS);
  other.close();
  db.close();
});

test('add-or-update matches with Python equality, lowest ids first', () => {
  const doc = GristDoc.create(tempPath());
  doc.addTables([
    {
      id: 'T',
      columns: [
        {id: 'B', fields: {type: 'Bool'}},
        {id: 'N', fields: {type: 'Numeric'}},
        {id: 'X', fields: {type: 'Any', isFormula: false}},
        {id: 'S', fields: {type: 'Text'}},
        {id: 'V', fields: {type: 'Int'}},
      ],
    },
  ]);
  doc.addRecords(
    'T',
    [
      {B: true, N: 4, X: 1, S: '1'},
      {B: false, N: 4.5, X: true, S: 'x'},
      {B: true, N: 4, X: '1', S: 'y'},
      {X: ['L', 1, true]},
    ],
    {parse: false},
  );
  const put = (require: Record<string, CellValue>, options = {}) =>
    doc.upsertRecords('T', [{require, fields: {V: 1}}], {noadd: true, onmany: 'all', ...options}).recordIds[0];
  assert.equal(put({B: true}), [1, 3]);
  assert.equal(put({B: 1}), [1, 3], 'converted to the column type first');
  assert.equal(put({N: 4}), [1, 3]);
  assert.equal(put({N: 4.5}), [2]);
  assert.equal(put({X: 1}), [1, 2], 'Any: 1 == True');
  assert.equal(put({X: true}), [1, 2]);
  assert.equal(put({X: '1'}), [3], '"1" != 1');
  assert.equal(put({X: ['L', 1, 1]}), [4], 'lists element by element, True == 1');
  assert.equal(put({S: '1'}), [1]);
  assert.equal(put({B: true, N: 4, S: 'y'}), [3]);
  assert.equal(put({id: 3, S: 'y'}), [3]);
  assert.equal(put({id: 3, S: 'x'}), []);
  assert.equal(put({N: 4}, {onmany: 'first'}), [1]);
  assert.equal(put({N: 4}, {onmany: 'none'}), []);
  doc.close();
});

test('add-or-update: one pass over a table larger than a scan page', () => {
  const doc = GristDoc.create(tempPath());
  doc.addTables([
    {
      id: 'T',
      columns: [
        {id: 'K', fields: {type: 'Text'}},
        {id: 'V', fields: {type: 'Int'}},
      ],
    },
  ]);
  const n = 25000;
  doc.addRecords(
    'T',
    Array.from({length: n}, (_, i) => ({K: `k${i % 12000}`, V: i})),
  );
  const table = loadMeta(doc.db).tables.get('T')!;
  const wanted = [['k5'], ['k11999'], ['nope'], ['k5']];
  const expected = [[6, 12006, 24006], [12000, 24000], [], [6, 12006, 24006]];
  // A few values: SQLite narrows the rows first. Many: one scan of the whole table, page by page.
  assert.equal(findMatches(doc.db, table, ['K'], wanted), expected);
  const many = [...wanted, ...Array.from({length: 60}, (_, i) => [`k${100 + i}`])];
  assert.equal(findMatches(doc.db, table, ['K'], many).slice(0, 4), expected);
  assert.equal(
    findMatches(
      doc.db,
      table,
      ['K', 'V'],
      [
        ['k5', 12005],
        ['k5', 12006],
      ],
    ),
    [[12006], []],
  );
  doc.updateRecords('T', [{id: 1, fields: {V: null}}]);
  doc.db.prepare('UPDATE T SET V = 9e999 WHERE id = 2').run();
  assert.equal(
    findMatches(
      doc.db,
      table,
      ['K', 'V'],
      [
        ['k0', null],
        ['k1', Infinity],
        ['k1', null],
      ],
    ),
    [[1], [2], []],
    'infinity is not null',
  );
  const r = doc.upsertRecords('T', [
    {require: {K: 'k7'}, fields: {V: -1}},
    {require: {K: 'new'}, fields: {V: -2}},
  ]);
  assert.equal(r, {recordIds: [[8], [n + 1]], addRecordIds: [n + 1], updateRecordIds: [[8]]});
  // A later group (other fields) sees what an earlier one did.
  const r2 = doc.upsertRecords('T', [{require: {K: 'later'}, fields: {V: 1}}, {require: {K: 'later'}}]);
  assert.equal(r2.recordIds, [[n + 2], [n + 2]]);
  doc.close();
});

test('reference lookups of a whole batch resolve in one pass; the lowest matching id wins', () => {
  const doc = GristDoc.create(tempPath());
  doc.addTables([
    {id: 'People', columns: [{id: 'Name'}]},
    {
      id: 'T',
      columns: [
        {id: 'P', fields: {type: 'Ref:People'}},
        {id: 'PL', fields: {type: 'RefList:People'}},
      ],
    },
  ]);
  doc.addRecords(
    'People',
    Array.from({length: 100}, (_, i) => ({Name: `p${i % 50}`})),
  );
  const nameRef = doc.listColumns('People').find((c) => c.id === 'Name')!.fields.colRef as number;
  doc.updateColumns('T', [
    {id: 'P', fields: {visibleCol: nameRef}},
    {id: 'PL', fields: {visibleCol: nameRef}},
  ]);
  const n = 80;
  doc.addRecords(
    'T',
    Array.from({length: n}, (_, i) => ({P: `p${i}`, PL: `p${i % 60}, p1`})),
  );
  const d = doc.fetchColumns('T');
  assert.equal(
    d.P,
    Array.from({length: n}, (_, i) => (i < 50 ? i + 1 : `p${i}`)),
  );
  assert.equal(
    d.PL,
    Array.from({length: n}, (_, i) => (i % 60 < 50 ? ['L', (i % 60) + 1, 2] : `p${i % 60}, p1`)),
  );
  doc.close();
});

test('fetchRecordsJson: the JSON of fetchRecords, fresh after any kind of write', () => {
  const path = tempPath();
  const doc = GristDoc.create(path);
  doc.addRecords('Table1', [
    {A: 'x', B: 1},
    {A: 'y', B: 2},
  ]);
  const queries = [{}, {sort: '-A', limit: 1}, {filter: {A: ['y']}, hidden: true}, {cellFormat: 'typed' as const}];
  const same = () => {
    for (const q of queries) {
      assert.is(doc.fetchRecordsJson('Table1', q), JSON.stringify(doc.fetchRecords('Table1', q)));
    }
  };
  same();
  same();
  doc.addRecords('Table1', [{A: 'z'}]);
  same();
  doc.db.prepare(`UPDATE Table1 SET A = 'w' WHERE id = 1`).run();
  same();
  const other = new Database(path);
  other.prepare(`UPDATE Table1 SET A = 'v' WHERE id = 2`).run();
  other.close();
  same();
  doc.updateColumns('Table1', [{id: 'A', fields: {label: 'Renamed'}}]);
  assert.match(doc.fetchRecordsJson('Table1'), /"Renamed":"w"/);
  assert.throws(() => doc.fetchRecordsJson('Nope'), /Table not found/);
  doc.close();
});

test('ReadCache: hits while the stamp holds, LRU within its byte budget', () => {
  const cache = new ReadCache(350); // Room for four answers of 40 characters (80 bytes).
  let computed = 0;
  const get = (owner: string, stamp: string, key: string, text = 'x'.repeat(40)) =>
    cache.get(owner, stamp, key, () => {
      computed++;
      return text;
    });
  get('1', 's1', 'a');
  get('1', 's1', 'a');
  assert.is(computed, 1);
  get('1', 's2', 'a');
  assert.is(computed, 2, 'a new stamp retires the answer');
  get('2', 's2', 'a');
  assert.is(computed, 3, 'per document');
  get('1', 's2', 'b');
  get('1', 's2', 'c');
  get('1', 's2', 'a');
  assert.is(computed, 5);
  get('1', 's2', 'd'); // Over budget: the least recently used answer (2/a) goes.
  get('1', 's2', 'a');
  assert.is(computed, 6);
  get('2', 's2', 'a');
  assert.is(computed, 7);
  get('1', 's2', 'big', 'y'.repeat(150));
  get('1', 's2', 'big', 'y'.repeat(150));
  assert.is(computed, 9, 'answers over half the budget are not kept');
  cache.forget('1');
  assert.is(cache.size, 1);
});

test('alt-text that SQLite would read as a number stays text in numeric columns', () => {
  const doc = GristDoc.create(tempPath());
  doc.addTables([
    {
      id: 'T',
      columns: [
        {id: 'B', fields: {type: 'Bool'}},
        {id: 'D', fields: {type: 'Date'}},
      ],
    },
  ]);
  const texts = ['\f12', ' 7', '\v1.5', '+3', 'abc'];
  doc.addRecords(
    'T',
    texts.map((t) => ({B: t, D: t})),
    {parse: false},
  );
  const d = doc.fetchColumns('T');
  assert.equal([d.B, d.D], [texts, texts]);
  doc.close();
});

test('multi-row inserts: any batch size, many columns, duplicate ids refused atomically', () => {
  const doc = GristDoc.create(tempPath());
  const cols = Array.from({length: 400}, (_, i) => ({id: `C${i}`, fields: {type: i % 2 ? 'Int' : 'Text'}}));
  doc.addTables([{id: 'Wide', columns: cols}]);
  const rows = Array.from({length: 257}, (_, r) =>
    Object.fromEntries(cols.map((c, i) => [c.id, i % 2 ? r * i : `${r}:${i}`])),
  );
  const ids = doc.addRecords('Wide', rows);
  assert.equal(
    ids,
    rows.map((_, i) => i + 1),
  );
  const back = doc.fetchRecords('Wide').records;
  assert.equal(
    back.map((r) => r.fields),
    rows,
  );
  for (const count of [1, 99, 100, 101, 250]) {
    const before = doc.fetchColumns('Table1').id.length;
    doc.addRecords(
      'Table1',
      Array.from({length: count}, (_, i) => ({A: `${count}-${i}`})),
    );
    assert.is(doc.fetchColumns('Table1').id.length, before + count);
  }
  const last = doc.fetchColumns('Table1').id.length;
  assert.throws(
    () =>
      doc.applyUserActions([
        [
          'BulkAddRecord',
          'Table1',
          [...Array.from({length: 150}, (_, i) => last + 1 + i), 3],
          {A: Array.from({length: 151}, () => 'dup')},
        ],
      ]),
    /Row ID already exists/,
  );
  assert.is(doc.fetchColumns('Table1').id.length, last);
  doc.close();
});

test.run();
