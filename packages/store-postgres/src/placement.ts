/**
 * Placement of documents on workers in PostgreSQL, with fencing (issue 17, docs/deployment.md).
 *
 * One row per document names its worker, an epoch that grows at every takeover, and a lease whose
 * expiry comes from PostgreSQL's clock (never the workers'). A worker may take a document when
 * nobody holds it, when the lease expired (a stalled or cut-off holder), or when the holder's
 * lease connection is gone from `pg_stat_activity` (a crashed holder: no need to wait for the
 * lease). Every log append checks the epoch and the lease in the same statement, under a row
 * lock that a takeover's `FOR UPDATE` waits for: once a takeover commits, the old holder can
 * append nothing, so it can acknowledge nothing.
 *
 * The lease connection (one per worker) renews every held lease each third of the lease time and
 * listens for placement changes (LISTEN/NOTIFY), so a holder hears at once that a document moved.
 */
import {randomBytes} from 'node:crypto';
import pg from 'pg';
import {
  Fenced,
  Unrecorded,
  type Claim,
  type LogEntry,
  type Placement,
  type SnapshotRef,
} from '@gristlite/core/internal';
import {connectionConfig, inTransaction, migrate} from './store.js';

export interface PgPlacementOptions {
  /** This worker's address as the others reach it (GRISTLITE_WORKER_URL). */
  self: string;
  /** Schema (default: the URL's `schema` parameter, else `public`). */
  schema?: string;
  /** Lease time (default 10000 ms): a stalled holder loses its documents after this long. */
  leaseMs?: number;
  /** Snapshots kept per document (default 5); older ones are deleted. */
  keepSnapshots?: number;
  /** Connections for claims and appends (default 8). */
  poolSize?: number;
  /** Background failures (renewals, reconnects). */
  onError?: (err: unknown, what: string) => void;
}

const CHANNEL = 'gristlite_placement';
/** Holders remembered for routing at most (oldest forgotten first). */
const MAX_CACHED_HOLDERS = 10_000;

/** Rows of the log as they come back (pg returns bigint as text). */
interface LogRow {
  seq: string;
  gen: number;
  off: string;
  bytes: Buffer;
}

export class PgPlacement implements Placement {
  private lease!: pg.Client;
  private pid = 0;
  private started = '';
  private readonly mine = new Map<string, {epoch: number; until: number}>();
  /** Holders other workers have, as last seen (kept fresh by NOTIFY), so routing skips a query. */
  private readonly holders = new Map<string, {worker: string; at: number}>();
  private lostFns: ((docId: string | null) => void)[] = [];
  private renewTimer: NodeJS.Timeout | null = null;
  private closing = false;
  private connecting: Promise<void> | null = null;
  readonly leaseMs: number;
  secret = '';

  private constructor(
    private readonly pool: pg.Pool,
    private readonly connectionString: string,
    readonly schema: string,
    private readonly opts: PgPlacementOptions,
  ) {
    this.leaseMs = opts.leaseMs ?? 10_000;
  }

  get self(): string {
    return this.opts.self;
  }

  static async connect(url: string, opts: PgPlacementOptions): Promise<PgPlacement> {
    const {connectionString, schema} = connectionConfig(url, opts.schema);
    const leaseMs = opts.leaseMs ?? 10_000;
    const pool = new pg.Pool({
      connectionString,
      max: opts.poolSize ?? 8,
      // A cut link must not hang a request for TCP's minutes: the lease is the longest wait.
      query_timeout: leaseMs,
      connectionTimeoutMillis: leaseMs,
      // A holder cut off (or frozen) inside a claim or a snapshot record keeps that transaction's
      // row lock for as long as its session lives, and its session outlives the cut (nothing
      // tells the server): every takeover's FOR UPDATE then waits on it, past the lease. The
      // server ends a transaction left idle for a lease time, so the lock goes with the lease.
      idle_in_transaction_session_timeout: leaseMs,
      keepAlive: true,
      keepAliveInitialDelayMillis: 1000,
    });
    pool.on('error', (e) => opts.onError?.(e, 'placement pool'));
    const p = new PgPlacement(pool, connectionString, schema, opts);
    try {
      await migrate(pool, schema);
      await pool.query(
        `INSERT INTO gristlite_cluster (name, value) VALUES ('internal_secret', $1) ON CONFLICT DO NOTHING`,
        [randomBytes(32).toString('hex')],
      );
      p.secret = (await pool.query(`SELECT value FROM gristlite_cluster WHERE name = 'internal_secret'`)).rows[0].value;
      await p.connectLease();
    } catch (e) {
      await pool.end().catch(() => {});
      throw e;
    }
    p.renewTimer = setInterval(() => void p.renew(), Math.max(100, Math.floor(leaseMs / 3)));
    p.renewTimer.unref();
    return p;
  }

