// Issue 17: snapshots in S3-compatible storage, against s3rver (an S3 server in this process).
import {createHash} from 'node:crypto';
import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import S3rver from 's3rver';
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {Engine} from '@gristlite/core/internal';
import {S3AttachmentStore, S3ObjectStore, parseDocStoreUrl} from '../src/index.js';

const dir = mkdtempSync(join(tmpdir(), 'gl-s3-'));
const server = new S3rver({
  port: 0,
  address: '127.0.0.1',
  directory: join(dir, 's3'),
  silent: true,
  configureBuckets: [{name: 'docs'}],
});
const {port} = await server.run();
const env = {
  GRISTLITE_DOC_STORE: 's3://docs/prod/',
  GRISTLITE_S3_ENDPOINT: `http://127.0.0.1:${port}`,
  AWS_ACCESS_KEY_ID: 'S3RVER',
  AWS_SECRET_ACCESS_KEY: 'S3RVER',
  AWS_REGION: 'us-east-1',
};

test.after(async () => {
  await server.close();
  rmSync(dir, {recursive: true, force: true});
});

test('s3:// settings name the bucket and a prefix ending in /', () => {
  assert.equal(parseDocStoreUrl('s3://docs'), {bucket: 'docs', prefix: ''});
  assert.equal(parseDocStoreUrl('s3://my-bucket/a/b//'), {bucket: 'my-bucket', prefix: 'a/b/'});
  assert.throws(() => parseDocStoreUrl('http://docs/x'), /s3:\/\/bucket\/prefix/);
  assert.throws(() => parseDocStoreUrl('s3://UPPER/x'), /s3:\/\/bucket\/prefix/);
});

test('a file goes up and comes back byte for byte; deleted keys are gone, missing ones are fine', async () => {
  const {store, prefix} = S3ObjectStore.fromEnv(env);
  assert.is(prefix, 'prod/');
  const src = join(dir, 'src.bin');
  const body = Buffer.alloc(3 * 1024 * 1024 + 17);
  for (let i = 0; i < body.length; i++) body[i] = (i * 31) & 0xff;
  writeFileSync(src, body);
  await store.putFile(`${prefix}docs/d1/a.grist`, src);
  const back = join(dir, 'back.bin');
  // The sha256 of what it wrote, hashed as it arrived (a takeover then skips reading it again).
  const sha = await store.getFile(`${prefix}docs/d1/a.grist`, back);
  assert.ok(readFileSync(back).equals(body));
  assert.is(sha, createHash('sha256').update(body).digest('hex'));
  await store.delete([`${prefix}docs/d1/a.grist`, `${prefix}docs/d1/never.grist`]);
  try {
    await store.getFile(`${prefix}docs/d1/a.grist`, back);
    assert.unreachable('a deleted key answered');
  } catch (e) {
    assert.match(String((e as Error).name), /NoSuchKey/);
  }
  store.close();
});

test('an unreachable store fails the call instead of hanging', async () => {
  const store = new S3ObjectStore({
    bucket: 'docs',
    endpoint: 'http://127.0.0.1:9',
    accessKeyId: 'x',
    secretAccessKey: 'y',
  });
  const src = join(dir, 'small.bin');
  writeFileSync(src, 'x');
  const t0 = Date.now();
  const err = await store.putFile('k', src).then(
    () => null,
    (e: Error) => e,
  );
  assert.ok(err, 'uploaded to nowhere');
  assert.ok(Date.now() - t0 < 20_000, `${Date.now() - t0} ms`);
  store.close();
});

