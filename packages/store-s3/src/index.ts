/**
 * Document snapshots in S3-compatible object storage (AWS S3, MinIO, Garage; s3rver in tests):
 * the `ObjectStore` of a several-machine deployment (docs/deployment.md). Keys are immutable, so
 * nothing here needs bucket versioning or conditional writes (neither is assumed available).
 */
import {createHash} from 'node:crypto';
import {createReadStream, createWriteStream, statSync} from 'node:fs';
import {rm} from 'node:fs/promises';
import {pipeline} from 'node:stream/promises';
import type {Readable} from 'node:stream';
import {
  DeleteObjectsCommand,
  GetObjectCommand,
  type GetObjectCommandOutput,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import type {ObjectStore} from '@gristlite/core/internal';

type Env = Record<string, string | undefined>;

/** Where documents go, from `s3://bucket/prefix` (the prefix may be empty). */
export function parseDocStoreUrl(url: string): {bucket: string; prefix: string} {
  const m = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:\/(.*))?$/.exec(url);
  if (!m) throw new Error(`GRISTLITE_DOC_STORE must look like s3://bucket/prefix, got ${JSON.stringify(url)}`);
  const prefix = (m[2] ?? '').replace(/\/+$/, '');
  return {bucket: m[1], prefix: prefix ? `${prefix}/` : ''};
}

export interface S3ObjectStoreOptions {
  bucket: string;
  /** An endpoint other than AWS's (MinIO, Garage, s3rver): path-style addressing is used then. */
  endpoint?: string;
  region?: string;
  accessKeyId?: string;
  secretAccessKey?: string;
  /** Per request (default 60000 ms): a store that does not answer fails the snapshot, not the worker. */
  requestTimeoutMs?: number;
}

export class S3ObjectStore implements ObjectStore {
  private readonly client: S3Client;
  readonly bucket: string;

  constructor(opts: S3ObjectStoreOptions) {
    this.bucket = opts.bucket;
    this.client = new S3Client({
      region: opts.region ?? 'us-east-1',
      endpoint: opts.endpoint,
      forcePathStyle: Boolean(opts.endpoint),
      credentials:
        opts.accessKeyId && opts.secretAccessKey
          ? {accessKeyId: opts.accessKeyId, secretAccessKey: opts.secretAccessKey}
          : undefined,
      // Checksums only where S3 requires them: S3-compatible servers differ in the newer trailers.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      requestHandler: {connectionTimeout: 5000, requestTimeout: opts.requestTimeoutMs ?? 60_000},
      maxAttempts: 3,
    });
  }

  /**
   * From the settings: GRISTLITE_DOC_STORE (`s3://bucket/prefix`), GRISTLITE_S3_ENDPOINT, and the
   * usual AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION. Returns the store and the prefix.
   */
  static fromEnv(env: Env): {store: S3ObjectStore; prefix: string} {
    const {bucket, prefix} = parseDocStoreUrl(env.GRISTLITE_DOC_STORE ?? '');
    const store = new S3ObjectStore({
      bucket,
      endpoint: env.GRISTLITE_S3_ENDPOINT || undefined,
      region: env.AWS_REGION || env.AWS_DEFAULT_REGION || undefined,
      accessKeyId: env.AWS_ACCESS_KEY_ID || undefined,
      secretAccessKey: env.AWS_SECRET_ACCESS_KEY || undefined,
    });
    return {store, prefix};
  }

  async putFile(key: string, path: string): Promise<void> {
    await this.client.send(
      new PutObjectCommand({
        Bucket: this.bucket,
        Key: key,
        Body: createReadStream(path),
        ContentLength: statSync(path).size,
        ContentType: 'application/x-sqlite3',
      }),
    );
  }

  async getFile(key: string, path: string): Promise<void> {
    const res = await this.client.send(new GetObjectCommand({Bucket: this.bucket, Key: key}));
    try {
      await pipeline(res.Body as Readable, createWriteStream(path));
    } catch (e) {
      await rm(path, {force: true});
      throw e;
    }
  }

  async digest(key: string): Promise<{size: number; sha256: string} | null> {
    // Read back in full: S3-compatible servers differ in stored checksums, so the bytes are hashed here.
    let res: GetObjectCommandOutput;
    try {
      res = await this.client.send(new GetObjectCommand({Bucket: this.bucket, Key: key}));
    } catch (e) {
      const err = e as {name?: string; $metadata?: {httpStatusCode?: number}};
      if (err.name === 'NoSuchKey' || err.$metadata?.httpStatusCode === 404) return null;
      throw e;
    }
    const hash = createHash('sha256');
    let size = 0;
    for await (const chunk of res.Body as Readable) {
      hash.update(chunk as Buffer);
      size += (chunk as Buffer).length;
    }
    return {size, sha256: hash.digest('hex')};
  }

  async delete(keys: string[]): Promise<void> {
    for (let i = 0; i < keys.length; i += 1000) {
      await this.client.send(
        new DeleteObjectsCommand({
          Bucket: this.bucket,
          Delete: {Objects: keys.slice(i, i + 1000).map((Key) => ({Key})), Quiet: true},
        }),
      );
    }
  }

  async deletePrefix(prefix: string): Promise<void> {
    let token: string | undefined;
    do {
      const page = await this.client.send(
        new ListObjectsV2Command({Bucket: this.bucket, Prefix: prefix, ContinuationToken: token}),
      );
      const keys = (page.Contents ?? []).map((o) => o.Key!).filter(Boolean);
      if (keys.length) await this.delete(keys);
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  }

  close(): void {
    this.client.destroy();
  }
}