  /** The lease connection: its backend pid is this worker's liveness as the others see it. */
  private async connectLease(): Promise<void> {
    const u = new URL(this.connectionString);
    const client = new pg.Client({
      connectionString: u.toString(),
      application_name: `gristlite ${this.self}`.slice(0, 63),
      keepAlive: true,
      keepAliveInitialDelayMillis: 1000,
      query_timeout: this.leaseMs,
      connectionTimeoutMillis: this.leaseMs,
    });
    let gone = false;
    const onGone = (e?: Error) => {
      if (gone || this.closing) return;
      gone = true;
      if (this.lease === client) this.leaseLost(e ?? new Error('lease connection ended'));
    };
    client.on('error', onGone);
    client.on('end', () => onGone());
    client.on('notification', (n) => this.notified(n.payload ?? ''));
    await client.connect();
    const {rows} = await client.query(
      `SELECT pg_backend_pid() AS pid, backend_start::text AS started FROM pg_stat_activity WHERE pid = pg_backend_pid()`,
    );
    await client.query(`LISTEN ${CHANNEL}`);
    if (this.closing) {
      // Closed while this connection was being made (a reconnect): it would outlive the worker
      // and keep its process alive (seen on Node 22: a test file that passed never exited).
      await client.end().catch(() => {});
      return;
    }
    this.lease = client;
    this.pid = rows[0].pid;
    this.started = rows[0].started;
  }

  /** Without its lease connection the worker can prove nothing: every document is given up. */
  private leaseLost(err: Error): void {
    this.opts.onError?.(err, 'placement lease connection lost; documents given up');
    const client = this.lease;
    void client.end().catch(() => {});
    this.mine.clear();
    this.holders.clear();
    for (const fn of this.lostFns) fn(null);
    this.reconnect();
  }

  private reconnect(): void {
    if (this.closing || this.connecting) return;
    this.connecting = (async () => {
      for (let wait = 200; !this.closing; wait = Math.min(wait * 2, 2000)) {
        try {
          await this.connectLease();
          return;
        } catch (e) {
          this.opts.onError?.(e, 'placement lease connection');
          await new Promise((r) => setTimeout(r, wait));
        }
      }
    })().finally(() => {
      this.connecting = null;
    });
  }

  private rememberHolder(docId: string, worker: string): void {
    this.holders.delete(docId);
    this.holders.set(docId, {worker, at: Date.now()});
    if (this.holders.size > MAX_CACHED_HOLDERS) this.holders.delete(this.holders.keys().next().value!);
  }

  private notified(payload: string): void {
    const [docId, , worker] = payload.split(' ');
    if (!docId) return;
    if (worker) this.rememberHolder(docId, worker);
    else this.holders.delete(docId);
    const m = this.mine.get(docId);
    // Our own takeover's notice may arrive before its COMMIT answers: only others' count.
    if (m && worker !== this.self) {
      this.mine.delete(docId);
      for (const fn of this.lostFns) fn(docId);
    }
  }

