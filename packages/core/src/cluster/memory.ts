/**
 * In-process stand-ins for the placement database and the object store: several engines in one
 * process behave as workers of one deployment. For tests and for trying the model out; the real
 * ones are `PgPlacement` (@gristlite/store-postgres) and `S3ObjectStore` (@gristlite/store-s3).
 */
import {copyFileSync, existsSync, mkdirSync, rmSync, statSync} from 'node:fs';
import {dirname, join} from 'node:path';
import {fileSha256} from './replica.js';
import {
  Fenced,
  Unrecorded,
  type Claim,
  type LogEntry,
  type ObjectStore,
  type Placement,
  type SnapshotRef,
} from './types.js';

/** One document's placement in the in-process hub. */
export interface PlacementRow {
  worker: string | null;
  epoch: number;
  leaseUntil: number;
  snapshot: SnapshotRef | null;
  log: LogEntry[];
  history: SnapshotRef[];
}

/** The shared state of an in-process deployment; `worker(url)` gives each engine its Placement. */
export class MemoryPlacementHub {
  readonly rows = new Map<string, PlacementRow>();
  /** Snapshot upload intents: key -> document and when announced. */
  readonly uploads = new Map<string, {docId: string; at: number}>();
  private readonly dead = new Set<string>();
  private readonly workers = new Map<string, MemoryPlacement>();

  constructor(
    readonly leaseMs = 3000,
    readonly keepSnapshots = 3,
  ) {}

  /** The Placement of the worker reached at `self` (a fresh one: as after a restart). */
  worker(self: string): MemoryPlacement {
    this.dead.delete(self);
    const w = new MemoryPlacement(this, self);
    this.workers.set(self, w);
    return w;
  }

  /** As if the worker's process died: its database session is gone, so its documents are free. */
  kill(self: string): void {
    this.dead.add(self);
  }

  /** Is the worker's "database session" still there (not killed)? */
  isAlive(self: string): boolean {
    return !this.dead.has(self);
  }

  /** Tells every other worker that `to` took the document (the hub's LISTEN/NOTIFY). */
  notifyMoved(docId: string, to: string): void {
    for (const [self, w] of this.workers) if (self !== to) w.moved(docId);
  }
}

export class MemoryPlacement implements Placement {
  readonly secret = 'memory-placement-secret';
  private readonly mine = new Map<string, {epoch: number; until: number}>();
  private lost: ((docId: string | null) => void)[] = [];
  private readonly renewer: NodeJS.Timeout;

  constructor(
    private readonly hub: MemoryPlacementHub,
    readonly self: string,
  ) {
    // Renewals, as PgPlacement's: a live worker keeps its leases; a killed one stops renewing.
    this.renewer = setInterval(
      () => {
        if (!hub.isAlive(self)) return;
        for (const [docId, m] of this.mine) {
          const r = this.row(docId);
          if (r && r.worker === self && r.epoch === m.epoch && r.leaseUntil > Date.now()) this.hold(docId, r);
        }
      },
      Math.max(10, hub.leaseMs / 3),
    );
    this.renewer.unref();
  }

  private row(docId: string): PlacementRow | undefined {
    return this.hub.rows.get(docId);
  }

  private live(r: PlacementRow): boolean {
    return r.worker !== null && r.leaseUntil > Date.now() && this.hub.isAlive(r.worker);
  }

  private hold(docId: string, r: PlacementRow): void {
    r.leaseUntil = Date.now() + this.hub.leaseMs;
    this.mine.set(docId, {epoch: r.epoch, until: performance.now() + this.hub.leaseMs});
  }

  async claim(docId: string, known?: number): Promise<Claim> {
    const r = this.row(docId);
    if (!r) return {missing: true};
    if (r.worker === this.self && known === r.epoch && this.hub.isAlive(this.self)) {
      this.hold(docId, r);
      return {mine: true, takeover: null};
    }
    if (r.worker !== this.self && this.live(r)) return {mine: false, holder: r.worker!};
    r.worker = this.self;
    r.epoch++;
    this.hold(docId, r);
    this.hub.notifyMoved(docId, this.self);
    const last = r.log.at(-1);
    const since = (seq: number) => r.log.filter((e) => e.seq > seq).map((e) => ({...e, bytes: Buffer.from(e.bytes)}));
    return {
      mine: true,
      takeover: {
        epoch: r.epoch,
        snapshot: r.snapshot,
        previous: r.history.filter((s) => s.key !== r.snapshot?.key).reverse(),
        log: since(r.snapshot?.seq ?? 0),
        logSince: async (seq) => since(seq),
        nextGen: last ? last.gen + 1 : 0,
      },
    };
  }

  async create(docId: string): Promise<number> {
    const r: PlacementRow = {worker: this.self, epoch: 1, leaseUntil: 0, snapshot: null, log: [], history: []};
    this.hub.rows.set(docId, r);
    this.hold(docId, r);
    return 1;
  }

  private check(docId: string, epoch: number): PlacementRow {
    const r = this.row(docId);
    if (!r || r.epoch !== epoch || r.worker !== this.self || r.leaseUntil <= Date.now() || !this.hub.isAlive(this.self))
      throw new Fenced(docId);
    return r;
  }

