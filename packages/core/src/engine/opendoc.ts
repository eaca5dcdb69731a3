/**
 * One open document and everything this process keeps for it: the read-write connection (inside
 * its `GristDoc`), webhook recording and delivery with the per-document webhook lock, and the
 * operations the HTTP layer needs beyond records (attachments, exports, backups). Routes call
 * these methods; none of them sees the SQLite handle.
 *
 * One thing: the facade routes hold for a document. Past its access rules, its methods are mostly
 * one-line calls into the parts that do the work (attachments/, export/, webhooks/, doc/history/),
 * grouped by concern below; the work itself stays in those parts.
 */
import type Database from 'better-sqlite3';
import {createReadStream} from 'node:fs';
import {mkdir, rm} from 'node:fs/promises';
import {join} from 'node:path';
import {makeId} from '../base/index.js';
import {
  contentDigest,
  docStates,
  historyChanges,
  removeStates,
  replaceContent,
  type DocState,
  type DocStateComparison,
} from './lifecycle.js';
import type {Replica} from '../cluster/replica.js';
import {
  getAttachmentMetadata,
  listAttachments,
  updateUsedAttachments,
  verifyAttachmentFiles,
  type AddAttachmentsOptions,
  type AttachmentDownload,
  type AttachmentInfo,
  type AttachmentPage,
  type DownloadOptions,
  type UploadedFile,
} from '../attachments/index.js';
import {AttachmentStores} from '../attachments/external.js';
import {
  DocAttachmentFiles,
  readDocSettings,
  type ArchiveUploadResult,
  type AttachmentStoreStatus,
} from '../attachments/files.js';
import type {Readable} from 'node:stream';
import type {TableQuery} from '../attachments/query.js';
import type {GristDoc} from '../doc/gristdoc.js';
import {AccessContext} from '../access/rules/context.js';
import {BrokenRules, RuleSet} from '../access/rules/ruleset.js';
import {readShareRows, readShareRules, type ShareRow, type ShareRules} from '../access/rules/shares.js';
import {ANON_EMAIL, type Principal} from '../home/principal.js';
import type {Role} from '../home/types.js';
import {attachmentsArchive} from '../export/archive.js';
import {backupDoc, type BackupOptions} from '../export/backup.js';
import {exportTableDsv, type DsvExport, type DsvExportOptions} from '../export/csv.js';
import type {ExportHeader, ExportRestriction} from '../export/plan.js';
import {ApiError, BadRequest, Forbidden, NotFound} from '../base/index.js';
import {tableSchema, type TableSchema, type TableSchemaOptions} from '../export/table-schema.js';
import {documentTables, xlsxStream} from '../export/xlsx.js';
import {jsonDocumentStream} from '../export/json.js';
import {
  addWebhooks,
  clearWebhookQueue,
  listWebhooks,
  removeWebhook,
  subscribeWebhook,
  unsubscribeWebhook,
  updateWebhook,
  type WebhookDelivery,
  type WebhookFieldsInput,
  type WebhookUrlPolicy,
} from '../webhooks/index.js';
import {
  addTriggers,
  listTriggers,
  removeTriggers,
  triggerMonitor,
  updateTriggers,
  type TriggerInputFields,
} from '../webhooks/triggers.js';

/** Tables whose change may change the compiled rules. */
const RULE_INPUTS = new Set(['_grist_ACLRules', '_grist_ACLResources', '_grist_Tables', '_grist_Tables_column']);
/** What the rules of a document's shares are made of (access/rules/shares.ts). */
const SHARE_INPUTS = new Set([
  '_grist_Shares',
  '_grist_Pages',
  '_grist_Views_section',
  '_grist_Views_section_field',
  '_grist_Tables',
  '_grist_Tables_column',
]);

/** How long one webhook call may hold the document's webhook lock before the next runs anyway (Grist: 15 s). */
const WEBHOOK_LOCK_MS = 15_000;

/** What an open document's attachment files need from the engine (see `DocAttachmentFiles`). */
export interface DocAttachmentOptions {
  /** The external stores this server has (default: none). */
  stores?: AttachmentStores;
  /** Keeps the document open while background work (a transfer) runs (default: just runs it). */
  keepOpen?: (fn: () => Promise<void>) => Promise<void>;
  /** Where errors of background work go (default: `console.error`). */
  onError?: (err: unknown, what: string) => void;
}

