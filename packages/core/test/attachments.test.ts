import Database from 'better-sqlite3';
import {createHash, randomBytes} from 'node:crypto';
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {
  addAttachments,
  attachmentContentDisposition,
  getAttachmentDownload,
  getAttachmentMetadata,
  guessExt,
  listAttachments,
  parseAttId,
} from '../src/attachments/index.js';
import {createDocFile} from '../src/doc/index.js';
import {ApiError} from '../src/base/errors.js';
import {copyFixture, tempPath, withFixtures} from './doc-helpers.js';

const ftest = withFixtures(test);

const sha1 = (b: Uint8Array) => createHash('sha1').update(b).digest('hex');

// A 2x3 PNG (one IHDR is enough for the size; the content sniffer reads the signature).
const PNG = Buffer.from(
  '89504e470d0a1a0a0000000d49484452000000020000000308060000009d74666a0000000b49444154789c63600002000005000175a3a8ec0000000049454e44ae426082',
  'hex',
);

function newDoc(): Database.Database {
  const path = tempPath();
  createDocFile(path);
  return new Database(path);
}

async function rejects(p: Promise<unknown> | (() => unknown), status: number, message: RegExp): Promise<void> {
  try {
    await (typeof p === 'function' ? p() : p);
  } catch (e) {
    assert.instance(e, ApiError);
    assert.is((e as ApiError).status, status);
    assert.match((e as ApiError).message, message);
    return;
  }
  assert.unreachable('expected an error');
}

const file = (fileName: string, content: string | Buffer, mimeType: string | null = null) => ({
  fileName,
  mimeType,
  data: Buffer.isBuffer(content) ? content : Buffer.from(content),
});

test('upload: ids in order, rows and files stored as Grist stores them', async () => {
  const db = newDoc();
  const t0 = Date.now();
  assert.equal(
    await addAttachments(db, [
      file('hello.doc', 'foobar', 'application/msword'),
      file('world.jpg', '123456', 'image/jpeg'),
    ]),
    [1, 2],
  );
  assert.equal(await addAttachments(db, [file('hello.png', 'abcdef', 'image/png')]), [3]);
  const rows = db.prepare('SELECT * FROM _grist_Attachments ORDER BY id').all() as Record<string, unknown>[];
  assert.equal(
    rows.map((r) => [r.fileIdent, r.fileName, r.fileSize, r.fileExt, r.fileType, r.imageWidth, r.timeDeleted]),
    [
      [`${sha1(Buffer.from('foobar'))}.doc`, 'hello.doc', 6, '.doc', '', 0, null],
      [`${sha1(Buffer.from('123456'))}.jpg`, 'world.jpg', 6, '.jpg', '', 0, null],
      [`${sha1(Buffer.from('abcdef'))}.png`, 'hello.png', 6, '.png', '', 0, null],
    ],
  );
  // Stored as INTEGER (Grist's encoding), milliseconds.
  const types = db
    .prepare('SELECT typeof(fileSize) s, typeof(timeUploaded) t, timeUploaded FROM _grist_Attachments')
    .all() as {s: string; t: string; timeUploaded: number}[];
  assert.ok(
    types.every((r) => r.s === 'integer' && r.t === 'integer' && r.timeUploaded >= t0 && r.timeUploaded <= Date.now()),
  );
  const files = db.prepare('SELECT ident, data, storageId FROM _gristsys_Files ORDER BY id').all() as {
    ident: string;
    data: Buffer;
    storageId: null;
  }[];
  assert.equal(
    files.map((f) => [f.ident, f.data.toString(), f.storageId]),
    [
      [`${sha1(Buffer.from('foobar'))}.doc`, 'foobar', null],
      [`${sha1(Buffer.from('123456'))}.jpg`, '123456', null],
      [`${sha1(Buffer.from('abcdef'))}.png`, 'abcdef', null],
    ],
  );
  db.close();
});

