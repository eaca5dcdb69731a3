/**
 * Reading a CSV (or TSV) file for import as Grist's import plugin does it (import_csv.py,
 * import_utils.headers_guess, ValueGuesser.guessColInfoForImports): the delimiter sniffed among
 * `, \t ; |`, the first non-empty row taken as the header when it looks like one, columns without
 * a header and without data dropped, and each column's type guessed from its text (Bool, Numeric,
 * Date, DateTime, else Text; a column of blanks stays an empty column).
 */
import {Readable, pipeline} from 'node:stream';
import chardet from 'chardet';
import {parse as parseStream} from 'csv-parse';
import {parse} from 'csv-parse/sync';
import iconv from 'iconv-lite';
import type {ColumnSpec} from '../doc/api-types.js';
import {type DocSettings, guessColumnWithParser} from '@gristlite/formula';
import {type CellValue, pyFloatOfString} from '../doc/types.js';
import {BadRequest} from '../base/index.js';

/** A CSV file split into headers and rows. */
export interface ParsedCsv {
  /** One per column: the header text ('' when the file has none for it). */
  headers: string[];
  /** Data rows, each exactly `headers.length` long. */
  rows: string[][];
  delimiter: string;
}

/** A column of a CSV import: its header, position, guessed type and parser. */
export interface ImportColumn {
  /** Header text (becomes the label, and the colId once normalised); '' for none. */
  header: string;
  /** Position of the column in the file's rows. */
  index: number;
  spec: ColumnSpec;
  /** Values to write, or null for an empty column (nothing written). */
  values: CellValue[] | null;
  /** Converts more of the column's text as `values` were (null for an empty column). */
  parse: ((v: string | null) => CellValue) | null;
}

const DELIMITERS = [',', '\t', ';', '|'];
const SAMPLE_ROWS = 100;
/** Bytes read before the encoding and the delimiter are decided. */
export const SNIFF_BYTES = 64 * 1024;
/** chardet's confidence (0-100) below which a legacy encoding guess is not taken. */
const LEGACY_CONFIDENCE = 20;

/**
 * The encoding of a file from its first bytes: UTF-8 when they are valid UTF-8 (ASCII and a UTF-8
 * BOM included: no guess is needed, and none is cheaper); else chardet's answer: a UTF-16/32 BOM
 * (what Excel's "Unicode text" writes), or its statistical guess among the legacy encodings, and
 * Windows-1252 when it has none (its ISO-8859-1 is read as Windows-1252, the superset Excel writes).
 */
export function detectEncoding(head: Uint8Array, complete = true): string {
  const sample = Buffer.from(head.buffer, head.byteOffset, head.byteLength);
  try {
    // `stream` lets the sample end in the middle of a character.
    new TextDecoder('utf-8', {fatal: true}).decode(sample, {stream: !complete});
    return 'utf-8';
  } catch {
    // Not UTF-8: chardet decides.
  }
  const found = chardet.analyse(sample);
  const bom = found.find((m) => /^UTF-(16|32)/.test(m.name) && m.confidence >= 100);
  if (bom) return bom.name;
  const legacy = found.find(
    (m) => !/^(UTF-|ASCII)/.test(m.name) && m.confidence >= LEGACY_CONFIDENCE && iconv.encodingExists(m.name),
  );
  return !legacy || legacy.name === 'ISO-8859-1' ? 'windows-1252' : legacy.name;
}

/** The text of a whole file, in its detected encoding, without a BOM. */
export function decodeText(data: Uint8Array): string {
  return iconv.decode(Buffer.from(data.buffer, data.byteOffset, data.byteLength), detectEncoding(data));
}

/** Counts of each candidate delimiter outside quotes, per line, for the first lines. */
export function sniffDelimiter(text: string): string {
  const sample = text.slice(0, 100000);
  const lines: Array<Map<string, number>> = [];
  let counts = new Map<string, number>();
  let quoted = false;
  for (let i = 0; i < sample.length && lines.length < 50; i++) {
    const ch = sample[i];
    if (ch === '"') {
      quoted = !quoted;
    } else if (!quoted && (ch === '\n' || ch === '\r')) {
      if (ch === '\r' && sample[i + 1] === '\n') i++;
      lines.push(counts);
      counts = new Map();
    } else if (!quoted && DELIMITERS.includes(ch)) {
      counts.set(ch, (counts.get(ch) ?? 0) + 1);
    }
  }
  if (counts.size || !lines.length) lines.push(counts);
  // The delimiter whose most common non-zero per-line count covers the most lines wins.
  let best = ',';
  let bestScore = 0;
  for (const d of DELIMITERS) {
    const freq = new Map<number, number>();
    for (const line of lines) {
      const n = line.get(d) ?? 0;
      if (n) freq.set(n, (freq.get(n) ?? 0) + 1);
    }
    let score = 0;
    for (const n of freq.values()) score = Math.max(score, n);
    if (score > bestScore) {
      best = d;
      bestScore = score;
    }
  }
  return best;
}