/** Webhook recording and delivery attached to a document (see `attachWebhooks`). */
export interface DocWebhooks {
  delivery?: WebhookDelivery;
  /** Stops recording and delivery (call before closing the connection). */
  detach(): Promise<void>;
}

/** One open document and what this process keeps for it (see the module comment). */
export class OpenDocument {
  /** The webhook call in progress (or last), which the next one waits for. */
  private webhookLock: Promise<unknown> = Promise.resolve();

  /**
   * @param id the document id
   * @param path its `.grist` file
   * @param grist the document (tables, records, formulas); owns the connection
   * @param webhooks webhook recording and delivery while the document is open here
   * @param webhookPolicy which webhook URLs are allowed (the engine's one setting)
   */
  constructor(
    readonly id: string,
    readonly path: string,
    readonly grist: GristDoc,
    readonly webhooks: DocWebhooks,
    readonly webhookPolicy: WebhookUrlPolicy,
    /** Log shipping and snapshots, in a several-machine deployment (cluster/replica.ts). */
    readonly replica?: Replica,
    attachments: DocAttachmentOptions = {},
  ) {
    this.attachmentStores = attachments.stores ?? new AttachmentStores();
    this.files = new DocAttachmentFiles({
      docId: id,
      grist,
      stores: this.attachmentStores,
      durable: () => replica?.sync() ?? Promise.resolve(),
      keepOpen: attachments.keepOpen ?? ((fn) => fn()),
      onError: attachments.onError ?? ((e, what) => console.error(`gristlite: ${what}`, e)),
    });
    // Rules are compiled once per version of the rule tables (and of the schema they name).
    grist.onChange((change) => {
      if (RULE_INPUTS.has(change.tableId)) this.compiledRules = null;
      if (SHARE_INPUTS.has(change.tableId)) this.compiledShares = undefined;
      // The home store's copy of the shares is synced once the request ends (Engine.inScope).
      if (change.tableId === '_grist_Shares') this.sharesChanged = true;
    });
    // Grist syncs on open only a document that has shares (skipIfNoShares).
    this.sharesChanged = readShareRows(grist.db).length > 0;
  }

  /**
   * Whether the home store's copy of this document's shares may be behind (issue 41): true when
   * opened (Grist syncs on open) and after every write to `_grist_Shares`; the engine syncs it
   * (`Engine.syncShares`) when the request that opened or wrote it ends.
   */
  sharesChanged = true;

  /** The rows of `_grist_Shares` (id, linkId, parsed options), as the home store keeps them. */
  shareRows(): ShareRow[] {
    return readShareRows(this.grist.db);
  }

  private compiledShares: ShareRules | null | undefined = undefined;
  /** The virtual rules of the document's shares, or null when it has none. */
  shareRules(): ShareRules | null {
    if (this.compiledShares === undefined) this.compiledShares = readShareRules(this.grist.db);
    return this.compiledShares;
  }

  private compiledRules: {rules: RuleSet | null} | {error: unknown} | null = null;
  /** The external attachment stores this server has. */
  readonly attachmentStores: AttachmentStores;
  /** Where the attachment files are, uploads, downloads and transfers between stores. */
  readonly files: DocAttachmentFiles;

  /**
   * The document's access rules, compiled (null: none beyond Grist's defaults). Rules Grist would
   * refuse (a duplicate resource, a rule after the default one) throw Grist's error, for everyone.
   */
  accessRuleSet(): RuleSet | null {
    if (!this.compiledRules) {
      try {
        this.compiledRules = {rules: RuleSet.read(this.grist.db)};
      } catch (e) {
        // Rules Grist refuses stay refused until they change; anything else is not kept.
        if (!(e instanceof ApiError)) throw e;
        this.compiledRules = {error: e};
      }
    }
    if ('error' in this.compiledRules) throw this.compiledRules.error;
    return this.compiledRules.rules;
  }