test('identical uploads share storage; same bytes with another extension do not', async () => {
  const db = newDoc();
  await addAttachments(db, [file('a.txt', 'same', 'text/plain'), file('b.txt', 'same', 'text/plain')]);
  await addAttachments(db, [file('c.txt', 'same', 'text/plain'), file('d.csv', 'same', 'text/csv')]);
  assert.is(db.prepare('SELECT count(*) FROM _grist_Attachments').pluck().get(), 4);
  assert.equal(db.prepare('SELECT ident FROM _gristsys_Files ORDER BY id').pluck().all(), [
    `${sha1(Buffer.from('same'))}.txt`,
    `${sha1(Buffer.from('same'))}.csv`,
  ]);
  db.close();
});

test('upload over the size limit: 413 as Grist words it, nothing stored', async () => {
  const db = newDoc();
  await rejects(
    addAttachments(db, [file('ok.txt', 'abc'), file('big.bin', 'x'.repeat(2000))], {maxBytes: 1024}),
    413,
    /^Attachments must not exceed 1\.0KB$/,
  );
  await rejects(
    addAttachments(db, [file('big.bin', 'x'.repeat(6 * 1024 * 1024))], {maxBytes: 5 * 1024 * 1024}),
    413,
    /^Attachments must not exceed 5\.0MB$/,
  );
  assert.is(db.prepare('SELECT count(*) FROM _grist_Attachments').pluck().get(), 0);
  assert.is(db.prepare('SELECT count(*) FROM _gristsys_Files').pluck().get(), 0);
  db.close();
});

test('an upload that fails part-way leaves nothing behind', async () => {
  const db = newDoc();
  await addAttachments(db, [file('first.txt', 'one')]);
  db.exec(`CREATE TEMP TRIGGER fail_bad BEFORE INSERT ON main._grist_Attachments WHEN NEW.fileName = 'bad.txt'
           BEGIN SELECT RAISE(ABORT, 'disk on fire'); END`);
  try {
    await addAttachments(db, [file('good.txt', 'two'), file('bad.txt', 'three')]);
    assert.unreachable('should fail');
  } catch (e) {
    assert.match(String(e), /disk on fire/);
  }
  assert.equal(db.prepare('SELECT fileName FROM _grist_Attachments').pluck().all(), ['first.txt']);
  assert.equal(db.prepare('SELECT count(*) FROM _gristsys_Files').pluck().get(), 1);
  db.close();
});

test('list: filter, sort, limit on the table columns; three fields; ISO time', async () => {
  const db = newDoc();
  await addAttachments(db, [file('hello.doc', 'foobar'), file('world.jpg', '123456')], {
    now: () => Date.UTC(2024, 0, 1, 12),
  });
  await addAttachments(db, [file('hello.png', 'abcdef')], {now: () => Date.UTC(2024, 0, 2, 12)});
  const all = listAttachments(db);
  assert.equal(all.records[0], {
    id: 1,
    fields: {fileName: 'hello.doc', fileSize: 6, timeUploaded: '2024-01-01T12:00:00.000Z'},
  });
  assert.equal(
    listAttachments(db, {sort: ['-fileName'], limit: 2}).records.map((r) => [r.id, r.fields.fileName]),
    [
      [2, 'world.jpg'],
      [3, 'hello.png'],
    ],
  );
  assert.equal(
    listAttachments(db, {sort: ['fileName']}).records.map((r) => r.id),
    [1, 3, 2],
  );
  assert.equal(
    listAttachments(db, {sort: ['-timeUploaded', 'id']}).records.map((r) => r.id),
    [3, 1, 2],
  );
  assert.equal(
    listAttachments(db, {limit: 1}).records.map((r) => r.id),
    [1],
  );
  assert.equal(
    listAttachments(db, {limit: -1}).records.map((r) => r.id),
    [1, 2],
  );
  assert.equal(
    listAttachments(db, {filter: {fileName: ['world.jpg', 'nope']}}).records.map((r) => r.id),
    [2],
  );
  assert.equal(
    listAttachments(db, {filter: {id: [3, 1], fileSize: [6.0]}}).records.map((r) => r.id),
    [1, 3],
  );
  assert.equal(listAttachments(db, {filter: {timeDeleted: [null]}}).records.length, 3);
  assert.equal(listAttachments(db, {filter: {fileName: []}}).records, []);
  await rejects(() => listAttachments(db, {filter: {fileName: 'world.jpg'}}), 400, /filter values must be arrays/);
  await rejects(() => listAttachments(db, {filter: {BadCol: ['']}}), 400, /BadCol/);
  await rejects(() => listAttachments(db, {sort: ['Nope']}), 400, /unknown column "Nope"/);
  // A timeUploaded that is not a number is left out.
  db.prepare('UPDATE _grist_Attachments SET timeUploaded = NULL WHERE id = 3').run();
  assert.equal(getAttachmentMetadata(db, 3), {fileName: 'hello.png', fileSize: 6});
  db.close();
});

