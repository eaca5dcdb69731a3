/**
 * One document held by this worker in a several-machine deployment: every commit's WAL frames go
 * to the placement's action log before the request that made them is answered, and snapshots of
 * the file go to object storage now and then, after which the log they cover is dropped.
 *
 * Durability order, the invariant a takeover relies on: the newest recorded snapshot, then the
 * log entries after it, grouped by WAL generation, rebuild the document exactly. So a checkpoint
 * (which ends a generation and changes the file) happens only when everything before it is in
 * the log, or, when that cannot be (a WAL gap or a huge transaction), inside a snapshot that is
 * recorded before anything later is appended.
 */
import {createHash, randomBytes} from 'node:crypto';
import {removeSqliteCompanions} from '../doc/files.js';
import {copyFileSync, createReadStream, existsSync, renameSync, rmSync, statSync, writeFileSync} from 'node:fs';
import type Database from 'better-sqlite3';
import BetterSqlite from 'better-sqlite3';
import {ServiceUnavailable} from '../base/index.js';
import {
  Fenced,
  Unrecorded,
  type LogEntry,
  type ObjectStore,
  type Placement,
  type SnapshotRef,
  type Takeover,
} from './types.js';
import {WalGap, WalTail} from './wal.js';

/** A log entry larger than this is not appended: a snapshot covers it instead. */
const MAX_ENTRY_BYTES = 4 * 1024 * 1024;
/** Entries appended in one round trip at most. */
const MAX_BATCH = 256;

