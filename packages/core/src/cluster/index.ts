/**
 * The engine's side of a several-machine deployment: which documents this worker holds, taking
 * one over (restoring it from its snapshot and log), publishing a new one, and forgetting a
 * deleted one. See docs/deployment.md for the whole picture.
 */
import {statSync} from 'node:fs';
import {removeSqliteCompanions, removeSqliteFiles} from '../doc/files.js';
import type Database from 'better-sqlite3';
import BetterSqlite from 'better-sqlite3';
import {ApiError, NotFound, ServiceUnavailable} from '../base/index.js';
import {Replica, fileSha256, publishSnapshot, restoreDoc, snapshotKey} from './replica.js';
import type {ClusterOptions, ObjectStore, Placement} from './types.js';

export * from './types.js';
export {Replica, RecordUnknown, publishSnapshot, restoreDoc, type ReplicaOptions, type Restored} from './replica.js';
export {WalTail, WalGap, walChecksum, type WalSegment} from './wal.js';
export {DirObjectStore, MemoryPlacement, MemoryPlacementHub, type PlacementRow} from './memory.js';
export type {DocLeases} from './leases.js';

/**
 * PostgreSQL or the object store failing (down, unreachable, timing out) is the deployment's
 * momentary state, not the request's fault: a 503 to try again, never a 500.
 */
async function unavailableOnFailure<T>(p: Promise<T>): Promise<T> {
  try {
    return await p;
  } catch (e) {
    if (e instanceof ApiError) throw e;
    throw new ServiceUnavailable(`Document storage unavailable - try again later (${(e as Error).message})`);
  }
}

/** What this worker knows about a document it holds. */
interface Held {
  epoch: number;
  seq: number;
  gen: number;
  /** Restored around a damaged snapshot: take a fresh one soon. */
  resnapshot?: boolean;
}

/** A worker's documents in a several-machine deployment (the engine makes one from EngineOptions.cluster). */
export class Cluster {
  readonly placement: Placement;
  readonly store: ObjectStore;
  private readonly prefix: string;
  private readonly held = new Map<string, Held>();
  /** Documents this worker rebuilt from snapshot and log since it started (metrics). */
  takeovers = 0;
  /** Recorded snapshots found missing or corrupt at a takeover and gone around (metrics). */
  damagedSnapshots = 0;
  private adoptTimer: NodeJS.Timeout | null = null;
  /** One claim per document at a time in this worker (a second would take it over from the first). */
  private readonly claiming = new Map<string, Promise<string | null>>();
  /** Local files of documents not held here, least recently released first (a bounded cache). */
  private readonly copies = new Set<string>();

  constructor(
    private readonly opts: ClusterOptions,
    private readonly hooks: {
      docPath(docId: string): string;
      /**
       * Closes the local copy at once (it is outdated or no longer ours); `discard` also deletes
       * the file (the document lives on another worker now: no reason to keep a stale copy).
       */
      drop(docId: string, discard: boolean): void | Promise<void>;
      onError(err: unknown, what: string): void;
      /** Documents with a local file at start (from an earlier run), oldest first. */
      localDocs(): string[];
    },
  ) {
    this.placement = opts.placement;
    this.store = opts.store;
    this.prefix = opts.prefix ?? '';
    for (const id of hooks.localDocs()) this.keepCopy(id);
    this.placement.onLost((docId) => {
      const ids = docId === null ? [...this.held.keys()] : [docId];
      for (const id of ids) {
        this.held.delete(id);
        void Promise.resolve(this.hooks.drop(id, true)).catch((e) => this.hooks.onError(e, `dropping ${id}`));
      }
    });
  }

  /** The lease time (ms): a stalled holder loses its documents after it. */
  get leaseMs(): number {
    return this.placement.leaseMs;
  }

  /**
   * The worker holding this document when it is another one (a look, no takeover), else null.
   * Keys that are not document ids (aliases) are null: they are resolved the long way.
   */
  liveHolder(key: string): Promise<string | null> {
    if (!/^[A-Za-z0-9_-]{10,}$/.test(key) || this.held.has(key)) return Promise.resolve(null);
    return this.placement.liveHolder(key).then(
      (h) => {
        if (!h || h.live) return h?.worker ?? null;
        this.orphanSeen(key);
        return null;
      },
      () => null, // unanswerable now (PostgreSQL away): the long way, whose claim answers 503
    );
  }

