/**
 * The embeddable engine: a home store, the document files in a data directory, and the services
 * that the http layer (or an embedding app) calls. No HTTP and no process globals here.
 */
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { createDocFile } from './doc/index.js';
import { GristDoc } from './doc/gristdoc.js';
import { ApiError, BadRequest, Forbidden, NotFound } from './errors.js';
import type { DocLeases } from './leases.js';
import { attachWebhooks, deliveryOptionsFromEnv, webhookPolicyFromEnv } from './webhooks/index.js';
import { SqlPool, sqlTimeoutFromEnv, type SqlResult } from './sql/index.js';
import type { OrgContext, Principal } from './home/principal.js';
import { HomeService, hashApiKey } from './home/service.js';
import { SqliteHomeStore } from './home/sqlite.js';
import type { HomeStore, User } from './home/types.js';

export interface EngineOptions {
  /** Directory holding the home database (unless `home` is given) and every document file. */
  dataDir: string;
  /** A home store to use instead of the embedded SQLite one (e.g. PostgreSQL). */
  home?: HomeStore;
  /** Default (and largest) SQL timeout; default from GRISTLITE_SQL_TIMEOUT_MSEC, else 1000 ms. */
  sqlTimeoutMs?: number;
  /** SQL worker processes (default 2). */
  sqlWorkers?: number;
  /** Settings read from the environment (webhook delivery, SQL timeout); core reads no process globals. */
  env?: Record<string, string | undefined>;
  /** Document leases, when several processes share the data directory (may resolve later). */
  leases?: DocLeases | Promise<DocLeases>;
}

/** An open document: its file and the one read-write connection this process keeps to it. */
export interface OpenDoc {
  id: string;
  path: string;
  db: Database.Database;
  grist: GristDoc;
  /** Webhook events are recorded on every change and delivered while the doc is open here. */
  webhooks: { detach(): Promise<void> };
  /** Finds access rules beyond Grist's default row (decision 9); prepared once per open doc. */
  accessRules: Database.Statement;
}

/**
 * Opens (or reads the schema of) a document file, turning what is wrong with the file itself into a
 * clear answer: a home record whose file is gone is 404, a file that is not a Grist document is 400.
 */
function openDocFile<T>(open: () => T): T {
  try {
    return open();
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code === 'SQLITE_CANTOPEN' || (e instanceof TypeError && /Cannot open database/.test(e.message))) throw new NotFound('Document file not found');
    if (code === 'SQLITE_NOTADB' || code === 'SQLITE_CORRUPT' || (code === 'SQLITE_ERROR' && /no such table/.test((e as Error).message))) {
      throw new BadRequest(`Document file is not a valid Grist document: ${(e as Error).message}`);
    }
    throw e;
  }
}

/**
 * The query finding access rules beyond Grist's default row. Older documents lack some of these
 * columns (userAttributes, permissionsText): a missing one counts as empty.
 */
function accessRulesSql(db: Database.Database): string {
  const cols = new Set((db.prepare(`SELECT name FROM pragma_table_info('_grist_ACLRules')`).all() as { name: string }[]).map((c) => c.name));
  const terms = ['aclFormula', 'userAttributes', 'permissionsText'].filter((c) => cols.has(c)).map((c) => `coalesce(${c}, '') != ''`);
  return `SELECT 1 FROM _grist_ACLRules WHERE ${terms.length ? terms.join(' OR ') : '0'} LIMIT 1`;
}

/** Something cached per open document that must be released when the document goes away. */
export interface Closeable {
  close(): void | Promise<void>;
}

export class Engine {
  // Doc ids come from makeId(); the check in docPath keeps paths inside the data directory.
  private readonly closers: ((docId: string) => void | Promise<void>)[] = [];
  private readonly openDocs = new Map<string, OpenDoc>();
  private sqlPool: SqlPool | null = null;

  private constructor(
    readonly dataDir: string,
    readonly store: HomeStore,
    readonly home: HomeService,
    private readonly opts: EngineOptions,
  ) {
    this.onDocRemoved((docId) => this.closeDoc(docId));
  }

  static async open(opts: EngineOptions): Promise<Engine> {
    mkdirSync(join(opts.dataDir, 'docs'), { recursive: true });
    const store = opts.home ?? new SqliteHomeStore(join(opts.dataDir, 'home.sqlite3'));
    return new Engine(opts.dataDir, store, await HomeService.create(store), opts);
  }

  /**
   * Makes sure this process may open the document. Returns null when it may (it holds the lease, or
   * there are no leases), otherwise the URL of the process that holds it.
   */
  async claimDoc(docId: string): Promise<string | null> {
    if (!this.opts.leases || this.openDocs.has(docId)) return null;
    const leases = await this.opts.leases;
    for (let attempt = 0; attempt < 3; attempt++) {
      if (await leases.acquire(docId)) return null;
      const holder = (await leases.holder?.(docId)) ?? null;
      if (holder) return holder;
      // The holder let go between the two calls: try again.
    }
    throw new ApiError(503, 'Document in flux - try again later');
  }

  /** The document's connection, opened on first use and kept (WAL, so SQL readers never block it). */
  openDoc(docId: string): OpenDoc {
    let doc = this.openDocs.get(docId);
    if (!doc) {
      const path = this.docPath(docId);
      const grist = openDocFile(() => GristDoc.open(path));
      try {
        grist.db.pragma('busy_timeout = 5000');
        // WAL with synchronous=NORMAL: never corrupts, survives a process crash; an OS crash or power
        // loss may drop the last commits (Grist's own "wal" mode; its default is less durable still).
        // GRISTLITE_SQLITE_SYNC=full fsyncs every commit instead (about +0.5 ms per write here).
        grist.db.pragma(`synchronous = ${(this.opts.env?.GRISTLITE_SQLITE_SYNC ?? '').toLowerCase() === 'full' ? 'FULL' : 'NORMAL'}`);
        const env = this.opts.env ?? {};
        const webhooks = attachWebhooks(grist.db, grist, { policy: webhookPolicyFromEnv(env), ...deliveryOptionsFromEnv(env), docId });
        doc = { id: docId, path, db: grist.db, grist, webhooks, accessRules: openDocFile(() => grist.db.prepare(accessRulesSql(grist.db))) };
      } catch (e) {
        grist.close();
        throw e;
      }
      this.openDocs.set(docId, doc);
    }
    return doc;
  }