  /** Renews every lease this worker holds; those it no longer holds are reported lost. */
  private async renew(): Promise<void> {
    if (this.closing || this.connecting || this.mine.size === 0) return;
    const sent = performance.now();
    // Only what was held when the renewal was sent: a document taken or created meanwhile may be
    // missing from its answer without being lost.
    const asked = new Map(this.mine);
    let rows: {doc_id: string; epoch: string}[];
    try {
      rows = (
        await this.lease.query(
          `UPDATE gristlite_placement SET lease_until = clock_timestamp() + $2 * interval '1 millisecond'
           WHERE worker = $1 AND session_pid = pg_backend_pid() RETURNING doc_id, epoch`,
          [this.self, this.leaseMs],
        )
      ).rows;
    } catch (e) {
      // Not confirmed: the documents stay usable only until their current expiry (validUntil).
      this.opts.onError?.(e, 'placement lease renewal');
      if (/timeout/i.test((e as Error).message)) this.leaseLost(e as Error);
      return;
    }
    const renewed = new Map(rows.map((r) => [r.doc_id, Number(r.epoch)]));
    for (const [docId, m] of asked) {
      if (this.mine.get(docId) !== m) continue; // held anew since (hold() makes a new entry)
      if (renewed.get(docId) === m.epoch) m.until = sent + this.leaseMs;
      else {
        this.mine.delete(docId);
        for (const fn of this.lostFns) fn(docId);
      }
    }
  }

  private hold(docId: string, epoch: number, sent: number): void {
    this.mine.set(docId, {epoch, until: sent + this.leaseMs});
    this.holders.delete(docId);
  }

  async claim(docId: string, known?: number): Promise<Claim> {
    // Routing's fast path: a holder named by a recent notification or claim (forgotten when it
    // does not answer), so a forwarded request costs no placement query.
    const cached = this.holders.get(docId);
    if (cached && cached.worker !== this.self && Date.now() - cached.at < this.leaseMs) {
      return {mine: false, holder: cached.worker};
    }
    const sent = performance.now();
    const claim = await inTransaction(this.pool, async (c): Promise<Claim> => {
      const {rows} = await c.query(
        `SELECT worker, epoch, session_pid,
                lease_until > clock_timestamp() AS live_lease,
                EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.pid = p.session_pid
                        AND a.backend_start = p.session_start) AS live_session,
                snapshot_key, snapshot_sha256, snapshot_size, snapshot_seq
         FROM gristlite_placement p WHERE doc_id = $1 FOR UPDATE`,
        [docId],
      );
      if (!rows.length) return {missing: true};
      const r = rows[0];
      const epoch = Number(r.epoch);
      if (r.worker === this.self && known === epoch && r.session_pid === this.pid) {
        await c.query(
          `UPDATE gristlite_placement SET lease_until = clock_timestamp() + $2 * interval '1 millisecond' WHERE doc_id = $1`,
          [docId, this.leaseMs],
        );
        return {mine: true, takeover: null};
      }
      if (r.worker !== null && r.worker !== this.self && r.live_lease && r.live_session) {
        return {mine: false, holder: r.worker};
      }
      if (!this.pid) throw new Error('no lease connection');
      const next = epoch + 1;
      await c.query(
        `UPDATE gristlite_placement SET worker = $2, epoch = $3, session_pid = $4, session_start = $5::timestamptz,
           lease_until = clock_timestamp() + $6 * interval '1 millisecond' WHERE doc_id = $1`,
        [docId, this.self, next, this.pid, this.started, this.leaseMs],
      );
      const seq = Number(r.snapshot_seq);
      // The log after the newest snapshot (the rest is read only if an older one must stand in),
      // the generation after the last kept, and older snapshots to fall back on.
      const log = await this.logSince(c, docId, r.snapshot_key ? seq : 0);
      const {rows: gens} = await c.query<{gen: number | null}>(
        'SELECT max(gen) AS gen FROM gristlite_doc_log WHERE doc_id = $1',
        [docId],
      );
      const previous = (
        await c.query<{key: string; sha256: string; size: string; seq: string}>(
          `SELECT key, sha256, size, seq FROM gristlite_snapshots
           WHERE doc_id = $1 AND key IS DISTINCT FROM $2 AND seq <= $3 ORDER BY seq DESC, created_at DESC LIMIT 4`,
          [docId, r.snapshot_key, seq],
        )
      ).rows.map((p) => ({key: p.key, sha256: p.sha256, size: Number(p.size), seq: Number(p.seq)}));
      await c.query(`SELECT pg_notify($1, $2)`, [CHANNEL, `${docId} ${next} ${this.self}`]);
      return {
        mine: true,
        takeover: {
          epoch: next,
          snapshot: r.snapshot_key
            ? {key: r.snapshot_key, sha256: r.snapshot_sha256, size: Number(r.snapshot_size), seq}
            : null,
          previous,
          log,
          logSince: (after) => this.logSince(this.pool, docId, after),
          nextGen: (gens[0].gen ?? -1) + 1,
        },
      };
    });
    // Remembered only once committed.
    if ('holder' in claim) this.rememberHolder(docId, claim.holder);
    else if ('mine' in claim) this.hold(docId, claim.takeover?.epoch ?? (known as number), sent);
    return claim;
  }

