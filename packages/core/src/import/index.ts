/**
 * New documents from files: an uploaded `.grist` document (checked, then copied with SQLite's
 * online backup), a CSV/TSV file (one table, column types guessed as Grist guesses them), a copy
 * of an existing document, or an empty document. Each is built in a temporary file and moved
 * into place only when complete; on any failure the home record and every file are removed.
 */
import {
  closeSync,
  copyFileSync,
  createReadStream,
  createWriteStream,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readSync,
  renameSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import {basename, extname, join} from 'node:path';
import {Readable} from 'node:stream';
import {pipeline} from 'node:stream/promises';
import Database from 'better-sqlite3';
import type {ImportHost} from './host.js';
export type {ImportHost, ImportSourceDoc} from './host.js';
import {BadRequest, Forbidden, HeldElsewhere} from '../base/index.js';
import type {OrgContext, Principal} from '../home/principal.js';
import type {Doc} from '../home/types.js';
import {makeId} from '../base/index.js';
import {createDocFile} from '../doc/create.js';
import {removeSqliteFiles} from '../doc/files.js';
import {GristDoc} from '../doc/gristdoc.js';
import {upgradeDocFile} from '../doc/migrations/index.js';
import type {CellValue} from '../doc/types.js';
import {backupDoc} from '../export/backup.js';
import {carryAttachmentFiles} from '../attachments/copy.js';
import {fitRow, guessImportColumns, readCsvBatches, splitHeaders} from './csv.js';
import {dropPrivateObjects, openGristUpload} from './grist.js';
import {IMPORT_BATCH_CELLS, IMPORT_GUESS_CELLS, IMPORT_GUESS_ROWS, MAX_IMPORT_COLUMNS} from './limits.js';

export {
  decodeText,
  detectEncoding,
  guessImportColumns,
  parseCsv,
  readCsvBatches,
  readCsvRecords,
  sniffDelimiter,
  type CsvReadOptions,
  type ImportColumn,
  type ParsedCsv,
} from './csv.js';
export {dropPrivateObjects, openGristUpload} from './grist.js';
export {IMPORT_BATCH_CELLS, IMPORT_GUESS_CELLS, IMPORT_GUESS_ROWS, MAX_IMPORT_COLUMNS} from './limits.js';

/**
 * An uploaded file: its bytes in memory, a file on disk (read, never changed), or a stream
 * (copied to a temporary file first). Exactly one of `data`, `path`, `stream`.
 */
export interface ImportedFile {
  /** Original file name (its extension picks the format; its base name is the default title). */
  fileName: string;
  data?: Uint8Array;
  path?: string;
  stream?: Readable;
}

/**
 * How far an import is: rows written (CSV), the part of the current stage done (0 to 1) when
 * known, and the stage: a CSV import only reads `rows`; a `.grist` import copies the file, then
 * upgrades an older schema, then recomputes every formula (the last two can take longer than
 * the copy on a large document, so each is reported when it starts).
 */
export interface ImportProgress {
  rows: number | null;
  fraction: number | null;
  stage: 'rows' | 'copy' | 'upgrade' | 'formulas' | 'done';
}

/** Options of an import: the new document's name and time zone, and a progress callback. */
export interface ImportOptions {
  /** Title of the new document (default: the file's base name). */
  documentName?: string | null;
  /** Timezone of a document made from CSV (default UTC). */
  timezone?: string | null;
  /** Called after each batch of rows (CSV) or step of the copy (`.grist`). */
  onProgress?: (progress: ImportProgress) => void;
  /**
   * The scheme and host of the request that imports (`https://host`): formulas computed by the
   * import see the new document's URL on it (SELF_HYPERLINK) unless the engine has a public URL.
   */
  requestBase?: string | null;
}

/** The new document of an import. */
export interface ImportResult {
  id: string;
  title: string;
  /**
   * Set when the new document can be read but not written (a `.grist` file with a schema newer
   * than gristlite's): the reason every write to it will answer with.
   */
  readOnly?: string;
}

const CSV_EXTENSIONS = new Set(['.csv', '.tsv', '.txt', '.dsv']);
const READ_CHUNK_BYTES = 1 << 20;

function tmpDir(engine: ImportHost): string {
  const dir = join(engine.dataDir, 'tmp');
  mkdirSync(dir, {recursive: true});
  return dir;
}

/**
 * Creates the home record of a document in `wid` (access checks happen here), then runs `build`
 * to write its file at a temporary path, and moves that file into place. Undoes everything if
 * any step fails.
 */
async function createDocWith(
  engine: ImportHost,
  wid: number,
  p: Principal,
  name: string,
  // biome-ignore lint/suspicious/noConfusingVoidType: a builder returns nothing, or the new document's read-only reason
  build: (tmpPath: string, doc: Doc) => void | Promise<void | {readOnly?: string}>,
): Promise<ImportResult> {
  const doc = await engine.home.createDoc(wid, p, {name});
  const tmp = join(tmpDir(engine), `${makeId()}.grist`);
  let readOnly: string | undefined;
  try {
    readOnly = (await build(tmp, doc))?.readOnly;
    const dest = engine.docPath(doc.id);
    if (existsSync(dest)) throw new Error(`document file ${dest} already exists`);
    renameSync(tmp, dest);
    await engine.docFileCreated(doc.id);
  } catch (e) {
    removeSqliteFiles(tmp);
    await engine.removeDocFiles([doc.id]).catch(() => undefined);
    await engine.store.deleteDoc(doc.id);
    throw e;
  } finally {
    removeSqliteFiles(tmp);
  }
  return readOnly === undefined ? {id: doc.id, title: doc.name} : {id: doc.id, title: doc.name, readOnly};
}

/** The name the file gives the document (`Sales.csv` gives `Sales`). */
export function titleFromFileName(fileName: string): string {
  const base = basename(fileName || '');
  const ext = extname(base);
  return (ext ? base.slice(0, -ext.length) : base) || 'Untitled upload';
}

/** Writes an upload to the file `dest` (a copy, for a file on disk). */
async function toFile(file: ImportedFile, dest: string): Promise<void> {
  if (file.path !== undefined) copyFileSync(file.path, dest);
  else if (file.data !== undefined) writeFileSync(dest, file.data, {mode: 0o600});
  else if (file.stream) await pipeline(file.stream, createWriteStream(dest, {mode: 0o600}));
  else throw new BadRequest('No file to import');
}

/** Imports a `.grist` document as a new document in workspace `wid`. */
export async function importGristDoc(
  engine: ImportHost,
  wid: number,
  p: Principal,
  file: ImportedFile,
  opts: ImportOptions = {},
): Promise<ImportResult> {
  const name = opts.documentName || titleFromFileName(file.fileName);
  return createDocWith(engine, wid, p, name, async (tmp, home) => {
    // A copy of our own: opening the caller's file could leave -wal/-shm files beside it.
    const upload = `${tmp}.upload`;
    try {
      await toFile(file, upload);
      const src = openGristUpload(upload);
      try {
        await src.backup(tmp, {
          progress({totalPages, remainingPages}) {
            opts.onProgress?.({
              rows: null,
              fraction: totalPages ? 1 - remainingPages / totalPages : null,
              stage: 'copy',
            });
            return 1024;
          },
        });
      } finally {
        src.close();
      }
      // gristlite's own state (webhook secrets, outbox, stats) never comes in with a file: the
      // document starts clean, as downloads leave it.
      const db = new Database(tmp, {fileMustExist: true});
      try {
        db.pragma('journal_mode = DELETE');
        dropPrivateObjects(db);
      } finally {
        db.close();
      }
      // Older schemas are upgraded now, so that a failing migration refuses the import (400).
      opts.onProgress?.({rows: null, fraction: null, stage: 'upgrade'});
      upgradeDocFile(tmp);
      // Files kept in external stores are not in the upload (POST /attachments/archive restores
      // them); a chosen store this server lacks becomes its own, as Grist does on import.
      await carryAttachmentFiles(tmp, engine.attachmentStores, home.id, null);
      // Only a document gristlite can open is accepted (very old layouts lack tables it reads).
      try {
        const doc = GristDoc.open(tmp, {readonly: true});
        try {
          // Access rules are read from this table (its columns are looked up as they come).
          doc.db.prepare('SELECT 1 FROM _grist_ACLRules LIMIT 1');
        } finally {
          doc.close();
        }
      } catch (e) {
        throw new BadRequest(`Invalid Grist document: gristlite cannot open it (${(e as Error).message})`);
      }
      // Every formula is recomputed (on the upgraded schema), as Grist does when it opens a
      // document; the file stays in rollback-journal mode until it is moved into place.
      opts.onProgress?.({rows: null, fraction: null, stage: 'formulas'});
      const docUrl = engine.docPageUrl(home, await engine.home.access.orgOfDoc(home), opts.requestBase ?? null);
      const doc = GristDoc.open(tmp, {history: engine.historySettings});
      let readOnly: string | null;
      try {
        readOnly = doc.readOnlyReason;
        if (readOnly === null) doc.as(null, null, {docUrl}).recomputeFormulas();
        doc.db.pragma('journal_mode = DELETE');
      } finally {
        doc.close();
      }
      opts.onProgress?.({rows: null, fraction: 1, stage: 'done'});
      return readOnly === null ? {} : {readOnly};
    } finally {
      removeSqliteFiles(upload);
    }
  });
}

/** The bytes of an upload, a chunk at a time, and its size when known. */
function chunksOf(file: ImportedFile): {source: AsyncIterable<Uint8Array>; size: number | null} {
  if (file.path !== undefined) {
    return {source: createReadStream(file.path, {highWaterMark: READ_CHUNK_BYTES}), size: statSync(file.path).size};
  }
  if (file.data !== undefined) {
    const data = file.data;
    const source = (function* () {
      for (let i = 0; i < data.length; i += READ_CHUNK_BYTES) yield data.subarray(i, i + READ_CHUNK_BYTES);
    })();
    return {source: Readable.from(source, {objectMode: true}), size: data.length};
  }
  if (file.stream) return {source: file.stream, size: null};
  throw new BadRequest('No file to import');
}

/** Imports a CSV (or TSV) file as a new document holding one table named after the file. */
export async function importCsvDoc(
  engine: ImportHost,
  wid: number,
  p: Principal,
  file: ImportedFile,
  opts: ImportOptions = {},
): Promise<ImportResult> {
  const name = opts.documentName || titleFromFileName(file.fileName);
  const timezone = opts.timezone || 'UTC';
  return createDocWith(engine, wid, p, name, async (tmp) => {
    const {source, size} = chunksOf(file);
    let read = 0;
    const records = readCsvBatches(source, {
      ...(extname(file.fileName).toLowerCase() === '.tsv' ? {delimiter: '\t'} : {}),
      onRead: (n) => {
        read += n;
      },
    });
    await writeNewDocFile(engine, tmp, timezone, (doc) =>
      writeCsvTable(doc, titleFromFileName(file.fileName), records, timezone, (rows) =>
        opts.onProgress?.({rows, fraction: size ? read / size : null, stage: 'rows'}),
      ),
    );
  });
}

/**
 * Creates the document file `tmp` and fills it with `fill`. The file is new and private until it
 * is moved into place (a failure deletes it): no rollback journal, no syncs until the end, then
 * one fsync.
 */
async function writeNewDocFile(
  engine: ImportHost,
  tmp: string,
  timezone: string | undefined,
  fill: (doc: GristDoc) => unknown,
): Promise<void> {
  // Recorded as any write is (D120), unless the engine's settings turn recording off.
  const doc = GristDoc.create(tmp, {timezone, history: engine.historySettings});
  try {
    doc.db.pragma('journal_mode = OFF');
    doc.db.pragma('synchronous = OFF');
    await fill(doc);
    doc.db.pragma('journal_mode = DELETE');
  } finally {
    doc.close();
  }
  const fd = openSync(tmp, 'r+');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Replaces the starter table of a new document with the table of a CSV file's records (given in
 * batches, as readCsvBatches reads them), in one transaction: types guessed from the first rows,
 * then every row converted and written in batches, so memory stays bounded whatever the file's
 * length. Returns the tableId.
 */
export async function writeCsvTable(
  doc: GristDoc,
  tableName: string,
  batches: AsyncIterable<string[][]>,
  timezone: string,
  onProgress?: (rows: number) => void,
): Promise<string> {
  const it = batches[Symbol.asyncIterator]();
  const sample: string[][] = [];
  // Records of the last batch read that come after the sample.
  let rest: string[][] = [];
  let cells = 0;
  let more = true;
  fill: while (sample.length < IMPORT_GUESS_ROWS && cells < IMPORT_GUESS_CELLS) {
    const r = await it.next();
    if (r.done) {
      more = false;
      break;
    }
    const batch = r.value;
    for (let i = 0; i < batch.length; i++) {
      if (sample.length >= IMPORT_GUESS_ROWS || cells >= IMPORT_GUESS_CELLS) {
        rest = batch.slice(i);
        break fill;
      }
      sample.push(batch[i]);
      cells += batch[i].length;
    }
  }
  const parsed = splitHeaders(sample, ',');
  const width = parsed.headers.length;
  if (width > MAX_IMPORT_COLUMNS) {
    throw new BadRequest(
      `The file has ${width} columns; at most ${MAX_IMPORT_COLUMNS} can be imported (SQLite's limit of columns in a table)`,
    );
  }
  const columns = guessImportColumns(parsed, {locale: 'en-US'}, timezone, {more});
  if (!columns.length) throw new BadRequest('The file holds no data to import');
  doc.db.exec('BEGIN');
  try {
    doc.removeTable('Table1');
    const [{id: tableId}] = doc.addTables([{id: tableName, columns: columns.map((c) => c.spec)}]);
    const colIds = doc.listColumns(tableId).map((c) => c.id);
    const cols = columns.map((c, k) => ({colId: colIds[k], index: c.index, parse: c.parse, values: [] as CellValue[]}));
    const batchRows = Math.max(1, Math.floor(IMPORT_BATCH_CELLS / Math.max(1, width)));
    let pending = 0;
    let total = 0;
    const flush = () => {
      if (!pending) return;
      const data: Record<string, CellValue[]> = {};
      for (const c of cols) if (c.parse) data[c.colId] = c.values;
      if (Object.keys(data).length) doc.addColumnar(tableId, data, {parse: false});
      else doc.addRecords(tableId, new Array(pending).fill({}), {parse: false});
      for (const c of cols) c.values = [];
      total += pending;
      pending = 0;
      onProgress?.(total);
    };
    const addRow = (row: string[]) => {
      for (const c of cols) {
        if (!c.parse && row[c.index] !== '') {
          // A column blank in the sample has data after all: it becomes a Text column.
          flush();
          doc.applyUserActions([['ModifyColumn', tableId, c.colId, {type: 'Text', isFormula: false}]]);
          c.parse = (v) => v ?? '';
        }
      }
      for (const c of cols) if (c.parse) c.values.push(c.parse(row[c.index]));
      if (++pending >= batchRows) flush();
    };
    for (const row of parsed.rows) addRow(row);
    sample.length = 0;
    parsed.rows.length = 0;
    for (const row of rest) addRow(fitRow(row, width));
    rest = [];
    for (let r = more ? await it.next() : null; r && !r.done; r = await it.next()) {
      for (const row of r.value) addRow(fitRow(row, width));
    }
    flush();
    doc.db.exec('COMMIT');
    return tableId;
  } catch (e) {
    if (doc.db.inTransaction) doc.db.exec('ROLLBACK');
    throw e;
  } finally {
    await it.return?.(undefined);
  }
}

/** The first bytes of an upload, to recognise a SQLite file without an extension. */
function startsAsSqlite(file: ImportedFile): boolean {
  let head: Uint8Array;
  if (file.data !== undefined) head = file.data.subarray(0, 15);
  else if (file.path !== undefined) {
    const fd = openSync(file.path, 'r');
    try {
      head = Buffer.alloc(15);
      readSync(fd, head, 0, 15, 0);
    } finally {
      closeSync(fd);
    }
  } else return false;
  return Buffer.from(head).toString('latin1') === 'SQLite format 3';
}

/** Imports an uploaded file by its extension: `.grist`, or CSV/TSV text. Others answer 400. */
export async function importUpload(
  engine: ImportHost,
  wid: number,
  p: Principal,
  file: ImportedFile,
  opts: ImportOptions = {},
): Promise<ImportResult> {
  const ext = extname(file.fileName).toLowerCase();
  if (ext === '.grist' || (ext === '' && startsAsSqlite(file))) return importGristDoc(engine, wid, p, file, opts);
  if (CSV_EXTENSIONS.has(ext)) return importCsvDoc(engine, wid, p, file, opts);
  if (ext === '.xlsx' || ext === '.xlsm' || ext === '.json') return importSheetsDoc(engine, wid, p, file, opts);
  throw new BadRequest(
    `Unsupported file type "${ext || file.fileName}": import .grist, .csv, .tsv, .xlsx or .json files`,
  );
}

/**
 * Imports an XLSX workbook (each sheet a table) or a JSON file (one table named after the file)
 * as a new document, types guessed as Grist guesses them (sheets.ts).
 */
export async function importSheetsDoc(
  engine: ImportHost,
  wid: number,
  p: Principal,
  file: ImportedFile,
  opts: ImportOptions = {},
): Promise<ImportResult> {
  const name = opts.documentName || titleFromFileName(file.fileName);
  const timezone = opts.timezone || 'UTC';
  const json = extname(file.fileName).toLowerCase() === '.json';
  const s = engine.importSettings;
  return createDocWith(engine, wid, p, name, async (tmp) => {
    // XLSX is read from a file (its directory is at its end).
    const upload = file.path ?? `${tmp}.upload`;
    try {
      if (file.path === undefined) await toFile(file, upload);
      // The readers load on the first XLSX or JSON import (they are not needed before).
      const {readTables} = await import('./sources.js');
      const {writeSourceTables} = await import('./sheets.js');
      const {readJsonFile, writeJsonTables} = await import('./json.js');
      const limits = {maxUnzippedBytes: s.maxUnzippedBytes, maxEntries: s.maxEntries, maxJsonBytes: s.maxJsonBytes};
      const data = json ? readJsonFile(upload, s.maxJsonBytes) : null;
      await writeNewDocFile(engine, tmp, timezone, (doc) =>
        json
          ? writeJsonTables(doc, data, titleFromFileName(file.fileName))
          : writeSourceTables(doc, readTables(upload, '', 'xlsx', {}, limits), 'sheet', timezone, (rows: number) =>
              opts.onProgress?.({rows, fraction: null, stage: 'rows'}),
            ),
      );
    } finally {
      if (file.path === undefined) removeSqliteFiles(upload);
    }
  });
}

/** An empty document (Table1 with columns A, B, C), optionally in a given timezone. */
export async function createEmptyDoc(
  engine: ImportHost,
  wid: number,
  p: Principal,
  opts: {name?: string | null; timezone?: string | null} = {},
): Promise<ImportResult> {
  return createDocWith(engine, wid, p, opts.name || 'Untitled document', (tmp) => {
    createDocFile(tmp, opts.timezone ? {timezone: opts.timezone} : {});
  });
}

/**
 * A copy of document `sourceKey` (which the caller must be able to view) in workspace `wid`;
 * `asTemplate` keeps the structure and drops data and history, as the `.grist` download does.
 */
export async function copyDoc(
  engine: ImportHost,
  sourceKey: string,
  p: Principal,
  org: OrgContext,
  wid: number,
  opts: {name?: string | null; asTemplate?: boolean} = {},
): Promise<ImportResult> {
  // Without view access Grist refuses in the words of a partial one (recorded from Grist 1.7.17).
  const {doc: source, role} = await engine.docAccess(sourceKey, p, org, 'viewers').catch((e: unknown) => {
    if (e instanceof Forbidden) throw new Forbidden('Insufficient access to document to copy it entirely');
    throw e;
  });
  // Several machines: the source file is on the worker that holds it, which makes the copy.
  const holder = engine.cluster ? await engine.claimDoc(source.id) : null;
  if (holder) throw new HeldElsewhere(holder);
  // Open here (the LRU closes and releases it in time); a copy holds everything, so under access
  // rules only owners and those who may copy everything make one (Grist's words).
  const access = engine.openDoc(source.id).accessFor(p, role);
  if (access && role !== 'owners' && !access.canCopyEverything()) {
    throw new Forbidden('Insufficient access to document to copy it entirely');
  }
  return createDocWith(engine, wid, p, opts.name || source.name, async (tmp, {id: docId}) => {
    // A read-only connection of its own: consistent under WAL, and needs no lease when several
    // processes share the data directory.
    const src = new Database(engine.docPath(source.id), {readonly: true, fileMustExist: true});
    try {
      await backupDoc(src, tmp, {template: Boolean(opts.asTemplate)});
    } finally {
      src.close();
    }
    // Beyond Grist (which copies none): files in external stores are copied for the new document.
    await carryAttachmentFiles(tmp, engine.attachmentStores, docId, source.id);
  });
}
