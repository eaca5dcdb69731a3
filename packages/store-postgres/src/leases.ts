/**
 * Document leases for several gristlite processes sharing one data directory: a process writes a
 * document only while it holds the document's lease.
 *
 * The lease is a PostgreSQL session-level advisory lock on a 64-bit hash of (schema, doc id), held
 * by one dedicated connection per process. PostgreSQL releases every lock of a session when its
 * connection ends, so a process that dies (or loses its connection) gives up its leases at once,
 * with no expiry to wait for. The holder is identified by the connection's `application_name`,
 * which the process sets to something the others can use, typically its own internal URL, so
 * that a request reaching the wrong process can be forwarded to the holder.
 *
 * A hash collision between two doc ids can only make two docs share a lease (both are then routed
 * to one process), never give one doc two writers.
 */
import {createHash} from 'node:crypto';
import pg from 'pg';
import type {DocLeases} from '@gristlite/core/internal';
import {connectionConfig} from './store.js';

export interface PgDocLeasesOptions {
  /** Schema of the deployment (leases are per schema); default as for PostgresHomeStore. */
  schema?: string;
  /** How other processes find this one (e.g. `http://10.0.0.5:8484`); at most 63 bytes. */
  holderId: string;
  /** Called once if the connection is lost: every lease of this process is gone. */
  onLost?: (error: Error) => void;
}

/** Splits the 64-bit key into the (classid, objid) pair that `pg_locks` shows, as unsigned decimals. */
function lockKey(schema: string, docId: string): {key: string; classid: string; objid: string} {
  const h = createHash('sha256').update(`${schema}\u0000${docId}`).digest();
  const key = h.readBigInt64BE(0);
  return {key: key.toString(), classid: String(h.readUInt32BE(0)), objid: String(h.readUInt32BE(4))};
}

export class PgDocLeases implements DocLeases {
  private readonly held = new Set<string>();
  private readonly queue = new Map<string, Promise<void>>();
  private lost: Error | null = null;
  private closing = false;

  private constructor(
    private readonly client: pg.Client,
    readonly schema: string,
    readonly holderId: string,
  ) {}

  static async connect(url: string, opts: PgDocLeasesOptions): Promise<PgDocLeases> {
    if (!opts.holderId || Buffer.byteLength(opts.holderId) > 63)
      throw new Error('holderId must be 1 to 63 bytes (it is the connection application_name)');
    const {connectionString, schema} = connectionConfig(url, opts.schema);
    const u = new URL(connectionString);
    u.searchParams.delete('application_name');
    const client = new pg.Client({connectionString: u.toString(), application_name: opts.holderId, keepAlive: true});
    const leases = new PgDocLeases(client, schema, opts.holderId);
    const onGone = (e?: Error) => {
      if (leases.lost || leases.closing) return;
      leases.lost = e ?? new Error('lease connection ended');
      leases.held.clear();
      opts.onLost?.(leases.lost);
    };
    client.on('error', onGone);
    client.on('end', () => onGone());
    await client.connect();
    return leases;
  }

  private check() {
    if (this.lost) throw new Error(`document leases lost: ${this.lost.message}`);
    if (this.closing) throw new Error('document leases closed');
  }

  /**
   * Runs acquire/release of one doc one after the other: session advisory locks stack, so two
   * overlapping acquires must not both lock (one release would then leave the lock held).
   */
  private serial<T>(docId: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.queue.get(docId) ?? Promise.resolve();
    const next = prev.then(fn, fn);
    const tail = next.then(
      () => {},
      () => {},
    );
    this.queue.set(docId, tail);
    void tail.then(() => {
      if (this.queue.get(docId) === tail) this.queue.delete(docId);
    });
    return next;
  }

  acquire(docId: string): Promise<boolean> {
    return this.serial(docId, async () => {
      this.check();
      if (this.held.has(docId)) return true;
      const {rows} = await this.client.query('SELECT pg_try_advisory_lock($1::bigint) AS ok', [
        lockKey(this.schema, docId).key,
      ]);
      if (rows[0].ok) this.held.add(docId);
      return rows[0].ok as boolean;
    });
  }

  release(docId: string): Promise<void> {
    return this.serial(docId, async () => {
      if (!this.held.has(docId) || this.lost || this.closing) return;
      this.held.delete(docId);
      await this.client.query('SELECT pg_advisory_unlock($1::bigint)', [lockKey(this.schema, docId).key]);
    });
  }

  async holder(docId: string): Promise<string | null> {
    this.check();
    const {classid, objid} = lockKey(this.schema, docId);
    const {rows} = await this.client.query(
      `SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
       WHERE l.locktype = 'advisory' AND l.granted AND l.classid = $1::oid AND l.objid = $2::oid AND l.objsubid = 1
         AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
       LIMIT 1`,
      [classid, objid],
    );
    return rows.length ? rows[0].application_name : null;
  }

  /** Doc ids whose lease this process holds. */
  heldDocs(): string[] {
    return [...this.held];
  }

  /** Backend pid of the lease connection (for operations and tests). */
  async backendPid(): Promise<number> {
    this.check();
    return (await this.client.query('SELECT pg_backend_pid() AS pid')).rows[0].pid;
  }

  /** Releases every lease by closing the connection. */
  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    this.held.clear();
    await this.client.end().catch(() => {});
  }
}
