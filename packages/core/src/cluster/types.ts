/**
 * Several machines serving one deployment: documents live in object storage, each is written by
 * one worker at a time, and PostgreSQL says which (docs/deployment.md). Core defines the two
 * interfaces; `@gristlite/store-s3` and `@gristlite/store-postgres` implement them.
 */

/** S3-compatible object storage for document snapshots. Keys are never overwritten. */
export interface ObjectStore {
  /** Uploads a local file under `key`. */
  putFile(key: string, path: string): Promise<void>;
  /** Downloads `key` into a local file (replacing it). */
  getFile(key: string, path: string): Promise<void>;
  /** Deletes keys (missing ones are fine). */
  delete(keys: string[]): Promise<void>;
  /** Deletes every key starting with `prefix` (a deleted document's snapshots, orphans included). */
  deletePrefix(prefix: string): Promise<void>;
  /** Frees connections. */
  close?(): void;
}

/** One committed piece of a document's write-ahead log (see cluster/wal.ts). */
export interface LogEntry {
  /** Position in the document's log: 1, 2, 3... with no gaps across workers. */
  seq: number;
  /** WAL generation (a new one after each checkpoint); entries of one generation replay as one WAL. */
  gen: number;
  /** Byte offset of `bytes` in that generation's WAL. */
  offset: number;
  bytes: Buffer;
}

/** A snapshot: the document file as of log entry `seq`. */
export interface SnapshotRef {
  key: string;
  sha256: string;
  size: number;
  seq: number;
}

/** What a worker gets when it takes a document: its epoch and what to restore. */
export interface Takeover {
  epoch: number;
  /** The newest recorded snapshot, or null (a document with none yet cannot be restored). */
  snapshot: SnapshotRef | null;
  /** Log entries after the snapshot, in order. */
  log: LogEntry[];
  /** The WAL generation the next entry starts (one past the log's last). */
  nextGen: number;
}

/** The answer to "who serves this document": this worker (with what to restore) or another. */
export type Claim = {mine: true; takeover: Takeover | null} | {mine: false; holder: string} | {missing: true};

/**
 * Placement of documents on workers, with fencing: one row per document naming its worker, an
 * epoch that grows at every takeover, and a lease whose expiry comes from the database's clock.
 */
export interface Placement {
  /** This worker's address, as other workers reach it. */
  readonly self: string;
  /** A secret shared by the deployment's workers (signs forwarded requests). */
  readonly secret: string;
  /**
   * Takes the document when it is free, expired, or its holder is gone (a new epoch, with what to
   * restore); else names the holder. `known` is the epoch this worker holds it under, if any: when
   * the row still says so, the lease is renewed and `takeover` is null (local state still good).
   */
  claim(docId: string, known?: number): Promise<Claim>;
  /** Records a new document as held here (epoch 1) before its first snapshot. */
  create(docId: string): Promise<number>;
  /** Appends log entries, only while this worker holds the document under `epoch` (else throws Fenced). */
  append(docId: string, epoch: number, entries: LogEntry[]): Promise<void>;
  /**
   * Records a snapshot (under `epoch`) and drops the log entries it covers; returns keys of old
   * snapshots beyond the kept history, for the caller to delete.
   */
  recordSnapshot(docId: string, epoch: number, snap: SnapshotRef): Promise<string[]>;
  /** Announces a snapshot upload before it starts (recordSnapshot forgets the intent). */
  intendUpload(docId: string, key: string): Promise<void>;
  /**
   * Upload intents older than `olderThanMs` (their worker crashed or gave up between upload and
   * record), at most `limit`.
   */
  staleUploads(olderThanMs: number, limit: number): Promise<string[]>;
  /** Drops upload intents (their objects are deleted, or were recorded). */
  forgetUploads(keys: string[]): Promise<void>;
  /** Gives a document up (when closing it); a no-op unless held under `epoch`. */
  release(docId: string, epoch: number): Promise<void>;
  /** Forgets a deleted document; returns its snapshot keys to delete. */
  remove(docId: string): Promise<string[]>;
  /** Local time (performance.now()) until which this worker may still use the document, or 0. */
  validUntil(docId: string, epoch: number): number;
  /** Called when a document this worker holds was taken by another (or the lease connection was lost: docId null). */
  onLost(fn: (docId: string | null) => void): void;
  /**
   * Another worker that holds the document live (lease and session), or null: a look, never a
   * takeover (routing's first step, before any access check).
   */
  liveHolder(docId: string): Promise<string | null>;
  /**
   * Documents whose holder is gone (crashed, stalled past its lease, cut off), oldest first, at
   * most `limit`: a worker adopts them with no request waiting (their webhook events, above all).
   */
  orphans(limit: number): Promise<string[]>;
  /** Does `worker` still hold the document with a live lease (routing's watch while forwarding)? */
  holderAlive(docId: string, worker: string): Promise<boolean>;
  /** The lease time (ms). */
  readonly leaseMs: number;
  /** Forgets a cached holder address (it did not answer). */
  forgetHolder(docId: string): void;
  /** Stops renewing and closes connections (leases then expire). */
  close(): Promise<void>;
}

/** Thrown by `append`/`recordSnapshot` when the epoch is outdated or the lease expired. */
export class Fenced extends Error {
  constructor(docId: string) {
    super(`document ${docId} is no longer held by this worker`);
  }
}

/** Settings of a worker in a several-machine deployment. */
export interface ClusterOptions {
  placement: Placement;
  store: ObjectStore;
  /** Key prefix for this deployment's snapshots (e.g. `prod/`). */
  prefix?: string;
  /** A snapshot is taken this long after the first write since the last one (default 5000 ms). */
  snapshotDelayMs?: number;
  /** ... or at once when the log since the last snapshot is this large (default 16 MB). */
  snapshotLogBytes?: number;
  /**
   * Writes to a document answer 503 while its log since the last snapshot is this large (default
   * 256 MB): snapshots are failing (object store away), and the log in PostgreSQL must not grow
   * without bound. Reads go on.
   */
  maxLogBytes?: number;
  /**
   * Local copies of documents released here (idle) kept for a cheap return (a matching checksum
   * saves the download), at most this many (default 200); the least recently released go.
   */
  keepLocalCopies?: number;
}
