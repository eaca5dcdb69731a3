/**
 * A document's attachment files wherever they are (Grist's AttachmentFileManager): in the
 * document (`_gristsys_Files.data`) or in an external store (`storageId`). Uploads follow the
 * document's chosen store, downloads read from where the file is, and `transferAll` moves every
 * file to the chosen store, one file at a time, never losing one: the new copy is written first,
 * then the row is changed (and made durable), and only then is the old copy deleted.
 */
import {createHash} from 'node:crypto';
import {basename, extname} from 'node:path/posix';
import type {Readable} from 'node:stream';
import type Database from 'better-sqlite3';
import * as tar from 'tar-stream';
import {ApiError, BadRequest, NotFound} from '../base/index.js';
import type {GristDoc} from '../doc/gristdoc.js';
import {parseDocSettings} from '../doc/meta.js';
import type {AttachmentStore, AttachmentStores} from './external.js';
import {
  addAttachments,
  attachmentDownloadOf,
  attachmentFile,
  attachmentLocations,
  removeUnusedAttachments,
  type AddAttachmentsOptions,
  type AttachmentDownload,
  type DownloadOptions,
  type UploadedFile,
} from './store.js';

/** Grist's answer of `transferStatus` and `transferAll`. */
export interface AttachmentStoreStatus {
  status: {pendingTransferCount: number; isRunning: boolean; successes: number; failures: number};
  locationSummary: 'none' | 'internal' | 'external' | 'mixed';
}

/** Grist's answer of `POST /attachments/archive`. */
export interface ArchiveUploadResult {
  /** Files that were missing and are now restored. */
  added: number;
  /** Files that could not be restored (wrong content, store unavailable). */
  errored: number;
  /** Files the document does not name, or already has. */
  unused: number;
}

/** What the files of one open document need from around them. */
export interface DocFilesContext {
  /** The document id: its pool in every store. */
  docId: string;
  grist: GristDoc;
  stores: AttachmentStores;
  /** Resolves once what was committed so far is durable (several machines: in the action log). */
  durable: () => Promise<void>;
  /** Keeps the document open while `fn` runs (background transfers). */
  keepOpen: (fn: () => Promise<void>) => Promise<void>;
  /** Where errors of background work go. */
  onError: (err: unknown, what: string) => void;
}

/** The document's settings (`_grist_DocInfo.documentSettings`), `{}` when unreadable. */
export function readDocSettings(db: Database.Database): Record<string, unknown> {
  let raw: unknown;
  try {
    raw = db.prepare('SELECT documentSettings FROM _grist_DocInfo WHERE id = 1').pluck().get();
  } catch {
    return {}; // a document too old for the column
  }
  return parseDocSettings(raw);
}

/** The store new uploads go to (`documentSettings.attachmentStoreId`), or null for the document itself. */
export function attachmentStoreIdOf(db: Database.Database): string | null {
  const id = readDocSettings(db).attachmentStoreId;
  return typeof id === 'string' && id ? id : null;
}

/** Grist's `archiveFilePathToAttachmentIdent`: `<sha1>_<name><ext>` names the file `<sha1><ext>`. */
export function archiveEntryIdent(entryPath: string): string {
  const name = basename(entryPath);
  return `${name.split('_')[0]}${extname(name)}`;
}

const sha1 = (data: Buffer) => createHash('sha1').update(data).digest('hex');

/** Content that is not what its identifier says (Grist's MismatchedFileHashError). */
class MismatchedFile extends Error {
  constructor(ident: string) {
    super(`attachment file ${ident} does not match its content`);
  }
}

/** A store named by a document that this server does not have (Grist's StoreNotAvailableError). */
function storeNotAvailable(storeId: string): ApiError {
  return new NotFound(`Store '${storeId}' is not a valid and available store`);
}

/** Rethrows what a store threw as a 503 (unreachable, refused: the request may succeed later). */
export function storeFailed(e: unknown): never {
  if (e instanceof ApiError) throw e;
  throw new ApiError(503, `Attachment store unavailable: ${(e as Error)?.message ?? e}`);
}