test('metadata by id; 404 and 400 as Grist words them', async () => {
  const db = newDoc();
  await addAttachments(db, [file('world.jpg', '123456')], {now: () => 1704110400000});
  assert.equal(getAttachmentMetadata(db, 1), {
    fileName: 'world.jpg',
    fileSize: 6,
    timeUploaded: '2024-01-01T12:00:00.000Z',
  });
  await rejects(() => getAttachmentMetadata(db, 22), 404, /^Attachment not found: 22$/);
  await rejects(() => parseAttId('moo'), 400, /^attId parameter cannot be understood as an integer: moo$/);
  assert.is(parseAttId('12abc'), 12);
  db.close();
});

test("download: bytes and Grist's headers", async () => {
  const db = newDoc();
  await addAttachments(db, [
    file('hello.doc', 'foobar', 'application/msword'),
    file('world.jpg', '123456', 'image/jpeg'),
  ]);
  const d = getAttachmentDownload(db, 2);
  assert.is(d.data.toString(), '123456');
  assert.equal(d.headers, {
    'Content-Type': 'image/jpeg',
    'Content-Disposition': 'attachment; filename="world.jpg"',
    'Cache-Control': 'private, max-age=3600',
    'Content-Security-Policy': "sandbox; default-src 'none'",
    'Content-Length': '6',
  });
  assert.is(getAttachmentDownload(db, 1).headers['Content-Type'], 'application/msword');
  assert.is(
    getAttachmentDownload(db, 1, {inline: true}).headers['Content-Disposition'],
    'inline; filename="hello.doc"',
  );
  assert.is(
    getAttachmentDownload(db, 1, {name: 'report.doc'}).headers['Content-Disposition'],
    'attachment; filename="report.doc"',
  );
  await rejects(() => getAttachmentDownload(db, 22), 404, /^Attachment not found: 22$/);
  db.prepare('DELETE FROM _gristsys_Files WHERE id = 1').run();
  await rejects(() => getAttachmentDownload(db, 1), 404, /^Invalid attachment identifier$/);
  db.close();
});

test("download: the ident's extension wins; html never inline; text gets a charset", async () => {
  const db = newDoc();
  // A PNG uploaded under another name: the content decides the extension.
  await addAttachments(db, [
    file('picture.dat', PNG, 'application/octet-stream'),
    file('page.html', '<p>hi</p>', 'text/html'),
    file('notes.txt', 'x', 'text/plain'),
  ]);
  const png = getAttachmentDownload(db, 1);
  assert.is(png.headers['Content-Type'], 'image/png');
  assert.is(png.headers['Content-Disposition'], 'attachment; filename="picture.png"');
  assert.is(
    getAttachmentDownload(db, 2, {inline: true}).headers['Content-Disposition'],
    'attachment; filename="page.html"',
  );
  assert.is(getAttachmentDownload(db, 2).headers['Content-Type'], 'text/html; charset=utf-8');
  assert.is(
    getAttachmentDownload(db, 3, {inline: true}).headers['Content-Disposition'],
    'inline; filename="notes.txt"',
  );
  const row = db.prepare('SELECT imageWidth, imageHeight FROM _grist_Attachments WHERE id = 1').get();
  assert.equal(row, {imageWidth: 2, imageHeight: 3});
  db.close();
});