/** sha256 of a file, streamed (a 50 MB document takes about 0.1 s, off the event loop's back). */
export async function fileSha256(path: string): Promise<string> {
  const hash = createHash('sha256');
  // 1 MB reads: Node's 64 KB default took 1.5-2x as long over a 146 MB snapshot (loaded machine).
  for await (const chunk of createReadStream(path, {highWaterMark: 1 << 20})) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** Where a document's snapshots go: one immutable key per snapshot. */
export function snapshotKey(prefix: string, docId: string, epoch: number, seq: number): string {
  const nonce = randomBytes(4).toString('hex');
  return `${prefix}docs/${docId}/${String(epoch).padStart(8, '0')}-${String(seq).padStart(12, '0')}-${nonce}.grist`;
}

/** Checkpoints the whole WAL into the file and empties it; false when readers kept it busy. */
function checkpointTruncate(db: Database.Database, walPath: string): boolean {
  const prev = db.pragma('busy_timeout', {simple: true}) as number;
  db.pragma('busy_timeout = 100'); // never hold the event loop for long: try again later instead
  try {
    const [r] = db.pragma('wal_checkpoint(TRUNCATE)') as {busy: number}[];
    return r.busy === 0 && (!existsSync(walPath) || statSync(walPath).size === 0);
  } finally {
    db.pragma(`busy_timeout = ${prev}`);
  }
}

/** What a restore used, and the damage it went around. */
export interface Restored {
  /** The snapshot the file was rebuilt from. */
  from: SnapshotRef;
  /** Newer recorded snapshots found missing or corrupt (each named in its error). */
  damaged: Error[];
}

/** Puts the snapshot's file at `path` (the local file when its checksum matches), checked. */
async function fetchSnapshot(path: string, snap: SnapshotRef, store: ObjectStore): Promise<void> {
  if (existsSync(path) && (await fileSha256(path)) === snap.sha256) return;
  const tmp = `${path}.download`;
  try {
    const streamed = await store.getFile(snap.key, tmp);
    const got = streamed || (await fileSha256(tmp));
    if (got !== snap.sha256) throw new Error(`snapshot ${snap.key} has checksum ${got}, expected ${snap.sha256}`);
    renameSync(tmp, path);
  } finally {
    rmSync(tmp, {force: true});
  }
}

/** Is `err` the object being absent (as opposed to the store being unreachable)? */
function isMissing(err: unknown): boolean {
  const e = err as {code?: string; name?: string; Code?: string; $metadata?: {httpStatusCode?: number}};
  return (
    e?.code === 'ENOENT' || e?.name === 'NoSuchKey' || e?.Code === 'NoSuchKey' || e?.$metadata?.httpStatusCode === 404
  );
}

/**
 * Rebuilds a document file from its newest snapshot and the log after it. A local file whose
 * checksum matches the snapshot is used as it is (a worker taking back its own document). When
 * the newest snapshot is missing or corrupt, an older one plus the log kept since it stands in,
 * provided the log runs from it without a gap (a forced snapshot covers what the log does not).
 */
export async function restoreDoc(path: string, takeover: Takeover, store: ObjectStore): Promise<Restored> {
  const snap = takeover.snapshot;
  if (!snap) throw new ServiceUnavailable('Document has no snapshot yet (its creation did not finish)');
  removeSqliteCompanions(path);
  const damaged: Error[] = [];
  for (const cand of [snap, ...takeover.previous.filter((p) => p.seq <= snap.seq)]) {
    const log = cand === snap ? takeover.log : await takeover.logSince(cand.seq);
    // An older snapshot stands in only when the log runs from it, with no gap, to the newest.
    const bridged = log.every((e, i) => e.seq === cand.seq + 1 + i) && (log.at(-1)?.seq ?? cand.seq) >= snap.seq;
    if (cand !== snap && !bridged) break;
    try {
      await fetchSnapshot(path, cand, store);
    } catch (e) {
      // Unreachable store: a later try may find the newest intact; only absence or corruption is damage.
      if (!isMissing(e) && !/checksum/.test((e as Error).message)) throw e;
      damaged.push(e as Error);
      continue;
    }
    replayLog(path, log);
    return {from: cand, damaged};
  }
  const why = damaged.map((e) => e.message).join('; ');
  throw new ServiceUnavailable(`Document storage unavailable - try again later (${why || 'no usable snapshot'})`);
}

/** Replays log entries over the file at `path`, one WAL file per generation. */
function replayLog(path: string, entries: LogEntry[]): void {
  // Each generation is one WAL file: written beside the database, recovered by SQLite on open,
  // checkpointed into the file.
  let i = 0;
  while (i < entries.length) {
    const gen = entries[i].gen;
    const parts: Buffer[] = [];
    let expect = 0;
    for (; i < entries.length && entries[i].gen === gen; i++) {
      const e = entries[i];
      if (e.offset !== expect) throw new Error(`log of ${path} has a gap in generation ${gen} at entry ${e.seq}`);
      parts.push(e.bytes);
      expect += e.bytes.length;
    }
    const wal = Buffer.concat(parts);
    writeFileSync(`${path}-wal`, wal);
    const db = new BetterSqlite(path);
    try {
      const pageSize = wal.readUInt32BE(8);
      const frames = (wal.length - 32) / (24 + pageSize);
      // A frame SQLite did not take (a broken chain) would be data silently lost: count them.
      const [r] = db.pragma('wal_checkpoint(PASSIVE)') as {busy: number; log: number; checkpointed: number}[];
      if (r.busy !== 0 || r.log !== frames || r.checkpointed !== frames)
        throw new Error(`log of ${path}, generation ${gen}: SQLite recovered ${r.log} of ${frames} frames`);
      db.pragma('wal_checkpoint(TRUNCATE)');
    } finally {
      db.close();
    }
  }
  removeSqliteCompanions(path);
}

/** How often a lost recording answer is asked about again before the outcome stays unknown. */
const CONFIRM_TRIES = 4;

/**
 * Uploads a snapshot file and records it: the intent first (so a crash leaves a findable
 * orphan), the upload, a read-back of size and checksum, then the record. Returns true once a
 * committed record names it; throws when it certainly is not recorded (Fenced, Unrecorded, a
 * failed upload or check) and when that is unknown (the recording's answer was lost and asking
 * again failed too). Never deletes anything: an unrecorded upload is left to the intent sweep,
 * which a record can no longer race (it needs the intent).
 */
export async function publishSnapshot(
  placement: Placement,
  store: ObjectStore,
  docId: string,
  epoch: number,
  ref: SnapshotRef,
  file: string,
): Promise<void> {
  await placement.intendUpload(docId, ref.key);
  await store.putFile(ref.key, file);
  const back = await store.digest(ref.key);
  if (!back || back.size !== ref.size || back.sha256 !== ref.sha256)
    throw new Error(
      `upload of ${ref.key} reads back as ${back ? `${back.size} bytes, sha256 ${back.sha256}` : 'missing'}, expected ${ref.size} bytes, sha256 ${ref.sha256}`,
    );
  try {
    await placement.recordSnapshot(docId, epoch, ref);
  } catch (e) {
    if (e instanceof Fenced || e instanceof Unrecorded) throw e;
    // The COMMIT may have happened with its answer lost: the outcome is read, never assumed.
    for (let i = 0; ; i++) {
      try {
        if (await placement.snapshotRecorded(docId, ref.key)) return;
        throw e;
      } catch (again) {
        if (again === e || i + 1 >= CONFIRM_TRIES) throw new RecordUnknown(ref.key, e as Error);
        await new Promise((r) => setTimeout(r, 100 * 2 ** i));
      }
    }
  }
}

/** A snapshot's recording ended with no answer, and asking again did not settle it either. */
export class RecordUnknown extends Error {
  constructor(
    key: string,
    override readonly cause: Error,
  ) {
    super(`recording snapshot ${key}: outcome unknown (${cause.message})`);
  }
}

/** Shipping settings (from ClusterOptions). */
export interface ReplicaOptions {
  placement: Placement;
  store: ObjectStore;
  prefix: string;
  snapshotDelayMs: number;
  snapshotLogBytes: number;
  maxLogBytes: number;
  /** Background failures (snapshots, pruning). */
  onError(err: unknown, what: string): void;
}

/** A held document's log shipping and snapshots. */
export class Replica {
  private readonly tail: WalTail;
  /** Last log position assigned, and last one known durable (in the log or a recorded snapshot). */
  private seq: number;
  private durable: number;
  private readonly queue: LogEntry[] = [];
  private waiters: {seq: number; resolve(): void; reject(e: Error): void}[] = [];
  private pumping = false;
  /** Set when the log cannot be continued: the next snapshot must cover it before anything is appended. */
  private forced = false;
  private failure: Error | null = null;
  /** Bytes logged since the last snapshot, and whether anything changed since. */
  private logBytes = 0;
  private dirtySince = 0;
  private snapshotLock: Promise<unknown> = Promise.resolve();
  private timer: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(
    readonly docId: string,
    readonly path: string,
    private readonly db: Database.Database,
    readonly epoch: number,
    start: {seq: number; gen: number; resnapshot?: boolean},
    private readonly opts: ReplicaOptions,
  ) {
    // Only this class checkpoints the document, after shipping (see wal.ts).
    db.pragma('wal_autocheckpoint = 0');
    this.tail = new WalTail(`${path}-wal`, start.gen);
    this.seq = this.durable = start.seq;
    // Opening wrote already (a migration, formulas computed on open) before shipping began, and
    // SQLite may have checkpointed part of it: the first snapshot covers all of that.
    if (existsSync(`${path}-wal`) && statSync(`${path}-wal`).size > 0) this.forced = true;
    // Restored around a damaged snapshot: a fresh one soon, so the damage does not linger.
    if (start.resnapshot) {
      this.dirtySince = Date.now();
      this.scheduleSnapshot();
    }
  }

  /** Why this replica may no longer be used (its writes cannot be made durable), or null. */
  get failed(): Error | null {
    return this.failure;
  }

  /** Log bytes since the last snapshot (what a takeover would replay). */
  get logBytesSinceSnapshot(): number {
    return this.logBytes;
  }

  /** When the oldest change not in a snapshot was made (Date.now()), or 0. */
  get unsnapshottedSince(): number {
    return this.dirtySince;
  }

  /**
   * Throws 503 when the log since the last snapshot reached its cap (snapshots failing): call
   * before a write. Tries a snapshot meanwhile.
   */
  checkWritable(): void {
    if (this.logBytes < this.opts.maxLogBytes) return;
    this.scheduleSnapshot();
    throw new ServiceUnavailable(
      `Document storage unavailable - try again later (${Math.round(this.logBytes / 2 ** 20)} MB of changes wait for a snapshot)`,
    );
  }

  /** Has the document changed since its last snapshot? */
  get dirty(): boolean {
    return this.dirtySince > 0 || this.seq > this.durable;
  }

  /** Stops using it: pending and later syncs fail (the document was lost or is being closed). */
  fail(err: Error): void {
    if (this.failure) return;
    this.failure = err;
    if (this.timer) clearTimeout(this.timer);
    for (const w of this.waiters.splice(0)) w.reject(err);
  }

  /** Picks up what was committed since the last look; synchronous, so commits are seen in order. */
  private capture(): void {
    if (this.failure || this.forced) return;
    let seg: ReturnType<WalTail['read']>;
    try {
      seg = this.tail.read();
    } catch (e) {
      if (!(e instanceof WalGap)) throw e;
      this.forced = true;
      return;
    }
    if (!seg) return;
    if (!this.dirtySince) this.dirtySince = Date.now();
    if (seg.bytes.length > MAX_ENTRY_BYTES) {
      this.forced = true; // too big for a log row: the snapshot is the record
      return;
    }
    this.queue.push({seq: ++this.seq, gen: seg.gen, offset: seg.offset, bytes: seg.bytes});
    this.logBytes += seg.bytes.length;
  }

  /**
   * Resolves once everything committed so far is durable where a new holder finds it; rejects
   * (503) when it cannot be (fenced, or the log is unreachable): then the commit is not
   * acknowledged, and this worker drops its copy of the document.
   */
  sync(): Promise<void> {
    if (this.failure) return Promise.reject(this.unavailable());
    try {
      this.capture();
    } catch (e) {
      // The WAL could not be read: what was committed cannot be shipped, so it is not acknowledged.
      this.fail(e as Error);
      return Promise.reject(this.unavailable());
    }
    const target = this.forced ? this.seq + 1 : this.seq;
    if (this.durable >= target) return Promise.resolve();
    const done = new Promise<void>((resolve, reject) => this.waiters.push({seq: target, resolve, reject}));
    void this.pump();
    this.scheduleSnapshot();
    return done.catch((e) => {
      throw this.unavailable(e);
    });
  }

  private unavailable(e: unknown = this.failure): ServiceUnavailable {
    return new ServiceUnavailable(`Document in flux - try again later (${(e as Error)?.message ?? e})`);
  }

  private setDurable(seq: number): void {
    if (seq > this.durable) this.durable = seq;
    this.waiters = this.waiters.filter((w) => {
      if (w.seq > this.durable) return true;
      w.resolve();
      return false;
    });
  }

  /** Appends queued entries in order, one round trip at a time (later commits batch up meanwhile). */
  private async pump(): Promise<void> {
    if (this.pumping) return;
    this.pumping = true;
    try {
      while (!this.failure) {
        if (this.forced) {
          await this.lockedSnapshot(true);
          continue;
        }
        if (!this.queue.length) break;
        const batch = this.queue.slice(0, MAX_BATCH);
        await this.opts.placement.append(this.docId, this.epoch, batch);
        this.queue.splice(0, batch.length);
        this.setDurable(batch[batch.length - 1].seq);
      }
    } catch (e) {
      this.fail(e as Error);
    } finally {
      this.pumping = false;
    }
  }

  private scheduleSnapshot(): void {
    if (this.timer || this.closed || this.failure) return;
    const delay = this.logBytes >= this.opts.snapshotLogBytes ? 20 : this.opts.snapshotDelayMs;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.snapshot().catch((e) => this.opts.onError(e, `snapshot of ${this.docId}`));
    }, delay);
    this.timer.unref();
  }

  /** Takes a snapshot now when anything changed since the last one (and reschedules on a busy checkpoint). */
  async snapshot(): Promise<void> {
    // Everything before the checkpoint must be in the log: wait for that outside the lock (the
    // pump may need the lock for a forced snapshot meanwhile).
    if (this.failure) return;
    await this.sync();
    return this.lockedSnapshot(false);
  }

  private lockedSnapshot(forced: boolean): Promise<void> {
    const run = this.snapshotLock.then(() => this.snapshotOnce(forced));
    this.snapshotLock = run.catch(() => {});
    return run;
  }

  private async snapshotOnce(forced: boolean): Promise<void> {
    if (this.failure) return;
    if (this.closed && !this.db.open) throw new Error('the document was closed before its snapshot');
    if (!forced) {
      // Checkpoint only in the same turn of the event loop as a look at the WAL that found
      // everything durable; anything newer (or a forced snapshot due) waits for next time.
      this.capture();
      if (this.forced || this.durable < this.seq) {
        this.scheduleSnapshot();
        return;
      }
      if (!this.dirty) return;
    }
    const walPath = `${this.path}-wal`;
    let ok = checkpointTruncate(this.db, walPath);
    for (let i = 0; forced && !ok && i < 50; i++) {
      await new Promise((r) => setTimeout(r, 100));
      ok = checkpointTruncate(this.db, walPath);
    }
    if (!ok) {
      if (forced) throw new Error('the document stayed busy: no checkpoint for its snapshot');
      this.scheduleSnapshot(); // readers kept it busy: next time
      return;
    }
    // The file now holds every commit; a copy of it is the snapshot (copied now, while nothing
    // else can change it, uploaded at leisure).
    const seq = forced ? ++this.seq : this.seq;
    this.tail.restart();
    this.queue.length = 0; // covered by this snapshot (only ever non-empty on the forced path)
    this.forced = false;
    this.logBytes = 0;
    this.dirtySince = 0;
    const copy = `${this.path}.snapshot`;
    copyFileSync(this.path, copy);
    try {
      const ref: SnapshotRef = {
        key: snapshotKey(this.opts.prefix, this.docId, this.epoch, seq),
        sha256: await fileSha256(copy),
        size: statSync(copy).size,
        seq,
      };
      await publishSnapshot(this.opts.placement, this.opts.store, this.docId, this.epoch, ref, copy);
      this.setDurable(seq);
      await this.prune().catch((e) => this.opts.onError(e, `pruning snapshots of ${this.docId}`));
    } catch (e) {
      if (forced) throw e;
      if (e instanceof Fenced) {
        this.fail(e); // the document moved: nothing more is ours to record
        return;
      }
      // Not recorded, or not known to be: the log still holds everything (it was complete before
      // the checkpoint, and a record keeps the log since the snapshot before it): try later.
      this.dirtySince ||= Date.now();
      this.opts.onError(e, `snapshot of ${this.docId}`);
      this.scheduleSnapshot();
    } finally {
      rmSync(copy, {force: true});
    }
  }

  /**
   * Deletes snapshots that committed newer ones supersede, as the placement now says (re-read,
   * not remembered from a recording whose answer may have been lost); their rows go after.
   */
  private async prune(): Promise<void> {
    const keys = await this.opts.placement.prunable(this.docId);
    if (!keys.length) return;
    await this.opts.store.delete(keys);
    await this.opts.placement.forgetSnapshots(this.docId, keys);
  }

  /**
   * Before the connection closes: ships what is left, so the log is complete, then stops.
   * Returns false when that failed (the caller must not release the document as current).
   */
  async close(): Promise<boolean> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    try {
      await this.sync();
      await this.snapshotLock;
      return !this.failure;
    } catch {
      return false;
    }
  }
}
