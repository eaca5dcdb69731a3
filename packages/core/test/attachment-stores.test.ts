// Issue 29: external attachment stores. The directory store, how the standard store is chosen,
// and transfers that never lose a file whatever step fails.
import {createHash} from 'node:crypto';
import {existsSync, mkdtempSync, readdirSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {
  AttachmentStores,
  DirectoryAttachmentStore,
  DocAttachmentFiles,
  storeFileName,
  type AttachmentStore,
} from '../src/attachments/index.js';
import {GristDoc} from '../src/doc/gristdoc.js';
import {ApiError} from '../src/base/errors.js';
import {tempPath} from './doc-helpers.js';

const sha1 = (s: string) => createHash('sha1').update(s).digest('hex');
const tmp = () => mkdtempSync(join(tmpdir(), 'gl-att-store-'));

test('directory store: one id per directory, files per document, removal of a whole document', async () => {
  const root = tmp();
  const store = DirectoryAttachmentStore.open(root);
  assert.match(store.id, /^[0-9a-f-]{36}-filesystem$/);
  assert.is(DirectoryAttachmentStore.open(root).id, store.id, 'the id is kept in the directory');
  assert.is.not(DirectoryAttachmentStore.open(tmp()).id, store.id);
  const ident = `${sha1('x')}.txt`;
  assert.is(await store.exists('d1', ident), false);
  assert.is(await store.get('d1', ident), null);
  await store.put('d1', ident, Buffer.from('x'));
  await store.put('d1', `${sha1('y')}.a b`, Buffer.from('y'));
  await store.put('d2', ident, Buffer.from('x2'));
  assert.is(await store.exists('d1', ident), true);
  assert.is((await store.get('d1', ident))!.toString(), 'x');
  assert.equal(
    readdirSync(join(root, 'd1')).sort(),
    [`${sha1('x')}.txt`, `${sha1('y')}.a%20b`].sort(),
    'no temporary file left',
  );
  await store.delete('d1', ident);
  await store.delete('d1', ident); // a missing file is fine
  assert.is(await store.get('d1', ident), null);
  await store.removePool('d1');
  assert.not.ok(existsSync(join(root, 'd1')));
  assert.is((await store.get('d2', ident))!.toString(), 'x2');
});

test('store file names: a sha1 and an encoded extension, anything else 404', () => {
  assert.is(storeFileName('d', `${sha1('a')}.png`), `${sha1('a')}.png`);
  assert.is(storeFileName('d', `${sha1('a')}./..`), `${sha1('a')}.%2F..`);
  for (const bad of ['../../etc/passwd', '..', '', `${sha1('a')}.${'x'.repeat(200)}`]) {
    try {
      storeFileName('d', bad);
      assert.unreachable(bad);
    } catch (e) {
      assert.instance(e, ApiError);
      assert.is((e as ApiError).status, 404);
      assert.is((e as ApiError).message, 'Invalid attachment identifier');
    }
  }
  assert.throws(() => storeFileName('../d', `${sha1('a')}.png`), /bad document id/);
});

/** A store in memory whose steps can be made to fail or wait. */
class MemoryStore implements AttachmentStore {
  readonly files = new Map<string, Buffer>();
  failPut = false;
  failDelete = false;
  putDelayMs = 0;
  deleteDelayMs = 0;
  running = 0;
  maxRunning = 0;
  constructor(
    readonly label: string,
    readonly id = `id-${label}`,
  ) {}
  async exists(doc: string, ident: string) {
    return this.files.has(`${doc}/${ident}`);
  }
  async get(doc: string, ident: string) {
    return this.files.get(`${doc}/${ident}`) ?? null;
  }
  async put(doc: string, ident: string, data: Buffer) {
    this.running++;
    this.maxRunning = Math.max(this.maxRunning, this.running);
    try {
      if (this.putDelayMs) await new Promise((r) => setTimeout(r, this.putDelayMs));
      if (this.failPut) throw new Error('put failed');
      this.files.set(`${doc}/${ident}`, data);
    } finally {
      this.running--;
    }
  }
  async delete(doc: string, ident: string) {
    if (this.deleteDelayMs) await new Promise((r) => setTimeout(r, this.deleteDelayMs));
    if (this.failDelete) throw new Error('delete failed');
    this.files.delete(`${doc}/${ident}`);
  }
  async removePool(doc: string) {
    for (const k of [...this.files.keys()]) if (k.startsWith(`${doc}/`)) this.files.delete(k);
  }
}

test('the standard store: the only one, the one besides snapshots, or the one named', () => {
  const a = new MemoryStore('a');
  const snap = new MemoryStore('snapshots');
  assert.is(new AttachmentStores([]).standard, null);
  assert.is(new AttachmentStores([a]).standard, a);
  assert.is(new AttachmentStores([snap]).standard, snap);
  assert.is(new AttachmentStores([snap, a]).standard, a);
  assert.is(new AttachmentStores([snap, a], 'snapshots').standard, snap);
  assert.throws(() => new AttachmentStores([a, new MemoryStore('b')]), /several attachment stores \(a, b\)/);
  assert.throws(() => new AttachmentStores([a], 'c'), /no attachment store named "c" \(configured: a\)/);
  assert.throws(() => new AttachmentStores([a, new MemoryStore('a', 'other')]), /two attachment stores named a/);
  assert.equal(new AttachmentStores([snap, a]).labels(), [{label: 'snapshots'}, {label: 'a'}]);
});

interface Setup {
  grist: GristDoc;
  files: DocAttachmentFiles;
  a: MemoryStore;
  b: MemoryStore;
  errors: string[];
  durable: {fail: boolean};
  /** How many background jobs were started. */
  jobs: {started: number};
  choose: (id: string | null) => void;
  upload: (...contents: string[]) => Promise<number[]>;
  where: () => Record<string, string | null>;
}

function setup(): Setup {
  const grist = GristDoc.create(tempPath());
  const a = new MemoryStore('a');
  const b = new MemoryStore('b');
  const errors: string[] = [];
  const durable = {fail: false};
  const jobs = {started: 0};
  const files = new DocAttachmentFiles({
    docId: 'doc',
    grist,
    stores: new AttachmentStores([a, b], 'a'),
    durable: async () => {
      if (durable.fail) throw new Error('not durable');
    },
    keepOpen: (fn) => {
      jobs.started++;
      return fn();
    },
    onError: (e) => errors.push((e as Error).message),
  });
  const choose = (id: string | null) =>
    grist.applyUserActions([
      ['UpdateRecord', '_grist_DocInfo', 1, {documentSettings: JSON.stringify(id ? {attachmentStoreId: id} : {})}],
    ]);
  const upload = (...contents: string[]) =>
    files.addAttachments(
      contents.map((c) => ({fileName: `${c}.txt`, mimeType: null, data: Buffer.from(c)})),
      {},
      (rows, storeFiles) => grist.addAttachmentRecords(rows, storeFiles),
    );
  const where = () =>
    Object.fromEntries(
      (
        grist.db.prepare('SELECT ident, storageId, data IS NOT NULL AS here FROM _gristsys_Files').all() as {
          ident: string;
          storageId: string | null;
          here: number;
        }[]
      ).map((r) => [r.ident.slice(0, 4), r.storageId ?? (r.here ? 'internal' : 'nothing')]),
    );
  return {grist, files, a, b, errors, durable, jobs, choose, upload, where};
}

const short = (s: string) => sha1(s).slice(0, 4);

test('uploads follow the chosen store; a file already kept stays where it is (Grist)', async () => {
  const {files, a, choose, upload, where} = setup();
  assert.equal(await upload('one'), [1]);
  choose('id-a');
  assert.equal(await upload('one', 'two'), [2, 3]);
  assert.equal(where(), {[short('one')]: 'internal', [short('two')]: 'id-a'});
  assert.equal([...a.files.keys()], [`doc/${sha1('two')}.txt`]);
  assert.is((await files.download(3)).data.toString(), 'two');
  // A store that fails answers 503 and the upload leaves nothing.
  a.failPut = true;
  try {
    await upload('three');
    assert.unreachable('uploaded');
  } catch (e) {
    assert.is((e as ApiError).status, 503);
    assert.is((e as ApiError).message, 'Attachment store unavailable: put failed');
  }
  assert.equal(Object.keys(where()).length, 2);
});

test('a transfer whose upload fails changes nothing; one whose delete fails still moves', async () => {
  const {files, a, errors, choose, upload, where} = setup();
  await upload('one', 'two');
  choose('id-a');
  a.failPut = true;
  files.startTransferAll();
  await files.transfersDone();
  assert.equal(files.status().status, {pendingTransferCount: 0, isRunning: false, successes: 0, failures: 2});
  assert.equal(where(), {[short('one')]: 'internal', [short('two')]: 'internal'});
  assert.is((await files.download(1)).data.toString(), 'one');
  a.failPut = false;
  files.startTransferAll();
  await files.transfersDone();
  assert.equal(files.status(), {
    status: {pendingTransferCount: 0, isRunning: false, successes: 2, failures: 0},
    locationSummary: 'external',
  });
  // External to internal with the old copy's deletion failing: moved, old copy left, logged.
  choose(null);
  a.failDelete = true;
  errors.length = 0;
  files.startTransferAll();
  await files.transfersDone();
  assert.equal(files.status().status.successes, 2);
  assert.equal(where(), {[short('one')]: 'internal', [short('two')]: 'internal'});
  assert.is(a.files.size, 2);
  assert.is(errors.length, 2);
  assert.match(errors[0], /delete failed/);
});

test('the old copy is deleted only once the new row is durable', async () => {
  const {files, a, b, durable, choose, upload, where} = setup();
  choose('id-a');
  await upload('one');
  choose('id-b');
  durable.fail = true; // several machines: the row's change did not reach the log, so it will be undone
  files.startTransferAll();
  await files.transfersDone();
  assert.equal(files.status().status.failures, 1);
  assert.ok(a.files.has(`doc/${sha1('one')}.txt`), 'the copy the row may still name is kept');
  assert.ok(b.files.has(`doc/${sha1('one')}.txt`));
  durable.fail = false;
  files.startTransferAll(); // nothing to move: the row names b already (here nothing undid it)
  await files.transfersDone();
  assert.equal(where(), {[short('one')]: 'id-b'});
  // removeUnused likewise deletes files from their store only once the removal is durable.
  durable.fail = true;
  try {
    await files.removeUnused();
    assert.unreachable('removed');
  } catch (e) {
    assert.match((e as Error).message, /not durable/);
  }
  assert.ok(b.files.has(`doc/${sha1('one')}.txt`));
  durable.fail = false;
});

test('one transfer at a time per document; requests while it runs join it', async () => {
  const {files, a, jobs, choose, upload, where} = setup();
  await upload('one', 'two', 'three', 'four');
  choose('id-a');
  a.putDelayMs = 20;
  const first = files.startTransferAll();
  assert.equal(first, {
    status: {pendingTransferCount: 4, isRunning: true, successes: 0, failures: 0},
    locationSummary: 'internal',
  });
  await new Promise((r) => setTimeout(r, 30));
  const again = files.startTransferAll();
  assert.ok(again.status.isRunning);
  assert.ok(again.status.pendingTransferCount <= 3, 'the one already moved is not queued again');
  await files.transfersDone();
  assert.is(jobs.started, 1, 'the second request joined the running job');
  assert.is(a.maxRunning, 1, 'never two uploads at once');
  assert.equal(Object.values(where()), ['id-a', 'id-a', 'id-a', 'id-a']);
  assert.is(files.status().locationSummary, 'external');
});

test('a reader that looked at the row before a move finds the file where it went', async () => {
  const {files, a, b, choose, upload} = setup();
  choose('id-a');
  await upload('one');
  choose('id-b');
  files.startTransferAll();
  await files.transfersDone();
  assert.is(a.files.size, 0);
  assert.is(b.files.size, 1);
  // As a download or an archive that read `storageId` = id-a just before the move.
  assert.is((await files.readCurrent(`${sha1('one')}.txt`, 'id-a'))!.toString(), 'one');
  assert.is(await files.readCurrent(`${sha1('two')}.txt`, 'id-a'), null);
});

test('an upload waits for a removal in progress, which would delete the file it puts', async () => {
  const {files, a, choose, upload} = setup();
  choose('id-a');
  await upload('one');
  a.deleteDelayMs = 20;
  const removal = files.removeUnused(); // attachment 1 is in no cell: its file goes
  const again = upload('one');
  await removal;
  const [id] = await again;
  assert.is((await files.download(id)).data.toString(), 'one');
});

test('closing the document stops a transfer between files: every file is where its row says', async () => {
  const {files, a, choose, upload, where} = setup();
  await upload('one', 'two', 'three');
  choose('id-a');
  a.putDelayMs = 20;
  files.startTransferAll();
  await new Promise((r) => setTimeout(r, 30));
  files.close();
  await files.transfersDone();
  const rows = where();
  const moved = Object.values(rows).filter((w) => w === 'id-a').length;
  assert.ok(moved >= 1 && moved < 3, `moved ${moved}`);
  for (const [i, c] of ['one', 'two', 'three'].entries()) {
    const at = rows[short(c)];
    if (at === 'id-a') assert.ok(a.files.has(`doc/${sha1(c)}.txt`));
    assert.is((await files.download(i + 1)).data.toString(), c);
  }
});

test.run();
