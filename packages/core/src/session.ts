/**
 * The engine as one user sees it: every call is checked exactly as the same call over HTTP is
 * (the same `HomeService` and `Engine.docAccess` checks, with the same errors), so an app that
 * embeds gristlite for several users gets Grist's sharing rules without writing its own.
 *
 * `Engine.openDoc` and `Engine.home`/`Engine.store` stay available for trusted code (they check
 * nothing, or take the principal on every call); a `Session` is the convenient, safe default.
 */
import type {Engine} from './engine.js';
import {Forbidden, HeldElsewhere, ServiceUnavailable} from './errors.js';
import type {OrgContext, Principal} from './home/principal.js';
import type {BasicRole, Doc, Org, Role, Workspace} from './home/types.js';
import type {
  ApiRecord,
  ApplyResult,
  ColumnInfo,
  ColumnSpec,
  RecordQuery,
  TableInfo,
  TableSpec,
  UpsertOptions,
  UpsertRecord,
  UpsertResult,
} from './doc/api-types.js';
import type {GristDoc} from './doc/gristdoc.js';
import type {CellValue} from './doc/types.js';
import {checkRecords} from './doc/bodies.js';
import type {SqlResult} from './sql/index.js';

/** A record's fields by column id, as the REST API takes and returns them. */
export type Fields = Record<string, CellValue>;

/** A new document's home record (what `POST /api/workspaces/{wid}/docs` takes). */
export interface NewDocBody {
  /** The document's name (required, as in Grist). */
  name: string;
  /** A unique alias usable in place of the id (default: a prefix of the id). */
  urlId?: string | null;
  isPinned?: boolean;
  /** Grist's document options (`description`, `icon`, `openMode`, ...). */
  options?: Record<string, unknown> | null;
  /** `"template"` or `"tutorial"`, or null for an ordinary document. */
  type?: 'template' | 'tutorial' | null;
}

/** Options of `Session.runSql`. */
export interface SqlOptions {
  /** Statement arguments for `?` / `?NNN` placeholders. */
  args?: unknown[];
  /** Timeout, at most the engine's (default: the engine's). */
  timeoutMs?: number;
}

type Need = 'viewers' | 'editors' | 'owners';

/**
 * One user's view of the engine. Make one with `engine.as(principal)` or
 * `await engine.forUser(email)`; it is cheap and holds no resources.
 */
export class Session {
  /**
   * @param engine the engine every call goes through
   * @param principal who acts (see `HomeService.principalFor`)
   * @param org the org a request would name (`/o/<domain>/`), or null; it changes which
   *   documents a urlId finds, as over HTTP
   */
  constructor(
    readonly engine: Engine,
    readonly principal: Principal,
    readonly org: OrgContext = null,
  ) {}

  /** The user's personal org (Grist's "Personal" site). */
  async personalOrg(): Promise<Org> {
    const org = await this.engine.store.getPersonalOrg(this.principal.user.id);
    if (!org) throw new Forbidden(`${this.principal.user.email} has no personal org`);
    return org;
  }

  /** The user's own "Home" workspace in their personal org, where Grist puts new documents. */
  async personalWorkspace(): Promise<Workspace> {
    const [home] = await this.engine.store.listWorkspaces((await this.personalOrg()).id);
    if (!home) throw new Forbidden(`${this.principal.user.email} has no personal workspace`);
    return home;
  }

  /** Creates a document (home record and `.grist` file) in a workspace the user may add to; returns its id. */
  createDoc(workspaceId: number, doc: NewDocBody): Promise<string> {
    return this.engine.createDoc(workspaceId, this.principal, {...doc});
  }

  /** A document the user may view, by id or urlId; writes through it also need editor rights. */
  async doc(docIdOrUrlId: string): Promise<SessionDoc> {
    const {doc, role} = await this.engine.docAccess(docIdOrUrlId, this.principal, this.org, 'viewers');
    return new SessionDoc(this, doc, role as Role);
  }

  /** Read-only SQL on a document the user may view, in the sandboxed pool, on the user's share of it. */
  async runSql(docIdOrUrlId: string, sql: string, opts: SqlOptions = {}): Promise<SqlResult> {
    const {doc, role} = await this.engine.docAccess(docIdOrUrlId, this.principal, this.org, 'viewers');
    const user = this.principal.anonymous ? 'anonymous' : String(this.principal.user.id);
    const engine = this.engine;
    return engine.inScope(async () => {
      // Several machines: the file is current only on the worker that holds the document.
      const holder = await engine.claimDoc(doc.id);
      if (holder) throw new HeldElsewhere(holder);
      const open = engine.openDoc(doc.id);
      const access = open.accessFor(this.principal, role);
      // SQL sees every row and column: only for those who may copy everything (as over HTTP).
      if (access && !access.canCopyEverything()) throw new Forbidden('insufficient document access');
      return engine.runSql(doc.id, sql, opts.args ?? null, opts.timeoutMs, {user});
    });
  }
}