/** One document's attachment files (see the module comment). */
export class DocAttachmentFiles {
  /**
   * Every change touching a store (uploads to it, removals, transfers, restores) runs in turn:
   * otherwise a removal could delete a file an upload had just found there.
   */
  private lock: Promise<unknown> = Promise.resolve();
  /** Files to move, and the store each goes to (null: into the document); newer requests win. */
  private readonly pending = new Map<string, string | null>();
  private successes = 0;
  private failures = 0;
  private job: Promise<void> | null = null;
  private closed = false;

  constructor(private readonly ctx: DocFilesContext) {}

  private get db(): Database.Database {
    return this.ctx.grist.db;
  }

  private serialized<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.lock.then(fn);
    this.lock = run.catch(() => {});
    return run;
  }

  /** A file's row: its bytes (when in the document) and its store. */
  private fileRow(ident: string): {data: Buffer | null; storageId: string | null} | undefined {
    return this.db.prepare('SELECT data, storageId FROM _gristsys_Files WHERE ident = ?').get(ident) as
      | {data: Buffer | null; storageId: string | null}
      | undefined;
  }

  /** The store the document chose (null: none, files stay in the document). */
  storeId(): string | null {
    return attachmentStoreIdOf(this.db);
  }

  /** The store with this id, or 404 naming it when this server has none such. */
  private store(storeId: string): AttachmentStore {
    const store = this.ctx.stores.get(storeId);
    if (!store) throw storeNotAvailable(storeId);
    return store;
  }

  /** A file's bytes from an external store, or null when it is not there. */
  async readExternal(fileIdent: string, storageId: string): Promise<Buffer | null> {
    const store = this.store(storageId);
    try {
      return await store.get(this.ctx.docId, fileIdent);
    } catch (e) {
      storeFailed(e);
    }
  }

  /** Stores uploaded files in the document's chosen store; returns the new rows' ids. */
  addAttachments(
    files: readonly UploadedFile[],
    opts: AddAttachmentsOptions,
    writeRows: Parameters<typeof addAttachments>[3],
  ): Promise<number[]> {
    const storeId = this.storeId();
    if (!storeId) return addAttachments(this.db, files, opts, writeRows);
    const store = this.ctx.stores.get(storeId);
    // Grist refuses the upload too when the chosen store is not configured (StoreNotAvailableError).
    if (!store) return Promise.reject(new BadRequest(`Store '${storeId}' is not a valid and available store`));
    // Refused before any file is put where no row would ever name it.
    const readOnly = this.ctx.grist.readOnlyReason;
    if (readOnly !== null) return Promise.reject(new BadRequest(readOnly));
    return this.serialized(async () => {
      try {
        return await addAttachments(this.db, files, {...opts, external: {store, docId: this.ctx.docId}}, writeRows);
      } catch (e) {
        storeFailed(e);
      }
    });
  }

  /**
   * A file's bytes from store `storageId`, or, when it is not there because a transfer moved it
   * meanwhile (and deleted that copy), from where its row says now; null when it is missing.
   */
  async readCurrent(fileIdent: string, storageId: string): Promise<Buffer | null> {
    const data = await this.readExternal(fileIdent, storageId);
    if (data) return data;
    const row = this.fileRow(fileIdent);
    if (!row || (row.storageId || null) === storageId) return null;
    return row.storageId ? this.readExternal(fileIdent, row.storageId) : row.data;
  }

  /** GET /attachments/{id}/download, from wherever the file is. */
  async download(attId: number, opts: DownloadOptions = {}): Promise<AttachmentDownload> {
    const file = attachmentFile(this.db, attId);
    const data = file.storageId ? await this.readCurrent(file.fileIdent, file.storageId) : file.data;
    return attachmentDownloadOf(file, data, opts);
  }

  /**
   * removeUnused: the rows and files go from the document, then (once that is durable) the
   * removed files from their stores. A file whose store deletion fails stays there, unnamed, until
   * the document is deleted (Grist leaves every such file until then).
   */
  removeUnused(opts: {expiredOnly?: boolean} = {}): Promise<void> {
    return this.serialized(async () => {
      const removed = removeUnusedAttachments(this.db, opts);
      if (!removed.length) return;
      await this.ctx.durable();
      for (const f of removed) {
        try {
          await this.ctx.stores.get(f.storageId)?.delete(this.ctx.docId, f.ident);
        } catch (e) {
          this.ctx.onError(e, `deleting attachment ${f.ident} of ${this.ctx.docId} from store ${f.storageId}`);
        }
      }
    });
  }

  /** Grist's transfer status and where the files are. */
  status(): AttachmentStoreStatus {
    return {
      status: {
        pendingTransferCount: this.pending.size,
        isRunning: this.job !== null,
        successes: this.successes,
        failures: this.failures,
      },
      locationSummary: attachmentLocations(this.db),
    };
  }

  /**
   * POST /attachments/transferAll: every file not in the document's chosen store is queued to move
   * there, and one job per document moves them one at a time (Grist: files listed now; the counts
   * start again). Returns the status at once.
   */
  startTransferAll(): AttachmentStoreStatus {
    if (this.closed) throw new ApiError(503, 'The document is closing; try again');
    const target = this.storeId();
    this.successes = 0;
    this.failures = 0;
    const files = this.db.prepare('SELECT ident, storageId FROM _gristsys_Files').all() as {
      ident: string;
      storageId: string | null;
    }[];
    for (const f of files) if ((f.storageId || null) !== target) this.pending.set(f.ident, target);
    if (this.pending.size && !this.job) {
      const job = this.ctx
        .keepOpen(() => this.runTransfers())
        .catch((e) => this.ctx.onError(e, `attachment transfers of ${this.ctx.docId}`))
        .finally(() => {
          if (this.job === job) this.job = null;
        });
      this.job = job;
    }
    return this.status();
  }

  /** Resolves once no transfer runs (tests, shutdown). */
  async transfersDone(): Promise<void> {
    while (this.job) await this.job;
  }

  private async runTransfers(): Promise<void> {
    while (this.pending.size && !this.closed) {
      for (const [ident, target] of this.pending) {
        if (this.closed) return;
        try {
          await this.serialized(() => this.transferFile(ident, target));
          this.successes++;
        } catch (e) {
          this.failures++;
          this.ctx.onError(e, `moving attachment ${ident} of ${this.ctx.docId}`);
        } finally {
          // A newer request for the same file (another target) runs next round.
          if (this.pending.get(ident) === target) this.pending.delete(ident);
        }
      }
    }
  }

  /** Moves one file to `target` (null: into the document): new copy, row, durable, old copy deleted. */
  async transferFile(ident: string, target: string | null): Promise<void> {
    const row = this.fileRow(ident);
    const from = row?.storageId || null;
    if (!row || from === target) return;
    const data = from ? await this.readExternal(ident, from) : row.data;
    if (!data) throw new Error(`attachment file ${ident} is missing`);
    // Grist checks the content against its identifier before moving it.
    if (!ident.startsWith(sha1(data))) throw new MismatchedFile(ident);
    if (target) {
      try {
        await this.store(target).put(this.ctx.docId, ident, data);
      } catch (e) {
        storeFailed(e);
      }
    }
    // Only if the row is still as read: anything else changed it meanwhile, and that stands.
    const changed = this.ctx.grist.transaction(() => {
      const stmt = target
        ? this.db.prepare('UPDATE _gristsys_Files SET data = NULL, storageId = ? WHERE ident = ? AND storageId IS ?')
        : this.db.prepare('UPDATE _gristsys_Files SET data = ?, storageId = NULL WHERE ident = ? AND storageId IS ?');
      return stmt.run(target ?? data, ident, row.storageId).changes > 0;
    });
    if (!changed || !from) return;
    await this.ctx.durable();
    try {
      await this.ctx.stores.get(from)?.delete(this.ctx.docId, ident);
    } catch (e) {
      // Moved all the same: the old copy stays, unnamed, until the document is deleted.
      this.ctx.onError(e, `deleting the old copy of attachment ${ident} of ${this.ctx.docId} from store ${from}`);
    }
  }

  /**
   * POST /attachments/archive: restores files the document names but lacks from a `.tar` made by
   * GET /attachments/archive (Grist's addMissingFilesFromArchive). A file goes back to the store it
   * was in when this server has it, else to the document's chosen store, else into the document;
   * its content must match its identifier. `fileSize` of the attachments is set from the files.
   */
  restoreFromTar(stream: Readable): Promise<ArchiveUploadResult> {
    return this.serialized(async () => {
      const result: ArchiveUploadResult = {added: 0, errored: 0, unused: 0};
      const sizes = new Map<string, number>();
      const extract = tar.extract();
      const done = new Promise<void>((resolve, reject) => {
        extract.on('finish', resolve);
        extract.on('error', reject);
        stream.on('error', reject);
      });
      extract.on('entry', (header, body, next) => {
        const chunks: Buffer[] = [];
        body.on('data', (c: unknown) => chunks.push(c as Buffer));
        body.on('end', () => {
          const ident = archiveEntryIdent(header.name);
          this.restoreFile(ident, Buffer.concat(chunks)).then(
            (added) => {
              if (added) {
                result.added++;
                sizes.set(ident, header.size ?? 0);
              } else result.unused++;
              next();
            },
            (e) => {
              result.errored++;
              // Content that does not match its name is the caller's mistake, counted and not logged.
              if (!(e instanceof MismatchedFile))
                this.ctx.onError(e, `restoring attachment ${ident} of ${this.ctx.docId}`);
              next();
            },
          );
        });
      });
      stream.pipe(extract);
      try {
        await done;
      } catch {
        throw new BadRequest('File is not a valid .tar');
      }
      this.updateFileSizes(sizes);
      return result;
    });
  }

  /** Restores one file when the document names it and lacks it; false when it does not need it. */
  private async restoreFile(ident: string, data: Buffer): Promise<boolean> {
    const row = this.db
      .prepare('SELECT data IS NOT NULL AS here, storageId FROM _gristsys_Files WHERE ident = ?')
      .get(ident) as {here: number; storageId: string | null} | undefined;
    if (!row) return false;
    const from = row.storageId || null;
    if (!from && row.here) return false;
    const original = from ? this.ctx.stores.get(from) : null;
    if (original && (await original.exists(this.ctx.docId, ident))) return false;
    if (!ident.startsWith(sha1(data))) throw new MismatchedFile(ident);
    const target = original ? from : this.storeId();
    if (target) await this.store(target).put(this.ctx.docId, ident, data);
    this.ctx.grist.transaction(() => {
      if (target)
        this.db.prepare('UPDATE _gristsys_Files SET data = NULL, storageId = ? WHERE ident = ?').run(target, ident);
      else this.db.prepare('UPDATE _gristsys_Files SET data = ?, storageId = NULL WHERE ident = ?').run(data, ident);
    });
    return true;
  }

  /** Grist closes the loophole of an edited `fileSize`: restored files set it on their attachments. */
  private updateFileSizes(sizes: Map<string, number>): void {
    if (!sizes.size) return;
    const rows = this.db.prepare('SELECT id, fileIdent FROM _grist_Attachments').all() as {
      id: number;
      fileIdent: string;
    }[];
    const hit = rows.filter((r) => sizes.has(r.fileIdent));
    if (hit.length) this.ctx.grist.setAttachmentSizes(new Map(hit.map((r) => [r.id, sizes.get(r.fileIdent)!])));
  }

  /** Stops transfers (the document is closing): what was moved stays moved, the rest stays put. */
  close(): void {
    this.closed = true;
    this.pending.clear();
  }
}