  /**
   * What one user may see and do under the document's rules, or null when it has none. Made per
   * request: user attributes are looked up in the document's current rows.
   */
  accessFor(
    principal: Principal,
    role: Role | null,
    opts: {linkKey?: Record<string, string>; ownersDespiteBrokenRules?: boolean; share?: {linkId: string}} = {},
  ): AccessContext | null {
    if (opts.share) return this.shareAccess(opts.share.linkId, opts.linkKey);
    let rules: RuleSet | null;
    try {
      rules = this.accessRuleSet();
    } catch (e) {
      if (!(e instanceof BrokenRules)) throw e;
      // Recovery mode: Grist's emergency rules (owners everything, others nothing) stand in.
      if (this.grist.recoveryMode) rules = RuleSet.emergency();
      // Owners keep what they need to repair broken rules (DA1): no rules apply.
      else if (opts.ownersDespiteBrokenRules && role === 'owners') return null;
      else throw e;
    }
    if (!rules) return null;
    const user = principal.anonymous ? null : principal.user;
    return new AccessContext(
      rules,
      {
        access: role === 'owners' || role === 'editors' || role === 'viewers' ? role : null,
        userId: user?.id ?? null,
        email: user?.email ?? null,
        name: user?.name ?? null,
        userRef: user?.ref ?? null,
        linkKey: opts.linkKey,
      },
      (tableId, colId, value, ci) => this.grist.lookupRow(tableId, colId, value, ci),
    );
  }

  /**
   * A caller through a share (`/api/s/<key>/...`), as Grist 1.7.17 sees one: anonymous, with
   * editors' access limited by the share's virtual rules (the document's own rules do not apply),
   * `user.ShareRef` the share's row. A linkId the document no longer has answers 404 `Share not
   * known` (D97: Grist would apply no share rules then).
   */
  private shareAccess(linkId: string, linkKey?: Record<string, string>): AccessContext {
    const shares = this.shareRules();
    const rows = shares?.shares.filter((r) => r.linkId === linkId) ?? [];
    if (!shares || rows.length === 0) throw new NotFound('Share not known');
    if (rows.length > 1) throw new BadRequest('Share identifier is not unique');
    const shareRef = rows[0].id;
    return new AccessContext(
      shares.rules,
      {
        access: 'editors',
        userId: null,
        email: ANON_EMAIL,
        name: 'Anonymous',
        userRef: null,
        linkKey,
        shareRef,
        createColumns: shares.formColumns.get(shareRef) ?? new Map(),
      },
      (tableId, colId, value, ci) => this.grist.lookupRow(tableId, colId, value, ci),
    );
  }

  /**
   * The attachments a user under access rules may reach: those held by a cell they can read
   * (Grist's rule), or null when they may read everything (or the document has no rules).
   */
  readableAttachments(access: AccessContext | null): ReadonlySet<number> | null {
    return access ? this.grist.as(access).readableAttachments() : null;
  }

  /**
   * The attachments a user may list (`GET /attachments`): Grist reads `_grist_Attachments` as any
   * table, so a document-wide read deny answers its 403 with memos; then as `readableAttachments`.
   */
  listableAttachments(access: AccessContext | null): ReadonlySet<number> | null {
    access?.readTable('_grist_Attachments');
    return this.readableAttachments(access);
  }

  /** Refuses an attachment no readable cell holds (403 `Cannot access attachment`, Grist's words). */
  checkAttachment(access: AccessContext | null, attId: number): void {
    const readable = this.readableAttachments(access);
    if (readable && !readable.has(attId)) throw new Forbidden('Cannot access attachment');
  }

  /** The connection, for core code only (the read-only SQL pool opens its own). @internal */
  get db(): Database.Database {
    return this.grist.db;
  }

  // ---- attachments ---------------------------------------------------------------------------

  /** Stores uploaded files as attachments (in the document's chosen store); returns their row ids. */
  addAttachments(files: readonly UploadedFile[], opts: AddAttachmentsOptions = {}): Promise<number[]> {
    return this.files.addAttachments(files, opts, (rows, storeFiles) =>
      this.grist.addAttachmentRecords(rows, storeFiles),
    );
  }

  /** `_grist_Attachments` rows with filter/sort/limit, as `GET /attachments`. */
  listAttachments(query: TableQuery = {}, page?: AttachmentPage): {records: {id: number; fields: AttachmentInfo}[]} {
    return listAttachments(this.db, query, page);
  }

  /** One attachment's metadata. */
  attachmentMetadata(attId: number): AttachmentInfo {
    return getAttachmentMetadata(this.db, attId);
  }

  /** One attachment's bytes (from the document or its store) and the headers to send them with. */
  attachmentDownload(attId: number, opts: DownloadOptions = {}): Promise<AttachmentDownload> {
    return this.files.download(attId, opts);
  }

