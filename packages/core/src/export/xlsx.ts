/**
 * GET /download/xlsx (Grist's downloadXLSX): with no query (or only `title`) the whole document,
 * one sheet per table that is not a summary table; with `tableId`, that table alone. Written with
 * exceljs's streaming WorkbookWriter (what Grist uses): each row is committed as it is read from
 * SQLite, so memory stays bounded by the shared-strings table rather than by the row count.
 */
import {PassThrough} from 'node:stream';
import type ExcelJSModule from 'exceljs';
import {
  CENSORED,
  columnHeader,
  planTableExport,
  exportRows,
  restrictPlan,
  type ExportHeader,
  type ExportPlan,
  type ExportRestriction,
} from './plan.js';
import type Database from 'better-sqlite3';
import {openSnapshot} from '../doc/stream.js';
import {zoneOffsetSeconds} from '@gristlite/formula';

type Db = Database.Database;

/** Excel's sheet name rules: at most 31 characters, none of []:*?/\. */
function sheetName(name: string, used: Set<string>): string {
  const base = name.replace(/[[\]:*?/\\]/g, '_').slice(0, 31) || 'Sheet';
  let out = base;
  for (let i = 2; used.has(out.toLowerCase()); i++) out = `${base.slice(0, 31 - String(i).length - 1)}_${i}`;
  used.add(out.toLowerCase());
  return out;
}

/** A cell as Excel should hold it: numbers, booleans and dates typed, the rest as Grist displays it. */
function cellValue(type: string, raw: unknown, format: (raw: unknown) => string): unknown {
  const base = type.split(':')[0];
  if ((base === 'Int' || base === 'Numeric') && typeof raw === 'number') return raw;
  if (base === 'Bool' && (raw === 0 || raw === 1)) return raw === 1;
  if ((base === 'Date' || base === 'DateTime') && typeof raw === 'number' && Number.isFinite(raw)) {
    // Grist's ExcelFormatter: the wall-clock time in the column's zone, written as if it were UTC
    // (Excel dates have no zone).
    const ms = raw * 1000;
    const tz = base === 'DateTime' ? type.slice('DateTime:'.length) : '';
    return new Date(tz ? ms + zoneOffsetSeconds(tz, ms) * 1000 : ms);
  }
  return format(raw);
}

/** moment.js date tokens as Excel number-format tokens (Grist's ExcelFormatter mapping). */
const EXCEL_TOKENS: Record<string, string> = {
  YYYY: 'yyyy',
  YY: 'yy',
  M: 'm',
  MM: 'mm',
  MMM: 'mmm',
  MMMM: 'mmmm',
  D: 'd',
  DD: 'dd',
  DDD: 'ddd',
  DDDD: 'dddd',
  Do: 'dd',
  L: 'yyyy-mm-dd',
  LL: 'mmmmm d yyyy',
  LLL: 'mmmmm d yyyy h:mm am/pm',
  LLLL: 'ddd, mmmmm d yyyy h:mm am/pm',
  h: 'h',
  HH: 'hh',
  m: 'm',
  mm: 'mm',
  mma: 'mm am/pm',
  ss: 'ss',
  s: 's',
  a: 'am/pm',
  A: 'am/pm',
  S: '0',
  SS: '00',
  SSS: '000',
  z: '',
  zz: '',
  Z: '',
  ZZ: '',
};

/** A moment.js format as an Excel number format, `fallback` when a token has no equivalent. */
function excelDateFormat(format: unknown, fallback: string): string {
  if (typeof format !== 'string' || !format) return fallback;
  const chunks = format.split(/([\s:.,\-/]+)/);
  const out: string[] = [];
  for (let i = 0; i < chunks.length; i++) {
    if (i % 2 === 0) {
      const token = EXCEL_TOKENS[chunks[i]];
      if (token === undefined) return fallback;
      out.push(token);
    } else {
      // Excel reads separators literally only when escaped.
      out.push(chunks[i].replace(/[-\s]/g, (c) => `\\${c}`));
    }
  }
  return out.join('');
}

/** The number format of a Date or DateTime column (Excel shows a bare number otherwise). */
function dateNumFmt(type: string, options: Record<string, unknown>): string | undefined {
  const base = type.split(':')[0];
  if (base !== 'Date' && base !== 'DateTime') return undefined;
  const date = excelDateFormat(options.dateFormat || 'YYYY-MM-DD', 'yyyy-mm-dd');
  if (base === 'Date') return date;
  const time = options.timeFormat === undefined ? 'h:mma' : options.timeFormat;
  return `${date} ${excelDateFormat(time, 'h:mm am/pm')}`;
}