/**
 * A document as one user may use it. Each call checks access again (a share can be withdrawn
 * between calls) and writes with the user's role, so metadata rules apply as over HTTP.
 */
export class SessionDoc {
  constructor(
    private readonly session: Session,
    readonly meta: Doc,
    readonly role: Role | BasicRole,
  ) {}

  /** The document's id. */
  get id(): string {
    return this.meta.id;
  }

  /**
   * Runs `fn` on the open document as one request (Engine.inScope): checked access, the document
   * kept open meanwhile, and in a several-machine deployment its commits durable before the answer.
   */
  private use<T>(need: Need, fn: (grist: GristDoc, role: 'owners' | 'editors') => T): Promise<T> {
    const {engine, principal, org} = this.session;
    return engine.inScope(async () => {
      const {doc, role} = await engine.docAccess(this.meta.id, principal, org, need);
      if (await engine.claimDoc(doc.id)) {
        throw new ServiceUnavailable('Document is open in another process; use the HTTP API to reach it');
      }
      const open = engine.openDoc(doc.id);
      const access = open.accessFor(principal, role);
      if (need !== 'viewers') open.replica?.checkWritable();
      return fn(open.grist.as(access), role === 'owners' ? 'owners' : 'editors');
    });
  }

  /** Tables, as `GET /tables` lists them. */
  listTables(): Promise<TableInfo[]> {
    return this.use('viewers', (grist) => grist.listTables());
  }

  /** A table's columns, as `GET /columns` lists them. */
  listColumns(tableId: string, opts: {hidden?: boolean} = {}): Promise<ColumnInfo[]> {
    return this.use('viewers', (grist) => grist.listColumns(tableId, opts));
  }

  /** Records with optional filter, sort and limit, as `GET /records` answers. */
  fetchRecords(tableId: string, query: RecordQuery = {}): Promise<ApiRecord[]> {
    return this.use('viewers', (grist) => grist.fetchRecords(tableId, query).records);
  }

  /** Adds tables (editors); returns their ids. */
  addTables(tables: TableSpec[]): Promise<string[]> {
    // Schema changes follow Grist's SchemaEdit rule, which editors pass (as over HTTP).
    return this.use('editors', (grist) => grist.addTables(tables).map((t) => t.id));
  }

  /** Adds columns to a table (editors); returns their ids. */
  addColumns(tableId: string, columns: ColumnSpec[]): Promise<string[]> {
    return this.use('editors', (grist) => grist.addColumns(tableId, columns).map((c) => c.id));
  }

  /** Adds records (editors); returns their row ids. */
  addRecords(tableId: string, records: Fields[]): Promise<number[]> {
    return this.use('editors', (grist, role) => {
      // Checked after access, as POST /records checks `{records: [{fields}]}`.
      checkRecords('NewRecord', Array.isArray(records) ? records.map((fields) => ({fields})) : records, 'records');
      return grist.addRecords(tableId, records, {role});
    });
  }

  /** Updates records by id (editors). */
  updateRecords(tableId: string, records: Array<{id: number; fields: Fields}>): Promise<void> {
    return this.use('editors', (grist, role) => {
      checkRecords('Record', records, 'records');
      grist.updateRecords(tableId, records, {role});
    });
  }

  /** Add-or-update keyed on `require` (editors), as `PUT /records`. */
  upsertRecords(
    tableId: string,
    records: UpsertRecord[],
    opts: Omit<UpsertOptions, 'role'> = {},
  ): Promise<UpsertResult> {
    return this.use('editors', (grist, role) => {
      checkRecords('AddOrUpdateRecord', records, 'records');
      return grist.upsertRecords(tableId, records, {...opts, role});
    });
  }

  /** Removes records by id (editors). */
  removeRecords(tableId: string, ids: number[]): Promise<void> {
    return this.use('editors', (grist, role) => {
      grist.removeRecords(tableId, ids, {role});
    });
  }

  /** Applies Grist user actions in one transaction (editors), as `POST /apply`. */
  applyUserActions(actions: unknown[][]): Promise<ApplyResult> {
    return this.use('editors', (grist, role) => grist.applyUserActions(actions, {role}));
  }

  /** Read-only SQL on this document, as `Session.runSql`. */
  runSql(sql: string, opts: SqlOptions = {}): Promise<SqlResult> {
    return this.session.runSql(this.meta.id, sql, opts);
  }
}
