/**
 * An uploaded file as tables of rows, whatever its format: CSV/TSV (csv.ts), XLSX (xlsx.ts, each
 * sheet a table) or JSON (an array of objects, one table). Rows are read as they are needed, so
 * a large CSV or XLSX file is never held whole; a JSON file is parsed whole, within
 * `maxJsonBytes`. Headers are guessed as Grist's import_utils.headers_guess does, unless the
 * caller says whether the first row holds them.
 */
import {closeSync, createReadStream, openSync, readFileSync, readSync, statSync} from 'node:fs';
import {extname} from 'node:path';
import {BadRequest} from '../base/index.js';
import {fitRow, readCsvRecords, splitHeaders} from './csv.js';
import {isEmptyRow, readXlsxSheets, type SheetCell} from './xlsx.js';
import type {ZipLimits} from './zipcheck.js';

/** A cell of an imported file: text (CSV), typed values (XLSX), or any JSON value. */
export type SourceCell = SheetCell | SourceCell[] | {[key: string]: SourceCell};

/** The formats an import reads. */
export type ImportFormat = 'csv' | 'tsv' | 'xlsx' | 'json';

/** How to read a file (Grist's parse options, where it has them). */
export interface ParseOptions {
  /** CSV: the delimiter (sniffed among `,` tab `;` `|` otherwise). */
  delimiter?: string;
  /** CSV: the encoding (detected otherwise). */
  encoding?: string;
  /** Whether the first non-empty row holds the column names (guessed otherwise, as Grist does). */
  include_col_names_as_headers?: boolean;
  /** XLSX: the sheet to read (the first otherwise). */
  sheet?: string;
}

/** Bounds of reading a file. */
export interface SourceLimits extends ZipLimits {
  /** Bytes of a JSON file (parsed whole). */
  maxJsonBytes: number;
}

/** One table of a file: its name, the names of its columns, and its data rows. */
export interface SourceTable {
  name: string;
  /** Column names: the header text, or the column's letter (A, B, ...) where there is none. */
  columns: string[];
  /** The header row as it was ('' where none). */
  headers: string[];
  rows: AsyncIterable<SourceCell[]>;
  /** Stops reading the file (call it when done with the rows, read whole or not). */
  close?: () => Promise<void>;
}

const MEDIA_TYPES: Record<string, ImportFormat> = {
  'text/csv': 'csv',
  'application/csv': 'csv',
  'text/tab-separated-values': 'tsv',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': 'xlsx',
  'application/json': 'json',
};

const EXTENSIONS: Record<string, ImportFormat> = {
  '.csv': 'csv',
  '.txt': 'csv',
  '.dsv': 'csv',
  '.tsv': 'tsv',
  '.xlsx': 'xlsx',
  '.xlsm': 'xlsx',
  '.json': 'json',
};

/**
 * The format of an upload: its extension, else its part's Content-Type (text/plain and
 * application/octet-stream say nothing), else 400 naming what it was sent as.
 */
export function importFormat(fileName: string, mimeType: string | null): ImportFormat {
  const ext = extname(fileName).toLowerCase();
  if (EXTENSIONS[ext]) return EXTENSIONS[ext];
  const media = (mimeType ?? '').split(';')[0].trim().toLowerCase();
  if (MEDIA_TYPES[media]) return MEDIA_TYPES[media];
  throw new BadRequest(
    `Unsupported file type "${ext || media || fileName}": import CSV, TSV, XLSX or JSON files (by extension or Content-Type)`,
  );
}

/** Spreadsheet column letters: 0 -> A, 25 -> Z, 26 -> AA. */
export function columnLetter(index: number): string {
  let n = index + 1;
  let out = '';
  while (n > 0) {
    const r = (n - 1) % 26;
    out = String.fromCharCode(65 + r) + out;
    n = Math.floor((n - 1) / 26);
  }
  return out;
}

/** Column names from headers: the trimmed text, the letter where none, `_2`... where repeated. */
export function columnNames(headers: string[]): string[] {
  const seen = new Set<string>();
  return headers.map((h, i) => {
    const base = h.trim() || columnLetter(i);
    let name = base;
    for (let k = 2; seen.has(name); k++) name = `${base}_${k}`;
    seen.add(name);
    return name;
  });
}

