/**
 * Document snapshots in S3-compatible object storage (AWS S3, MinIO, Garage; s3rver in tests):
 * the `ObjectStore` of a several-machine deployment (docs/deployment.md). Keys are immutable, so
 * nothing here needs bucket versioning or conditional writes (neither is assumed available).
 * The same client keeps attachment files (`S3AttachmentStore`, issue 29).
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
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import {type AttachmentStore, type ObjectStore, storeFileName} from '@gristlite/core/internal';

type Env = Record<string, string | undefined>;

/** Where documents go, from `s3://bucket/prefix` (the prefix may be empty). */
export function parseDocStoreUrl(url: string, setting = 'GRISTLITE_DOC_STORE'): {bucket: string; prefix: string} {
  const m = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:\/(.*))?$/.exec(url);
  if (!m) throw new Error(`${setting} must look like s3://bucket/prefix, got ${JSON.stringify(url)}`);
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
  static fromEnv(env: Env, setting = 'GRISTLITE_DOC_STORE'): {store: S3ObjectStore; prefix: string} {
    const {bucket, prefix} = parseDocStoreUrl(env[setting] ?? '', setting);
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

  async getFile(key: string, path: string): Promise<string> {
    const res = await this.client.send(new GetObjectCommand({Bucket: this.bucket, Key: key}));
    // Hashed as it arrives (a second listener beside the pipe): reading the file again after
    // took 6 ms of a 1 MB document's 120 ms takeover and 45 of a 10 MB one's 290 (C5, C6).
    const body = res.Body as Readable;
    const hash = createHash('sha256');
    body.on('data', (chunk: Buffer) => hash.update(chunk));
    try {
      await pipeline(body, createWriteStream(path));
    } catch (e) {
      await rm(path, {force: true});
      throw e;
    }
    return hash.digest('hex');
  }

  /** The object's body as a stream, or null when there is none. */
  private async body(key: string): Promise<Readable | null> {
    try {
      const res: GetObjectCommandOutput = await this.client.send(new GetObjectCommand({Bucket: this.bucket, Key: key}));
      return res.Body as Readable;
    } catch (e) {
      if (isMissing(e)) return null;
      throw e;
    }
  }

  async digest(key: string): Promise<{size: number; sha256: string} | null> {
    // Read back in full: S3-compatible servers differ in stored checksums, so the bytes are hashed here.
    const body = await this.body(key);
    if (!body) return null;
    const hash = createHash('sha256');
    let size = 0;
    for await (const chunk of body) {
      hash.update(chunk as Buffer);
      size += (chunk as Buffer).length;
    }
    return {size, sha256: hash.digest('hex')};
  }

  /** Uploads bytes under `key`. */
  async putObject(key: string, data: Buffer): Promise<void> {
    await this.client.send(
      new PutObjectCommand({Bucket: this.bucket, Key: key, Body: data, ContentLength: data.byteLength}),
    );
  }

  /** The bytes under `key`, or null when there are none. */
  async getObject(key: string): Promise<Buffer | null> {
    const body = await this.body(key);
    if (!body) return null;
    const chunks: Buffer[] = [];
    for await (const chunk of body) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  }

  /** Whether `key` exists. */
  async exists(key: string): Promise<boolean> {
    try {
      await this.client.send(new HeadObjectCommand({Bucket: this.bucket, Key: key}));
      return true;
    } catch (e) {
      if (isMissing(e)) return false;
      throw e;
    }
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

/** A key that is not there (GET answers NoSuchKey, HEAD a bare 404). */
function isMissing(e: unknown): boolean {
  const err = e as {name?: string; $metadata?: {httpStatusCode?: number}};
  return err.name === 'NoSuchKey' || err.name === 'NotFound' || err.$metadata?.httpStatusCode === 404;
}

/**
 * Attachment files in S3-compatible storage (Grist's ExternalStorageAttachmentStore):
 * `<prefix><docId>/<fileIdent>`. Its id is derived from the bucket and prefix, so every worker
 * (and a restart) names the same store alike, with no marker object to race over.
 */
export class S3AttachmentStore implements AttachmentStore {
  readonly id: string;

  /**
   * @param s3 the client (shared with the document snapshots for the `snapshots` store)
   * @param prefix key prefix, empty or ending in `/`
   * @param label the name `GET /attachments/stores` lists
   * @param owned whether closing this store closes the client
   */
  constructor(
    readonly s3: S3ObjectStore,
    readonly prefix: string,
    readonly label = 's3',
    private readonly owned = true,
  ) {
    const where = createHash('sha256').update(`s3://${s3.bucket}/${prefix}`).digest('hex');
    this.id = `${where.slice(0, 32)}-${label}`;
  }

  /**
   * From GRISTLITE_ATTACHMENT_STORE_S3 (`s3://bucket/prefix`), with the endpoint and credentials
   * the document store uses (GRISTLITE_S3_ENDPOINT, AWS_*); null when it is not set.
   */
  static fromEnv(env: Env): S3AttachmentStore | null {
    if (!env.GRISTLITE_ATTACHMENT_STORE_S3) return null;
    const {store, prefix} = S3ObjectStore.fromEnv(env, 'GRISTLITE_ATTACHMENT_STORE_S3');
    return new S3AttachmentStore(store, prefix, 's3');
  }

  private key(docId: string, fileIdent: string): string {
    return `${this.prefix}${docId}/${storeFileName(docId, fileIdent)}`;
  }

  exists(docId: string, fileIdent: string): Promise<boolean> {
    return this.s3.exists(this.key(docId, fileIdent));
  }

  get(docId: string, fileIdent: string): Promise<Buffer | null> {
    return this.s3.getObject(this.key(docId, fileIdent));
  }

  put(docId: string, fileIdent: string, data: Buffer): Promise<void> {
    return this.s3.putObject(this.key(docId, fileIdent), data);
  }

  delete(docId: string, fileIdent: string): Promise<void> {
    return this.s3.delete([this.key(docId, fileIdent)]);
  }

  removePool(docId: string): Promise<void> {
    if (!/^[A-Za-z0-9_-]+$/.test(docId)) throw new Error(`bad document id ${docId}`);
    return this.s3.deletePrefix(`${this.prefix}${docId}/`);
  }

  close(): void {
    if (this.owned) this.s3.close();
  }
}