  /** The log entries of `docId` after `seq`, in order. */
  private async logSince(q: pg.Pool | pg.PoolClient, docId: string, seq: number): Promise<LogEntry[]> {
    const {rows} = await q.query<LogRow>(
      'SELECT seq, gen, off, bytes FROM gristlite_doc_log WHERE doc_id = $1 AND seq > $2 ORDER BY seq',
      [docId, seq],
    );
    return rows.map((e) => ({seq: Number(e.seq), gen: e.gen, offset: Number(e.off), bytes: e.bytes}));
  }

  async create(docId: string): Promise<number> {
    if (!this.pid) throw new Error('no lease connection');
    const sent = performance.now();
    const {rowCount} = await this.pool.query(
      `INSERT INTO gristlite_placement (doc_id, worker, epoch, session_pid, session_start, lease_until)
       VALUES ($1, $2, 1, $3, $4::timestamptz, clock_timestamp() + $5 * interval '1 millisecond')
       ON CONFLICT (doc_id) DO NOTHING`,
      [docId, this.self, this.pid, this.started, this.leaseMs],
    );
    if (rowCount !== 1) throw new Error(`document ${docId} is placed already`);
    this.hold(docId, 1, sent);
    return 1;
  }

  async append(docId: string, epoch: number, entries: LogEntry[]): Promise<void> {
    if (!entries.length) return;
    // The epoch, the holder and an unexpired lease are checked in the statement that appends,
    // under a share lock a takeover's FOR UPDATE has to wait for.
    const {rowCount} = await this.pool.query(
      `WITH p AS (
         SELECT doc_id FROM gristlite_placement
         WHERE doc_id = $1 AND epoch = $2 AND worker = $3 AND lease_until > clock_timestamp()
         FOR SHARE
       )
       INSERT INTO gristlite_doc_log (doc_id, seq, gen, off, epoch, bytes)
       SELECT p.doc_id, e.seq, e.gen, e.off, $2, e.bytes
       FROM p, unnest($4::bigint[], $5::integer[], $6::bigint[], $7::bytea[]) AS e(seq, gen, off, bytes)`,
      [
        docId,
        epoch,
        this.self,
        entries.map((e) => e.seq),
        entries.map((e) => e.gen),
        entries.map((e) => e.offset),
        entries.map((e) => e.bytes),
      ],
    );
    if (rowCount !== entries.length) {
      this.dropMine(docId, epoch);
      throw new Fenced(docId);
    }
  }

  private dropMine(docId: string, epoch: number): void {
    if (this.mine.get(docId)?.epoch === epoch) this.mine.delete(docId);
  }

