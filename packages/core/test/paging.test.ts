// Cursor pagination (issue 30 §1): keyset pages follow exactly the order of one unlimited read for
// every column type, storage-class mix, direction and sort flag, stay valid when a write changes
// the classes a column holds, and cursors are sealed: opaque, bound to their query, never forgeable.
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {randomBytes} from 'node:crypto';
import {CursorCodec, cursorBinding} from '../src/doc/cursor.js';
import {ANY_CLASS, BLOB_CLASS, NULL_CLASS, NUM_CLASS, TEXT_CLASS} from '../src/doc/colstats.js';
import {GristDoc, marshalDumps, type PageEnd, type RecordQuery} from '../src/doc/index.js';
import {tempPath} from './doc-helpers.js';

const SAMPLES: Record<number, unknown[]> = {
  [NULL_CLASS]: [null, null],
  [NUM_CLASS]: [3, -1, 2.5, 0, 1, 3, 1e300, -Infinity],
  [TEXT_CLASS]: ['b', 'B', 'a', '', 'apple', 'a', '10', '9', 'a2', 'a10'],
  [BLOB_CLASS]: [marshalDumps(['L', 'x']), marshalDumps('12abc'), marshalDumps(true), marshalDumps(false)],
};
const TYPES = ['Int', 'Numeric', 'Text', 'Bool', 'ChoiceList', 'Any'];

function docWithValues(values: unknown[]): GristDoc {
  const doc = GristDoc.create(tempPath());
  doc.addTables([{id: 'T', columns: TYPES.map((type) => ({id: type, fields: {type, isFormula: false}}))}]);
  const insert = doc.db.prepare(
    `INSERT INTO T (id, manualSort, ${TYPES.join(', ')}) VALUES (?, ?${', ?'.repeat(TYPES.length)})`,
  );
  // manualSort runs against id and repeats, so that ties show whether both break them.
  values.forEach((v, i) => insert.run(i + 1, Math.floor((values.length - i) / 2), ...TYPES.map(() => v)));
  return doc;
}

/** Every page of `q`, following positions through a sealed cursor as http does. */
function pages(doc: GristDoc, q: RecordQuery, codec: CursorCodec): number[][] {
  const out: number[][] = [];
  const binding = cursorBinding('doc', 'T', q.filter, q.sort);
  let cursor: string | null = null;
  do {
    const page: PageEnd = {next: null};
    const after = cursor ? codec.open(binding, cursor) : undefined;
    out.push(doc.fetchRecords('T', {...q, after}, page).records.map((r) => r.id));
    cursor = page.next ? codec.seal(binding, page.next) : null;
    assert.ok(out.length < 100, 'pages end');
  } while (cursor);
  return out;
}

test('pages follow the unlimited order for every type, class mix, direction and flag', () => {
  const codec = new CursorCodec(randomBytes(32));
  for (let mask = 1; mask <= ANY_CLASS; mask++) {
    const values = [NULL_CLASS, NUM_CLASS, TEXT_CLASS, BLOB_CLASS].filter((c) => mask & c).flatMap((c) => SAMPLES[c]);
    const doc = docWithValues(values);
    for (const type of TYPES) {
      for (const sort of [type, `-${type}`, `${type}:naturalSort`, `-${type}:emptyLast`, `${type},-Int`]) {
        const all = doc.fetchRecords('T', {sort}).records.map((r) => r.id);
        for (const limit of [1, 4]) {
          const got = pages(doc, {sort, limit}, codec);
          assert.equal(got.flat(), all, `${sort} limit ${limit}, classes ${mask}`);
          assert.is(got.length, Math.ceil(all.length / limit), `${sort} limit ${limit}: no empty last page`);
        }
      }
    }
    doc.close();
  }
});

