/**
 * Attachments stored as Grist stores them (SPEC §12): one `_grist_Attachments` row per upload, the
 * bytes once per unique content in `_gristsys_Files`, keyed by `sha1hex + ext`. Works on a
 * better-sqlite3 handle, independent of the document engine.
 */
import {createHash} from 'node:crypto';
import {basename, extname} from 'node:path/posix';
import type Database from 'better-sqlite3';
import {imageSize} from 'image-size';
import {ApiError, BadRequest, NotFound} from '../base/index.js';
import {META_TYPES} from '../doc/schema.js';
import {makeDecoder} from '../doc/types.js';
import {contentTypeForExt, guessExt} from './ext.js';
import {compileFilter, rowComparator, sortAndLimit, type TableQuery} from './query.js';
import type {AttachmentStore} from './external.js';

/** One uploaded file, as the multipart parser hands it over. */
export interface UploadedFile {
  /** The original file name of the part. */
  fileName: string;
  /** The part's Content-Type, or null when it had none. */
  mimeType: string | null;
  data: Buffer;
}

/** Options of `addAttachments`. */
export interface AddAttachmentsOptions {
  /** Largest accepted file, in bytes (0 or absent: unlimited). */
  maxBytes?: number;
  /** Clock for `timeUploaded` (milliseconds). */
  now?: () => number;
  /**
   * The document's external store (`documentSettings.attachmentStoreId`): new files are put there
   * before their rows are written, and `_gristsys_Files` keeps `storageId` and no bytes.
   */
  external?: {store: AttachmentStore; docId: string};
}

/** A new `_grist_Attachments` row. */
export type AttachmentRow = {[K in 'fileIdent' | 'fileName' | 'fileType' | 'fileExt']: string} & {
  [K in 'fileSize' | 'imageHeight' | 'imageWidth' | 'timeUploaded']: number;
};

/**
 * Adds the rows in the document's write transaction, after `storeFiles` (GristDoc
 * addAttachmentRecords); without one, they are inserted directly.
 */
export type AttachmentRowWriter = (rows: AttachmentRow[], storeFiles: () => void) => number[];

/** Metadata the API shows for an attachment (SPEC §12.3-12.4). */
export interface AttachmentInfo {
  fileName: string;
  fileSize: number;
  timeUploaded?: string;
}

/** An attachment's bytes with the headers Grist sends them with. */
export interface AttachmentDownload {
  data: Buffer;
  /** Content-Type, Content-Disposition, Cache-Control, Content-Security-Policy, Content-Length. */
  headers: Record<string, string>;
}

/** Grist's `byteString`: `512B`, `4.1KB`, `100.0MB`. */
export function byteString(bytes: number): string {
  if (bytes < 1024) return `${bytes}B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)}KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)}MB`;
}

/** The 413 Grist answers for a file over the limit. */
export function attachmentTooLarge(maxBytes: number): ApiError {
  return new ApiError(413, `Attachments must not exceed ${byteString(maxBytes)}`);
}

interface PreparedFile {
  fileIdent: string;
  fileName: string;
  fileExt: string;
  fileSize: number;
  imageWidth: number;
  imageHeight: number;
  data: Buffer;
}

function imageDimensions(data: Buffer): {width: number; height: number} {
  try {
    const d = imageSize(data);
    return {width: d.width ?? 0, height: d.height ?? 0};
  } catch {
    return {width: 0, height: 0}; // Not an image (or not one image-size knows).
  }
}

/**
 * Stores uploaded files and returns the new `_grist_Attachments` row ids, in upload order. All the
 * files go in one transaction: an upload that fails leaves nothing behind. Identical content with
 * the same extension is stored once.
 */