  async recordSnapshot(docId: string, epoch: number, snap: SnapshotRef): Promise<void> {
    await inTransaction(this.pool, async (c) => {
      const {rows} = await c.query<{snapshot_seq: string}>(
        `SELECT snapshot_seq FROM gristlite_placement
         WHERE doc_id = $1 AND epoch = $2 AND worker = $3 AND snapshot_seq <= $4 FOR UPDATE`,
        [docId, epoch, this.self, snap.seq],
      );
      if (!rows.length) {
        this.dropMine(docId, epoch);
        throw new Fenced(docId);
      }
      // The intent is the upload's claim against the sweep: whoever ends it first wins.
      const intent = await c.query(`DELETE FROM gristlite_uploads WHERE key = $1`, [snap.key]);
      if (intent.rowCount !== 1) throw new Unrecorded(snap.key);
      await c.query(
        `UPDATE gristlite_placement SET snapshot_key = $2, snapshot_sha256 = $3, snapshot_size = $4, snapshot_seq = $5
         WHERE doc_id = $1`,
        [docId, snap.key, snap.sha256, snap.size, snap.seq],
      );
      await c.query(
        `INSERT INTO gristlite_snapshots (doc_id, key, seq, sha256, size, epoch) VALUES ($1, $2, $3, $4, $5, $6)`,
        [docId, snap.key, snap.seq, snap.sha256, snap.size, epoch],
      );
      // Only what the previous snapshot covers: it plus the rest of the log stand in for this one.
      await c.query(`DELETE FROM gristlite_doc_log WHERE doc_id = $1 AND seq <= $2`, [docId, rows[0].snapshot_seq]);
    });
  }

  async snapshotRecorded(docId: string, key: string): Promise<boolean> {
    const {rows} = await this.pool.query<{recorded: boolean}>(
      `SELECT EXISTS (SELECT 1 FROM gristlite_placement WHERE doc_id = $1 AND snapshot_key = $2)
           OR EXISTS (SELECT 1 FROM gristlite_snapshots WHERE doc_id = $1 AND key = $2) AS recorded`,
      [docId, key],
    );
    return rows[0].recorded;
  }

  async prunable(docId: string): Promise<string[]> {
    const {rows} = await this.pool.query<{key: string}>(
      `SELECT s.key FROM gristlite_snapshots s JOIN gristlite_placement p ON p.doc_id = s.doc_id
       WHERE s.doc_id = $1 AND s.key <> p.snapshot_key AND s.seq < p.snapshot_seq
         AND s.key NOT IN (SELECT key FROM gristlite_snapshots WHERE doc_id = $1 ORDER BY seq DESC, created_at DESC LIMIT $2)`,
      [docId, Math.max(2, this.opts.keepSnapshots ?? 5)],
    );
    return rows.map((r) => r.key);
  }

  async forgetSnapshots(docId: string, keys: string[]): Promise<void> {
    if (!keys.length) return;
    await this.pool.query(
      `DELETE FROM gristlite_snapshots s WHERE doc_id = $1 AND key = ANY($2::text[])
         AND NOT EXISTS (SELECT 1 FROM gristlite_placement p WHERE p.doc_id = $1 AND p.snapshot_key = s.key)`,
      [docId, keys],
    );
  }

  async intendUpload(docId: string, key: string): Promise<void> {
    await this.pool.query(`INSERT INTO gristlite_uploads (key, doc_id) VALUES ($1, $2) ON CONFLICT DO NOTHING`, [
      key,
      docId,
    ]);
  }

  async takeStaleUploads(olderThanMs: number, limit: number): Promise<{docId: string; key: string}[]> {
    // Ending the intent is what makes deleting the object safe: a record needs the intent.
    const {rows} = await this.pool.query<{key: string; doc_id: string}>(
      `WITH stale AS (
         SELECT key FROM gristlite_uploads WHERE started_at < clock_timestamp() - $1 * interval '1 millisecond'
         ORDER BY started_at LIMIT $2 FOR UPDATE SKIP LOCKED),
       gone AS (DELETE FROM gristlite_uploads u USING stale WHERE u.key = stale.key RETURNING u.key, u.doc_id)
       SELECT g.key, g.doc_id FROM gone g
       WHERE NOT EXISTS (SELECT 1 FROM gristlite_snapshots s WHERE s.doc_id = g.doc_id AND s.key = g.key)
         AND NOT EXISTS (SELECT 1 FROM gristlite_placement p WHERE p.doc_id = g.doc_id AND p.snapshot_key = g.key)`,
      [olderThanMs, limit],
    );
    return rows.map((r) => ({docId: r.doc_id, key: r.key}));
  }