  async append(docId: string, epoch: number, entries: LogEntry[]): Promise<void> {
    const r = this.check(docId, epoch);
    for (const e of entries) {
      const prev = Math.max(r.log.at(-1)?.seq ?? 0, r.snapshot?.seq ?? 0);
      if (e.seq !== prev + 1) throw new Error(`log of ${docId}: entry ${e.seq} after ${prev}`);
      r.log.push({...e, bytes: Buffer.from(e.bytes)});
    }
  }

  async recordSnapshot(docId: string, epoch: number, snap: SnapshotRef): Promise<void> {
    const r = this.check(docId, epoch);
    if (r.snapshot && r.snapshot.seq > snap.seq) throw new Fenced(docId);
    if (!this.hub.uploads.delete(snap.key)) throw new Unrecorded(snap.key);
    // The log after the previous snapshot stays: that snapshot plus the log replace this one.
    const prevSeq = r.snapshot?.seq ?? 0;
    r.log = r.log.filter((e) => e.seq > prevSeq);
    r.snapshot = snap;
    r.history.push(snap);
  }

  async snapshotRecorded(docId: string, key: string): Promise<boolean> {
    const r = this.row(docId);
    return r !== undefined && (r.snapshot?.key === key || r.history.some((s) => s.key === key));
  }

  async prunable(docId: string): Promise<string[]> {
    const r = this.row(docId);
    if (!r?.snapshot) return [];
    const keep = Math.max(2, this.hub.keepSnapshots);
    const current = r.snapshot;
    return [...r.history]
      .sort((x, y) => y.seq - x.seq)
      .slice(keep)
      .filter((s) => s.key !== current.key && s.seq < current.seq)
      .map((s) => s.key);
  }

  async forgetSnapshots(docId: string, keys: string[]): Promise<void> {
    const r = this.row(docId);
    if (r) r.history = r.history.filter((s) => !keys.includes(s.key));
  }

  async intendUpload(docId: string, key: string): Promise<void> {
    this.hub.uploads.set(key, {docId, at: Date.now()});
  }

  async takeStaleUploads(olderThanMs: number, limit: number): Promise<{docId: string; key: string}[]> {
    const before = Date.now() - olderThanMs;
    const out: {docId: string; key: string}[] = [];
    for (const [key, u] of this.hub.uploads) {
      if (out.length >= limit || u.at > before) continue;
      this.hub.uploads.delete(key);
      if (!(await this.snapshotRecorded(u.docId, key))) out.push({docId: u.docId, key});
    }
    return out;
  }

  async release(docId: string, epoch: number): Promise<void> {
    const r = this.row(docId);
    this.mine.delete(docId);
    if (r && r.epoch === epoch && r.worker === this.self) r.worker = null;
  }

  async remove(docId: string): Promise<string[]> {
    const r = this.row(docId);
    this.hub.rows.delete(docId);
    this.mine.delete(docId);
    return r ? r.history.map((s) => s.key) : [];
  }

  validUntil(docId: string, epoch: number): number {
    const m = this.mine.get(docId);
    return m && m.epoch === epoch ? m.until : 0;
  }

  /** Another worker took the document. */
  moved(docId: string): void {
    if (!this.mine.delete(docId)) return;
    for (const fn of this.lost) fn(docId);
  }

  onLost(fn: (docId: string | null) => void): void {
    this.lost.push(fn);
  }

  forgetHolder(): void {}

  get leaseMs(): number {
    return this.hub.leaseMs;
  }

  async orphans(limit: number): Promise<string[]> {
    const out: string[] = [];
    for (const [id, r] of this.hub.rows) if (r.worker !== null && r.worker !== this.self && !this.live(r)) out.push(id);
    return out.slice(0, limit);
  }

  async liveHolder(docId: string): Promise<{worker: string; live: boolean} | null> {
    const r = this.row(docId);
    return r && r.worker !== null && r.worker !== this.self ? {worker: r.worker, live: this.live(r)} : null;
  }

  async holderAlive(docId: string, worker: string): Promise<boolean> {
    const r = this.row(docId);
    return r !== undefined && r.worker === worker && this.live(r);
  }

  /** Stops reporting losses. */
  async close(): Promise<void> {
    clearInterval(this.renewer);
    this.lost = [];
  }
}

/** An object store in a local directory (tests, single-machine trials). */
export class DirObjectStore implements ObjectStore {
  constructor(readonly dir: string) {}

  private path(key: string): string {
    if (key.split('/').some((p) => p === '..' || p === '')) throw new Error(`bad key ${key}`);
    return join(this.dir, key);
  }

  async putFile(key: string, path: string): Promise<void> {
    const dest = this.path(key);
    mkdirSync(dirname(dest), {recursive: true});
    copyFileSync(path, dest);
  }

  async getFile(key: string, path: string): Promise<undefined> {
    copyFileSync(this.path(key), path); // not hashed here: the caller reads the copy
    return undefined;
  }

  async digest(key: string): Promise<{size: number; sha256: string} | null> {
    const p = this.path(key);
    if (!existsSync(p)) return null;
    return {size: statSync(p).size, sha256: await fileSha256(p)};
  }

  async delete(keys: string[]): Promise<void> {
    for (const k of keys) rmSync(this.path(k), {force: true});
  }

  async deletePrefix(prefix: string): Promise<void> {
    // Prefixes used here end at a folder (`docs/<id>/`).
    if (!prefix.endsWith('/')) throw new Error(`prefix ${prefix} must end with /`);
    rmSync(this.path(prefix.slice(0, -1)), {recursive: true, force: true});
  }
}