/** Python's float()/int() of a value succeeds (import_utils._is_numeric). */
function isNumeric(v: SheetCell): boolean {
  if (typeof v === 'number' || typeof v === 'boolean') return true;
  if (typeof v !== 'string') return false;
  const t = v.trim();
  return t !== '' && /^[-+]?(\d[\d_]*(\.\d*)?|\.\d+)([eE][-+]?\d+)?$|^[-+]?(inf(inity)?|nan)$/i.test(t);
}

/** headers_guess for typed rows (XLSX): [data offset, header texts]. */
function typedHeadersGuess(sample: SheetCell[][], force: boolean | undefined): {offset: number; headers: string[]} {
  if (!sample.length) return {offset: 0, headers: []};
  const width = sample.reduce((w, r) => Math.max(w, r.length), 0);
  const first = sample[0];
  const isHeader =
    force ??
    (first.every((c) => (typeof c === 'string' || c === null) && !isNumeric(c)) &&
      !sample.slice(1).some((row) => row.some((c, i) => i < first.length && c !== null && c !== '' && c === first[i])));
  if (!isHeader) return {offset: 0, headers: new Array(width).fill('')};
  const headers = first.map((c) => (c === null ? '' : c instanceof Date ? c.toISOString() : String(c)));
  while (headers.length < width) headers.push('');
  return {offset: 1, headers};
}

/** The first rows of a stream, and the rest after them. */
async function peek<T>(rows: AsyncIterable<T>, n: number): Promise<{head: T[]; rest: AsyncIterable<T>}> {
  const it = rows[Symbol.asyncIterator]();
  const head: T[] = [];
  let done = false;
  while (head.length < n) {
    const r = await it.next();
    if (r.done) {
      done = true;
      break;
    }
    head.push(r.value);
  }
  const rest = (async function* () {
    if (done) return;
    try {
      for (let r = await it.next(); !r.done; r = await it.next()) yield r.value;
    } finally {
      await it.return?.(undefined);
    }
  })();
  return {head, rest};
}

/** Rows of a sheet after the header, each cut or padded to `width` cells. */
async function* padded<T>(head: T[][], rest: AsyncIterable<T[]>, width: number, fill: T): AsyncGenerator<T[]> {
  const fit = (r: T[]) => {
    if (r.length === width) return r;
    const out = r.slice(0, width);
    while (out.length < width) out.push(fill);
    return out;
  };
  for (const r of head) yield fit(r);
  for await (const r of rest) yield fit(r);
}

/** Rows of a CSV file read for headers: how many to look at (import_utils uses the first 100). */
const CSV_HEADER_SAMPLE = 100;
/** Rows of a sheet looked at for headers (import_xls.py: the first 1000). */
const SHEET_HEADER_SAMPLE = 1000;

async function csvTable(path: string, name: string, format: ImportFormat, opts: ParseOptions): Promise<SourceTable> {
  const delimiter = opts.delimiter ?? (format === 'tsv' ? '\t' : undefined);
  const records = readCsvRecords(createReadStream(path, {highWaterMark: 1 << 20}), {
    ...(delimiter !== undefined ? {delimiter} : {}),
    ...(opts.encoding ? {encoding: opts.encoding} : {}),
  });
  const {head, rest} = await peek(records, CSV_HEADER_SAMPLE);
  let headers: string[];
  let offset: number;
  const force = opts.include_col_names_as_headers;
  const firstIndex = head.findIndex((r) => r.some((c) => c.trim() !== ''));
  if (force === undefined) {
    const guessed = splitHeaders(head, ',');
    headers = guessed.headers;
    offset = head.length - guessed.rows.length;
  } else {
    const start = Math.max(0, firstIndex);
    const width = head.slice(start).reduce((w, r) => Math.max(w, r.length), 0);
    headers = force ? fitRow(head[start] ?? [], width).map((h) => h.trim()) : new Array(width).fill('');
    offset = force ? start + 1 : start;
  }
  const data = head.slice(offset).filter((r) => r.some((c) => c !== ''));
  const rows = padded<SourceCell>(data, filterEmpty(rest), headers.length, '');
  return {name, headers, columns: columnNames(headers), rows};
}

async function* filterEmpty(rows: AsyncIterable<string[]>): AsyncGenerator<string[]> {
  for await (const r of rows) if (r.some((c) => c !== '')) yield r;
}

