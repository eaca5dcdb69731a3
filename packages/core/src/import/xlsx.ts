/**
 * Reading an XLSX file for import, as Grist's import_xls.py reads it (openpyxl, values only):
 * each sheet's rows in order, empty rows left out, every cell as its value (a formula as the value
 * the file last computed for it, dates as dates where the cell's number format is a date format).
 * exceljs's streaming reader does the reading (the XLSX export already depends on exceljs, whose
 * streaming writer it uses); the file is checked first (zipcheck.ts), so a damaged file or a zip
 * bomb answers 400 before exceljs unpacks anything, and a sheet is read row by row.
 */
import {createRequire} from 'node:module';
import type ExcelJSModule from 'exceljs';
import {BadRequest} from '../base/index.js';
import {createReadStream} from 'node:fs';
import {Readable} from 'node:stream';
import {checkZip, readZipText, type ZipEntry, type ZipLimits} from './zipcheck.js';

/** A cell of a sheet: Grist's import sees these types (import_xls.py). */
export type SheetCell = string | number | boolean | Date | null;

/** One sheet: its name and its rows (read it whole before asking for the next sheet). */
export interface SheetRows {
  name: string;
  rows: AsyncIterable<SheetCell[]>;
}

/** exceljs, CommonJS and large: loaded on the first XLSX import only (require keeps it then). */
function exceljs(): typeof ExcelJSModule {
  return createRequire(import.meta.url)('exceljs') as typeof ExcelJSModule;
}

/** Excel's serial day number (1900 or 1904 system) as a Date at UTC. */
function serialToDate(serial: number, date1904: boolean): Date {
  const epoch = date1904 ? Date.UTC(1904, 0, 1) : Date.UTC(1899, 11, 30);
  return new Date(epoch + Math.round(serial * 86400000));
}

function isDateFormat(fmt: string | undefined): boolean {
  if (!fmt) return false;
  const bare = fmt.replace(/\[[^\]]*]/g, '').replace(/"[^"]*"/g, '');
  return /[ymdhsb]/i.test(bare);
}

/** exceljs's value of a cell as Grist's import sees it. */
function cellValue(v: unknown, numFmt: string | undefined, date1904: boolean): SheetCell {
  if (v === undefined || v === null) return null;
  if (typeof v === 'string' || typeof v === 'boolean') return v;
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (v instanceof Date) return Number.isNaN(v.getTime()) ? null : v;
  if (typeof v === 'object') {
    const o = v as Record<string, unknown>;
    if ('formula' in o || 'sharedFormula' in o) {
      // Formulas are kept as their values (openpyxl's data_only); a date-formatted number is a date.
      const r = o.result;
      if (typeof r === 'number' && Number.isFinite(r) && isDateFormat(numFmt)) return serialToDate(r, date1904);
      if (r !== null && typeof r === 'object' && 'error' in (r as object)) return String((r as {error: unknown}).error);
      return cellValue(r, undefined, date1904);
    }
    if (Array.isArray(o.richText)) return o.richText.map((t: {text?: unknown}) => String(t.text ?? '')).join('');
    if ('error' in o) return String(o.error);
    if ('text' in o) return String(o.text ?? '');
  }
  return String(v);
}

/** Whether a row holds nothing (Grist leaves out rows whose cells are all None or ""). */
export function isEmptyRow(row: SheetCell[]): boolean {
  return row.every((c) => c === null || c === '');
}

/**
 * The sheets of an XLSX file on disk, in the file's order, each read as a stream of rows (empty
 * rows left out, rows as dense arrays from column A). Throws 400 for a file that is not a
 * readable XLSX file.
 */