  /** Every attachment file in one zip or tar, produced as it is read. */
  attachmentsArchive(format: 'zip' | 'tar'): AsyncIterable<Uint8Array> {
    return attachmentsArchive(this.db, format, (ident, storageId) => this.files.readCurrent(ident, storageId));
  }

  /** Restores missing attachment files from a `.tar` of `attachmentsArchive` (`POST /attachments/archive`). */
  restoreAttachments(tarStream: Readable): Promise<ArchiveUploadResult> {
    return this.files.restoreFromTar(tarStream);
  }

  /** Marks attachments no cell refers to (and unmarks used ones); true when something changed. */
  updateUsedAttachments(): boolean {
    return updateUsedAttachments(this.db);
  }

  /** Removes unused attachments (only those unused for long, with `expiredOnly`), from their stores too. */
  removeUnusedAttachments(opts: {expiredOnly?: boolean} = {}): Promise<void> {
    return this.files.removeUnused(opts);
  }

  /** Whether every attachment row has its file and every file its row. */
  verifyAttachmentFiles(): boolean {
    return verifyAttachmentFiles(this.db);
  }

  /** Transfers between stores in progress, and where the files are (`GET /attachments/transferStatus`). */
  attachmentStoreStatus(): AttachmentStoreStatus {
    return this.files.status();
  }

  /** Starts moving every file to the document's chosen store (`POST /attachments/transferAll`). */
  transferAllAttachments(): AttachmentStoreStatus {
    return this.files.startTransferAll();
  }

  /** The store new attachments go to (`documentSettings.attachmentStoreId`), or null: the document. */
  attachmentStoreId(): string | null {
    return this.files.storeId();
  }

  /**
   * Chooses where new attachments go (`POST /attachments/store`): `internal` (the document) or
   * `external`, the server's standard store (400 when it has none, Grist's words). Files already
   * stored stay where they are until `transferAllAttachments`. Returns the store's id (none for internal).
   */
  setAttachmentStore(type: 'internal' | 'external'): string | null {
    let id: string | null = null;
    if (type === 'external') {
      const store = this.attachmentStores.standard;
      if (!store) throw new BadRequest('server is not configured with an external store');
      id = store.id;
    }
    const settings = readDocSettings(this.db);
    if ((settings.attachmentStoreId ?? null) === id) return id;
    if (id) settings.attachmentStoreId = id;
    else delete settings.attachmentStoreId;
    this.grist.applyUserActions([['UpdateRecord', '_grist_DocInfo', 1, {documentSettings: JSON.stringify(settings)}]]);
    return id;
  }

  // ---- exports -------------------------------------------------------------------------------

  /** A table as CSV, TSV or DSV, streamed. */
  exportDsv(
    tableId: string,
    opts: DsvExportOptions & {where?: string} = {},
    access: AccessContext | null = null,
  ): DsvExport {
    const {where, ...rest} = opts;
    return exportTableDsv({db: this.db, path: this.path}, tableId, {
      ...rest,
      restrict: this.exportRestriction(access, tableId, where),
    });
  }

  /** An Excel workbook of these tables (default: every table but summaries), streamed. */
  exportXlsx(
    tableIds: string[] | null,
    header: ExportHeader,
    access: AccessContext | null = null,
    where?: string,
  ): AsyncIterable<Uint8Array> {
    if (where && tableIds?.length !== 1) throw new BadRequest('where needs one table (tableId)');
    // A whole-document export leaves out the tables the user cannot see (Grist).
    const tables = tableIds ?? documentTables(this.db).filter((t) => !access || access.tableVisible(t));
    const restrict = new Map<string, ExportRestriction>();
    for (const t of tables) {
      const r = this.exportRestriction(access, t, where);
      if (r) restrict.set(t, r);
    }
    return xlsxStream(this.db, tables, header, restrict, this.path);
  }

  /**
   * Every table of a whole-document export the user may see, with its columns and records, as one
   * JSON document read from one snapshot, streamed (D87).
   */
  exportJson(access: AccessContext | null = null): AsyncIterable<Uint8Array> {
    const tables = documentTables(this.db).filter((t) => !access || access.tableVisible(t));
    const restrict = new Map<string, ExportRestriction>();
    for (const t of tables) {
      const r = this.exportRestriction(access, t);
      if (r) restrict.set(t, r);
    }
    return jsonDocumentStream(this.db, tables, restrict, this.path);
  }