/** Python's int()/float()/complex() of a string succeeds (import_utils._is_numeric). */
function isNumericText(text: string): boolean {
  const t = text.trim();
  if (!t) return false;
  if (/^[-+]?\d(_?\d)*$/.test(t) || pyFloatOfString(t) !== null) return true;
  const num = '(\\d(_?\\d)*(\\.(\\d(_?\\d)*)?)?|\\.\\d(_?\\d)*)([eE][-+]?\\d(_?\\d)*)?';
  return new RegExp(`^\\(?[-+]?(${num}[-+])?(${num})?[jJ]\\)?$`).test(t) && /\d/.test(t);
}

const isEmpty = (cell: string | undefined) => cell === undefined || cell.trim() === '';

function countNonEmpty(row: string[]): number {
  let count = 0;
  row.forEach((c, i) => {
    if (!isEmpty(c)) count = i + 1;
  });
  return count;
}

/** import_utils.headers_guess: [index of the first data row, headers ('' where none)]. */
function headersGuess(rows: string[][]): {dataOffset: number; headers: string[]} {
  const sample = rows.slice(0, SAMPLE_ROWS);
  const first = sample.findIndex((r) => countNonEmpty(r) > 0);
  if (first < 0) return {dataOffset: 0, headers: []};
  let dataOffset = first + 1;
  let header: string[] = sample[first];
  const isHeader =
    header.every((cell) => !isNumericText(cell)) &&
    !sample
      .slice(dataOffset)
      .some((row) => row.some((cell, i) => i < header.length && cell !== '' && cell === header[i]));
  if (!isHeader) {
    dataOffset -= 1;
    header = [];
  }
  const width = sample.slice(dataOffset).reduce((w, row) => Math.max(w, countNonEmpty(row)), header.length);
  const headers = header.map((h) => h.trim());
  while (headers.length < width) headers.push('');
  return {dataOffset, headers};
}

/** Rows cut or padded to `width` cells. */
export function fitRow(r: string[], width: number): string[] {
  if (r.length === width) return r;
  const out = r.slice(0, width);
  while (out.length < width) out.push('');
  return out;
}

const PARSE_OPTIONS = {relax_column_count: true, relax_quotes: true, skip_empty_lines: true} as const;

/** Parses CSV text into headers and rows (see the module comment). */
export function parseCsv(text: string, opts: {delimiter?: string} = {}): ParsedCsv {
  const delimiter = opts.delimiter ?? sniffDelimiter(text);
  let records: string[][];
  try {
    records = parse(text, {delimiter, ...PARSE_OPTIONS, bom: true}) as string[][];
  } catch (e) {
    throw new BadRequest(`Could not parse the CSV file: ${(e as Error).message}`);
  }
  return splitHeaders(records, delimiter);
}

/** The header guess over the first records, and the data rows after it fitted to its width. */
export function splitHeaders(records: string[][], delimiter: string): ParsedCsv {
  const {dataOffset, headers} = headersGuess(records);
  return {headers, rows: records.slice(dataOffset).map((r) => fitRow(r, headers.length)), delimiter};
}

/** Options of `readCsvRecords`: the delimiter, and a callback told how many bytes were read. */
export interface CsvReadOptions {
  /** The delimiter (`\t` for .tsv files); sniffed from the first bytes otherwise. */
  delimiter?: string;
  /** Called with the size of each chunk read from the source. */
  onRead?: (bytes: number) => void;
  /** The text's encoding (an iconv-lite name); detected from the first bytes otherwise. */
  encoding?: string;
}

/**
 * Cells read ahead of the reader of `readCsvBatches`: the parser pauses past this (memory stays
 * bounded by it plus one chunk of text), and a batch holds at most about this many cells.
 */
export const CSV_READ_AHEAD_CELLS = 50_000;

/**
 * The records of a CSV file read as a stream: the first SNIFF_BYTES decide the encoding and the
 * delimiter, then the text is decoded (iconv-lite) and parsed (csv-parse) chunk by chunk, so
 * memory does not grow with the file. Records come in batches, in order: as many as the parser
 * gave since the last batch, up to about CSV_READ_AHEAD_CELLS cells (one promise per batch, not per
 * record: the per-record async iteration took a quarter of a 100k-row import, issue 43 §2).
 */