export async function addAttachments(
  db: Database.Database,
  files: readonly UploadedFile[],
  opts: AddAttachmentsOptions = {},
  writeRows?: AttachmentRowWriter,
): Promise<number[]> {
  if (opts.maxBytes) {
    for (const f of files) if (f.data.byteLength > opts.maxBytes) throw attachmentTooLarge(opts.maxBytes);
  }
  const prepared: PreparedFile[] = [];
  for (const f of files) {
    const fileExt = await guessExt(f.data, f.fileName, f.mimeType);
    const checksum = createHash('sha1').update(f.data).digest('hex');
    const {width, height} = imageDimensions(f.data);
    prepared.push({
      fileIdent: checksum + fileExt,
      fileName: f.fileName,
      fileExt,
      fileSize: f.data.byteLength,
      imageWidth: width,
      imageHeight: height,
      data: f.data,
    });
  }
  const now = opts.now ?? Date.now;
  const findFile = db.prepare(
    'SELECT data IS NOT NULL OR storageId IS NOT NULL AS present, storageId FROM _gristsys_Files WHERE ident = ?',
  );
  // Grist's addFile to a store: a file already kept (in the document or another store) stays
  // where it is; one that is new, or whose row names this store but whose file is gone, is put.
  const put = new Set<string>();
  const ext = opts.external;
  if (ext) {
    for (const p of prepared) {
      if (put.has(p.fileIdent)) continue;
      const row = findFile.get(p.fileIdent) as {present: number; storageId: string | null} | undefined;
      const missing =
        !row?.present || (row.storageId === ext.store.id && !(await ext.store.exists(ext.docId, p.fileIdent)));
      if (!missing) continue;
      await ext.store.put(ext.docId, p.fileIdent, p.data);
      put.add(p.fileIdent);
    }
  }
  const insertFile = db.prepare('INSERT INTO _gristsys_Files (ident, data) VALUES (?, ?)');
  const fillFile = db.prepare('UPDATE _gristsys_Files SET data = ? WHERE ident = ?');
  const insertExternal = db.prepare('INSERT INTO _gristsys_Files (ident, data, storageId) VALUES (?, NULL, ?)');
  const fillExternal = db.prepare('UPDATE _gristsys_Files SET data = NULL, storageId = ? WHERE ident = ?');
  const storeFiles = () => {
    for (const p of prepared) {
      const existing = findFile.get(p.fileIdent) as {present: number} | undefined;
      // A file put in the store is named by its row; anything else keeps its bytes here.
      if (!existing) {
        if (put.has(p.fileIdent)) insertExternal.run(p.fileIdent, ext!.store.id);
        else insertFile.run(p.fileIdent, p.data);
      } else if (!existing.present) {
        if (put.has(p.fileIdent)) fillExternal.run(ext!.store.id, p.fileIdent);
        else fillFile.run(p.data, p.fileIdent);
      }
    }
  };
  const rows: AttachmentRow[] = prepared.map((p) => ({
    fileIdent: p.fileIdent,
    fileName: p.fileName,
    fileType: '',
    fileSize: p.fileSize,
    imageHeight: p.imageHeight,
    imageWidth: p.imageWidth,
    timeUploaded: Math.trunc(now()),
    fileExt: p.fileExt,
  }));
  if (writeRows) return writeRows(rows, storeFiles);
  // Integers bound as BigInt: the metadata columns are declared BLOB, where SQLite keeps a JS
  // number as REAL; Grist stores these as INTEGER.
  const insertRow = db.prepare(
    `INSERT INTO _grist_Attachments (fileIdent, fileName, fileType, fileSize, imageHeight, imageWidth, timeUploaded, fileExt)
     VALUES (?, ?, '', ?, ?, ?, ?, ?)`,
  );
  return db.transaction(() => {
    storeFiles();
    return rows.map((r) =>
      Number(
        insertRow.run(
          r.fileIdent,
          r.fileName,
          BigInt(r.fileSize),
          BigInt(r.imageHeight),
          BigInt(r.imageWidth),
          BigInt(r.timeUploaded),
          r.fileExt,
        ).lastInsertRowid,
      ),
    );
  })();
}

