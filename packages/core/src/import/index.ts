/**
 * New documents from files: an uploaded `.grist` document (checked, then copied with SQLite's
 * online backup), a CSV/TSV file (one table, column types guessed as Grist guesses them), a copy
 * of an existing document, or an empty document. Each is built in a temporary file and moved
 * into place only when complete; on any failure the home record and every file are removed.
 */
import { closeSync, copyFileSync, existsSync, mkdirSync, openSync, readFileSync, readSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, extname, join } from 'node:path';
import Database from 'better-sqlite3';
import type { Engine } from '../engine.js';
import { BadRequest } from '../errors.js';
import type { OrgContext, Principal } from '../home/principal.js';
import { makeId } from '../ids.js';
import { createDocFile } from '../doc/create.js';
import { GristDoc } from '../doc/gristdoc.js';
import type { CellValue } from '../doc/types.js';
import { backupDoc } from '../export/backup.js';
import { decodeText, guessImportColumns, parseCsv } from './csv.js';
import { openGristUpload } from './grist.js';

export { decodeText, guessImportColumns, parseCsv, sniffDelimiter, type ImportColumn, type ParsedCsv } from './csv.js';
export { openGristUpload } from './grist.js';

/** An uploaded file: its bytes, or a file on disk (an HTTP upload streamed to a temporary file). */
export interface ImportedFile {
  /** Original file name (its extension picks the format; its base name is the default title). */
  fileName: string;
  data?: Uint8Array;
  path?: string;
}

function bytesOf(file: ImportedFile): Uint8Array {
  if (file.data !== undefined) return file.data;
  if (file.path !== undefined) return readFileSync(file.path);
  throw new BadRequest('No file to import');
}

function headOf(file: ImportedFile, n: number): Uint8Array {
  if (file.data !== undefined || file.path === undefined) return bytesOf(file).subarray(0, n);
  const fd = openSync(file.path, 'r');
  try {
    const buf = Buffer.alloc(n);
    return buf.subarray(0, readSync(fd, buf, 0, n, 0));
  } finally {
    closeSync(fd);
  }
}

export interface ImportOptions {
  /** Title of the new document (default: the file's base name). */
  documentName?: string | null;
  /** Timezone of a document made from CSV (default UTC). */
  timezone?: string | null;
  /** Progress of a CSV import: rows written so far, of `total`. */
  onProgress?: (done: number, total: number) => void;
}

export interface ImportResult {
  id: string;
  title: string;
}

const CSV_EXTENSIONS = new Set(['.csv', '.tsv', '.txt', '.dsv']);
const CSV_BATCH_ROWS = 5000;

function tmpDir(engine: Engine): string {
  const dir = join(engine.dataDir, 'tmp');
  mkdirSync(dir, { recursive: true });
  return dir;
}

function removeFiles(path: string): void {
  for (const suffix of ['', '-wal', '-shm', '-journal']) rmSync(path + suffix, { force: true });
}

/**
 * Creates the home record of a document in `wid` (access checks happen here), then runs `build`
 * to write its file at a temporary path, and moves that file into place. Undoes everything if
 * any step fails.
 */
async function createDocWith(engine: Engine, wid: number, p: Principal, name: string,
                             build: (tmpPath: string) => void | Promise<void>): Promise<ImportResult> {
  const doc = await engine.home.createDoc(wid, p, { name });
  const tmp = join(tmpDir(engine), `${makeId()}.grist`);
  try {
    await build(tmp);
    const dest = engine.docPath(doc.id);
    if (existsSync(dest)) throw new Error(`document file ${dest} already exists`);
    renameSync(tmp, dest);
  } catch (e) {
    removeFiles(tmp);
    await engine.removeDocFiles([doc.id]).catch(() => undefined);
    await engine.store.deleteDoc(doc.id);
    throw e;
  } finally {
    removeFiles(tmp);
  }
  return { id: doc.id, title: doc.name };
}

/** Copies a document with the online backup API, into a plain single file (no WAL beside it). */
async function copyDatabase(src: Database.Database, dest: string): Promise<void> {
  await src.backup(dest);
}

/** The name the file gives the document (`Sales.csv` gives `Sales`). */
export function titleFromFileName(fileName: string): string {
  const base = basename(fileName || '');
  const ext = extname(base);
  return (ext ? base.slice(0, -ext.length) : base) || 'Untitled upload';
}