test('attachment files in a bucket: put, get, exists, delete, a whole document removed (issue 29)', async () => {
  const store = S3AttachmentStore.fromEnv({...env, GRISTLITE_ATTACHMENT_STORE_S3: 's3://docs/files'})!;
  assert.is(store.label, 's3');
  assert.match(store.id, /^[0-9a-f]{32}-s3$/);
  // The same bucket and prefix is the same store (every worker agrees); another prefix is not.
  assert.is(S3AttachmentStore.fromEnv({...env, GRISTLITE_ATTACHMENT_STORE_S3: 's3://docs/files/'})!.id, store.id);
  assert.is.not(S3AttachmentStore.fromEnv({...env, GRISTLITE_ATTACHMENT_STORE_S3: 's3://docs/other'})!.id, store.id);
  assert.is(S3AttachmentStore.fromEnv(env), null);
  const ident = `${'a'.repeat(40)}.png`;
  assert.is(await store.exists('doc1', ident), false);
  assert.is(await store.get('doc1', ident), null);
  await store.put('doc1', ident, Buffer.from('png bytes'));
  await store.put('doc1', `${'b'.repeat(40)}.a b`, Buffer.from('odd extension'));
  await store.put('doc2', ident, Buffer.from('other document'));
  assert.is(await store.exists('doc1', ident), true);
  assert.is((await store.get('doc1', ident))!.toString(), 'png bytes');
  assert.is((await store.get('doc1', `${'b'.repeat(40)}.a b`))!.toString(), 'odd extension');
  assert.ok(await store.s3.exists(`files/doc1/${'b'.repeat(40)}.a%20b`), 'the extension is encoded in the key');
  try {
    await store.get('doc1', '../doc2/x');
    assert.unreachable('a path for an identifier');
  } catch (e) {
    assert.is((e as {status?: number}).status, 404);
  }
  await store.delete('doc1', ident);
  assert.is(await store.get('doc1', ident), null);
  await store.removePool('doc1');
  assert.is(await store.get('doc1', `${'b'.repeat(40)}.a b`), null);
  assert.is((await store.get('doc2', ident))!.toString(), 'other document');
  store.close();
});

test('a document chooses the bucket: uploads, downloads and transfers go through it', async () => {
  const store = S3AttachmentStore.fromEnv({...env, GRISTLITE_ATTACHMENT_STORE_S3: 's3://docs/att'})!;
  const engine = await Engine.open({dataDir: join(dir, 'engine'), attachmentStores: [store], resumeWebhooks: false});
  try {
    const session = await engine.forUser('s3@example.com');
    const docId = await session.createDoc((await session.personalWorkspace()).id, {name: 'S3'});
    await engine.withDoc(docId, async (doc) => {
      assert.equal(doc.attachmentStores.labels(), [{label: 's3'}]);
      assert.equal(await doc.addAttachments([{fileName: 'in.txt', mimeType: null, data: Buffer.from('inside')}]), [1]);
      assert.is(doc.setAttachmentStore('external'), store.id);
      assert.equal(
        await doc.addAttachments([{fileName: 'out.txt', mimeType: null, data: Buffer.from('outside')}]),
        [2],
      );
      assert.is(doc.attachmentStoreStatus().locationSummary, 'mixed');
      assert.is((await doc.attachmentDownload(2)).data.toString(), 'outside');
      assert.is(doc.transferAllAttachments().status.pendingTransferCount, 1);
      await doc.files.transfersDone();
      assert.equal(doc.attachmentStoreStatus(), {
        status: {pendingTransferCount: 0, isRunning: false, successes: 1, failures: 0},
        locationSummary: 'external',
      });
      const keys = doc.db.prepare('SELECT ident FROM _gristsys_Files ORDER BY ident').pluck().all() as string[];
      for (const k of keys) assert.ok(await store.s3.exists(`att/${docId}/${k}`), k);
      assert.is((await doc.attachmentDownload(1)).data.toString(), 'inside');
    });
    await session.deleteDoc(docId);
    for (const name of ['inside', 'outside']) {
      const sha = createHash('sha1').update(name).digest('hex');
      assert.is(await store.s3.exists(`att/${docId}/${sha}.txt`), false, "a deleted document's files are gone");
    }
  } finally {
    await engine.close();
  }
});

test.run();