  /**
   * Routing found the document's holder gone (its row names a dead worker, or it refused the
   * connection): the takeover starts now, beside the request's login and access check, which
   * then join it (one claim per document). The adoption sweep would take it over anyway, without
   * any request; this only starts it sooner (the access check was 14 of a 1 MB document's 120 ms
   * takeover, C5).
   */
  orphanSeen(docId: string): void {
    if (!this.takeOver || this.held.has(docId) || this.claiming.has(docId)) return;
    void this.takeOver(docId).catch(() => {}); // the request's own claim meets the error again
  }

  /** Set by the engine: claims a document as a request would (closing, open copies and all). */
  takeOver: ((docId: string) => Promise<unknown>) | null = null;

  /** Does `worker` still hold the document (live lease and session)? */
  holderAlive(docId: string, worker: string): Promise<boolean> {
    return this.placement.holderAlive(docId, worker);
  }

  /**
   * Every `everyMs`, adopts up to 16 documents whose holder is gone (`adopt` claims and opens
   * them), so that a crashed worker's documents deliver their webhook events and are warm again
   * without waiting for a request. Workers race for each; the placement's row lock picks one.
   */
  startAdoption(adopt: (docId: string) => void, everyMs: number): void {
    if (this.adoptTimer) return;
    let running = false;
    this.adoptTimer = setInterval(() => {
      // A takeover a request waits for goes first: an adoption beside it (downloading another
      // of the dead worker's documents) doubled its time in the instrumented C5 run.
      if (running || this.claiming.size > 0) return;
      running = true;
      this.placement
        .orphans(16)
        .then((ids) => {
          for (const id of ids) adopt(id);
        })
        .then(() => this.sweepUploads())
        .catch(() => {}) // PostgreSQL away: next time
        .finally(() => {
          running = false;
        });
    }, everyMs);
    this.adoptTimer.unref();
  }

  /**
   * Deletes snapshot objects whose upload was announced an hour ago or more and never recorded
   * (their worker crashed or lost the document between upload and record). An hour leaves any
   * upload still running alone.
   */
  async sweepUploads(olderThanMs = 60 * 60_000): Promise<number> {
    const stale = await this.placement.takeStaleUploads(olderThanMs, 100);
    if (!stale.length) return 0;
    try {
      await this.store.delete(stale.map((u) => u.key));
    } catch (e) {
      // Announced again, so that a later sweep finds them (no record can name them: none has the intent).
      for (const u of stale) await this.placement.intendUpload(u.docId, u.key).catch(() => {});
      throw e;
    }
    return stale.length;
  }