  private async closeDoc(docId: string): Promise<void> {
    const doc = this.openDocs.get(docId);
    this.openDocs.delete(docId);
    await doc?.webhooks.detach();
    doc?.grist.close();
    await this.sqlPool?.forget(this.docPath(docId));
    if (doc && this.opts.leases) await (await this.opts.leases).release(docId);
  }

  /**
   * Access to a document for its data endpoints. Decision 9: a document carrying granular access
   * rules (beyond Grist's default row) is open to its owners only, until those rules are supported.
   */
  async docAccess(key: string, p: Principal, ctx: OrgContext, need: 'viewers' | 'editors' | 'owners') {
    const { doc, role } = await this.home.docAccess(key, p, ctx, need);
    if (role !== 'owners' && this.hasAccessRules(doc.id)) {
      throw new Forbidden('Document has access rules that gristlite does not support; only owners may use it');
    }
    return { doc, role };
  }

  private hasAccessRules(docId: string): boolean {
    const open = this.openDocs.get(docId);
    if (open) return open.accessRules.get() !== undefined;
    // Not open here (perhaps leased by another process): a short read-only look at the file.
    const db = openDocFile(() => new Database(this.docPath(docId), { readonly: true, fileMustExist: true }));
    try {
      return openDocFile(() => db.prepare(accessRulesSql(db))).get() !== undefined;
    } finally {
      db.close();
    }
  }

  /** Runs read-only SQL on a document in the sandboxed worker pool (see sql/). */
  runSql(docId: string, sql: string, args: unknown[] | null, timeoutMs?: number): Promise<SqlResult> {
    this.sqlPool ??= new SqlPool({
      size: this.opts.sqlWorkers,
      defaultTimeoutMs: this.opts.sqlTimeoutMs ?? sqlTimeoutFromEnv(this.opts.env ?? {}),
    });
    return this.sqlPool.run(this.docPath(docId), sql, args, timeoutMs);
  }

  /** Path of a document's `.grist` file. Doc ids are generated by us, but check anyway. */
  docPath(docId: string): string {
    if (!/^[A-Za-z0-9_-]+$/.test(docId)) throw new Error(`bad doc id ${docId}`);
    return join(this.dataDir, 'docs', `${docId}.grist`);
  }

  /** Registers a hook run when a document is deleted (to close cached handles). */
  onDocRemoved(fn: (docId: string) => void | Promise<void>): void {
    this.closers.push(fn);
  }

  /** Creates a document in a workspace: the home record, then the `.grist` file. */
  async createDoc(wid: number, p: Principal, body: Record<string, unknown>): Promise<string> {
    const doc = await this.home.createDoc(wid, p, body);
    try {
      createDocFile(this.docPath(doc.id));
    } catch (e) {
      await this.store.deleteDoc(doc.id);
      throw e;
    }
    return doc.id;
  }

  async removeDocFiles(docIds: string[]): Promise<void> {
    for (const id of docIds) {
      for (const close of this.closers) await close(id);
      const path = this.docPath(id);
      for (const suffix of ['', '-wal', '-shm', '-journal']) if (existsSync(path + suffix)) rmSync(path + suffix, { force: true });
    }
  }

  async deleteDoc(key: string, p: Principal, ctx: OrgContext): Promise<string> {
    const id = await this.home.deleteDoc(key, p, ctx);
    await this.removeDocFiles([id]);
    return id;
  }

  async deleteWorkspace(wid: number, p: Principal): Promise<number> {
    const { id, docIds } = await this.home.deleteWorkspace(wid, p);
    await this.removeDocFiles(docIds);
    return id;
  }

  async deleteOrg(key: string, name: string, p: Principal, ctx: OrgContext): Promise<number> {
    const { id, docIds } = await this.home.deleteOrg(key, name, p, ctx);
    await this.removeDocFiles(docIds);
    return id;
  }

  async deleteUser(userId: number, p: Principal, body: unknown): Promise<null> {
    const { docIds } = await this.home.deleteUser(userId, p, body);
    await this.removeDocFiles(docIds);
    return null;
  }

  /**
   * First-start set-up: the default user with personal org and an API key. Returns the key only
   * when one was created or set now (so that start-up can print it once).
   */
  async ensureDefaultUser(email: string, name: string, apiKey?: string): Promise<{ user: User; apiKey: string | null }> {
    const existing = await this.store.getUserByEmail(email);
    const user = existing ?? (await this.home.ensureUser(email, name));
    if (apiKey) {
      const current = await this.store.getUserByApiKeyHash(hashApiKey(apiKey));
      if (current?.id === user.id) return { user, apiKey: null };
      return { user, apiKey: await this.home.setApiKey(user.id, apiKey) };
    }
    if (!existing || !user.apiKeyPrefix) return { user, apiKey: await this.home.setApiKey(user.id) };
    return { user, apiKey: null };
  }

  async close(): Promise<void> {
    for (const id of [...this.openDocs.keys()]) await this.closeDoc(id);
    await this.sqlPool?.close();
    this.sqlPool = null;
    if (this.opts.leases) await (await this.opts.leases).close?.();
    await this.store.close();
  }
}