/** The user tables an export of the whole document includes, in `_grist_Tables` order. */
export function documentTables(db: Db): string[] {
  return (
    db.prepare('SELECT tableId FROM _grist_Tables WHERE summarySourceTable = 0 ORDER BY id').all() as {
      tableId: string;
    }[]
  ).map((r) => String(r.tableId));
}

/** The workbook's bytes as they are produced; an unknown table is a 404 before any byte is sent. */
export function xlsxStream(
  db: Db,
  tableIds: string[],
  header: ExportHeader,
  restrict?: ReadonlyMap<string, ExportRestriction>,
  path?: string,
): AsyncIterable<Uint8Array> {
  // Checked here (unknown tables fail before the answer starts), planned again in the snapshot.
  const plans = (d: Db) =>
    tableIds.map((t) => {
      const whole = planTableExport(d, t);
      return {...restrictPlan(whole, restrict?.get(t)), whole, restrict: restrict?.get(t)};
    });
  const checked = plans(db);
  if (!path) return writeWorkbook(db, checked, header);
  return fromSnapshot(path, (snap) => writeWorkbook(snap, plans(snap), header));
}

/**
 * The workbook read on a read-only connection of its own, in one read transaction: the rows of a
 * slow download are one snapshot, and the document's connection stays free (an iterator left open
 * on it across awaits made every write to the document fail as "busy" until the download ended).
 */
async function* fromSnapshot(path: string, write: (db: Db) => AsyncGenerator<Uint8Array>): AsyncGenerator<Uint8Array> {
  const snap = openSnapshot(path);
  try {
    yield* write(snap);
  } finally {
    snap.close();
  }
}

type SheetPlan = {plan: ExportPlan; keep: number[]; whole: ExportPlan; restrict?: ExportRestriction};

/** Rows between checks of the time the workbook has held the event loop. */
const SLICE_CHECK_ROWS = 100;
/** Longest the workbook's rows hold the event loop before letting other work run. */
const SLICE_MS = 15;

/** exceljs, loaded at the first XLSX download: importing it takes 0.3-0.6 s, which every process start paid. */
let excel: Promise<typeof ExcelJSModule> | null = null;
const loadExcel = () => (excel ??= import('exceljs').then((m) => m.default));

/**
 * Loads exceljs now. Its import holds the event loop 0.3-0.6 s (CommonJS, evaluated in one go): a
 * server calls this before it takes requests, so that no download or import pays it (D127).
 */
export async function preloadXlsx(): Promise<void> {
  await loadExcel();
}

async function* writeWorkbook(db: Db, sheets: SheetPlan[], header: ExportHeader): AsyncGenerator<Uint8Array> {
  const ExcelJS = await loadExcel();
  const out = new PassThrough();
  const wb = new ExcelJS.stream.xlsx.WorkbookWriter({stream: out, useStyles: true, useSharedStrings: true});
  const write = (async () => {
    let sliceStart = performance.now();
    const used = new Set<string>();
    for (const {plan, keep, whole, restrict} of sheets) {
      // Grist names a sheet after the table's page (its primary view), else its id.
      const ws = wb.addWorksheet(sheetName(plan.title, used));
      ws.columns = plan.columns.map((c) => {
        const numFmt = dateNumFmt(c.type, c.options);
        return {
          header: columnHeader(c, header),
          width: Math.max(14, columnHeader(c, header).length),
          ...(numFmt ? {style: {numFmt}} : {}),
        };
      });
      ws.getRow(1).font = {bold: false, color: {argb: 'FF000000'}};
      let n = 0;
      for (const [row, censored] of exportRows(db, whole, restrict)) {
        ws.addRow(
          plan.columns.map((c, i) =>
            censored?.has(c.colId) ? CENSORED : cellValue(c.type, row[keep[i] + 1], c.format),
          ),
        ).commit();
        if (++n % SLICE_CHECK_ROWS !== 0) continue;
        // Let the consumer drain the stream now and then, so that output does not pile up.
        if (out.writableNeedDrain) await new Promise((r) => out.once('drain', r));
        // exceljs and its zip take rows without back-pressure: without a turn now and then the
        // whole workbook was made in one go (15k rows held the event loop ~0.8 s).
        if (performance.now() - sliceStart > SLICE_MS) {
          await new Promise((r) => setImmediate(r));
          sliceStart = performance.now();
        }
      }
      ws.commit();
    }
    await wb.commit();
  })();
  write.catch((err) => out.destroy(err));
  for await (const chunk of out) yield chunk as Uint8Array;
  await write;
}