export async function* readXlsxSheets(path: string, limits: ZipLimits): AsyncGenerator<SheetRows> {
  const {entries, dirOffset} = await checkZip(path, limits);
  if (!entries.some((e) => /^xl\/worksheets\/[^/]+\.xml$/.test(e.name))) {
    throw new BadRequest('The file is not an XLSX spreadsheet: it has no worksheets (xl/worksheets/*.xml)');
  }
  // exceljs reads the entries in the order they come. Files often hold the shared strings after
  // the sheets (exceljs then parks the sheets in temporary files of its own, and was seen to read
  // one before its strings were known), and sheets need not be in the workbook's order (Grist's).
  // The entries are checked and back to back, so they are handed over in the order that suits:
  // the workbook, its relationships, styles and shared strings first, then the sheets in order.
  const order = workbookOrder(path, entries);
  const rank = (e: ZipEntry): number => {
    const first = ['xl/workbook.xml', 'xl/_rels/workbook.xml.rels', 'xl/styles.xml', 'xl/sharedStrings.xml'].indexOf(
      e.name,
    );
    if (first >= 0) return first;
    const sheet = order.findIndex((s) => s.entry === e.name);
    if (sheet >= 0) return 1000 + sheet;
    return /^xl\/worksheets\/[^/]+\.xml$/.test(e.name) ? 1_000_000 : 10;
  };
  const ranges = [...entries]
    .sort((a, b) => rank(a) - rank(b) || a.localOffset - b.localOffset)
    .map((e) => [e.localOffset, e.end ?? e.localOffset] as const);
  ranges.push([dirOffset, Number.POSITIVE_INFINITY]);
  const stream = Readable.from(
    (async function* () {
      for (const [start, end] of ranges) {
        if (end <= start) continue;
        const part = createReadStream(path, {
          start,
          ...(Number.isFinite(end) ? {end: end - 1} : {}),
          highWaterMark: 1 << 16,
        });
        for await (const chunk of part) yield chunk as Buffer;
      }
    })(),
  );
  yield* readPass(stream);
}

const unescapeXml = (s: string) =>
  s
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, '&');

/** The sheets in workbook order: their names and the zip entries holding them. */
function workbookOrder(path: string, entries: ZipEntry[]): Array<{name: string; entry: string}> {
  const MAX = 16 * 1024 * 1024;
  const workbook = readZipText(path, entries, 'xl/workbook.xml', MAX);
  const rels = readZipText(path, entries, 'xl/_rels/workbook.xml.rels', MAX);
  if (!workbook || !rels) return [];
  const targets = new Map<string, string>();
  for (const m of rels.matchAll(/<Relationship\b[^>]*>/g)) {
    const id = /\bId="([^"]*)"/.exec(m[0])?.[1];
    const target = /\bTarget="([^"]*)"/.exec(m[0])?.[1];
    if (id && target) {
      const t = unescapeXml(target);
      targets.set(id, t.startsWith('/') ? t.slice(1) : `xl/${t}`);
    }
  }
  const out: Array<{name: string; entry: string}> = [];
  for (const m of workbook.matchAll(/<(?:\w+:)?sheet\b[^>]*>/g)) {
    const name = /\bname="([^"]*)"/.exec(m[0])?.[1];
    const rid = /\br:id="([^"]*)"/.exec(m[0])?.[1];
    const entry = rid ? targets.get(rid) : undefined;
    if (name !== undefined && entry) out.push({name: unescapeXml(name), entry});
  }
  return out;
}

/** exceljs over the file's entries as they come: the sheets, in that order. */
async function* readPass(input: Readable): AsyncGenerator<SheetRows> {
  const reader = new (exceljs().stream.xlsx.WorkbookReader)(input, {
    worksheets: 'emit',
    sharedStrings: 'cache',
    styles: 'cache',
    hyperlinks: 'ignore',
    entries: 'ignore',
  });
  let n = 0;
  try {
    for await (const sheet of reader) {
      n++;
      const ws = sheet as unknown as AsyncIterable<{values: unknown[]; getCell(i: number): {numFmt?: string}}> & {
        name?: string;
      };
      const date1904 = Boolean(
        (reader as unknown as {properties?: {model?: {date1904?: boolean}}}).properties?.model?.date1904,
      );
      yield {
        name: ws.name || `Sheet${n}`,
        rows: (async function* () {
          try {
            for await (const row of ws) {
              const values = row.values;
              const out: SheetCell[] = [];
              for (let i = 1; i < values.length; i++) {
                const raw = values[i];
                out.push(raw === undefined ? null : cellValue(raw, row.getCell(i).numFmt, date1904));
              }
              if (!isEmptyRow(out)) yield out;
            }
          } catch (e) {
            throw unreadable(e);
          }
        })(),
      };
    }
  } catch (e) {
    throw unreadable(e);
  }
}

function unreadable(e: unknown): Error {
  if (e instanceof BadRequest) return e;
  return new BadRequest(`Could not read the XLSX file: ${(e as Error).message}`);
}