test('a cursor stays valid when a write changes the storage classes of the sort column', () => {
  const codec = new CursorCodec(randomBytes(32));
  const doc = docWithValues(SAMPLES[NUM_CLASS]);
  for (const sort of ['Numeric', '-Numeric', 'Numeric:emptyLast']) {
    const binding = cursorBinding('doc', 'T', undefined, sort);
    const page: PageEnd = {next: null};
    const first = doc.fetchRecords('T', {sort, limit: 3}, page).records.map((r) => r.id);
    const cursor = codec.seal(binding, page.next!);
    // Text and null in a numeric column: the sort SQL gains its rank and case terms (query.ts).
    doc.db.prepare(`UPDATE T SET Numeric = 'zz' WHERE id = 2`).run();
    doc.db.prepare(`INSERT INTO T (id, manualSort, Numeric) VALUES (100, 0, NULL), (101, 0, 'aa')`).run();
    const rest = doc.fetchRecords('T', {sort, after: codec.open(binding, cursor)}).records.map((r) => r.id);
    const now = doc.fetchRecords('T', {sort}).records.map((r) => r.id);
    const ahead = now.slice(now.indexOf(first[first.length - 1]) + 1);
    assert.equal(rest, ahead, sort);
    doc.db.prepare(`DELETE FROM T WHERE id >= 100`).run();
    doc.db.prepare(`UPDATE T SET Numeric = -1 WHERE id = 2`).run();
  }
  doc.close();
});

test('cursors are sealed: opaque, bound to their query and key, and refused when altered', () => {
  const key = randomBytes(32);
  const codec = new CursorCodec(key);
  const binding = cursorBinding('doc1', 'People', {Team: ['A']}, '-Salary');
  const position = {Salary: 123456.5, manualSort: 7, id: 42, Blob: marshalDumps('secret-ish'), Inf: -Infinity};
  const cursor = codec.seal(binding, position);
  assert.equal(codec.open(binding, cursor), position);
  // Nothing of the values shows, in any encoding.
  const bytes = Buffer.from(cursor, 'base64url');
  for (const v of ['123456', 'secret-ish', Buffer.from('secret-ish').toString('base64')]) {
    assert.not.ok(bytes.includes(v) || cursor.includes(v), v);
  }
  const refused = (b: string, c: string, k = codec) =>
    assert.throws(
      () => k.open(b, c),
      (e: Error) => /^Invalid cursor/.test(e.message) && (e as {status?: number}).status === 400,
    );
  refused(cursorBinding('doc2', 'People', {Team: ['A']}, '-Salary'), cursor);
  refused(cursorBinding('doc1', 'Other', {Team: ['A']}, '-Salary'), cursor);
  refused(cursorBinding('doc1', 'People', {Team: ['B']}, '-Salary'), cursor);
  refused(cursorBinding('doc1', 'People', {Team: ['A']}, 'Salary'), cursor);
  refused(binding, cursor, new CursorCodec(randomBytes(32)));
  // Every single-byte change (version, nonce, body, tag) is refused.
  for (let i = 0; i < bytes.length; i++) {
    const changed = Buffer.from(bytes);
    changed[i] ^= 1;
    refused(binding, changed.toString('base64url'));
  }
  refused(binding, cursor + 'A');
  refused(binding, cursor.slice(0, -1));
  refused(binding, 'not a cursor');
  refused(binding, 'A'.repeat(40 * 1024));
});

test('cursors outlive a restart: the key is kept in the data directory, 0600', async () => {
  const {mkdtempSync, rmSync, statSync} = await import('node:fs');
  const {tmpdir} = await import('node:os');
  const {join} = await import('node:path');
  const {Engine} = await import('../src/engine/engine.js');
  const dir = mkdtempSync(join(tmpdir(), 'gl-cursor-key-'));
  try {
    const first = await Engine.open({dataDir: dir, resumeWebhooks: false});
    const cursor = first.cursors.seal('b', {id: 7});
    await first.close();
    const second = await Engine.open({dataDir: dir, resumeWebhooks: false});
    assert.equal(second.cursors.open('b', cursor), {id: 7});
    await second.close();
    assert.is(statSync(join(dir, 'cursor.key')).mode & 0o777, 0o600);
    const other = await Engine.open({dataDir: mkdtempSync(join(tmpdir(), 'gl-cursor-key-')), resumeWebhooks: false});
    assert.throws(() => other.cursors.open('b', cursor), /Invalid cursor/);
    await other.close();
  } finally {
    rmSync(dir, {recursive: true, force: true});
  }
});

test.run();