  /**
   * Checks a widget (view section) named by a download, as Grist's doExportSection does before
   * exporting it: 404 `No record N in table _grist_Views_section` for an unknown one, 404
   * `Cannot find or access table` when it shows no table or one the user cannot see. Returns the
   * table it shows.
   */
  exportSectionTable(sectionId: number, access: AccessContext | null = null): string {
    const row = this.db.prepare('SELECT tableRef FROM _grist_Views_section WHERE id = ?').get(sectionId) as
      | {tableRef: unknown}
      | undefined;
    if (!row) throw new NotFound(`No record ${sectionId} in table _grist_Views_section`);
    const table = this.grist.listTables().find((t) => t.fields.tableRef === Number(row.tableRef));
    if (!table || (access && !access.tableVisible(table.id))) throw new NotFound('Cannot find or access table');
    return table.id;
  }

  /** The Frictionless table schema of a table's CSV download. */
  tableSchema(tableId: string, opts: TableSchemaOptions, access: AccessContext | null = null): TableSchema {
    return tableSchema(this.db, tableId, {...opts, restrict: this.exportRestriction(access, tableId)});
  }

  /**
   * What a user may export of a table under access rules (undefined: all of it). A table they
   * cannot see answers 404 `Cannot find or access table`, as in Grist; rows and cells follow the
   * same filter as `GET /records`.
   */
  private exportRestriction(
    access: AccessContext | null,
    tableId: string,
    where?: string,
  ): ExportRestriction | undefined {
    const known = this.grist.listTables().some((t) => t.id === tableId);
    if (!known) return undefined; // The export answers its own 404.
    if (access && !access.tableVisible(tableId)) throw new NotFound('Cannot find or access table');
    // Beyond Grist (issue 40): a `where` condition resolved now, for this user; what SQL decides is
    // decided on the export's snapshot, rows the formula engine evaluated are those found now.
    const grist = access ? this.grist.as(access) : this.grist;
    const named = where ? grist.whereCondition(tableId, where) : undefined;
    if (!access) return named ? {hiddenCols: new Set(), where: named} : undefined;
    // The rows are chosen on the export's own snapshot, as it reads them (export/plan.ts exportRows).
    const {hiddenCols, scope, row} = grist.tableAccess(tableId)!;
    return {hiddenCols, scope, row, ...(named ? {where: named} : {})};
  }

  /** A consistent, self-contained `.grist` copy at `destPath`, filtered as Grist's downloads are. */
  backup(destPath: string, opts: BackupOptions = {}): Promise<void> {
    return backupDoc(this.db, destPath, opts);
  }

  /**
   * The document as a `.grist` file, streamed: a backup written to a temporary file in `tmpDir`,
   * removed once read (or abandoned), or at once when the backup fails.
   */
  async backupStream(tmpDir: string, opts: BackupOptions = {}): Promise<AsyncIterable<Uint8Array>> {
    await mkdir(tmpDir, {recursive: true});
    const tmp = join(tmpDir, `${makeId()}.grist`);
    try {
      await this.backup(tmp, opts);
    } catch (e) {
      await rm(tmp, {force: true});
      throw e;
    }
    return streamAndRemove(tmp);
  }

  // ---- history and replacement (lifecycle.ts) -------------------------------------------------

  /** The states of Grist's action history, newest first (`GET /states`). */
  states(): {states: DocState[]} {
    return docStates(this.db);
  }

  /**
   * What changed between two states of the history (`GET /compare?left=&right=`): refs as Grist's
   * HashUtil reads them (`HEAD`, a hash, `~n`, `^`), `maxRows` cells kept per bulk change.
   */
  changes(left: string, right: string, maxRows?: number | null): DocStateComparison {
    return historyChanges(this.db, left, right, maxRows);
  }

  /** A digest of the tables, columns and user rows (to compare documents). */
  contentDigest(): string {
    return contentDigest(this.db);
  }

  /** Keeps the newest `keep` actions of the history (`POST /states/remove`). */
  removeStates(keep: number): void {
    removeStates(this.db, keep);
  }

  /**
   * Replaces the content with that of a prepared copy (`POST /replace`), in one transaction. The
   * engine must reopen the document afterwards (`Engine.reloadDoc`): its caches are outdated.
   */
  replaceContent(sourcePath: string): void {
    this.webhooks.delivery?.abortLanes();
    replaceContent(this.db, sourcePath);
  }

