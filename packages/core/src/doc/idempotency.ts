/**
 * Idempotent writes (beyond Grist, issue 30 §3; the IETF httpapi draft's `Idempotency-Key`). The
 * first request with a key is applied and its answer kept in the document, in the private table
 * `_gristlite_idempotency`, so that it travels with the file (restarts, takeovers by another
 * worker) and never leaves with a download (private tables are dropped, D35). A repeat with the same
 * key and request gets the kept answer without applying anything; another request under the same
 * key is 422; a repeat while the first runs is 409.
 *
 * The key is written inside the write's own transaction (`GristDoc.beforeCommit`), so a write is
 * never applied without its key: a crash at any point leaves both or neither. The answer, known
 * only once the handler has shaped it, is added right after, in the same request (and, with
 * several machines, shipped to the log with the write before anything is acknowledged). A repeat of
 * a write whose answer was lost between the two (a crash in those microseconds) is 409 and never
 * applied again.
 */
import {AsyncLocalStorage} from 'node:async_hooks';
import {createHash} from 'node:crypto';
import type Database from 'better-sqlite3';
import {ApiError, BadRequest} from '../base/index.js';

/** The private table of a document that keeps its idempotency keys and their answers. */
export const IDEMPOTENCY_TABLE = '_gristlite_idempotency';

/** How long a key is kept (the draft's examples and Stripe keep 24 hours). */
export const IDEMPOTENCY_TTL_MS = 24 * 3600_000;

/** Header values the draft allows: 1-255 printable ASCII characters. */
const KEY_RE = /^[\x20-\x7e]{1,255}$/;

/** An answer as kept: status, content type and the body's bytes. */
export interface KeptAnswer {
  status: number;
  contentType: string;
  body: Buffer;
}

/** The idempotency state of one request with a key. */
interface Claim {
  key: string;
  fingerprint: string;
  /** Set once the document is open and the key is claimed in it. */
  docId: string | null;
  db: Database.Database | null;
  /** The key's row was written inside a write's transaction. */
  recorded: boolean;
  /** `total_changes()` of the connection when the key was claimed (writes outside GristDoc.write). */
  changesAtClaim: number;
}

/** The bounds of the keys a document keeps (from the environment: Engine). */
export interface IdempotencySettings {
  /** Most keys a document keeps (GRISTLITE_IDEMPOTENCY_MAX_KEYS, default 10000); the oldest go first. */
  maxKeys: number;
  /** Largest answer kept, in bytes (GRISTLITE_IDEMPOTENCY_MAX_ANSWER_BYTES, default 1 MB). */
  maxAnswerBytes: number;
}

/** The fingerprint of a request: who sent it (a user id, or `user/key` for a document API key), the route (method, path, query) and the body. */
export function requestFingerprint(
  caller: number | string | null,
  method: string,
  pathAndQuery: string,
  body: unknown,
): string {
  return createHash('sha256')
    .update(JSON.stringify([caller, method, pathAndQuery, body === undefined ? null : body]))
    .digest('base64url');
}

/** A checked `Idempotency-Key` header value, or 400. */
export function checkIdempotencyKey(value: string): string {
  if (!KEY_RE.test(value)) {
    throw new BadRequest('Invalid Idempotency-Key: 1 to 255 printable ASCII characters');
  }
  return value;
}

/** Thrown by `claim` when an earlier request with the key was applied: its kept answer is the answer. */
export class Replay extends Error {
  constructor(readonly answer: KeptAnswer) {
    super('replayed answer');
  }
}

/** The engine's keeper of idempotency keys: requests in flight, and the keys of each document. */
export class Idempotency {
  private readonly scope = new AsyncLocalStorage<Claim>();
  /** `docId\0key` of the requests running on this engine. */
  private readonly running = new Set<string>();

  constructor(readonly settings: IdempotencySettings) {}

