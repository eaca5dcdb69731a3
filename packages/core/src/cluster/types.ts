/**
 * Several machines serving one deployment: documents live in object storage, each is written by
 * one worker at a time, and PostgreSQL says which (docs/deployment.md). Core defines the two
 * interfaces; `@gristlite/store-s3` and `@gristlite/store-postgres` implement them.
 */

/** S3-compatible object storage for document snapshots. Keys are never overwritten. */
export interface ObjectStore {
  /** Uploads a local file under `key`. */
  putFile(key: string, path: string): Promise<void>;
  /**
   * Downloads `key` into a local file (replacing it). May answer the sha256 (hex) of the bytes
   * it wrote, hashed as they arrived: a takeover then does not read the file again to check it.
   */
  getFile(key: string, path: string): Promise<string | undefined>;
  /**
   * Reads `key` back: its size and sha256 as stored, or null when it is missing. An upload is
   * checked this way before it is recorded.
   */
  digest(key: string): Promise<{size: number; sha256: string} | null>;
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
  /** Older recorded snapshots, newest first: used when `snapshot` is missing or corrupt. */
  previous: SnapshotRef[];
  /** The log after `snapshot` (all of it when there is none), in order: what a restore replays. */
  log: LogEntry[];
  /**
   * Every entry kept after `seq`, in order: the log an older snapshot needs to stand in for the
   * newest, read only then (the entries the newest snapshot covers were read at every takeover:
   * 0.4-2 s of a 3-146 MB document's, measured).
   */
  logSince(seq: number): Promise<LogEntry[]>;
  /** The WAL generation the next entry starts (one past the log's last, covered entries included). */
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
   * Records a verified snapshot (under `epoch`) and its upload intent's end, in one transaction;
   * drops the log entries the previous snapshot covers (the log after it is kept, so that the
   * previous snapshot plus the log can stand in for this one). Throws Fenced (document moved) or
   * Unrecorded (intent swept) when it certainly did not commit; any other error leaves the
   * outcome unknown: ask `snapshotRecorded`.
   */
  recordSnapshot(docId: string, epoch: number, snap: SnapshotRef): Promise<void>;
  /** Does a committed record name this snapshot (after a recording whose answer was lost)? */
  snapshotRecorded(docId: string, key: string): Promise<boolean>;
  /**
   * Keys of recorded snapshots a committed, newer one supersedes beyond the kept history (never
   * the newest two). Their rows stay until `forgetSnapshots`, after their objects are deleted.
   */
  prunable(docId: string): Promise<string[]>;
  /** Drops history rows of snapshots whose objects were deleted. */
  forgetSnapshots(docId: string, keys: string[]): Promise<void>;
  /** Announces a snapshot upload before it starts (recordSnapshot ends the intent). */
  intendUpload(docId: string, key: string): Promise<void>;
  /**
   * Ends and returns upload intents older than `olderThanMs` that no record names (their worker
   * crashed or gave up between upload and record), at most `limit`: their objects may be
   * deleted, since a record needs the intent and can no longer commit.
   */
  takeStaleUploads(olderThanMs: number, limit: number): Promise<{docId: string; key: string}[]>;
  /** Gives a document up (when closing it); a no-op unless held under `epoch`. */
  release(docId: string, epoch: number): Promise<void>;
  /** Forgets a deleted document; returns its snapshot keys to delete. */
  remove(docId: string): Promise<string[]>;
  /** Local time (performance.now()) until which this worker may still use the document, or 0. */
  validUntil(docId: string, epoch: number): number;
  /** Called when a document this worker holds was taken by another (or the lease connection was lost: docId null). */
  onLost(fn: (docId: string | null) => void): void;
  /**
   * The other worker the document's placement names, and whether it holds the document live
   * (lease and session); null when none does (this worker, nobody, no such document). A look,
   * never a takeover (routing's first step, before any access check).
   */
  liveHolder(docId: string): Promise<{worker: string; live: boolean} | null>;
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

/** Thrown by `recordSnapshot` when the upload's intent is gone (swept): certainly not recorded. */
export class Unrecorded extends Error {
  constructor(key: string) {
    super(`snapshot ${key} was not recorded (its upload intent is gone)`);
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