  async release(docId: string, epoch: number): Promise<void> {
    this.dropMine(docId, epoch);
    await this.pool.query(
      `WITH r AS (
         UPDATE gristlite_placement SET worker = NULL, lease_until = clock_timestamp()
         WHERE doc_id = $1 AND epoch = $2 AND worker = $3 RETURNING doc_id)
       SELECT pg_notify($4, $1 || ' ' || $2) FROM r`,
      [docId, epoch, this.self, CHANNEL],
    );
  }

  async remove(docId: string): Promise<string[]> {
    this.mine.delete(docId);
    return inTransaction(this.pool, async (c) => {
      const keys = await c.query<{key: string}>(`DELETE FROM gristlite_snapshots WHERE doc_id = $1 RETURNING key`, [
        docId,
      ]);
      await c.query(`DELETE FROM gristlite_doc_log WHERE doc_id = $1`, [docId]);
      await c.query(`DELETE FROM gristlite_placement WHERE doc_id = $1`, [docId]);
      await c.query(`DELETE FROM gristlite_uploads WHERE doc_id = $1`, [docId]);
      await c.query(`SELECT pg_notify($1, $2)`, [CHANNEL, `${docId} 0`]);
      return keys.rows.map((r) => r.key);
    });
  }

  validUntil(docId: string, epoch: number): number {
    const m = this.mine.get(docId);
    return m && m.epoch === epoch ? m.until : 0;
  }

  onLost(fn: (docId: string | null) => void): void {
    this.lostFns.push(fn);
  }

  async orphans(limit: number): Promise<string[]> {
    const {rows} = await this.pool.query(
      `SELECT doc_id FROM gristlite_placement p WHERE worker IS NOT NULL AND worker <> $1
         AND (lease_until <= clock_timestamp()
              OR NOT EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.pid = p.session_pid AND a.backend_start = p.session_start))
       ORDER BY lease_until LIMIT $2`,
      [this.self, limit],
    );
    return rows.map((r) => r.doc_id);
  }

  async liveHolder(docId: string): Promise<{worker: string; live: boolean} | null> {
    const cached = this.holders.get(docId);
    if (cached && Date.now() - cached.at < this.leaseMs)
      return cached.worker === this.self ? null : {worker: cached.worker, live: true};
    if (this.mine.has(docId)) return null;
    const {rows} = await this.pool.query<{worker: string; live: boolean}>(
      `SELECT worker, lease_until > clock_timestamp()
           AND EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.pid = p.session_pid AND a.backend_start = p.session_start) AS live
         FROM gristlite_placement p WHERE doc_id = $1 AND worker IS NOT NULL AND worker <> $2`,
      [docId, this.self],
    );
    if (!rows.length) return null;
    if (rows[0].live) this.rememberHolder(docId, rows[0].worker);
    return {worker: rows[0].worker, live: rows[0].live};
  }

  async holderAlive(docId: string, worker: string): Promise<boolean> {
    const {rows} = await this.pool.query(
      `SELECT 1 FROM gristlite_placement p WHERE doc_id = $1 AND worker = $2 AND lease_until > clock_timestamp()
         AND EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.pid = p.session_pid AND a.backend_start = p.session_start)`,
      [docId, worker],
    );
    return rows.length > 0;
  }

  forgetHolder(docId: string): void {
    this.holders.delete(docId);
  }

  /** Backend pid of the lease connection (for tests and operations). */
  get leasePid(): number {
    return this.pid;
  }

  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    if (this.renewTimer) clearInterval(this.renewTimer);
    this.lostFns = [];
    await this.connecting?.catch(() => {});
    await this.lease?.end().catch(() => {});
    await this.pool.end().catch(() => {});
  }
}