ftest('binary round trip, and the attachment of a real Grist document downloads intact', async () => {
  const db = newDoc();
  const bytes = randomBytes(300_000);
  const [id] = await addAttachments(db, [file('blob.bin', bytes, 'application/octet-stream')]);
  const d = getAttachmentDownload(db, id);
  assert.ok(d.data.equals(bytes));
  assert.is(d.headers['Content-Length'], '300000');
  assert.is(d.headers['Content-Type'], 'application/octet-stream');
  db.close();

  const fixture = new Database(copyFixture('TypeEncoding.grist'));
  const meta = getAttachmentMetadata(fixture, 1);
  assert.equal(meta, {
    fileName: 'gristicon-sm.png',
    fileSize: 3106,
    timeUploaded: new Date(1771082864804).toISOString(),
  });
  const img = getAttachmentDownload(fixture, 1);
  assert.is(img.data.byteLength, 3106);
  assert.is(`${sha1(img.data)}.png`, '7e479e4d8940406e7f5d6d421c7335ce4cac43a3.png');
  assert.is(img.headers['Content-Type'], 'image/png');
  assert.is(img.headers['Content-Disposition'], 'attachment; filename="gristicon-sm.png"');
  // Uploading the same image again into that document reuses its stored file.
  assert.equal(await addAttachments(fixture, [file('again.png', img.data, 'image/png')]), [2]);
  assert.is(fixture.prepare('SELECT count(*) FROM _gristsys_Files').pluck().get(), 1);
  assert.equal(fixture.prepare('SELECT imageWidth, imageHeight FROM _grist_Attachments WHERE id = 2').get(), {
    imageWidth: 256,
    imageHeight: 256,
  });
  fixture.close();
});

test("guessExt follows Grist's rules", async () => {
  const txt = Buffer.from('hello');
  assert.is(await guessExt(txt, 'data.txt', 'application/json'), '.json');
  assert.is(await guessExt(txt, 'table.CSV', 'application/vnd.ms-excel'), '.csv');
  assert.is(await guessExt(txt, 'world.jpg', 'image/jpeg'), '.jpg');
  assert.is(await guessExt(txt, 'hello.doc', 'application/octet-stream'), '.doc');
  assert.is(await guessExt(txt, 'foo', 'application/pdf'), '.pdf');
  assert.is(await guessExt(txt, 'hello.png', 'invalid/content-type'), '.png');
  assert.is(await guessExt(txt, 'hello.png', 'image/png\r\nX-Injected: 1'), '.png');
  assert.is(await guessExt(PNG, 'photo.jpg', 'text/plain'), '.png');
  assert.is(await guessExt(txt, 'noext', 'application/octet-stream'), '.bin');
  assert.is(await guessExt(txt, 'noext', null), '');
});

test('Content-Disposition as the content-disposition package builds it', () => {
  assert.is(attachmentContentDisposition('world.jpg'), 'attachment; filename="world.jpg"');
  assert.is(attachmentContentDisposition('say "hi".txt'), 'attachment; filename="say \\"hi\\".txt"');
  assert.is(
    attachmentContentDisposition('café.txt'),
    'attachment; filename="cafe.txt"; filename*=UTF-8\'\'caf%C3%A9.txt',
  );
  assert.is(
    attachmentContentDisposition('日本.txt'),
    'attachment; filename="??.txt"; filename*=UTF-8\'\'%E6%97%A5%E6%9C%AC.txt',
  );
  assert.is(
    attachmentContentDisposition('café.jpg', 'inline'),
    'inline; filename="cafe.jpg"; filename*=UTF-8\'\'caf%C3%A9.jpg',
  );
  assert.is(
    attachmentContentDisposition('100%41.txt'),
    'attachment; filename="100%41.txt"; filename*=UTF-8\'\'100%2541.txt',
  );
  assert.is(attachmentContentDisposition('dir/x.txt', 'inline'), 'inline; filename="x.txt"');
});

test.run();
