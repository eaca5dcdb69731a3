/**
 * Reading a CSV (or TSV) file for import as Grist's import plugin does it (import_csv.py,
 * import_utils.headers_guess, ValueGuesser.guessColInfoForImports): the delimiter sniffed among
 * `, \t ; |`, the first non-empty row taken as the header when it looks like one, columns without
 * a header and without data dropped, and each column's type guessed from its text (Bool, Numeric,
 * Date, DateTime, else Text; a column of blanks stays an empty column).
 */
import { parse } from 'csv-parse/sync';
import type { ColumnSpec } from '../doc/gristdoc.js';
import { type DocSettings, guessColumn } from '../doc/parse.js';
import { type CellValue, pyFloatOfString } from '../doc/types.js';
import { BadRequest } from '../errors.js';

export interface ParsedCsv {
  /** One per column: the header text ('' when the file has none for it). */
  headers: string[];
  /** Data rows, each exactly `headers.length` long. */
  rows: string[][];
  delimiter: string;
}

export interface ImportColumn {
  /** Header text (becomes the label, and the colId once normalised); '' for none. */
  header: string;
  spec: ColumnSpec;
  /** Values to write, or null for an empty column (nothing written). */
  values: CellValue[] | null;
}

const DELIMITERS = [',', '\t', ';', '|'];
const SAMPLE_ROWS = 100;

// Windows-1252 characters at 0x80-0x9F (elsewhere it is ISO-8859-1). Node 20's TextDecoder
// decodes this label as ISO-8859-1, so the table is applied here.
const CP1252 = '\u20ac\u0081\u201a\u0192\u201e\u2026\u2020\u2021\u02c6\u2030\u0160\u2039\u0152\u008d\u017d\u008f' +
  '\u0090\u2018\u2019\u201c\u201d\u2022\u2013\u2014\u02dc\u2122\u0161\u203a\u0153\u009d\u017e\u0178';

function decodeWindows1252(data: Uint8Array): string {
  let out = '';
  for (let i = 0; i < data.length; i += 8192) {
    const part = data.subarray(i, i + 8192);
    out += String.fromCharCode(...Array.from(part, (b) => (b >= 0x80 && b < 0xa0 ? CP1252.charCodeAt(b - 0x80) : b)));
  }
  return out;
}

/** UTF-8 (without its BOM), or Windows-1252 when the bytes are not valid UTF-8. */
export function decodeText(data: Uint8Array): string {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(data);
  } catch {
    text = decodeWindows1252(data);
  }
  return text.startsWith('\ufeff') ? text.slice(1) : text;
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
    const score = Math.max(0, ...freq.values());
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
function headersGuess(rows: string[][]): { dataOffset: number; headers: string[] } {
  const sample = rows.slice(0, SAMPLE_ROWS);
  const first = sample.findIndex((r) => countNonEmpty(r) > 0);
  if (first < 0) return { dataOffset: 0, headers: [] };
  let dataOffset = first + 1;
  let header: string[] = sample[first];
  const isHeader = header.every((cell) => !isNumericText(cell)) &&
    !sample.slice(dataOffset).some((row) => row.some((cell, i) => i < header.length && cell !== '' && cell === header[i]));
  if (!isHeader) {
    dataOffset -= 1;
    header = [];
  }
  const width = Math.max(header.length, ...sample.slice(dataOffset).map(countNonEmpty));
  const headers = header.map((h) => h.trim());
  while (headers.length < width) headers.push('');
  return { dataOffset, headers };
}

/** Parses CSV text into headers and rows (see the module comment). */
export function parseCsv(text: string, opts: { delimiter?: string } = {}): ParsedCsv {
  const delimiter = opts.delimiter ?? sniffDelimiter(text);
  let records: string[][];
  try {
    records = parse(text, {
      delimiter, relax_column_count: true, relax_quotes: true, skip_empty_lines: true, bom: true,
    }) as string[][];
  } catch (e) {
    throw new BadRequest(`Could not parse the CSV file: ${(e as Error).message}`);
  }
  const { dataOffset, headers } = headersGuess(records);
  const width = headers.length;
  const rows = records.slice(dataOffset).map((r) => {
    if (r.length === width) return r;
    const out = r.slice(0, width);
    while (out.length < width) out.push('');
    return out;
  });
  return { headers, rows, delimiter };
}

/**
 * The columns of the imported table: Grist's guess of each column's type from its text, with
 * the values converted to that type. Columns with no header and no data are left out.
 */
export function guessImportColumns(parsed: ParsedCsv, settings: DocSettings, timezone: string): ImportColumn[] {
  const out: ImportColumn[] = [];
  parsed.headers.forEach((header, j) => {
    const values = parsed.rows.map((r) => r[j]);
    if (!header && values.every((v) => v === '')) return;
    const fields: Record<string, CellValue> = header ? { label: header } : {};
    const guess = values.every((v) => v === '') ? null : guessColumn(values, settings, timezone);
    if (!guess) {
      out.push({ header, spec: { id: header || null, fields: { ...fields, type: 'Any', isFormula: true, formula: '' } }, values: null });
      return;
    }
    if (guess.widgetOptions) fields.widgetOptions = JSON.stringify(guess.widgetOptions);
    out.push({ header, spec: { id: header || null, fields: { ...fields, type: guess.type, isFormula: false } }, values: guess.values });
  });
  return out;
}
