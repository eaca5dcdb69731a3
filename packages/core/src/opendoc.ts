/**
 * One open document and everything this process keeps for it: the read-write connection (inside
 * its `GristDoc`), webhook recording and delivery with the per-document webhook lock, and the
 * operations the HTTP layer needs beyond records (attachments, exports, backups). Routes call
 * these methods; none of them sees the SQLite handle.
 */
import type Database from 'better-sqlite3';
import type {Replica} from './cluster/replica.js';
import {
  addAttachments,
  getAttachmentDownload,
  getAttachmentMetadata,
  listAttachments,
  removeUnusedAttachments,
  updateUsedAttachments,
  verifyAttachmentFiles,
  type AddAttachmentsOptions,
  type AttachmentDownload,
  type AttachmentInfo,
  type DownloadOptions,
  type UploadedFile,
} from './attachments/index.js';
import type {TableQuery} from './attachments/query.js';
import type {GristDoc} from './doc/gristdoc.js';
import {attachmentsArchive} from './export/archive.js';
import {backupDoc, type BackupOptions} from './export/backup.js';
import {exportTableDsv, type DsvExport, type DsvExportOptions} from './export/csv.js';
import type {ExportHeader} from './export/plan.js';
import {tableSchema, type TableSchema, type TableSchemaOptions} from './export/table-schema.js';
import {documentTables, xlsxStream} from './export/xlsx.js';
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
} from './webhooks/index.js';

/** How long one webhook call may hold the document's webhook lock before the next runs anyway (Grist: 15 s). */
const WEBHOOK_LOCK_MS = 15_000;

/** Where attachment files are (Grist's transfer status with no external store configured). */
export interface AttachmentStoreStatus {
  status: {pendingTransferCount: number; isRunning: boolean; successes: number; failures: number};
  locationSummary: 'none' | 'internal';
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
   * @param accessRules finds access rules beyond Grist's default row (decision 9)
   * @param webhookPolicy which webhook URLs are allowed (the engine's one setting)
   */
  constructor(
    readonly id: string,
    readonly path: string,
    readonly grist: GristDoc,
    readonly webhooks: DocWebhooks,
    readonly accessRules: Database.Statement,
    readonly webhookPolicy: WebhookUrlPolicy,
    /** Log shipping and snapshots, in a several-machine deployment (cluster/replica.ts). */
    readonly replica?: Replica,
  ) {}

  /** The connection, for core code only (the read-only SQL pool opens its own). @internal */
  get db(): Database.Database {
    return this.grist.db;
  }

  // ---- attachments ---------------------------------------------------------------------------

  /** Stores uploaded files as attachments; returns their row ids. */
  addAttachments(files: readonly UploadedFile[], opts: AddAttachmentsOptions = {}): Promise<number[]> {
    return addAttachments(this.db, files, opts);
  }

  /** `_grist_Attachments` rows with filter/sort/limit, as `GET /attachments`. */
  listAttachments(query: TableQuery = {}): {records: {id: number; fields: AttachmentInfo}[]} {
    return listAttachments(this.db, query);
  }

  /** One attachment's metadata. */
  attachmentMetadata(attId: number): AttachmentInfo {
    return getAttachmentMetadata(this.db, attId);
  }

  /** One attachment's bytes and the headers to send them with. */
  attachmentDownload(attId: number, opts: DownloadOptions = {}): AttachmentDownload {
    return getAttachmentDownload(this.db, attId, opts);
  }

  /** Every attachment file in one zip or tar, produced as it is read. */
  attachmentsArchive(format: 'zip' | 'tar'): AsyncIterable<Uint8Array> {
    return attachmentsArchive(this.db, format);
  }

  /** Marks attachments no cell refers to (and unmarks used ones); true when something changed. */
  updateUsedAttachments(): boolean {
    return updateUsedAttachments(this.db);
  }

  /** Removes unused attachments (only those unused for long, with `expiredOnly`). */
  removeUnusedAttachments(opts: {expiredOnly?: boolean} = {}): void {
    removeUnusedAttachments(this.db, opts);
  }

  /** Whether every attachment row has its file and every file its row. */
  verifyAttachmentFiles(): boolean {
    return verifyAttachmentFiles(this.db);
  }

  /** Where the files are: always internal (no external stores; decisions.md). */
  attachmentStoreStatus(): AttachmentStoreStatus {
    let any = false;
    try {
      any = this.db.prepare('SELECT 1 FROM _gristsys_Files LIMIT 1').get() !== undefined;
    } catch {
      // An old document without _gristsys_Files holds no files.
    }
    return {
      status: {pendingTransferCount: 0, isRunning: false, successes: 0, failures: 0},
      locationSummary: any ? 'internal' : 'none',
    };
  }

  // ---- exports -------------------------------------------------------------------------------

  /** A table as CSV, TSV or DSV, streamed. */
  exportDsv(tableId: string, opts: DsvExportOptions = {}): DsvExport {
    return exportTableDsv({db: this.db, path: this.path}, tableId, opts);
  }

  /** An Excel workbook of these tables (default: every table but summaries), streamed. */
  exportXlsx(tableIds: string[] | null, header: ExportHeader): AsyncIterable<Uint8Array> {
    return xlsxStream(this.db, tableIds ?? documentTables(this.db), header);
  }

  /** The Frictionless table schema of a table's CSV download. */
  tableSchema(tableId: string, opts: TableSchemaOptions): TableSchema {
    return tableSchema(this.db, tableId, opts);
  }

  /** A consistent, self-contained `.grist` copy at `destPath`, filtered as Grist's downloads are. */
  backup(destPath: string, opts: BackupOptions = {}): Promise<void> {
    return backupDoc(this.db, destPath, opts);
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
