/**
 * The embeddable engine: a home store, the document files in a data directory, and the services
 * that the http layer (or an embedding app) calls. No HTTP and no process globals here.
 *
 * One thing: the table of open documents. Each method finds, opens, holds, releases or closes
 * documents under the table's rules (the LRU cap and idle timeout, request scopes that pin what
 * they opened, leases, recovery mode, webhook resumption), or is a home operation that has to
 * close or remove open documents as it goes; split, the table's private state would be shared by
 * several files. Its options are options.ts.
 */
import {historySettingsFromEnv, type HistorySettings} from '../doc/history/index.js';
import {type DataDirLock, lockDataDir} from '../host/index.js';
import {AsyncLocalStorage} from 'node:async_hooks';
import {
  closeSync,
  mkdirSync,
  openSync,
  linkSync,
  readFileSync,
  readdirSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import {createHmac, randomBytes} from 'node:crypto';
import {rmSync} from 'node:fs';
import {join} from 'node:path';
import {backupDoc} from '../export/backup.js';
import Database from 'better-sqlite3';
import {createDocFile} from '../doc/index.js';
import {type DocUrl, GristDoc} from '../doc/gristdoc.js';
import {removeSqliteFiles} from '../doc/files.js';
import {makeId} from '../base/index.js';
import {intFromEnv, intSetting} from '../base/index.js';
import {type BudgetSettings, DEFAULT_BUDGET} from '@gristlite/formula';
import {DEFAULT_AGGREGATE_MAX_GROUPS} from '../doc/aggregate/index.js';
import {DEFAULT_WHERE_MAX_CHARS, DEFAULT_WHERE_MAX_MSEC, DEFAULT_WHERE_MAX_ROWS} from '../doc/where/index.js';
import {descriptorLimit, maxOpenDocsFor} from '../host/index.js';
import {
  ApiError,
  BadRequest,
  EngineClosed,
  HeldElsewhere,
  NotFound,
  ServiceUnavailable,
  resourceShortage,
} from '../base/index.js';
import {attachWebhooks, deliveryOptionsFromEnv, queueSize, webhookPolicyFromEnv} from '../webhooks/index.js';
import {OUTBOX_TABLE} from '../webhooks/schema.js';
import {type BoundedStatements, runBounded} from '../sql/bounded.js';
import {
  DEFAULT_MAX_BYTES,
  DEFAULT_MAX_ROWS,
  SqlPool,
  sqlPoolSettingsFromEnv,
  sqlTimeoutFromEnv,
  type SqlCaller,
  type SqlResult,
} from '../sql/index.js';
import type {OrgContext, Principal} from '../home/principal.js';
import {HomeService, hashApiKey, orgSettingsFromEnv} from '../home/service.js';
import {SqliteHomeStore} from '../home/sqlite.js';
import type {Doc, HomeStore, Org, Role, User} from '../home/types.js';
import {docPageUrl, publicUrlFromEnv} from '../home/urls.js';
import {ChangeFeeds, feedSettingsFromEnv, type SubscribeOptions, type Subscription} from '../feed/index.js';
import type {FeedSource} from '../feed/docfeed.js';
import {type ImportSettings, importSettingsFromEnv} from '../import/settings.js';
import {ReadCache} from '../doc/readcache.js';
import {OpenDocument} from './opendoc.js';
import {attachmentStoresFrom, type EngineOptions, type OrgUsageSummary} from './options.js';

export type {EngineOptions, OrgUsageSummary} from './options.js';
import {Session} from './session.js';
import {Cluster} from '../cluster/index.js';
import {CursorCodec} from '../doc/cursor.js';
import {Idempotency} from '../doc/idempotency.js';
import type {AttachmentStores} from '../attachments/external.js';
import {carryAttachmentFiles} from '../attachments/copy.js';
import {attachmentBytes} from '../attachments/store.js';

/** An open document (see `OpenDocument`); the old name, kept for callers. */
export type OpenDoc = OpenDocument;

/**
 * Opens (or reads the schema of) a document file, turning what is wrong with the file itself into a
 * clear answer: a home record whose file is gone is 404, a file that is not a Grist document is 400.
 * SQLite says SQLITE_CANTOPEN both for a missing file and for a process out of descriptors: a
 * plain open() of the file tells them apart, and running out of descriptors is a 503.
 */
function openDocFile<T>(path: string, open: () => T): T {
  try {
    return open();
  } catch (e) {
    const shortage = resourceShortage(e);
    if (shortage) throw shortage;
    const code = (e as {code?: string}).code;
    if (
      code === 'SQLITE_CANTOPEN' ||
      (code ?? '').startsWith('SQLITE_IOERR') ||
      (e instanceof TypeError && /Cannot open database/.test(e.message))
    ) {
      try {
        closeSync(openSync(path, 'r'));
      } catch (probe) {
        if ((probe as {code?: string}).code === 'ENOENT') throw new NotFound('Document file not found');
        throw resourceShortage(probe) ?? e;
      }
      // The file is there and readable: SQLite could not get the descriptors it needs (WAL, shm).
      throw new ServiceUnavailable('The document cannot be opened right now (too many open files?); try again later');
    }
    if (
      code === 'SQLITE_NOTADB' ||
      code === 'SQLITE_CORRUPT' ||
      (code === 'SQLITE_ERROR' && /no such (table|column)/.test((e as Error).message))
    ) {
      throw new BadRequest(`Document file is not a valid Grist document: ${(e as Error).message}`);
    }
    throw e;
  }
}

/** An open document and who is using it. */
interface DocEntry {
  doc: OpenDoc;
  /** Requests (scopes) and explicit holds using it: never closed while above 0. */
  holds: number;
  lastUsed: number;
  /** Closed as soon as no request holds it (a forced reload, a replaced content). */
  reload?: boolean;
}

/** Does this document's outbox hold events? A short read-only look, without opening it for good. */
function hasPendingEvents(path: string): boolean {
  const db = new Database(path, {readonly: true, fileMustExist: true});
  try {
    if (!db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?`).get(OUTBOX_TABLE)) return false;
    return db.prepare(`SELECT 1 FROM ${OUTBOX_TABLE} LIMIT 1`).get() !== undefined;
  } finally {
    db.close();
  }
}

/** Something cached per open document that must be released when the document goes away. */
export interface Closeable {
  /** Releases it. */
  close(): void | Promise<void>;
}

/** The engine: the home store, the open documents (an LRU with a cap and an idle timeout), the SQL pool and webhook delivery. Open one with `Engine.open`; `as(principal)` gives a checked `Session`. */
export class Engine {
  // Doc ids come from makeId(); the check in docPath keeps paths inside the data directory.
  private readonly closers: ((docId: string) => void | Promise<void>)[] = [];
  /** Open documents, least recently used first (Map order). */
  private readonly openDocs = new Map<string, DocEntry>();
  /** Closes in progress (a lease is released at their end): a new claim waits for them. */
  private readonly closing = new Map<string, Promise<void>>();
  /** Docs whose lease was taken by claimDoc and not yet opened, with when. */
  private readonly claimed = new Map<string, number>();
  /** Docs closed (or found at start) with webhook events waiting: reopened when there is room. */
  private readonly resumeQueue = new Set<string>();
  private resuming = false;
  private readonly scopes = new AsyncLocalStorage<Set<DocEntry>>();
  private readonly sweeper: NodeJS.Timeout;
  private closed = false;
  private sqlPool: SqlPool | null = null;
  /** Answers of recent record reads of every open document, 64 MB at most (doc/readcache.ts). */
  private readonly readCache = new ReadCache(64 * 1024 * 1024);
  /** Formula budgets of every document this engine opens. */
  private readonly formulaBudget: Partial<BudgetSettings>;
  private readonly whereSettings: {maxChars?: number; maxRows?: number};
  /** How documents record their action history (D120; `EngineOptions.history`). */
  readonly historySettings: HistorySettings;
  /** Failed webhook POST attempts of every document since the engine started (metrics). */
  private webhookFailures = 0;
  readonly maxOpenDocs: number;
  /** The descriptor limit `maxOpenDocs` was derived from (null: unknown). */
  readonly descriptorLimit: number | null;
  readonly docIdleMs: number;
  /** The server's public URL (EngineOptions.publicUrl), without a trailing slash; null when unset. */
  readonly publicUrl: string | null;
  /** Read (and checked) at start, so that a bad setting stops start-up, not the first SQL request. */
  private readonly sqlSettings: ConstructorParameters<typeof SqlPool>[0];
  /** Whether statements SQLite proves bounded skip the pool (GRISTLITE_SQL_INLINE, default on). */
  private readonly sqlInline: boolean;
  /** Their verdicts, per document connection. */
  private readonly boundedSql = new WeakMap<Database.Database, BoundedStatements>();
  /** Set in a several-machine deployment (EngineOptions.cluster). */
  readonly cluster: Cluster | null;
  /** The external attachment stores documents may use (none unless configured). */
  readonly attachmentStores: AttachmentStores;

  private constructor(
    readonly dataDir: string,
    readonly store: HomeStore,
    readonly home: HomeService,
    private readonly opts: EngineOptions,
    attachmentStores: AttachmentStores,
  ) {
    const env = opts.env ?? {};
    // Each open document costs 3 descriptors (file, WAL, shm) and about 0.5 MB (issue 11): the cap
    // leaves room under the descriptor limit (issue 24, fdlimit.ts).
    this.descriptorLimit = opts.descriptorLimit !== undefined ? opts.descriptorLimit : descriptorLimit();
    this.maxOpenDocs = maxOpenDocsFor(
      opts.maxOpenDocs ?? intSetting(env, 'GRISTLITE_MAX_OPEN_DOCS', 1),
      this.descriptorLimit,
    );
    this.docIdleMs = opts.docIdleMs ?? intFromEnv(env, 'GRISTLITE_DOC_IDLE_MSEC', 5 * 60_000, 1);
    this.formulaBudget = opts.formulaBudget ?? {
      maxCellMs: intFromEnv(env, 'GRISTLITE_FORMULA_CELL_MSEC', DEFAULT_BUDGET.maxCellMs, 1),
      maxRecalcMs: intFromEnv(env, 'GRISTLITE_FORMULA_RECALC_MSEC', 30_000, 1),
    };
    this.whereSettings = opts.where ?? {
      maxChars: intFromEnv(env, 'GRISTLITE_WHERE_MAX_CHARS', DEFAULT_WHERE_MAX_CHARS, 1),
      maxRows: intFromEnv(env, 'GRISTLITE_WHERE_MAX_ROWS', DEFAULT_WHERE_MAX_ROWS, 1),
      maxGroups: intFromEnv(env, 'GRISTLITE_AGGREGATE_MAX_GROUPS', DEFAULT_AGGREGATE_MAX_GROUPS, 1),
      maxMs: intFromEnv(env, 'GRISTLITE_WHERE_MAX_MSEC', DEFAULT_WHERE_MAX_MSEC, 1),
    };
    this.historySettings = opts.history ?? historySettingsFromEnv(env);
    this.publicUrl =
      opts.publicUrl !== undefined
        ? publicUrlFromEnv({GRISTLITE_PUBLIC_URL: opts.publicUrl ?? ''})
        : publicUrlFromEnv(env);
    this.attachmentStores = attachmentStores;
    this.idempotency = new Idempotency({
      maxKeys: intFromEnv(env, 'GRISTLITE_IDEMPOTENCY_MAX_KEYS', 10_000, 1),
      maxAnswerBytes: intFromEnv(env, 'GRISTLITE_IDEMPOTENCY_MAX_ANSWER_BYTES', 1024 * 1024, 0),
    });
    const {inline, ...sql} = sqlPoolSettingsFromEnv(env);
    this.sqlInline = inline;
    this.sqlSettings = {
      ...sql,
      size: opts.sqlWorkers ?? sql.size,
      defaultTimeoutMs: opts.sqlTimeoutMs ?? sqlTimeoutFromEnv(env),
      onShortage: () => this.closeIdle(),
    };
    this.onDocRemoved((docId) => this.removeOpenDoc(docId));
    this.importSettings = importSettingsFromEnv(env);
    this.feeds = new ChangeFeeds(
      feedSettingsFromEnv(env),
      (docId) => {
        const entry = this.openDocs.get(docId);
        return entry ? feedSource(entry.doc) : null;
      },
      (e) => this.reportError(e, 'a change subscriber'),
    );
    this.cluster = opts.cluster
      ? new Cluster(opts.cluster, {
          docPath: (id) => this.docPath(id),
          drop: (id, discard) => this.dropDoc(id, discard),
          onError: (e, what) => this.reportError(e, what),
          localDocs: () => {
            const dir = join(dataDir, 'docs');
            const ids = readdirSync(dir)
              .filter((n) => /^[A-Za-z0-9_-]+\.grist$/.test(n))
              .map((n) => ({id: n.slice(0, -'.grist'.length), at: statSync(join(dir, n)).mtimeMs}));
            return ids.sort((x, y) => x.at - y.at).map((x) => x.id);
          },
        })
      : null;
    this.sweeper = setInterval(() => this.sweep(), Math.min(30_000, Math.max(20, this.docIdleMs / 2)));
    this.sweeper.unref();
  }

  private cursorCodec: CursorCodec | null = null;

  /** Change feeds of documents with subscribers (beyond Grist: feed/). */
  readonly feeds: ChangeFeeds;

  /** Bounds of imports into tables and of XLSX/JSON files (GRISTLITE_IMPORT_*). */
  readonly importSettings: ImportSettings;

  /**
   * Subscribes a caller to an open document's committed changes, filtered by what they may read
   * (their role now, rechecked every GRISTLITE_FEED_RECHECK_MSEC; the document's rules at each
   * event). `SessionDoc.subscribe` and `GET /api/docs/{doc}/changes` use it; the caller has
   * checked viewer access and opened the document.
   */
  subscribeChanges(
    open: OpenDoc,
    principal: Principal,
    role: Role | null,
    org: OrgContext,
    opts: SubscribeOptions & {linkKey?: Record<string, string>} = {},
  ): Subscription {
    const docId = open.id;
    // Broken rules refuse the subscription now, as they refuse reads.
    const guard = open.accessFor(principal, role, {linkKey: opts.linkKey});
    if (opts.where !== undefined && opts.tableId === undefined) {
      throw new BadRequest('A where condition on changes needs the table it is about (table=...)');
    }
    // The table and condition as GET /records?where= checks them for this caller (400, 403, 404).
    if (opts.tableId !== undefined) open.grist.as(guard).checkWhere(opts.tableId, opts.where ?? 'True');
    let current = role;
    return this.feeds.subscribe(
      docId,
      {
        guard: () => {
          const doc = this.openDocs.get(docId)?.doc;
          if (!doc) throw new ServiceUnavailable('The document is not open');
          return doc.accessFor(principal, current, {linkKey: opts.linkKey});
        },
        recheck: async () => {
          current = (await this.docAccess(docId, principal, org, 'viewers')).role;
        },
        identity: JSON.stringify([principal.anonymous ? null : principal.user.id, principal.docKey?.id, opts.linkKey]),
      },
      opts,
    );
  }

  /** Idempotency-Key requests in flight, and the keys kept in documents (idempotency.ts). */
  readonly idempotency: Idempotency;

  /**
   * For a request with an Idempotency-Key, once its document is open and access checked: throws
   * `Replay` with the kept answer of the same request made before, 409/422 as the draft says, or
   * claims the key for this request (`fingerprint`: requestFingerprint).
   */
  claimIdempotent(doc: OpenDoc, fingerprint: string): void {
    this.idempotency.claim(doc.id, doc.db, fingerprint);
  }

  /**
   * Seals and opens pagination cursors. Every worker of a deployment, and every process on one data
   * directory, has the same key, so a cursor made by one is followed on another (and after a restart).
   */
  get cursors(): CursorCodec {
    if (this.cursorCodec) return this.cursorCodec;
    let key = this.opts.cursorKey;
    if (!key && this.cluster) {
      // Every worker derives the same key from the deployment's secret (loaded when placement starts).
      const secret = this.cluster.placement.secret;
      if (!secret) throw new ServiceUnavailable('The deployment secret is not loaded yet; try again later');
      key = createHmac('sha256', secret).update('gristlite pagination cursors').digest();
    }
    if (!key) {
      const path = join(this.dataDir, 'cursor.key');
      // Written aside and linked into place, so a process starting alongside never reads half a key.
      const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}`;
      writeFileSync(tmp, randomBytes(32).toString('hex'), {mode: 0o600});
      try {
        linkSync(tmp, path);
      } catch (e) {
        if ((e as {code?: string}).code !== 'EEXIST') throw e;
      } finally {
        unlinkSync(tmp);
      }
      key = Buffer.from(readFileSync(path, 'utf8').trim(), 'hex');
    }
    this.cursorCodec = new CursorCodec(key);
    return this.cursorCodec;
  }

  /** Opens an engine on a data directory (creating it and the home database if needed). */
  static async open(opts: EngineOptions): Promise<Engine> {
    mkdirSync(join(opts.dataDir, 'docs'), {recursive: true});
    // Settings first: a bad one stops start-up before anything is opened.
    const attachmentStores = attachmentStoresFrom(opts, opts.env ?? {});
    const lock = opts.lockDataDir ? lockDataDir(opts.dataDir) : null;
    let engine: Engine;
    try {
      const store = opts.home ?? new SqliteHomeStore(join(opts.dataDir, 'home.sqlite3'));
      const home = await HomeService.create(store, opts.orgs ?? orgSettingsFromEnv(opts.env ?? {}));
      engine = new Engine(opts.dataDir, store, home, opts, attachmentStores);
    } catch (e) {
      lock?.release();
      throw e;
    }
    engine.dataDirLock = lock;
    // With a cluster, the local files are a cache: events of documents held elsewhere are theirs;
    // documents whose holder is gone are adopted instead (opened as webhook resumes are).
    if ((opts.resumeWebhooks ?? true) && !opts.cluster) engine.resumeWebhooksAtStart();
    if (engine.cluster) {
      // A request routed to a crashed holder starts the takeover before its access check (as
      // adoption would, opening it as adoption does: its webhook events resume).
      const cluster = engine.cluster;
      cluster.takeOver = async (id) => {
        if ((await engine.claimDoc(id)) === null && !engine.closed && cluster.usesFile(id)) engine.openDoc(id);
      };
    }
    if ((opts.resumeWebhooks ?? true) && engine.cluster) {
      engine.cluster.startAdoption((id) => {
        engine.resumeQueue.add(id);
        engine.pumpResume();
      }, engine.cluster.leaseMs);
    }
    return engine;
  }

  /**
   * Makes sure this process may open the document. Returns null when it may (it holds the lease, or
   * there are no leases), otherwise the URL of the process that holds it.
   */
  async claimDoc(docId: string): Promise<string | null> {
    if (this.cluster) return this.claimInCluster(docId, this.cluster);
    const open = this.openDocs.get(docId);
    if (open) {
      this.holdInScope(open); // so that it stays open (and leased) until the request's openDoc
      return null;
    }
    if (!this.opts.leases) return null;
    await this.closing.get(docId);
    const leases = await this.opts.leases;
    for (let attempt = 0; attempt < 3; attempt++) {
      if (await leases.acquire(docId)) {
        if (!this.openDocs.has(docId)) this.claimed.set(docId, Date.now());
        return null;
      }
      const holder = (await leases.holder?.(docId)) ?? null;
      if (holder) return holder;
      // The holder let go between the two calls: try again.
    }
    throw new ApiError(503, 'Document in flux - try again later');
  }

  /** claimDoc in a several-machine deployment: held here (restored if need be), or the holder's address. */
  private async claimInCluster(docId: string, cluster: Cluster): Promise<string | null> {
    let open = this.openDocs.get(docId);
    if (open?.doc.replica?.failed) {
      // Its writes can no longer be made durable: rebuilt from the record once nobody uses it.
      if (open.holds > 0) throw new ServiceUnavailable('Document in flux - try again later');
      await this.closeDoc(docId);
      open = undefined;
    }
    if (open && cluster.holds(docId)) {
      this.holdInScope(open);
      return null;
    }
    await this.closing.get(docId);
    const holder = await cluster.claim(docId, this.openDocs.has(docId));
    if (holder) return holder;
    const now = this.openDocs.get(docId);
    if (now) this.holdInScope(now);
    return null;
  }

  /**
   * Runs `fn` as one request: every document it opens (openDoc, claimDoc) stays open until `fn`
   * settles, whatever the LRU cap and idle timeout say. The http layer runs each request so.
   * In a several-machine deployment, what the request committed is durable in the action log
   * before `fn`'s result is returned (else it throws 503 and nothing is acknowledged).
   */
  inScope<T>(fn: () => Promise<T>): Promise<T> {
    this.assertOpen();
    const held = new Set<DocEntry>();
    return this.scopes.run(held, async () => {
      try {
        const result = await fn();
        await this.syncScope(held);
        await this.syncSharesOf(held);
        return result;
      } catch (e) {
        // A failed request may have committed too (a write then a failing step): ship it anyway,
        // so the log never falls behind the file; its own error is the answer.
        await this.syncScope(held).catch(() => {});
        throw e;
      } finally {
        for (const entry of held) this.release(entry);
      }
    });
  }

  private async syncScope(held: Set<DocEntry>): Promise<void> {
    if (!this.cluster) return;
    for (const entry of held) await entry.doc.replica?.sync();
  }

  /** Opens a document and keeps it open until `fn` settles (for embedders and background work). */
  async withDoc<T>(docId: string, fn: (doc: OpenDoc) => T | Promise<T>): Promise<T> {
    return this.inScope(async () => {
      const holder = this.cluster ? await this.claimDoc(docId) : null;
      if (holder) throw new HeldElsewhere(holder);
      return fn(this.openDoc(docId));
    });
  }

  private holdInScope(entry: DocEntry): void {
    const scope = this.scopes.getStore();
    if (scope && !scope.has(entry)) {
      scope.add(entry);
      entry.holds++;
    }
  }

  private release(entry: DocEntry): void {
    entry.holds--;
    entry.lastUsed = Date.now();
    if (entry.holds === 0 && entry.reload && this.openDocs.get(entry.doc.id) === entry) {
      void this.closeDoc(entry.doc.id);
      return;
    }
    if (entry.holds === 0 && entry.doc.replica?.failed && this.openDocs.get(entry.doc.id) === entry) {
      void this.closeDoc(entry.doc.id);
      return;
    }
    if (entry.holds === 0 && this.openDocs.size > this.maxOpenDocs) this.trim();
  }

  /**
   * Grist's replace from another document: the content of `target` (open in the caller's scope)
   * becomes a copy of `sourceId`'s, made as a download makes it (private tables dropped, triggers
   * disabled) through a read-only connection, then written in one transaction; the target is
   * reopened once the request lets it go. Access is the caller's to check.
   */
  async replaceDocContent(target: OpenDoc, sourceId: string): Promise<void> {
    const dir = join(this.dataDir, 'tmp');
    mkdirSync(dir, {recursive: true});
    const tmp = join(dir, `replace-${randomBytes(12).toString('hex')}.grist`);
    try {
      const src = new Database(this.docPath(sourceId), {readonly: true, fileMustExist: true});
      try {
        await backupDoc(src, tmp);
      } finally {
        src.close();
      }
      await carryAttachmentFiles(tmp, this.attachmentStores, target.id, sourceId);
      target.replaceContent(tmp);
      this.feeds.reset(target.id, "The document's content was replaced");
    } finally {
      rmSync(tmp, {force: true});
    }
    await this.reloadDoc(target.id);
  }

  /**
   * Grist's recovery mode of a document (`POST /api/docs/{doc}/recover`), kept by this process as
   * Grist's DocManager keeps it, across reopenings: broken rules give way to Grist's emergency
   * rules (owners everything, others nothing), and rule writes are not checked.
   */
  setRecoveryMode(docId: string, on: boolean): void {
    if (on) this.recoveryDocs.add(docId);
    else this.recoveryDocs.delete(docId);
    const open = this.openDocs.get(docId)?.doc;
    if (open) open.grist.recoveryMode = on;
  }
  private readonly recoveryDocs = new Set<string>();

  /**
   * Grist's force-reload: closes the document here once no request holds it (at once when none
   * does), so that the next use opens it afresh: formulas and access rules are read again from the
   * file and webhook delivery restarts (waiting events resume with no request, as after a restart).
   * Resolves when it is closed, or at once when a request still holds it.
   */
  async reloadDoc(docId: string): Promise<void> {
    const entry = this.openDocs.get(docId);
    if (!entry) return;
    if (entry.holds > 0) {
      entry.reload = true;
      return;
    }
    await this.closeDoc(docId);
  }

  /**
   * The document's connection, opened on first use and kept (WAL, so SQL readers never block it)
   * until it is idle for GRISTLITE_DOC_IDLE_MSEC or the GRISTLITE_MAX_OPEN_DOCS least recently used
   * ones need its room. Inside `inScope` (every http request) it stays open until the scope ends;
   * outside, hold it with `withDoc` across any await.
   */
  openDoc(docId: string, opts: {docUrl?: DocUrl} = {}): OpenDoc {
    this.assertOpen();
    let entry = this.openDocs.get(docId);
    if (entry) {
      this.openDocs.delete(docId); // re-inserted below as the most recently used
    } else {
      const path = this.docPath(docId);
      const doc = this.retryOnShortage(() => this.openDocFresh(docId, path, opts.docUrl ?? null));
      entry = {doc, holds: 0, lastUsed: Date.now()};
      this.claimed.delete(docId);
    }
    entry.lastUsed = Date.now();
    this.openDocs.set(docId, entry);
    this.holdInScope(entry);
    if (this.openDocs.size > this.maxOpenDocs) this.trim(docId);
    return entry.doc;
  }

  /**
   * Runs `open`; when it fails for want of descriptors (a 503 from openDocFile), closes the least
   * recently used idle documents (1, 2, 4, ... 32 of them) and tries again; a 503 when none is left
   * to close or after 6 retries.
   */
  private retryOnShortage<T>(open: () => T): T {
    for (let attempt = 0; ; attempt++) {
      try {
        return open();
      } catch (e) {
        if (!(e instanceof ServiceUnavailable) || e instanceof HeldElsewhere || attempt >= 6) throw e;
        if (this.closeLeastRecentlyUsed(2 ** attempt) === 0) throw e;
      }
    }
  }

  /** Closes up to `n` idle documents, least recently used first, those with webhook events waiting last; returns how many. */
  private closeLeastRecentlyUsed(n: number): number {
    let closed = 0;
    for (const pass of [false, true]) {
      for (const [id, entry] of this.openDocs) {
        if (closed >= n) return closed;
        if (!this.closeable(entry) || (!pass && entry.doc.webhooks.delivery?.pending)) continue;
        void this.closeDoc(id);
        closed++;
      }
    }
    return closed;
  }

  private openDocFresh(docId: string, path: string, docUrl: DocUrl): OpenDoc {
    const grist = openDocFile(path, () =>
      GristDoc.open(path, {
        readCache: this.readCache,
        formulaBudget: this.formulaBudget,
        where: this.whereSettings,
        history: this.historySettings,
      }),
    );
    grist.beforeCommit = (db) => this.idempotency.beforeCommit(db);
    try {
      // Formulas gristlite never computed (a document from before it computed them) are computed
      // once, as Grist does on open, so that reads see current values (docs/decisions.md); with
      // the URL of the request that opens it (SELF_HYPERLINK), None when opened without one.
      if (grist.needsFormulaRecompute) {
        try {
          grist.as(null, null, {docUrl}).recomputeFormulas();
        } catch {
          // Rolled back: the document is served as stored; its next write computes again.
        }
      }
      return openDocFile(path, () => {
        grist.db.pragma('busy_timeout = 5000');
        // WAL with synchronous=NORMAL: never corrupts, survives a process crash; an OS crash or power
        // loss may drop the last commits (Grist's own "wal" mode; its default is less durable still).
        // GRISTLITE_SQLITE_SYNC=full fsyncs every commit instead (about +0.5 ms per write here).
        grist.db.pragma(
          `synchronous = ${(this.opts.env?.GRISTLITE_SQLITE_SYNC ?? '').toLowerCase() === 'full' ? 'FULL' : 'NORMAL'}`,
        );
        const env = this.opts.env ?? {};
        const policy = webhookPolicyFromEnv(env);
        const webhooks = attachWebhooks(grist.db, grist, {
          policy,
          ...deliveryOptionsFromEnv(env),
          docId,
          onFailure: () => {
            this.webhookFailures++;
          },
          onError: (e) => this.reportError(e, `webhook delivery of ${docId}`),
        });
        const replica = this.cluster?.replica(docId, grist.db);
        const open = new OpenDocument(docId, path, grist, webhooks, policy, replica, {
          stores: this.attachmentStores,
          // A transfer keeps the document open (and here) until it ends, as a request does; it is
          // not part of the request that started it (its Idempotency-Key).
          keepOpen: (fn) => this.idempotency.outside(() => this.withDoc(docId, fn)),
          onError: (e, what) => this.reportError(e, what),
        });
        grist.recoveryMode = this.recoveryDocs.has(docId);
        this.feeds.opened(docId, feedSource(open));
        return open;
      });
    } catch (e) {
      grist.close();
      throw e;
    }
  }

  /** SQL worker processes ready, and whether the spare is (diagnostics and tests). */
  get sqlWorkers(): {ready: number; spare: boolean} {
    return {ready: this.sqlPool?.pids.length ?? 0, spare: (this.sqlPool?.spares ?? 0) > 0};
  }

  /** SQL statements preempted since the engine opened (docs/sql.md, "Fairness"). */
  get sqlPreemptions(): number {
    return this.sqlPool?.preemptions ?? 0;
  }

  /** Number of documents open in this process (for diagnostics and tests). */
  get openDocCount(): number {
    return this.openDocs.size;
  }

  /** Gauges for metrics: open documents, SQL statements waiting, webhook events queued (open docs). */
  stats(): {
    openDocs: number;
    sqlQueued: number;
    /** SQL statements stopped to free a worker for another caller (docs/sql.md, "Fairness"). */
    sqlPreemptions: number;
    webhookQueued: number;
    webhookFailures: number;
    /** Several machines: log bytes not yet in a snapshot, the oldest such change's age, takeovers. */
    cluster: {logBytes: number; snapshotAgeSec: number; takeovers: number; damagedSnapshots: number} | null;
  } {
    let webhookQueued = 0;
    let logBytes = 0;
    let oldest = 0;
    for (const entry of this.openDocs.values()) {
      const r = entry.doc.replica;
      if (r) {
        logBytes += r.logBytesSinceSnapshot;
        if (r.unsnapshottedSince && (!oldest || r.unsnapshottedSince < oldest)) oldest = r.unsnapshottedSince;
      }
      try {
        if (entry.doc.webhooks.delivery) webhookQueued += queueSize(entry.doc.db);
      } catch {
        /* a document closing meanwhile */
      }
    }
    return {
      openDocs: this.openDocs.size,
      sqlQueued: this.sqlPool?.queued ?? 0,
      sqlPreemptions: this.sqlPreemptions,
      webhookQueued,
      webhookFailures: this.webhookFailures,
      cluster: this.cluster
        ? {
            logBytes,
            snapshotAgeSec: oldest ? (Date.now() - oldest) / 1000 : 0,
            takeovers: this.cluster.takeovers,
            damagedSnapshots: this.cluster.damagedSnapshots,
          }
        : null,
    };
  }

  /** May the document be closed now? Never while a request holds it or a webhook POST is in flight. */
  private closeable(entry: DocEntry): boolean {
    return entry.holds === 0 && !entry.doc.webhooks.delivery?.sending;
  }

  /** Closes least recently used documents until at most maxOpenDocs are open (those in use stay). */
  private trim(keep?: string): void {
    // First those with no webhook events waiting, then those whose delivery can resume later.
    for (const pass of [false, true]) {
      for (const [id, entry] of this.openDocs) {
        if (this.openDocs.size <= this.maxOpenDocs) return;
        if (id === keep || !this.closeable(entry) || (!pass && entry.doc.webhooks.delivery?.pending)) continue;
        void this.closeDoc(id);
      }
    }
  }

  /** Closes every idle document not in use (after running out of descriptors). */
  closeIdle(): void {
    for (const [id, entry] of this.openDocs) {
      if (this.closeable(entry) && !entry.doc.webhooks.delivery?.pending) void this.closeDoc(id);
    }
  }

  /**
   * Closes documents unused for docIdleMs. A document whose webhook events wait (its receiver is
   * down) stays open for delivery, unless other such documents wait for room: then they take turns.
   */
  private sweep(): void {
    const before = Date.now() - this.docIdleMs;
    for (const [id, entry] of this.openDocs) {
      if (entry.lastUsed > before || !this.closeable(entry)) continue;
      if (entry.doc.webhooks.delivery?.pending && this.resumeQueue.size === 0) continue;
      const replica = entry.doc.replica;
      if (replica?.dirty && !replica.failed) {
        // A snapshot first, so that whoever opens it next downloads no log (closed at the next sweep).
        replica.snapshot().catch((e) => this.reportError(e, `snapshot of ${id}`));
        continue;
      }
      void this.closeDoc(id);
    }
    // A lease claimed by a request that never opened the document (it failed) is given back.
    for (const [id, at] of this.claimed) if (at <= before) this.releaseLeaseLater(id);
    this.pumpResume();
  }

  /**
   * Closes a document here: stops its webhook delivery (events stay in the outbox; if some wait,
   * delivery resumes when there is room), closes the connection, and gives up the lease.
   */
  private closeDoc(docId: string, forget = false): Promise<void> {
    const entry = this.openDocs.get(docId);
    this.openDocs.delete(docId);
    let detached: Promise<void> | undefined;
    let shipped: Promise<boolean> | undefined;
    if (entry) {
      // What is committed is captured now (synchronously), before closing checkpoints the file.
      shipped = entry.doc.replica?.close();
      entry.doc.files.close();
      // The connection closes now, so its descriptors are free at once (closeIdle relies on it);
      // the delivery's lanes see it closed and end, leaving their events in the outbox.
      const pending = entry.doc.webhooks.delivery?.pending ?? false;
      detached = entry.doc.webhooks.detach();
      // With leases, another process may open the document next and its writes would never
      // reach this feed: subscribers are told to reconnect (they are forwarded to the holder).
      if (this.opts.leases || this.cluster) this.feeds.removed(docId, 'The document closed in this process; reconnect');
      else this.feeds.closedDoc(docId);
      entry.doc.grist.close();
      if (pending && !forget && !this.closed) this.resumeQueue.add(docId);
    }
    const prev = this.closing.get(docId) ?? Promise.resolve();
    const done = prev
      .then(async () => {
        await detached;
        if (forget) await this.sqlPool?.forget(this.docPath(docId));
        if (entry?.doc.replica) await this.cluster?.closed(docId, entry.doc.replica, (await shipped) === true);
        if (entry) await this.releaseLease(docId);
      })
      .catch((e) => this.reportError(e, `closing document ${docId}`));
    this.closing.set(docId, done);
    void done.then(() => {
      if (this.closing.get(docId) === done) this.closing.delete(docId);
      if (!forget) this.pumpResume();
    });
    return done;
  }

  private async releaseLease(docId: string): Promise<void> {
    // Reopened (or claimed again) meanwhile: the lease is in use again.
    if (!this.opts.leases || this.openDocs.has(docId) || this.claimed.has(docId)) return;
    await (await this.opts.leases).release(docId);
  }

  private releaseLeaseLater(docId: string): void {
    this.claimed.delete(docId);
    const prev = this.closing.get(docId) ?? Promise.resolve();
    const done = prev.then(() => this.releaseLease(docId)).catch(() => {});
    this.closing.set(docId, done);
    void done.then(() => this.closing.get(docId) === done && this.closing.delete(docId));
  }

  /**
   * The local copy is outdated or no longer ours (taken over elsewhere): closed, never released;
   * with `discard`, its file goes too once closed (kept while a request still uses it).
   */
  private async dropDoc(docId: string, discard: boolean): Promise<void> {
    const entry = this.openDocs.get(docId);
    if (entry) {
      entry.doc.replica?.fail(new Error('the document moved to another worker'));
      if (entry.holds > 0) return;
      await this.closeDoc(docId);
    }
    if (discard && !this.openDocs.has(docId) && !this.cluster?.usesFile(docId)) removeSqliteFiles(this.docPath(docId));
  }

  private async removeOpenDoc(docId: string): Promise<void> {
    this.resumeQueue.delete(docId);
    this.claimed.delete(docId);
    this.feeds.removed(docId);
    await this.closeDoc(docId, true);
  }

  /**
   * Issue 11 item 7: after a restart, documents with webhook events waiting deliver them with no
   * request. Each document file gets a short read-only look (the
   * connection is closed at once; 2000 docs took 1.4 s); those with events are queued and opened as the cap allows, and
   * the LRU closes them again once their outbox is empty and they are idle. Runs in the background.
   */
  resumeWebhooksAtStart(): Promise<void> {
    const dir = join(this.dataDir, 'docs');
    return (async () => {
      let names: string[];
      try {
        names = readdirSync(dir).filter((n) => n.endsWith('.grist'));
      } catch {
        return;
      }
      for (const name of names) {
        if (this.closed) return;
        const docId = name.slice(0, -'.grist'.length);
        if (!/^[A-Za-z0-9_-]+$/.test(docId) || this.openDocs.has(docId)) continue;
        let pending: boolean;
        try {
          pending = hasPendingEvents(join(dir, name));
        } catch {
          pending = true; // cannot tell read-only (e.g. a WAL to recover): the full open will
        }
        if (pending && (await this.store.getDoc(docId).catch(() => null))) {
          this.resumeQueue.add(docId);
          this.pumpResume();
        }
        await new Promise((r) => setImmediate(r)); // requests go first
      }
    })().catch((e) => this.reportError(e, 'resuming webhook delivery'));
  }

  /** Opens queued documents whose webhook events wait, while there is room under the cap. */
  private pumpResume(): void {
    if (this.resuming || this.closed) return;
    this.resuming = true;
    void (async () => {
      try {
        for (const docId of this.resumeQueue) {
          if (this.closed || this.openDocs.size >= this.maxOpenDocs) break;
          this.resumeQueue.delete(docId);
          if (this.openDocs.has(docId)) continue;
          try {
            // Takeovers that requests wait for go first (adoption has nobody waiting).
            if (this.cluster && !this.cluster.holds(docId)) await this.cluster.quiet();
            if (this.closed) break;
            // Another process holding the lease delivers them itself.
            if ((await this.claimDoc(docId)) !== null) continue;
            this.openDoc(docId);
          } catch (e) {
            if (e instanceof ServiceUnavailable) {
              this.resumeQueue.add(docId);
              break;
            }
            if (!(e instanceof ApiError)) this.reportError(e, `resuming webhook delivery of ${docId}`);
          }
        }
      } finally {
        this.resuming = false;
      }
    })();
  }

  /**
   * Access to a document for its data endpoints: the caller's role from the home store (SPEC §1.5
   * wording). What they may see and do inside it is the document's access rules'
   * (`OpenDocument.accessFor`), checked where the document is open.
   */
  async docAccess(key: string, p: Principal, ctx: OrgContext, need: 'viewers' | 'editors' | 'owners') {
    this.assertOpen();
    return this.home.docAccess(key, p, ctx, need);
  }

  /**
   * The document a share key reaches (issue 41; Grist's HomeDBManager.getDocImpl for `s.<key>`):
   * its home record and org, and the share's linkId. Grist gives a share caller editors' access
   * to the document, limited by the share's rules inside it (`OpenDocument.accessFor` with
   * `share`). 404 `Share not known` for an unknown key or a deleted document.
   */
  async shareAccess(shareKey: string): Promise<{doc: Doc; role: Role; org: Org; linkId: string}> {
    this.assertOpen();
    const share = shareKey ? await this.home.store.getShareByKey(shareKey) : null;
    const doc = share ? await this.home.store.getDoc(share.docId) : null;
    if (!share || !doc || doc.removedAt) throw new NotFound('Share not known');
    const ws = await this.home.store.getWorkspace(doc.workspaceId);
    if (!ws || ws.removedAt) throw new NotFound('Share not known');
    return {doc, role: 'editors', org: await this.home.access.orgOfDoc(doc), linkId: share.linkId};
  }

  /**
   * Makes the home store's copy of a document's shares match its `_grist_Shares` (Grist's
   * syncShares): a new linkId gets a new unguessable key (Grist's 22-character ids, 128 random
   * bits), a kept one keeps its key. Called when a request that opened the document or wrote to
   * its shares ends, and by the owners' share listing.
   */
  async syncShares(doc: OpenDoc): Promise<void> {
    doc.sharesChanged = false;
    const rows = doc.shareRows();
    try {
      await this.home.store.syncShares(
        doc.id,
        rows.map((r) => ({linkId: r.linkId, options: r.options})),
        makeId,
      );
    } catch (e) {
      doc.sharesChanged = true;
      throw e;
    }
  }

  private async syncSharesOf(held: Set<DocEntry>): Promise<void> {
    for (const entry of held) {
      if (entry.doc.sharesChanged && !entry.doc.replica?.failed) {
        // A document whose home record is gone (deleted in this request) has nothing to sync.
        if (!(await this.home.store.getDoc(entry.doc.id))) continue;
        await this.syncShares(entry.doc).catch((e) => this.reportError(e, `syncing the shares of ${entry.doc.id}`));
      }
    }
  }

  /**
   * Runs read-only SQL on a document in the sandboxed worker pool (see sql/). `caller.user` names
   * whose share of the pool it uses (GRISTLITE_SQL_MAX_PER_USER); pass the requesting user. On a
   * document open here, a statement SQLite proves bounded runs at once on its connection instead
   * (sql/bounded.ts): no deadline is needed, and the pool's hop would be most of its cost.
   */
  runSql(
    docId: string,
    sql: string,
    args: unknown[] | null = null,
    timeoutMs?: number,
    caller?: SqlCaller,
  ): Promise<SqlResult> {
    const open = this.sqlInline ? this.openDocs.get(docId)?.doc : undefined;
    if (open) {
      const caps = {
        maxRows: this.sqlSettings?.maxRows ?? DEFAULT_MAX_ROWS,
        maxBytes: this.sqlSettings?.maxBytes ?? DEFAULT_MAX_BYTES,
      };
      const answer = runBounded(this.boundedSql, open.db, sql, args, caps);
      if (answer) return answer;
    }
    this.sqlPool ??= new SqlPool(this.sqlSettings);
    return this.sqlPool.run(this.docPath(docId), sql, args, timeoutMs, caller);
  }

  /**
   * The URL of a document's page (in org `org`), which SELF_HYPERLINK() returns for formulas a
   * request computes: on the public URL when one is set, else on `requestBase` (the scheme and
   * host the request came with); null when neither is known (SELF_HYPERLINK then returns None).
   */
  docPageUrl(doc: Doc, org: Org, requestBase: string | null): string | null {
    const base = this.publicUrl ?? requestBase;
    return base ? docPageUrl(base, doc, org) : null;
  }

  /**
   * The engine as `principal` sees it: every call checked as over HTTP (see `Session`).
   * `org` is the org a request would name (`/o/<domain>/`), if any.
   */
  as(principal: Principal, org: OrgContext = null): Session {
    this.assertOpen();
    return new Session(this, principal, org);
  }

  /**
   * A session for the user with this email, created (with a personal org and its "Home"
   * workspace) if new, as a first login does in Grist.
   */
  async forUser(email: string, name = ''): Promise<Session> {
    this.assertOpen();
    const user = await this.home.ensureUser(email, name);
    return this.as(this.home.principalFor(user, true));
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
      const path = this.docPath(doc.id);
      // Out of descriptors, idle documents give theirs back (a half-made file is removed first).
      this.retryOnShortage(() => {
        try {
          createDocFile(path);
        } catch (e) {
          const shortage =
            resourceShortage(e) ??
            ((e as {code?: string}).code === 'SQLITE_CANTOPEN'
              ? new ServiceUnavailable(
                  'The document cannot be created right now (too many open files?); try again later',
                )
              : undefined);
          if (!shortage) throw e;
          removeSqliteFiles(path);
          throw shortage;
        }
      });
      await this.docFileCreated(doc.id);
    } catch (e) {
      await this.removeDocFiles([doc.id]).catch(() => {});
      await this.store.deleteDoc(doc.id);
      // SQLite says CANTOPEN when it runs out of descriptors for a new file in an existing directory.
      throw (
        resourceShortage(e) ??
        ((e as {code?: string}).code === 'SQLITE_CANTOPEN'
          ? new ServiceUnavailable('The document cannot be created right now (too many open files?); try again later')
          : e)
      );
    }
    return doc.id;
  }

  /**
   * A new document file is in place (created, imported, copied): in a several-machine deployment
   * it is published (held here, first snapshot recorded) before anyone is told it exists.
   */
  async docFileCreated(docId: string): Promise<void> {
    await this.cluster?.created(docId);
  }

  /**
   * Closes and removes the files of documents already deleted from the home store, and their
   * attachment files in every external store (Grist removes the document's pool from each).
   */
  async removeDocFiles(docIds: string[]): Promise<void> {
    for (const id of docIds) {
      for (const close of this.closers) await close(id);
      removeSqliteFiles(this.docPath(id));
      await this.cluster?.removed(id);
      for (const store of this.attachmentStores.stores) {
        await store
          .removePool(id)
          .catch((e) => this.reportError(e, `removing attachments of ${id} from ${store.label}`));
      }
    }
  }

  /** Deletes a document (home record and file) the principal owns. */
  async deleteDoc(key: string, p: Principal, ctx: OrgContext): Promise<string> {
    const id = await this.home.deleteDoc(key, p, ctx);
    await this.removeDocFiles([id]);
    return id;
  }

  /** Deletes a workspace with its documents (files too). */
  async deleteWorkspace(wid: number, p: Principal): Promise<number> {
    const {id, docIds} = await this.home.deleteWorkspace(wid, p);
    await this.removeDocFiles(docIds);
    return id;
  }

  /**
   * `GET /api/orgs/{org}/usage`, as Grist's getOrgUsageSummary answers a self-hosted site: no data
   * limits (every count 0) and the attachment bytes of its live documents, each read now (Grist
   * adds what each document last reported). On a cluster worker, documents another worker holds
   * are not counted (decision D75).
   */
  async orgUsage(key: string, p: Principal, ctx: OrgContext): Promise<OrgUsageSummary> {
    let totalBytes = 0;
    for (const docId of await this.home.usageDocs(key, p, ctx)) {
      try {
        totalBytes += await this.withDoc(docId, (doc) => attachmentBytes(doc.db));
      } catch (e) {
        if (!(e instanceof HeldElsewhere)) throw e;
      }
    }
    return {countsByDataLimitStatus: {approachingLimit: 0, gracePeriod: 0, deleteOnly: 0}, attachments: {totalBytes}};
  }

  /** Deletes an org with its workspaces and documents (files too). */
  async deleteOrg(key: string, name: string, p: Principal, ctx: OrgContext): Promise<number> {
    const {id, docIds} = await this.home.deleteOrg(key, name, p, ctx);
    await this.removeDocFiles(docIds);
    return id;
  }

  /** Deletes a user, their personal org and its documents (files too). */
  async deleteUser(userId: number, p: Principal, body: unknown): Promise<null> {
    const {docIds} = await this.home.deleteUser(userId, p, body);
    await this.removeDocFiles(docIds);
    return null;
  }

  /**
   * First-start set-up: the default user with personal org (unless GRIST_PERSONAL_ORGS=false) and an API key. Returns the key only
   * when one was created or set now (so that start-up can print it once).
   */
  async ensureDefaultUser(email: string, name: string, apiKey?: string): Promise<{user: User; apiKey: string | null}> {
    const existing = await this.store.getUserByEmail(email);
    const user = existing ?? (await this.home.ensureUser(email, name));
    if (apiKey) {
      const current = await this.store.getUserByApiKeyHash(hashApiKey(apiKey));
      if (current?.id === user.id) return {user, apiKey: null};
      return {user, apiKey: await this.home.setApiKey(user.id, apiKey)};
    }
    if (!existing || !user.apiKeyPrefix) return {user, apiKey: await this.home.setApiKey(user.id)};
    return {user, apiKey: null};
  }

  /** An unexpected error of background work, to the embedder's handler or the console. */
  private reportError(err: unknown, what: string): void {
    if (this.opts.onError) this.opts.onError(err, what);
    else console.error(`gristlite: ${what}`, err);
  }

  /** Throws `EngineClosed` once `close()` was called (instead of whatever a closed database would throw). */
  assertOpen(): void {
    if (this.closed) throw new EngineClosed();
  }

  /** Whether `close()` was called. */
  get isClosed(): boolean {
    return this.closed;
  }

  /** Closes every open document, the SQL pool and the home store; later calls fail with `EngineClosed`. */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.sweeper);
    this.feeds.close();
    this.resumeQueue.clear();
    for (const id of [...this.openDocs.keys()]) await this.closeDoc(id);
    await Promise.all(this.closing.values());
    await this.sqlPool?.close();
    this.sqlPool = null;
    if (this.opts.leases) await (await this.opts.leases).close?.();
    await this.cluster?.close();
    await this.attachmentStores.close();
    await this.store.close();
    this.dataDirLock?.release();
  }

  /** The data directory's lock, when this engine serves it alone (`lockDataDir`). */
  private dataDirLock: DataDirLock | null = null;
}

/** An open document as its change feed sees it. */
function feedSource(open: OpenDoc): FeedSource {
  return {
    grist: open.grist,
    hasRules: () => {
      try {
        return open.accessRuleSet() !== null;
      } catch {
        return true; // Broken rules: keep what filtering would need.
      }
    },
  };
}