  /** Runs a request that carries `key` (already checked). */
  run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const claim: Claim = {key, fingerprint: '', docId: null, db: null, recorded: false, changesAtClaim: 0};
    return this.scope.run(claim, async () => {
      try {
        return await fn();
      } finally {
        if (claim.docId) this.running.delete(`${claim.docId}\0${claim.key}`);
      }
    });
  }

  /**
   * Runs `fn` (background work a request starts, such as attachment transfers) outside the
   * request's key: its writes are not the request's, so they never record the key.
   */
  outside<T>(fn: () => T): T {
    return this.scope.exit(fn);
  }

  /** Whether the current request carries a key (claimed or not yet). */
  get active(): boolean {
    return this.scope.getStore() !== undefined;
  }

  /**
   * Once the request's document is open and its access checked: throws `Replay` with the kept
   * answer of an earlier request with the key (sent instead of running this one), else claims the
   * key. 409 while a request with the key is running, 422 when the key was used for another request
   * (`fingerprint`: requestFingerprint).
   */
  claim(docId: string, db: Database.Database, fingerprint: string): void {
    const claim = this.scope.getStore();
    if (!claim || claim.docId) return;
    claim.fingerprint = fingerprint;
    const id = `${docId}\0${claim.key}`;
    if (this.running.has(id)) {
      throw new ApiError(409, 'A request with this Idempotency-Key is still running; try again later');
    }
    const row = hasTable(db)
      ? (db
          .prepare(`SELECT fingerprint, status, contentType, body, createdAt FROM ${IDEMPOTENCY_TABLE} WHERE key = ?`)
          .get(claim.key) as
          | {
              fingerprint: string;
              status: number | null;
              contentType: string | null;
              body: Buffer | null;
              createdAt: number;
            }
          | undefined)
      : undefined;
    if (row && row.createdAt > Date.now() - IDEMPOTENCY_TTL_MS) {
      if (row.fingerprint !== claim.fingerprint) {
        throw new ApiError(422, 'This Idempotency-Key was used for another request (route, body or user)');
      }
      if (row.status === null || row.body === null) {
        throw new ApiError(
          409,
          'The request with this Idempotency-Key was applied, but its answer was not kept; it will not be applied again',
        );
      }
      throw new Replay({
        status: row.status,
        contentType: row.contentType ?? 'application/json; charset=utf-8',
        body: row.body,
      });
    }
    this.running.add(id);
    claim.docId = docId;
    claim.db = db;
    claim.changesAtClaim = totalChanges(db);
  }

  /** Inside a write's transaction on `db` (GristDoc.beforeCommit): the claimed key goes with it. */
  beforeCommit(db: Database.Database): void {
    const claim = this.scope.getStore();
    if (!claim || claim.db !== db || claim.recorded) return;
    ensureTable(db);
    db.prepare(
      `INSERT OR REPLACE INTO ${IDEMPOTENCY_TABLE} (key, fingerprint, status, contentType, body, createdAt) VALUES (?, ?, NULL, NULL, NULL, ?)`,
    ).run(claim.key, claim.fingerprint, Date.now());
    claim.recorded = true;
  }

  /**
   * The request's answer, once shaped: kept with its key when the request wrote to the document
   * (inside a write's transaction, or by a path that writes on its own: attachments, webhooks);
   * a request that changed nothing keeps nothing, and its repeat simply runs again.
   */
  finish(answer: {status: number; contentType: string; body: string | Uint8Array | null} | null): void {
    const claim = this.scope.getStore();
    if (!claim?.db || !claim.docId) return;
    const db = claim.db;
    if (!claim.recorded && totalChanges(db) === claim.changesAtClaim) return;
    // A write whose COMMIT failed (its key went with it) is not kept as applied.
    if (claim.recorded && (answer?.status ?? 500) >= 500 && !this.kept(db, claim.key)) return;
    const body = answer?.body === null || answer === null ? null : Buffer.from(answer.body);
    const kept = body && body.length <= this.settings.maxAnswerBytes ? body : null;
    ensureTable(db);
    db.transaction(() => {
      db.prepare(
        `INSERT OR REPLACE INTO ${IDEMPOTENCY_TABLE} (key, fingerprint, status, contentType, body, createdAt) VALUES (?, ?, ?, ?, ?, ?)`,
      ).run(claim.key, claim.fingerprint, kept ? answer!.status : null, answer?.contentType ?? null, kept, Date.now());
      // Expired keys go, then the oldest beyond the cap.
      db.prepare(`DELETE FROM ${IDEMPOTENCY_TABLE} WHERE createdAt <= ?`).run(Date.now() - IDEMPOTENCY_TTL_MS);
      db.prepare(
        `DELETE FROM ${IDEMPOTENCY_TABLE} WHERE key IN (SELECT key FROM ${IDEMPOTENCY_TABLE} ORDER BY createdAt DESC, rowid DESC LIMIT -1 OFFSET ?)`,
      ).run(this.settings.maxKeys);
    })();
    claim.recorded = true;
  }

  private kept(db: Database.Database, key: string): boolean {
    return hasTable(db) && db.prepare(`SELECT 1 FROM ${IDEMPOTENCY_TABLE} WHERE key = ?`).get(key) !== undefined;
  }
}

function totalChanges(db: Database.Database): number {
  return db.prepare('SELECT total_changes()').pluck().get() as number;
}

function hasTable(db: Database.Database): boolean {
  return (
    db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?`).get(IDEMPOTENCY_TABLE) !== undefined
  );
}

function ensureTable(db: Database.Database): void {
  db.exec(
    `CREATE TABLE IF NOT EXISTS ${IDEMPOTENCY_TABLE} (key TEXT PRIMARY KEY, fingerprint TEXT NOT NULL, ` +
      `status INTEGER, contentType TEXT, body BLOB, createdAt INTEGER NOT NULL);` +
      `CREATE INDEX IF NOT EXISTS ${IDEMPOTENCY_TABLE}_createdAt ON ${IDEMPOTENCY_TABLE} (createdAt)`,
  );
}