const ATTACHMENT_TYPES = META_TYPES._grist_Attachments;
const DECODERS = Object.fromEntries(Object.entries(ATTACHMENT_TYPES).map(([col, type]) => [col, makeDecoder(type)]));
const COLUMNS = new Set(['id', ...Object.keys(ATTACHMENT_TYPES)]);

function decodeRow(raw: Record<string, unknown>): Record<string, unknown> {
  const row: Record<string, unknown> = {};
  for (const [col, value] of Object.entries(raw)) {
    row[col] = col === 'id' ? value : (DECODERS[col]?.(value) ?? value);
  }
  return row;
}

/** Grist's `cleanAttachmentRecord`: only three fields, `timeUploaded` as ISO when it is a number. */
function cleanRecord(row: Record<string, unknown>): AttachmentInfo {
  const time = row.timeUploaded;
  const timeUploaded = typeof time === 'number' ? new Date(time).toISOString() : undefined;
  const info = {fileName: row.fileName, fileSize: row.fileSize} as AttachmentInfo;
  if (timeUploaded !== undefined) info.timeUploaded = timeUploaded;
  return info;
}

/** Beyond Grist: a page of GET /attachments (cursor pagination). */
export interface AttachmentPage {
  /** Only the attachments after this position: the sort columns' and id's values of a previous page's last row. */
  after?: Readonly<Record<string, unknown>>;
  /** Set to where the page stopped (null: nothing beyond) when a positive limit is given. */
  page?: {next: Record<string, unknown> | null};
  /** Under access rules, the attachments the caller may see (before the limit applies). */
  readable?: ReadonlySet<number> | null;
}

/**
 * GET /attachments: every `_grist_Attachments` row (soft-deleted ones included), filtered, sorted
 * and limited on its columns as GET /records does, showing three fields.
 */
export function listAttachments(
  db: Database.Database,
  query: TableQuery = {},
  opts: AttachmentPage = {},
): {records: {id: number; fields: AttachmentInfo}[]} {
  const {where, params} = compileFilter(query.filter, COLUMNS);
  const paging = opts.page && query.limit !== undefined && query.limit > 0 && query.limit < Number.MAX_SAFE_INTEGER;
  // Beyond 2^53 a limit does not bind as an integer ("datatype mismatch"); the JS path handles it.
  const useSqlLimit =
    !paging &&
    !opts.after &&
    !opts.readable &&
    !query.sort?.length &&
    query.limit !== undefined &&
    query.limit > 0 &&
    query.limit <= Number.MAX_SAFE_INTEGER;
  const sql = `SELECT * FROM _grist_Attachments ${where} ORDER BY id${useSqlLimit ? ' LIMIT ?' : ''}`;
  const raw = db.prepare(sql).all(useSqlLimit ? [...params, query.limit!] : params) as Record<string, unknown>[];
  let decoded = raw.map(decodeRow);
  if (opts.readable) decoded = decoded.filter((r) => opts.readable!.has(r.id as number));
  const specs = (query.sort ?? []).filter((s) => s !== '');
  const compare = rowComparator(query, COLUMNS);
  if (opts.after) {
    // The rows after the position in the query's order: (sort values, id), id breaking ties.
    const after = opts.after;
    if (!Object.hasOwn(after, 'id') || specs.some((s) => !Object.hasOwn(after, sortColumn(s)))) {
      throw new BadRequest('Invalid cursor: it does not fit this query');
    }
    decoded = decoded.filter((r) => {
      const c = compare ? compare(r, after) : 0;
      return c > 0 || (c === 0 && (r.id as number) > (after.id as number));
    });
  }
  let rows = sortAndLimit(decoded, paging ? {...query, limit: query.limit! + 1} : query, COLUMNS);
  if (opts.page) {
    opts.page.next = null;
    if (paging && rows.length > query.limit!) {
      rows = rows.slice(0, query.limit);
      const last = rows[rows.length - 1];
      opts.page.next = Object.fromEntries(['id', ...specs.map(sortColumn)].map((c) => [c, last[c] ?? null]));
    }
  }
  return {records: rows.map((r) => ({id: r.id as number, fields: cleanRecord(r)}))};
}