export async function* readCsvBatches(
  source: AsyncIterable<Uint8Array>,
  opts: CsvReadOptions = {},
): AsyncGenerator<string[][]> {
  const it = source[Symbol.asyncIterator]();
  const next = async (): Promise<Buffer | null> => {
    const r = await it.next();
    if (r.done) return null;
    opts.onRead?.(r.value.length);
    return Buffer.from(r.value.buffer, r.value.byteOffset, r.value.byteLength);
  };
  const head: Buffer[] = [];
  let size = 0;
  let ended = false;
  while (size < SNIFF_BYTES) {
    const chunk = await next();
    if (!chunk) {
      ended = true;
      break;
    }
    head.push(chunk);
    size += chunk.length;
  }
  const headBytes = Buffer.concat(head);
  // The decoder drops a BOM (UTF-8, UTF-16 LE/BE) and keeps characters split between chunks.
  if (opts.encoding !== undefined && !iconv.encodingExists(opts.encoding)) {
    throw new BadRequest(`Unknown encoding "${opts.encoding}"`);
  }
  const encoding = opts.encoding ?? detectEncoding(headBytes, ended);
  const decoder = iconv.getDecoder(encoding);
  const headText = decoder.write(headBytes);
  const delimiter = opts.delimiter ?? sniffDelimiter(headText);
  // UTF-8 goes to the parser as it is (it decodes each field, and drops a BOM as the decoder
  // does): decoding every chunk to text, which the stream then encoded back to bytes for the
  // parser, was a tenth of a 100k-row import (issue 43 §2).
  const utf8 = /^utf-?8$/i.test(encoding);
  async function* text(): AsyncGenerator<string | Buffer> {
    if (utf8) {
      if (headBytes.length) yield headBytes;
      for (let chunk = ended ? null : await next(); chunk; chunk = await next()) yield chunk;
      return;
    }
    if (headText) yield headText;
    for (let chunk = ended ? null : await next(); chunk; chunk = await next()) {
      const t = decoder.write(chunk);
      if (t) yield t;
    }
    const tail = decoder.end();
    if (tail) yield tail;
  }
  const parser = parseStream({delimiter, ...PARSE_OPTIONS, bom: utf8});
  let queue: string[][] = [];
  let queuedCells = 0;
  let done = false;
  let failure: unknown = null;
  let wake: (() => void) | null = null;
  const signal = () => {
    const w = wake;
    wake = null;
    w?.();
  };
  // Records arrive as 'data' events, synchronously as each chunk of text is parsed.
  parser.on('data', (record: string[]) => {
    queue.push(record);
    queuedCells += record.length + 1;
    if (queuedCells >= CSV_READ_AHEAD_CELLS) parser.pause();
    if (wake) signal();
  });
  // A failure on either side ends the iteration below with that error.
  pipeline(Readable.from(text()), parser, (e) => {
    if (e) failure = e;
    done = true;
    signal();
  });
  try {
    for (;;) {
      if (queue.length) {
        const batch = queue;
        queue = [];
        queuedCells = 0;
        if (parser.isPaused()) parser.resume();
        yield batch;
        continue;
      }
      if (failure) throw failure;
      if (done) return;
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
    }
  } catch (e) {
    if (String((e as {code?: unknown}).code).startsWith('CSV_')) {
      throw new BadRequest(`Could not parse the CSV file: ${(e as Error).message}`);
    }
    throw e;
  } finally {
    parser.destroy();
    await it.return?.();
  }
}

/** The records of a CSV file one by one (readCsvBatches, flattened). */
export async function* readCsvRecords(
  source: AsyncIterable<Uint8Array>,
  opts: CsvReadOptions = {},
): AsyncGenerator<string[]> {
  for await (const batch of readCsvBatches(source, opts)) yield* batch;
}

/**
 * The columns of the imported table: Grist's guess of each column's type from its text, with
 * the values converted to that type. Columns with no header and no data are left out, unless
 * `more` says that rows beyond these will follow (then every column is kept: its data may come).
 */
export function guessImportColumns(
  parsed: ParsedCsv,
  settings: DocSettings,
  timezone: string,
  opts: {more?: boolean} = {},
): ImportColumn[] {
  const out: ImportColumn[] = [];
  parsed.headers.forEach((header, index) => {
    const values = parsed.rows.map((r) => r[index]);
    const blank = values.every((v) => v === '');
    if (!header && blank && !opts.more) return;
    const fields: Record<string, CellValue> = header ? {label: header} : {};
    const guess = blank ? null : guessColumnWithParser(values, settings, timezone);
    if (!guess) {
      out.push({
        header,
        index,
        spec: {id: header || null, fields: {...fields, type: 'Any', isFormula: true, formula: ''}},
        values: null,
        parse: null,
      });
      return;
    }
    if (guess.widgetOptions) fields.widgetOptions = JSON.stringify(guess.widgetOptions);
    out.push({
      header,
      index,
      spec: {id: header || null, fields: {...fields, type: guess.type, isFormula: false}},
      values: guess.values,
      parse: guess.parse,
    });
  });
  return out;
}
