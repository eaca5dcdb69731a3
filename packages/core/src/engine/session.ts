/**
 * The embedding API (docs/embedding.md): `Session` (`engine.as(principal)`) for the home, and
 * `SessionDoc` for one document, each call checked as the same REST request would be.
 *
 * One thing: the REST API as method calls, a method per route, all passing through the one step
 * (`use`) that opens the document and checks the caller's access as the route does; the
 * session-parity tests pair each method with its route.
 */
import type {ChangesOptions, DocChange, Subscription} from '../feed/index.js';
import {DocTransaction, type DocTable, type RowShape, type TypedRecord} from './session-tables.js';
import {join} from 'node:path';
import type {AccessContext} from '../access/rules/context.js';
import type {AttachmentDownload, DownloadOptions, TableQuery} from '../attachments/index.js';
import type {Engine} from './engine.js';
import {Forbidden, HeldElsewhere, NotFound, ServiceUnavailable} from '../base/index.js';
import {exportFileBase, type TableSchema} from '../export/index.js';
import {orgUrlName} from '../home/urls.js';
import type {AccessDelta} from '../home/validate.js';
import type {OpenDocument} from './opendoc.js';
import type {
  AccessList,
  AttachmentList,
  CopyDocOptions,
  DocUpdateBody,
  GristDownloadOptions,
  NewAttachment,
  NewOrgBody,
  NewTrigger,
  NewWebhook,
  RemoveOptions,
  SessionDownload,
  TableExportOptions,
  TableSchemaExportOptions,
  TriggerPatch,
  WebhookPatch,
  WorkspaceBody,
  XlsxExportOptions,
} from './session-types.js';
import type {TriggerPendingRecord, TriggerRecord, WebhookFieldsInput, WebhookSummary} from '../webhooks/index.js';
import {actorOf, type OrgContext, type Principal} from '../home/principal.js';
import type {BasicRole, Doc, Org, Role, Workspace} from '../home/types.js';
import type {AggregateQuery, AggregateRecord} from '../doc/index.js';
import type {
  ApiRecord,
  ApplyResult,
  ColumnInfo,
  ColumnSpec,
  PageEnd,
  RecordQuery,
  TableInfo,
  TableSpec,
  UpsertOptions,
  UpsertRecord,
  UpsertResult,
} from '../doc/api-types.js';
import type {GristDoc} from '../doc/gristdoc.js';
import type {CellValue} from '../doc/types.js';
import {checkRecords} from '../doc/bodies.js';
import {cursorBinding} from '../doc/cursor.js';
import type {HistoryEntry} from '../doc/history/index.js';
import {historyPage} from './history-page.js';
import type {SqlResult} from '../sql/index.js';
import {
  compareDocs,
  versionChanges,
  docSnapshots,
  forceReloadDoc,
  integerParam,
  replaceDoc,
  type DocSnapshot,
} from './doc-lifecycle.js';
import type {DocState, DocStateComparison} from './lifecycle.js';
import {formOf, type FormAnswer} from './forms.js';
import {copyDoc} from '../import/index.js';
import type {TableImportOptions, TableImportResult} from '../import/into-table.js';

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
  readonly #engine: Engine;
  constructor(
    engine: Engine,
    readonly principal: Principal,
    readonly org: OrgContext = null,
  ) {
    this.#engine = engine;
  }

  /** The engine every call goes through; after `engine.close()`, every call fails with `EngineClosed`. */
  get engine(): Engine {
    this.#engine.assertOpen();
    return this.#engine;
  }

  /** The user's personal org (Grist's "Personal" site). */
  async personalOrg(): Promise<Org> {
    // As the API's `docs` org: with GRIST_PERSONAL_ORGS=false an existing personal org is not there.
    if (!this.engine.home.settings.personalOrgs) throw new NotFound('Personal orgs are disabled');
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

  /**
   * Copies a document the user may view into a workspace they may add to, as
   * `POST /api/docs/{doc}/copy`; returns the new document's id. Under access rules only owners and
   * those who may copy everything make a copy (403). `asTemplate` copies the structure only.
   */
  async copyDoc(docIdOrUrlId: string, workspaceId: number, opts: CopyDocOptions = {}): Promise<string> {
    const engine = this.engine;
    // One request scope, as the route's: the source stays open while it is copied.
    return engine.inScope(async () => {
      // As the route: access to the source is checked before anything else.
      await engine.docAccess(docIdOrUrlId, this.principal, this.org, 'viewers');
      const copy = await copyDoc(engine, docIdOrUrlId, this.principal, this.org, workspaceId, {
        name: opts.documentName || null,
        asTemplate: opts.asTemplate === true,
      });
      return copy.id;
    });
  }

  // ---- orgs, workspaces and document metadata: the home API's calls, checked by HomeService

  /** Creates a team site the user owns, as `POST /api/orgs`; returns its id. */
  createOrg(body: NewOrgBody): Promise<number> {
    return this.engine.home.createOrg(this.principal, {...body});
  }

  /** Creates a workspace in an org (by id or domain), as `POST /api/orgs/{org}/workspaces`; returns its id. */
  createWorkspace(org: number | string, body: WorkspaceBody): Promise<number> {
    return this.engine.home.createWorkspace(String(org), this.principal, this.org, {...body});
  }

  /** Renames a workspace, as `PATCH /api/workspaces/{wid}`. */
  async renameWorkspace(workspaceId: number, name: string): Promise<void> {
    await this.engine.home.updateWorkspace(workspaceId, this.principal, {name});
  }

  /** Moves a workspace to the trash, or with `permanent` deletes it, as `POST /api/workspaces/{wid}/remove`. */
  async removeWorkspace(workspaceId: number, opts: RemoveOptions = {}): Promise<void> {
    if (opts.permanent) await this.engine.deleteWorkspace(workspaceId, this.principal);
    else await this.engine.home.setWorkspaceRemoved(workspaceId, this.principal, true);
  }

  /** Takes a workspace out of the trash, as `POST /api/workspaces/{wid}/unremove`. */
  async restoreWorkspace(workspaceId: number): Promise<void> {
    await this.engine.home.setWorkspaceRemoved(workspaceId, this.principal, false);
  }

  /** Deletes a workspace and its documents for good, as `DELETE /api/workspaces/{wid}`. */
  async deleteWorkspace(workspaceId: number): Promise<void> {
    await this.engine.deleteWorkspace(workspaceId, this.principal);
  }

  /** Changes a document's name, urlId, options or type, as `PATCH /api/docs/{doc}`. */
  async updateDoc(docIdOrUrlId: string, body: DocUpdateBody): Promise<void> {
    await this.engine.home.updateDoc(docIdOrUrlId, this.principal, this.org, {...body});
  }

  /** Renames a document, as `PATCH /api/docs/{doc}` with `{name}`. */
  renameDoc(docIdOrUrlId: string, name: string): Promise<void> {
    return this.updateDoc(docIdOrUrlId, {name});
  }

  /** Moves a document to another workspace of its org, as `PATCH /api/docs/{doc}/move`. */
  async moveDoc(docIdOrUrlId: string, workspaceId: number): Promise<void> {
    await this.engine.home.moveDoc(docIdOrUrlId, this.principal, this.org, workspaceId);
  }

  /** Moves a document to the trash, or with `permanent` deletes it, as `POST /api/docs/{doc}/remove`. */
  async removeDoc(docIdOrUrlId: string, opts: RemoveOptions = {}): Promise<void> {
    if (opts.permanent) await this.engine.deleteDoc(docIdOrUrlId, this.principal, this.org);
    else await this.engine.home.setDocRemoved(docIdOrUrlId, this.principal, this.org, true);
  }

  /** Takes a document out of the trash, as `POST /api/docs/{doc}/unremove`. */
  async restoreDoc(docIdOrUrlId: string): Promise<void> {
    await this.engine.home.setDocRemoved(docIdOrUrlId, this.principal, this.org, false);
  }

  /** Deletes a document and its file for good, as `DELETE /api/docs/{doc}`. */
  async deleteDoc(docIdOrUrlId: string): Promise<void> {
    await this.engine.deleteDoc(docIdOrUrlId, this.principal, this.org);
  }

  // ---- access lists

  /** Who has access to an org (by id or domain), as `GET /api/orgs/{org}/access`. */
  orgAccess(org: number | string): Promise<AccessList> {
    return this.engine.home.getOrgAccess(String(org), this.principal, this.org);
  }

  /** Changes access to an org, as `PATCH /api/orgs/{org}/access` with `{delta}`. */
  async updateOrgAccess(org: number | string, delta: AccessDelta): Promise<void> {
    await this.engine.home.updateAccess('org', {org: String(org)}, this.principal, this.org, {delta});
  }

  /** Who has access to a workspace, as `GET /api/workspaces/{wid}/access`. */
  workspaceAccess(workspaceId: number): Promise<AccessList> {
    return this.engine.home.getWorkspaceAccess(workspaceId, this.principal);
  }

  /** Changes access to a workspace, as `PATCH /api/workspaces/{wid}/access` with `{delta}`. */
  async updateWorkspaceAccess(workspaceId: number, delta: AccessDelta): Promise<void> {
    await this.engine.home.updateAccess('ws', {wid: workspaceId}, this.principal, this.org, {delta});
  }

  /** Who has access to a document, as `GET /api/docs/{doc}/access`. */
  docAccess(docIdOrUrlId: string): Promise<AccessList> {
    return this.engine.home.getDocAccess(docIdOrUrlId, this.principal, this.org);
  }

  /** Changes access to a document, as `PATCH /api/docs/{doc}/access` with `{delta}`. */
  async updateDocAccess(docIdOrUrlId: string, delta: AccessDelta): Promise<void> {
    await this.engine.home.updateAccess('doc', {doc: docIdOrUrlId}, this.principal, this.org, {delta});
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

  /** Beyond Grist: an API key that opens this document only, as `POST .../apikeys` (the secret, once). */
  createApiKey(body: {name: string; access: 'viewers' | 'editors'; expiresAt?: string | null}) {
    const {engine, principal, org} = this.session;
    return engine.home.createDocApiKey(this.meta.id, principal, org, body);
  }

  /** Beyond Grist: this document's API keys (owners), as `GET .../apikeys`. */
  listApiKeys() {
    const {engine, principal, org} = this.session;
    return engine.home.listDocApiKeys(this.meta.id, principal, org);
  }

  /** Beyond Grist: revokes one of this document's API keys (owners, or its creator). */
  deleteApiKey(id: number): Promise<void> {
    const {engine, principal, org} = this.session;
    return engine.home.deleteDocApiKey(this.meta.id, principal, org, id);
  }

  /**
   * Beyond Grist: calls `listener` with each committed change of this document from now on (in
   * commit order, after the commit), filtered by what this user may read: hidden tables, columns
   * and rows are left out. Survives the document being closed when idle; `opts.after` resumes
   * after an event id (a `reset` item comes first when those changes are no longer kept).
   * `close()` the subscription when done. `opts.tableId` keeps one table's changes, and with
   * `opts.where` only rows that condition holds for (`GET /changes?table=&where=`, D123).
   */
  subscribe(listener: (change: DocChange) => void, opts: ChangesOptions = {}): Promise<Subscription> {
    const {engine, principal, org} = this.session;
    return this.withOpen('viewers', ({open, role}) =>
      engine.subscribeChanges(open, principal, role, org, {...opts, listener}),
    );
  }

  /**
   * Beyond Grist: this document's committed changes as an async iterable (see `subscribe`);
   * leaving the `for await` loop ends the subscription.
   */
  changes(opts: ChangesOptions = {}): Promise<Subscription> {
    const {engine, principal, org} = this.session;
    return this.withOpen('viewers', ({open, role}) => engine.subscribeChanges(open, principal, role, org, opts));
  }

  /**
   * Runs `fn` on the open document as one request (Engine.inScope): checked access, the document
   * kept open meanwhile, and in a several-machine deployment its commits durable before the answer.
   */
  /**
   * Beyond Grist (issue 42 §3, D107): imports a CSV/TSV, XLSX or JSON file on disk into an existing
   * table, as `POST /api/docs/{doc}/tables/{tableId}/import` does (editors; access rules check the
   * write). The format is the file name's extension, else `mimeType`.
   */
  importIntoTable(
    tableId: string,
    file: {path: string; fileName: string; mimeType?: string | null},
    options: TableImportOptions = {},
  ): Promise<TableImportResult> {
    const {engine} = this.session;
    return this.withOpen('editors', async ({grist, access, role}) => {
      // Loaded on first use: the readers are not needed before.
      const {importIntoTable} = await import('../import/into-table.js');
      const {importFormat} = await import('../import/sources.js');
      return importIntoTable({
        grist,
        access,
        role: role === 'owners' ? 'owners' : 'editors',
        tableId,
        file: {path: file.path, fileName: file.fileName, format: importFormat(file.fileName, file.mimeType ?? null)},
        options,
        settings: engine.importSettings,
        tmpDir: join(engine.dataDir, 'tmp'),
      });
    });
  }

  private use<T>(need: Need, fn: (grist: GristDoc, role: 'owners' | 'editors') => T): Promise<T> {
    return this.withOpen(need, ({grist, role}) => fn(grist, role === 'owners' ? 'owners' : 'editors'));
  }

  /** As `use`, handing `fn` what an http route gets (`openDocFor`): the open document, the access context, the role. */
  private withOpen<T>(
    need: Need,
    fn: (d: {
      open: OpenDocument;
      grist: GristDoc;
      access: AccessContext | null;
      role: Role;
      meta: Doc;
    }) => T | Promise<T>,
    opts: {ownersDespiteBrokenRules?: boolean} = {},
  ): Promise<T> {
    const {engine, principal, org} = this.session;
    return engine.inScope<T>(async () => {
      const {doc, role, org: docOrg} = await engine.docAccess(this.meta.id, principal, org, need);
      // No request, so no host: formulas see the document's URL only when a public URL is set.
      const docUrl = () => engine.docPageUrl(doc, docOrg, null);
      if (await engine.claimDoc(doc.id)) {
        throw new ServiceUnavailable('Document is open in another process; use the HTTP API to reach it');
      }
      const open = engine.openDoc(doc.id, {docUrl});
      const access = open.accessFor(principal, role, {ownersDespiteBrokenRules: opts.ownersDespiteBrokenRules});
      if (need !== 'viewers') open.replica?.checkWritable();
      const grist = open.grist.as(access, actorOf(principal), {docUrl});
      return fn({open, grist, access, role: role as Role, meta: doc});
    });
  }

  /** The access check and this process's claim on the document, in one request scope, without opening it. */
  private withClaimed<T>(need: Need, fn: (doc: Doc) => T | Promise<T>): Promise<T> {
    const {engine, principal, org} = this.session;
    return engine.inScope<T>(async () => {
      const {doc} = await engine.docAccess(this.meta.id, principal, org, need);
      if (await engine.claimDoc(doc.id)) {
        throw new ServiceUnavailable('Document is open in another process; use the HTTP API to reach it');
      }
      return fn(doc);
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

  /**
   * Beyond Grist (issue 40 §2): how many records `fetchRecords` would return for the query's
   * `filter` and `where` (its sort and limit aside), as `GET /records?count=true` answers.
   */
  countRecords(tableId: string, query: Pick<RecordQuery, 'filter' | 'where'> = {}): Promise<number> {
    return this.use('viewers', (grist) => grist.countRecords(tableId, query));
  }

  /**
   * Beyond Grist (issue 40 §2, docs/queries.md): groups of rows with their aggregates, as
   * `GET /aggregate` answers (`{"fields": ...}` each), over what the caller can read.
   */
  aggregate(tableId: string, query: AggregateQuery): Promise<AggregateRecord[]> {
    return this.use('viewers', (grist) => grist.aggregate(tableId, query).records);
  }

  /**
   * Beyond Grist: one page of `fetchRecords` (a positive `limit` is the page size) and the cursor of
   * the next one (null on the last page), as `GET /records` answers with its `Link` header; pass
   * `cursor` back, with the same filter and sort, for the next page. 400 `Invalid cursor` otherwise.
   */
  fetchRecordsPage(
    tableId: string,
    query: RecordQuery & {cursor?: string} = {},
  ): Promise<{records: ApiRecord[]; next: string | null}> {
    return this.withOpen('viewers', ({grist, meta}) => {
      const {cursor, after: _after, ...q} = query;
      const table = grist.resolveTableId(tableId);
      const binding = cursorBinding(meta.id, table, q.filter, q.sort);
      const cursors = this.session.engine.cursors;
      const page: PageEnd = {next: null};
      const {records} = grist.fetchRecords(
        table,
        cursor !== undefined ? {...q, after: cursors.open(binding, cursor)} : q,
        page,
      );
      return {records, next: page.next ? cursors.seal(binding, page.next) : null};
    });
  }

  /**
   * Beyond Grist (D122): the recorded changes to a table, or one record (`rowId`), newest first,
   * one entry per changed row, under the user's access rules; `limit` entries a page (default 100,
   * at most 1000), `cursor` the previous page's `next` (400 `Invalid cursor` otherwise).
   */
  history(
    tableId: string,
    q: {rowId?: number; limit?: number; cursor?: string} = {},
  ): Promise<{changes: HistoryEntry[]; next: string | null}> {
    return this.withOpen('viewers', ({grist, meta}) =>
      historyPage(this.session.engine.cursors, meta.id, grist, tableId, q),
    );
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

  /**
   * Beyond Grist (issue 40 §3, docs/queries.md): updates every row the caller can read for which
   * `where` (a condition in Grist's formula language; `True` for every row) holds with `fields`,
   * in one write, as `PATCH /records?where=` does; the ids updated.
   */
  updateRecordsWhere(tableId: string, where: string, fields: Fields): Promise<number[]> {
    return this.use('editors', (grist, role) => grist.updateRecordsWhere(tableId, where, fields, {role}));
  }

  /** Beyond Grist (issue 40 §3): removes every row matching `where`, as `POST /records/delete?where=`; their ids. */
  removeRecordsWhere(tableId: string, where: string): Promise<number[]> {
    return this.use('editors', (grist, role) => grist.removeRecordsWhere(tableId, where, {role}));
  }

  /** A table whose records are typed `R` (`doc.table<Task>('Tasks')`); the document still checks every value. */
  table<R extends RowShape<R>>(tableId: string): DocTable<R> {
    type Loose = Array<{id: number; fields: Fields}>;
    return {
      tableId,
      fetch: async (query) => (await this.fetchRecords(tableId, query)) as TypedRecord<R>[],
      add: (rows) => this.addRecords(tableId, rows as Fields[]),
      update: (rows) => this.updateRecords(tableId, rows as Loose),
      upsert: (rows, opts) => this.upsertRecords(tableId, rows as UpsertRecord[], opts),
      remove: (ids) => this.removeRecords(tableId, ids),
    };
  }

  /**
   * Runs `fn` as one transaction (editors): reads inside see its own writes; everything it writes
   * commits together when it returns, or nothing when it throws. `fn` is synchronous (the
   * document is: an `await` would let other writes in), so it cannot `await`; a function
   * returning a promise is refused (400) and its writes undone. Returns what `fn` returns.
   */
  transaction<T>(fn: (tx: DocTransaction) => T): Promise<T> {
    return this.use('editors', (grist, role) => grist.transaction(() => fn(new DocTransaction(grist, role)), {role}));
  }

  /** Applies Grist user actions in one transaction (editors), as `POST /apply`. */
  applyUserActions(actions: unknown[][]): Promise<ApplyResult> {
    return this.use('editors', (grist, role) => grist.applyUserActions(actions, {role}));
  }

  // ---- downloads (as routes/download.ts and routes/exports.ts)

  /**
   * Writes the document as a `.grist` file at `path`, as `GET /download` answers it: viewers, but
   * under access rules only owners and those who may copy everything (403 otherwise).
   */
  downloadTo(path: string, opts: Omit<GristDownloadOptions, 'title'> = {}): Promise<void> {
    return this.withOpen(
      'viewers',
      async ({open, access, role}) => {
        if (access && role !== 'owners' && !access.canCopyEverything()) {
          throw new Forbidden('not authorized to download this document');
        }
        await open.backup(path, {nohistory: opts.nohistory === true, template: opts.template === true});
      },
      {ownersDespiteBrokenRules: true},
    );
  }

  /** The document as a `.grist` file, streamed (a temporary copy, removed once read), as `GET /download`. */
  async download(opts: GristDownloadOptions = {}): Promise<SessionDownload> {
    const tmpDir = join(this.session.engine.dataDir, 'tmp');
    const body = await this.withOpen(
      'viewers',
      ({open, access, role}) => {
        if (access && role !== 'owners' && !access.canCopyEverything()) {
          throw new Forbidden('not authorized to download this document');
        }
        return open.backupStream(tmpDir, {nohistory: opts.nohistory === true, template: opts.template === true});
      },
      {ownersDespiteBrokenRules: true},
    );
    return {filename: `${opts.title || this.meta.name}.grist`, contentType: 'application/x-sqlite3', body};
  }

  /** A table as CSV (or TSV, DSV), values formatted as Grist shows them, streamed, as `GET /download/csv`. */
  exportTable(tableId: string, opts: TableExportOptions = {}): Promise<SessionDownload> {
    return this.withOpen('viewers', ({open, access, meta}) => {
      const exp = open.exportDsv(tableId, {format: opts.format ?? 'csv', header: opts.header ?? 'label'}, access);
      return {
        filename: exportFileBase(meta.name, tableId, opts.title ?? null) + exp.extension,
        contentType: exp.contentType,
        body: exp.body,
      };
    });
  }

  /** An Excel workbook of one table or of every table the user may see, streamed, as `GET /download/xlsx`. */
  exportXlsx(opts: XlsxExportOptions = {}): Promise<SessionDownload> {
    return this.withOpen('viewers', ({open, access, meta}) => {
      const tableId = opts.tableId;
      const base = tableId
        ? exportFileBase(meta.name, tableId, opts.title ?? null)
        : opts.title || meta.name || 'document';
      return {
        filename: `${base}.xlsx`,
        contentType: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
        body: open.exportXlsx(tableId ? [tableId] : null, opts.header ?? 'label', access),
      };
    });
  }

  /**
   * Every table the user may see (summaries aside, as in the XLSX download) with its columns and
   * records, as one JSON document read from one snapshot, streamed, as `GET /download/json`:
   * `{"tables": [{"id", "columns": [as GET /columns], "records": [as GET /records]}]}`.
   * gristlite only (D87).
   */
  exportJson(opts: {title?: string} = {}): Promise<SessionDownload> {
    return this.withOpen('viewers', ({open, access, meta}) => ({
      filename: `${opts.title || meta.name || 'document'}.json`,
      contentType: 'application/json; charset=utf-8',
      body: open.exportJson(access),
    }));
  }

  /** The Frictionless table schema of a table's CSV download, as `GET /download/table-schema`. */
  tableSchema(tableId: string, opts: TableSchemaExportOptions = {}): Promise<TableSchema> {
    return this.withOpen('viewers', async ({open, access, meta}) => {
      const header = opts.header ?? 'label';
      // The doc's org in the path, as Grist's getResourceUrl writes it (and HTTP answers).
      const org = orgUrlName(await this.session.engine.home.access.orgOfDoc(meta));
      const csvPath =
        opts.csvPath ??
        `/o/${org}/api/docs/${encodeURIComponent(meta.urlId || meta.id)}/download/csv?${new URLSearchParams({tableId, header})}`;
      return open.tableSchema(tableId, {header, csvPath}, access);
    });
  }

  // ---- attachments (as routes/attachments.ts)

  /** Adds files as attachments (editors), as `POST /attachments`; returns their ids. */
  addAttachments(files: NewAttachment[]): Promise<number[]> {
    return this.withOpen('editors', ({open}) =>
      open.addAttachments(
        files.map((f) => ({fileName: f.fileName, mimeType: f.mimeType ?? null, data: Buffer.from(f.data)})),
      ),
    );
  }

  /** The attachments the user may reach, with filter, sort and limit, as `GET /attachments`. */
  listAttachments(query: TableQuery = {}): Promise<AttachmentList> {
    // Hidden attachments are left out before the limit applies, as over HTTP.
    return this.withOpen('viewers', ({open, access}) =>
      open.listAttachments(query, {readable: open.listableAttachments(access)}),
    );
  }

  /** One attachment's metadata, as `GET /attachments/{id}` (403 under rules that hide every cell holding it). */
  attachmentMetadata(attId: number): Promise<AttachmentList['records'][number]['fields']> {
    return this.withOpen('viewers', ({open, access}) => {
      open.checkAttachment(access, attId);
      return open.attachmentMetadata(attId);
    });
  }

  /** One attachment's bytes with the headers HTTP sends, as `GET /attachments/{id}/download`. */
  downloadAttachment(attId: number, opts: DownloadOptions = {}): Promise<AttachmentDownload> {
    return this.withOpen('viewers', ({open, access}) => {
      open.checkAttachment(access, attId);
      return open.attachmentDownload(attId, opts);
    });
  }

  // ---- webhooks (owners, as routes/webhooks.ts)

  /** Webhooks with their usage (owners), as `GET /webhooks`. */
  listWebhooks(): Promise<{webhooks: WebhookSummary[]}> {
    return this.withOpen('owners', ({open}) => open.listWebhooks());
  }

  /** Creates webhooks (owners), as `POST /webhooks`; returns their ids. */
  addWebhooks(webhooks: NewWebhook[]): Promise<{webhooks: {id: string}[]}> {
    return this.withOpen('owners', ({open}) => open.addWebhooks(webhooks as WebhookFieldsInput[]));
  }

  /** Changes a webhook (owners), as `PATCH /webhooks/{id}`. */
  async updateWebhook(webhookId: string, patch: WebhookPatch): Promise<void> {
    await this.withOpen('owners', ({open}) => open.updateWebhook(webhookId, patch as WebhookFieldsInput));
  }

  /** Removes a webhook and its waiting events (owners), as `DELETE /webhooks/{id}`. */
  async removeWebhook(webhookId: string): Promise<void> {
    await this.withOpen('owners', ({open}) => open.removeWebhook(webhookId));
  }

  // ---- lifecycle (as routes/lifecycle.ts)

  /**
   * Grist's force-reload (editors), as `POST /force-reload`: attachments unused for 7 days are
   * removed and the document closed, to open afresh (formulas, rules, webhooks) on its next use.
   */
  async forceReload(): Promise<void> {
    // As the route: the home check only, so a document with broken access rules can be reloaded.
    await this.withClaimed('editors', (doc) => forceReloadDoc(this.session.engine, doc.id));
  }

  /** Frees the document for another worker group (editors), as `POST /assign`: always false (no groups; D52). */
  async assign(): Promise<boolean> {
    await this.withClaimed('editors', () => undefined);
    return false;
  }

  /** The states of the document's action history, newest first, as `GET /states` (D39). */
  states(): Promise<{states: DocState[]}> {
    return this.withOpen('viewers', ({open}) => open.states());
  }

  /** Truncates the action history to its newest `keep` actions (owners), as `POST /states/remove`. */
  async removeStates(keep: number): Promise<void> {
    await this.withOpen('owners', ({open}) => open.removeStates(integerParam(keep, 'keep')));
  }

  /** The document's snapshots (its current state, D52), as `GET /snapshots`: 403 when access rules hide anything. */
  snapshots(): Promise<{snapshots: DocSnapshot[]}> {
    return this.withOpen('viewers', ({meta, access}) => docSnapshots(meta.id, access));
  }

  /**
   * Replaces the document's content with another document's (`sourceDocId`, which the user must
   * read whole) or a snapshot's (owners), as `POST /replace`.
   */
  async replace(source: {sourceDocId?: string; snapshotId?: string}): Promise<void> {
    const {principal, org} = this.session;
    await this.withOpen(
      'editors',
      ({open, meta, role}) => replaceDoc(this.session.engine, {open, meta, role}, principal, org, () => source),
      {ownersDespiteBrokenRules: true},
    );
  }

  /**
   * Compares this document with another (by id or urlId) by their histories, and by content when
   * those end alike (D54), as `GET /compare/{other}`; both must be readable whole. `detail` adds
   * what changed on each side since their common state; `maxRows` (default 10, null: all) bounds
   * the cells kept per bulk change.
   */
  compare(
    otherDocIdOrUrlId: string,
    opts: {maxRows?: number | null; detail?: boolean} = {},
  ): Promise<DocStateComparison> {
    const {principal, org} = this.session;
    return this.withOpen('viewers', ({open, access}) =>
      compareDocs(this.session.engine, {open, access}, principal, org, otherDocIdOrUrlId, opts),
    );
  }

  /**
   * What changed between two states of this document's history, as `GET /compare?left=&right=`
   * (refs `HEAD` by default, a state hash, `~n`, `^`); the user must read the document whole.
   */
  compareVersions(opts: {left?: string; right?: string; maxRows?: number | null} = {}): Promise<DocStateComparison> {
    return this.withOpen('viewers', ({open, access}) => versionChanges(open, access, opts));
  }

  // ---- forms (as routes/forms.ts)

  /** A form widget's fields, layout, table and title as the user may read them, as `GET /forms/{viewSectionId}`. */
  form(viewSectionId: number): Promise<FormAnswer> {
    return this.withOpen('viewers', ({grist}) => formOf(grist, integerParam(viewSectionId, 'vsId')));
  }

  /**
   * Copies the document into a workspace the user may add to, as `POST /copy` (`asTemplate`:
   * structure only); returns the new document's id. See `Session.copyDoc`.
   */
  copy(workspaceId: number, opts: CopyDocOptions = {}): Promise<string> {
    return this.session.copyDoc(this.meta.id, workspaceId, opts);
  }

  // ---- triggers (owners, as routes/triggers.ts): the `_grist_Triggers` records behind webhooks

  /** The document's triggers (owners), webhook actions with their url and authorization masked, as `GET /triggers`. */
  listTriggers(): Promise<{records: TriggerRecord[]}> {
    return this.withOpen('owners', ({open}) => open.listTriggers());
  }

  /** Webhook events waiting for delivery (owners), as `GET /triggers/monitor`; `delivered` is always empty (D51). */
  triggerMonitor(): Promise<{delivered: never[]; pending: TriggerPendingRecord[]}> {
    return this.withOpen('owners', ({open}) => open.triggerMonitor());
  }

  /** Adds triggers (owners), as `POST /triggers`; returns their row ids. */
  addTriggers(triggers: NewTrigger[]): Promise<{records: {id: number}[]}> {
    return this.withOpen('owners', ({open}) => open.addTriggers(triggers.map((fields) => ({fields}))));
  }

  /** Changes triggers' fields (owners), as `PATCH /triggers`; actions dropped from a trigger lose their webhook. */
  async updateTriggers(patches: TriggerPatch[]): Promise<void> {
    await this.withOpen('owners', ({open}) => open.updateTriggers(patches));
  }

  /** Removes triggers with their webhooks and waiting events (owners), as `POST /triggers/delete`. */
  async removeTriggers(ids: number[]): Promise<void> {
    await this.withOpen('owners', ({open}) => open.removeTriggers(ids));
  }

  /** Read-only SQL on this document, as `Session.runSql`. */
  runSql(sql: string, opts: SqlOptions = {}): Promise<SqlResult> {
    return this.session.runSql(this.meta.id, sql, opts);
  }
}