/** The column of a sort spec (`-fileSize:naturalSort` -> `fileSize`). */
function sortColumn(spec: string): string {
  return /^-?([^:]*)/.exec(spec)![1];
}

function attachmentRow(db: Database.Database, attId: number): Record<string, unknown> {
  const raw = db.prepare('SELECT * FROM _grist_Attachments WHERE id = ?').get(attId) as
    | Record<string, unknown>
    | undefined;
  if (!raw) throw new NotFound(`Attachment not found: ${attId}`);
  return decodeRow(raw);
}

/** GET /attachments/{id}: `{fileName, fileSize, timeUploaded}`, or 404 `Attachment not found: N`. */
export function getAttachmentMetadata(db: Database.Database, attId: number): AttachmentInfo {
  return cleanRecord(attachmentRow(db, attId));
}

const NON_ASCII_RE = /[^\x20-\x7e]/g;
const HEX_ESCAPE_RE = /%[0-9A-Fa-f]{2}/;

/**
 * Content-Disposition as RFC 6266 advises (decision: Grist sends ISO-8859-1 names raw and
 * replaces other characters with `?`): `filename="..."` is always ASCII (accents dropped, other
 * characters `?`), and any name that is not plain ASCII also gets `filename*=UTF-8''...` (RFC 8187),
 * which every current browser prefers.
 */
