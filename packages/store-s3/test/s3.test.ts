// Issue 17: snapshots in S3-compatible storage, against s3rver (an S3 server in this process).
import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import S3rver from 's3rver';
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {S3ObjectStore, parseDocStoreUrl} from '../src/index.js';

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
  await store.getFile(`${prefix}docs/d1/a.grist`, back);
  assert.ok(readFileSync(back).equals(body));
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

test.run();