/** A sheet as a table: headers guessed over its first rows. */
export async function sheetTable(
  name: string,
  rows: AsyncIterable<SheetCell[]>,
  opts: ParseOptions,
): Promise<SourceTable> {
  const {head, rest} = await peek(rows, SHEET_HEADER_SAMPLE);
  const {offset, headers} = typedHeadersGuess(head, opts.include_col_names_as_headers);
  return {
    name,
    headers,
    columns: columnNames(headers),
    rows: padded<SourceCell>(head.slice(offset), rest, headers.length, null),
  };
}

/** A JSON file's rows: an array of objects (or one object), columns the keys in sorted order (as Grist). */
function jsonTable(path: string, name: string, limits: SourceLimits): SourceTable {
  const size = statSync(path).size;
  if (size > limits.maxJsonBytes) {
    throw new BadRequest(
      `The JSON file has ${size} bytes; at most ${limits.maxJsonBytes} are imported (GRISTLITE_IMPORT_MAX_JSON_BYTES)`,
    );
  }
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(path, 'utf8').replace(/^\uFEFF/, ''));
  } catch (e) {
    throw new BadRequest(`Could not parse the JSON file: ${(e as Error).message}`);
  }
  const items = Array.isArray(data) ? data : [data];
  const keys = new Set<string>();
  items.forEach((item, i) => {
    if (item === null || typeof item !== 'object' || Array.isArray(item)) {
      throw new BadRequest(
        `The JSON file must hold an array of objects: item ${i} is ${JSON.stringify(item)?.slice(0, 40)}`,
      );
    }
    for (const k of Object.keys(item)) keys.add(k);
  });
  const headers = [...keys].sort();
  const rows = (async function* () {
    for (const item of items as Record<string, SourceCell>[]) yield headers.map((h) => (h in item ? item[h] : null));
  })();
  return {name, headers, columns: columnNames(headers), rows};
}

/** Whether the file starts as a zip archive does. */
function startsAsZip(path: string): boolean {
  const fd = openSync(path, 'r');
  try {
    const head = Buffer.alloc(4);
    return readSync(fd, head, 0, 4, 0) === 4 && head.readUInt32LE(0) === 0x04034b50;
  } catch {
    return false;
  } finally {
    closeSync(fd);
  }
}

/**
 * Every table of a file, in order (one for CSV and JSON; each sheet of an XLSX file). Read each
 * table's rows before asking for the next.
 */
export async function* readTables(
  path: string,
  name: string,
  format: ImportFormat,
  opts: ParseOptions,
  limits: SourceLimits,
): AsyncGenerator<SourceTable> {
  if (format === 'csv' || format === 'tsv') {
    yield await csvTable(path, name, format, opts);
  } else if (format === 'json') {
    yield jsonTable(path, name, limits);
  } else {
    if (!startsAsZip(path)) throw new BadRequest('The file is not an XLSX spreadsheet: it is not a zip archive');
    for await (const sheet of readXlsxSheets(path, limits)) yield await sheetTable(sheet.name, sheet.rows, opts);
  }
}

/** One table of a file: for XLSX the sheet named in `opts.sheet`, or the first. 400 when absent. */
export async function readOneTable(
  path: string,
  name: string,
  format: ImportFormat,
  opts: ParseOptions,
  limits: SourceLimits,
): Promise<SourceTable> {
  const seen: string[] = [];
  // Not a for-await: leaving it would close the reader, whose rows the caller has yet to read.
  const it = readTables(path, name, format, opts, limits);
  try {
    for (let r = await it.next(); !r.done; r = await it.next()) {
      const t = r.value;
      if (format !== 'xlsx' || opts.sheet === undefined || t.name === opts.sheet) {
        return {...t, close: async () => void (await it.return(undefined))};
      }
      seen.push(t.name);
    }
  } catch (e) {
    await it.return(undefined).catch(() => undefined);
    throw e;
  }
  if (format === 'xlsx' && opts.sheet !== undefined) {
    throw new BadRequest(
      `The XLSX file has no sheet "${opts.sheet}" (its sheets: ${seen.map((s) => `"${s}"`).join(', ')})`,
    );
  }
  throw new BadRequest('The file holds no table to import');
}

export {isEmptyRow};