export function contentDisposition(fileName: string, type: 'attachment' | 'inline' = 'attachment'): string {
  const name = basename(fileName);
  const quoted = (s: string) => `"${s.replace(/([\\"])/g, '\\$1')}"`;
  const extended = (s: string) =>
    "UTF-8''" +
    encodeURIComponent(s).replace(
      /[\x00-\x20"'()*,/:;<=>?@[\\\]{}\x7f]/g,
      (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase(),
    );
  if (!name) return type;
  const fallback = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(NON_ASCII_RE, '?');
  let out = `${type}; filename=${quoted(fallback)}`;
  if (fallback !== name || HEX_ESCAPE_RE.test(name)) out += `; filename*=${extended(name)}`;
  return out;
}

/** Options of an attachment download (`?inline=1`, `?name=`). */
export interface DownloadOptions {
  /** `?inline=1`: `Content-Disposition: inline` (never for `text/html`). */
  inline?: boolean;
  /** `?name=`: the file name to offer instead of the stored one. */
  name?: string;
}

/** Where an attachment's file is: its bytes in the document, or the store that holds them. */
export interface AttachmentFile {
  fileIdent: string;
  fileName: string;
  /** The bytes when the document holds them (null: in a store, or missing). */
  data: Buffer | null;
  /** The external store holding them (`_gristsys_Files.storageId`), or null. */
  storageId: string | null;
}

/** The row of attachment `attId` and where its file is; 404 `Attachment not found: N` for an unknown id. */
export function attachmentFile(db: Database.Database, attId: number): AttachmentFile {
  const row = attachmentRow(db, attId);
  const fileIdent = String(row.fileIdent ?? '');
  const file = db.prepare('SELECT data, storageId FROM _gristsys_Files WHERE ident = ?').get(fileIdent) as
    | {data: Uint8Array | null; storageId: string | null}
    | undefined;
  const data = file?.data ?? null;
  return {
    fileIdent,
    fileName: String(row.fileName ?? ''),
    data: data === null || Buffer.isBuffer(data) ? data : Buffer.from(data),
    storageId: file?.storageId || null,
  };
}

/**
 * An attachment's bytes with the headers Grist sends (`data` null: 404 `Invalid attachment
 * identifier`, the file is missing).
 */
export function attachmentDownloadOf(
  file: Pick<AttachmentFile, 'fileIdent' | 'fileName'>,
  data: Buffer | null,
  opts: DownloadOptions = {},
): AttachmentDownload {
  if (data === null) throw new NotFound('Invalid attachment identifier');
  const ext = extname(file.fileIdent);
  const origName = file.fileName;
  const fileName = opts.name || (ext ? basename(origName, extname(origName)) + ext : origName);
  const contentType = contentTypeForExt(ext);
  const inline = opts.inline && !contentType.startsWith('text/html');
  return {
    data,
    headers: {
      'Content-Type': contentType,
      'Content-Disposition': contentDisposition(fileName, inline ? 'inline' : 'attachment'),
      'Cache-Control': 'private, max-age=3600',
      'Content-Security-Policy': "sandbox; default-src 'none'",
      'Content-Length': String(data.byteLength),
    },
  };
}

/**
 * GET /attachments/{id}/download of a file the document holds: the bytes with the headers Grist
 * sends. 404 `Attachment not found: N` for an unknown id, 404 `Invalid attachment identifier`
 * when the file is missing (or in an external store: `OpenDocument.attachmentDownload` reads those).
 */
export function getAttachmentDownload(
  db: Database.Database,
  attId: number,
  opts: DownloadOptions = {},
): AttachmentDownload {
  const file = attachmentFile(db, attId);
  return attachmentDownloadOf(file, file.data, opts);
}

/** Grist's integer parameter check for `attId`. */
export function parseAttId(value: string): number {
  const n = parseInt(value, 10);
  if (Number.isNaN(n)) throw new BadRequest(`attId parameter cannot be understood as an integer: ${value}`);
  return n;
}

/** Grist's ATTACHMENTS_EXPIRY_DAYS: `removeUnused?expiredonly=1` removes rows unused this long. */
export const ATTACHMENTS_EXPIRY_DAYS = 7;

/** The attachment ids referenced by any Attachments cell of any user table. */
function usedAttachmentIds(db: Database.Database): Set<number> {
  const cols = db
    .prepare(
      `SELECT t.tableId AS tableId, c.colId AS colId FROM _grist_Tables_column c JOIN _grist_Tables t ON t.id = c.parentId
     WHERE c.type = 'Attachments'`,
    )
    .all() as {tableId: string; colId: string}[];
  const used = new Set<number>();
  const q = (s: string) => `"${s.replace(/"/g, '""')}"`;
  for (const {tableId, colId} of cols) {
    let cells: unknown[];
    try {
      cells = db
        .prepare(`SELECT ${q(colId)} FROM ${q(tableId)}`)
        .pluck()
        .all();
    } catch {
      continue; // metadata naming a column the table lacks: nothing is used there
    }
    for (const cell of cells) {
      let list: unknown = cell;
      if (typeof cell === 'string' && cell.startsWith('[')) {
        try {
          list = JSON.parse(cell);
        } catch {
          continue;
        }
      }
      if (Array.isArray(list)) for (const v of list) if (typeof v === 'number') used.add(v);
    }
  }
  return used;
}

/**
 * POST .../attachments/updateUsed: Grist's usage scan. An attachment no cell references gets
 * `timeDeleted` (now, in seconds); one referenced again loses it. Returns whether anything changed.
 */
export function updateUsedAttachments(db: Database.Database, now: () => number = Date.now): boolean {
  const used = usedAttachmentIds(db);
  const rows = db.prepare('SELECT id, timeDeleted FROM _grist_Attachments').all() as {
    id: number;
    timeDeleted: unknown;
  }[];
  const set = db.prepare('UPDATE _grist_Attachments SET timeDeleted = ? WHERE id = ?');
  const stamp = now() / 1000;
  let changed = false;
  db.transaction(() => {
    for (const r of rows) {
      const deleted = r.timeDeleted !== null && r.timeDeleted !== undefined;
      if (!deleted && !used.has(r.id)) {
        set.run(stamp, r.id);
        changed = true;
      }
      if (deleted && used.has(r.id)) {
        set.run(null, r.id);
        changed = true;
      }
    }
  })();
  return changed;
}

/**
 * POST .../attachments/removeUnused: after the usage scan, removes the soft-deleted attachment
 * rows (with `expiredOnly`, those deleted over ATTACHMENTS_EXPIRY_DAYS ago), then the stored files
 * no row names, as Grist does. Returns the removed files that were in external stores, for the
 * caller to delete there once the removal is durable.
 */
export function removeUnusedAttachments(
  db: Database.Database,
  opts: {expiredOnly?: boolean; now?: () => number} = {},
): {ident: string; storageId: string}[] {
  const now = opts.now ?? Date.now;
  updateUsedAttachments(db, now);
  const cutoff = now() / 1000 - ATTACHMENTS_EXPIRY_DAYS * 24 * 3600;
  return db.transaction(() => {
    if (opts.expiredOnly) {
      db.prepare('DELETE FROM _grist_Attachments WHERE timeDeleted IS NOT NULL AND timeDeleted < ?').run(cutoff);
    } else {
      db.prepare('DELETE FROM _grist_Attachments WHERE timeDeleted IS NOT NULL').run();
    }
    const unused = 'FROM _gristsys_Files WHERE ident NOT IN (SELECT fileIdent FROM _grist_Attachments)';
    const external = db
      .prepare(`SELECT ident, storageId ${unused} AND storageId IS NOT NULL AND storageId != ''`)
      .all() as {ident: string; storageId: string}[];
    db.prepare(`DELETE ${unused}`).run();
    return external;
  })();
}

/**
 * Bytes of a document's attachment files, as Grist counts them for usage: each file once however
 * many attachment rows share it, soft-deleted attachments left out, stored bytes for internal
 * files and the recorded size (which restores rewrite) for external ones.
 */
export function attachmentBytes(db: Database.Database): number {
  try {
    const row = db
      .prepare(
        `SELECT SUM(len) AS total FROM (
           SELECT CASE WHEN f.storageId IS NOT NULL AND f.storageId != '' THEN MAX(a.fileSize) ELSE MAX(LENGTH(f.data)) END AS len
           FROM _gristsys_Files f JOIN _grist_Attachments a ON a.fileIdent = f.ident
           WHERE a.timeDeleted IS NULL
           GROUP BY a.fileIdent)`,
      )
      .get() as {total: number | null} | undefined;
    return Number(row?.total ?? 0);
  } catch {
    return 0; // An old document without _gristsys_Files holds no files.
  }
}

/** Grist's `locationSummary`: where a document's files are (`none` when it has none). */
export function attachmentLocations(db: Database.Database): 'none' | 'internal' | 'external' | 'mixed' {
  let row: {internal: number | null; external: number | null} | undefined;
  try {
    row = db
      .prepare(
        `SELECT SUM(storageId IS NULL OR storageId = '') AS internal, SUM(storageId IS NOT NULL AND storageId != '') AS external
         FROM _gristsys_Files`,
      )
      .get() as typeof row;
  } catch {
    return 'none'; // An old document without _gristsys_Files holds no files.
  }
  const internal = (row?.internal ?? 0) > 0;
  const external = (row?.external ?? 0) > 0;
  return internal && external ? 'mixed' : external ? 'external' : internal ? 'internal' : 'none';
}

/** `?verifyfiles` / POST .../verifyFiles: the stored files are exactly those the rows name. */
export function verifyAttachmentFiles(db: Database.Database): boolean {
  const a = db.prepare('SELECT DISTINCT fileIdent FROM _grist_Attachments ORDER BY fileIdent').pluck().all();
  const b = db.prepare('SELECT ident FROM _gristsys_Files ORDER BY ident').pluck().all();
  return JSON.stringify(a) === JSON.stringify(b);
}