  // ---- webhooks ------------------------------------------------------------------------------

  /**
   * Runs `fn` after the document's previous webhook call (or after 15 s of it, whichever comes
   * first): Grist serialises a document's webhook endpoints.
   */
  private withWebhookLock<T>(fn: () => T | Promise<T>): Promise<T> {
    const run = this.webhookLock.then(fn, fn);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise((r) => {
      timer = setTimeout(r, WEBHOOK_LOCK_MS);
      timer.unref();
    });
    this.webhookLock = Promise.race([run.catch(() => undefined), timeout]).finally(() => clearTimeout(timer));
    return run;
  }

  /** Webhooks with their usage, as `GET /webhooks`. */
  listWebhooks(): Promise<ReturnType<typeof listWebhooks>> {
    return this.withWebhookLock(() => listWebhooks(this.db));
  }

  /** Creates webhooks in order; returns their ids. */
  addWebhooks(webhooks: readonly WebhookFieldsInput[]): Promise<{webhooks: {id: string}[]}> {
    return this.withWebhookLock(() => addWebhooks(this.db, webhooks, this.webhookPolicy));
  }

  /** Changes a webhook (`enabled: false` also clears its queue). */
  updateWebhook(webhookId: string, patch: WebhookFieldsInput): Promise<{success: true}> {
    return this.withWebhookLock(() =>
      updateWebhook(this.db, webhookId, patch, this.webhookPolicy, this.webhooks.delivery),
    );
  }

  /** Removes a webhook and its queued events. */
  removeWebhook(webhookId: string): Promise<{success: true}> {
    return this.withWebhookLock(() => removeWebhook(this.db, webhookId, this.webhooks.delivery));
  }

  /** Empties the queue of every webhook, or of one. */
  clearWebhookQueue(webhookId?: string): Promise<void> {
    return this.withWebhookLock(() => clearWebhookQueue(this.db, webhookId, this.webhooks.delivery));
  }

  /** The deprecated `_subscribe`: a webhook on one table. */
  subscribeWebhook(tableId: string, webhook: WebhookFieldsInput): ReturnType<typeof subscribeWebhook> {
    return this.withWebhookLock(() => subscribeWebhook(this.db, tableId, webhook, this.webhookPolicy));
  }

  /** Grist's trigger records (`GET /triggers`), webhook secrets merged in. */
  listTriggers(): Promise<ReturnType<typeof listTriggers>> {
    return this.withWebhookLock(() => listTriggers(this.db));
  }

  /** Adds triggers (`POST /triggers`); returns their row ids. */
  addTriggers(records: readonly {fields: TriggerInputFields}[]): Promise<{records: {id: number}[]}> {
    return this.withWebhookLock(() => addTriggers(this.db, records, this.webhookPolicy));
  }

  /** Changes triggers (`PATCH /triggers`). */
  updateTriggers(records: readonly {id: number; fields: TriggerInputFields}[]): Promise<{success: true}> {
    return this.withWebhookLock(() => updateTriggers(this.db, records, this.webhookPolicy, this.webhooks.delivery));
  }

  /** Removes triggers and their webhooks (`POST /triggers/delete`). */
  removeTriggers(ids: readonly number[]): Promise<{success: true}> {
    return this.withWebhookLock(() => removeTriggers(this.db, ids, this.webhooks.delivery));
  }

  /** Events waiting for delivery (`GET /triggers/monitor`). */
  triggerMonitor(): ReturnType<typeof triggerMonitor> {
    return triggerMonitor(this.db);
  }

  /** The deprecated `_unsubscribe`: owners, or editors with the webhook's key. */
  unsubscribeWebhook(
    webhookId: string,
    unsubscribeKey: string | undefined,
    isOwner: boolean,
    tableId?: string,
  ): Promise<{success: true}> {
    return this.withWebhookLock(() =>
      unsubscribeWebhook(this.db, webhookId, unsubscribeKey, isOwner, tableId, this.webhooks.delivery),
    );
  }
}

/** Streams a temporary file and removes it once read (or abandoned). */
async function* streamAndRemove(path: string): AsyncIterable<Uint8Array> {
  try {
    yield* createReadStream(path);
  } finally {
    await rm(path, {force: true});
  }
}