  /**
   * Resolves once no claim is running in this worker (or after `maxMs`): adoption's next takeover
   * waits behind those of requests, which do not wait behind it.
   */
  async quiet(maxMs = this.leaseMs): Promise<void> {
    const until = performance.now() + maxMs;
    while (this.claiming.size > 0 && performance.now() < until) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.allSettled([...this.claiming.values()]),
        new Promise((r) => (timer = setTimeout(r, until - performance.now()))),
      ]);
      clearTimeout(timer);
    }
  }

  /** Is the document held here, or being claimed (its file in use or being restored)? */
  usesFile(docId: string): boolean {
    return this.held.has(docId) || this.claiming.has(docId);
  }

  /** Is the document held here with a lease still valid? */
  holds(docId: string): boolean {
    const h = this.held.get(docId);
    return h !== undefined && performance.now() < this.placement.validUntil(docId, h.epoch);
  }

  /**
   * Makes sure this worker may serve the document: null when it may (held, or taken over and
   * restored now), else the address of the worker that holds it.
   */
  claim(docId: string, isOpen: boolean): Promise<string | null> {
    const running = this.claiming.get(docId);
    if (running) return running;
    const p = unavailableOnFailure(this.claimOnce(docId, isOpen)).finally(() => this.claiming.delete(docId));
    this.claiming.set(docId, p);
    return p;
  }

  private async claimOnce(docId: string, isOpen: boolean): Promise<string | null> {
    if (isOpen && this.holds(docId)) return null;
    const known = this.held.get(docId);
    // Held but not open: just created or restored here, the local file is current.
    const c = await this.placement.claim(docId, known?.epoch);
    if ('missing' in c) throw new NotFound('document not found');
    if (!c.mine) {
      if (known) {
        this.held.delete(docId);
        await this.hooks.drop(docId, true);
      }
      return c.holder;
    }
    this.copies.delete(docId); // held here again: its file is in use
    if (!c.takeover) return null; // renewed: the open copy is current
    if (isOpen) await this.hooks.drop(docId, false); // ours again under a new epoch: rebuild from the record
    const path = this.hooks.docPath(docId);
    const {from, damaged} = await restoreDoc(path, c.takeover, this.store);
    this.takeovers++;
    for (const e of damaged) {
      this.damagedSnapshots++;
      this.hooks.onError(e, `document ${docId}: recorded snapshot damaged; restored from ${from.key} and the log`);
    }
    // The log may now end before the snapshot (a forced one has no entry of its own).
    const last = Math.max(c.takeover.log.at(-1)?.seq ?? 0, c.takeover.snapshot?.seq ?? 0);
    this.held.set(docId, {epoch: c.takeover.epoch, seq: last, gen: c.takeover.nextGen, resnapshot: damaged.length > 0});
    return null;
  }

  /** The log shipping of a document just opened here (after `claim`). */
  replica(docId: string, db: Database.Database): Replica {
    const h = this.held.get(docId);
    if (!h) throw new ServiceUnavailable('Document in flux - try again later (not held by this worker)');
    const start = {...h};
    h.resnapshot = false;
    return new Replica(docId, this.hooks.docPath(docId), db, h.epoch, start, {
      placement: this.placement,
      store: this.store,
      prefix: this.prefix,
      snapshotDelayMs: this.opts.snapshotDelayMs ?? 5000,
      snapshotLogBytes: this.opts.snapshotLogBytes ?? 16 * 1024 * 1024,
      maxLogBytes: this.opts.maxLogBytes ?? 256 * 1024 * 1024,
      onError: this.hooks.onError,
    });
  }

  /** Keeps a released document's local file, deleting the least recently released past the cap. */
  private keepCopy(docId: string): void {
    this.copies.delete(docId);
    this.copies.add(docId);
    const cap = this.opts.keepLocalCopies ?? 200;
    for (const old of this.copies) {
      if (this.copies.size <= cap) break;
      this.copies.delete(old);
      if (this.usesFile(old)) continue;
      removeSqliteFiles(this.hooks.docPath(old));
    }
  }

  /** A replica closed cleanly: remember where its log ended, and give the document up. */
  async closed(docId: string, replica: Replica, clean: boolean): Promise<void> {
    const h = this.held.get(docId);
    if (!h || h.epoch !== replica.epoch) return;
    this.held.delete(docId);
    this.keepCopy(docId);
    // Not clean: left to expire (or to be taken back under a new epoch by this worker's next claim).
    if (clean) await this.placement.release(docId, replica.epoch);
  }

  /**
   * Publishes a document file just created here: held under epoch 1, its first snapshot uploaded
   * and recorded before the creating request is answered.
   */
  created(docId: string): Promise<void> {
    return unavailableOnFailure(this.createdOnce(docId));
  }

  private async createdOnce(docId: string): Promise<void> {
    const path = this.hooks.docPath(docId);
    // Snapshots are WAL-mode files, so that a restored one takes its log as it is.
    const db = new BetterSqlite(path);
    try {
      db.pragma('journal_mode = WAL');
      db.pragma('wal_checkpoint(TRUNCATE)');
    } finally {
      db.close();
    }
    removeSqliteCompanions(path);
    const epoch = await this.placement.create(docId);
    const key = snapshotKey(this.prefix, docId, epoch, 0);
    const ref = {key, sha256: await fileSha256(path), size: statSync(path).size, seq: 0};
    await publishSnapshot(this.placement, this.store, docId, epoch, ref, path);
    this.held.set(docId, {epoch, seq: 0, gen: 0});
  }

  /** Forgets a deleted document: its placement, log and snapshots (the engine deletes the local file). */
  async removed(docId: string): Promise<void> {
    this.held.delete(docId);
    this.copies.delete(docId);
    await this.placement.remove(docId);
    // Everything under the document's folder: recorded snapshots and any upload a crash or a
    // lost race left unrecorded.
    await this.store.deletePrefix(`${this.prefix}docs/${docId}/`);
  }

  /** Closes the placement and the object store. */
  async close(): Promise<void> {
    if (this.adoptTimer) clearInterval(this.adoptTimer);
    await this.placement.close();
    this.store.close?.();
  }
}