/** Imports a `.grist` document as a new document in workspace `wid`. */
export async function importGristDoc(engine: Engine, wid: number, p: Principal, file: ImportedFile,
                                     opts: ImportOptions = {}): Promise<ImportResult> {
  const name = opts.documentName || titleFromFileName(file.fileName);
  return createDocWith(engine, wid, p, name, async (tmp) => {
    const upload = `${tmp}.upload`;
    try {
      if (file.path !== undefined) copyFileSync(file.path, upload);
      else writeFileSync(upload, bytesOf(file), { mode: 0o600 });
      const src = openGristUpload(upload);
      try {
        await copyDatabase(src, tmp);
      } finally {
        src.close();
      }
    } finally {
      removeFiles(upload);
    }
  });
}

/** Imports a CSV (or TSV) file as a new document holding one table named after the file. */
export async function importCsvDoc(engine: Engine, wid: number, p: Principal, file: ImportedFile,
                                   opts: ImportOptions = {}): Promise<ImportResult> {
  const parsed = parseCsv(decodeText(bytesOf(file)), extname(file.fileName).toLowerCase() === '.tsv' ? { delimiter: '\t' } : {});
  const name = opts.documentName || titleFromFileName(file.fileName);
  const timezone = opts.timezone || 'UTC';
  return createDocWith(engine, wid, p, name, (tmp) => {
    const doc = GristDoc.create(tmp, { timezone });
    try {
      buildCsvTable(doc, titleFromFileName(file.fileName), parsed, timezone, opts.onProgress);
      doc.db.pragma('journal_mode = DELETE');
    } finally {
      doc.close();
    }
  });
}

/** Replaces the starter table of a new document with the CSV's table. Returns its tableId. */
export function buildCsvTable(doc: GristDoc, tableName: string, parsed: ReturnType<typeof parseCsv>, timezone: string,
                              onProgress?: (done: number, total: number) => void): string {
  const columns = guessImportColumns(parsed, { locale: 'en-US' }, timezone);
  if (!columns.length) throw new BadRequest('The file holds no data to import');
  doc.removeTable('Table1');
  const [{ id: tableId }] = doc.addTables([{ id: tableName, columns: columns.map((c) => c.spec) }]);
  const colIds = doc.listColumns(tableId).map((c) => c.id);
  const written = columns.map((c, j) => ({ colId: colIds[j], values: c.values })).filter((c) => c.values !== null);
  const total = parsed.rows.length;
  for (let start = 0; start < total; start += CSV_BATCH_ROWS) {
    const end = Math.min(total, start + CSV_BATCH_ROWS);
    const data: Record<string, CellValue[]> = {};
    for (const c of written) data[c.colId] = c.values!.slice(start, end);
    if (written.length) {
      doc.addColumnar(tableId, data, { parse: false });
    } else {
      doc.addRecords(tableId, new Array(end - start).fill({}), { parse: false });
    }
    onProgress?.(end, total);
  }
  return tableId;
}

/** Imports an uploaded file by its extension: `.grist`, or CSV/TSV text. Others answer 400. */
export async function importUpload(engine: Engine, wid: number, p: Principal, file: ImportedFile,
                                   opts: ImportOptions = {}): Promise<ImportResult> {
  const ext = extname(file.fileName).toLowerCase();
  const isSqlite = Buffer.from(headOf(file, 15)).toString('latin1') === 'SQLite format 3';
  if (ext === '.grist' || (ext === '' && isSqlite)) return importGristDoc(engine, wid, p, file, opts);
  if (CSV_EXTENSIONS.has(ext)) return importCsvDoc(engine, wid, p, file, opts);
  throw new BadRequest(`Unsupported file type "${ext || file.fileName}": import .grist, .csv or .tsv files`);
}

/** An empty document (Table1 with columns A, B, C), optionally in a given timezone. */
export async function createEmptyDoc(engine: Engine, wid: number, p: Principal,
                                     opts: { name?: string | null; timezone?: string | null } = {}): Promise<ImportResult> {
  return createDocWith(engine, wid, p, opts.name || 'Untitled document', (tmp) => {
    createDocFile(tmp, opts.timezone ? { timezone: opts.timezone } : {});
  });
}

/**
 * A copy of document `sourceKey` (which the caller must be able to view) in workspace `wid`;
 * `asTemplate` keeps the structure and drops data and history, as the `.grist` download does.
 */
export async function copyDoc(engine: Engine, sourceKey: string, p: Principal, org: OrgContext, wid: number,
                              opts: { name?: string | null; asTemplate?: boolean } = {}): Promise<ImportResult> {
  const { doc: source } = await engine.docAccess(sourceKey, p, org, 'viewers');
  return createDocWith(engine, wid, p, opts.name || source.name, async (tmp) => {
    // A read-only connection of its own: consistent under WAL, and needs no lease when several
    // processes share the data directory.
    const src = new Database(engine.docPath(source.id), { readonly: true, fileMustExist: true });
    try {
      await backupDoc(src, tmp, { template: Boolean(opts.asTemplate) });
    } finally {
      src.close();
    }
  });
}
