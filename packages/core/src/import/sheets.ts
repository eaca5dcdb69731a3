/**
 * New documents from XLSX files (issue 42 §3), as Grist's import plugin makes them: each sheet of
 * a workbook a table named after it (import_xls.py). JSON files: json.ts.
 *
 * Types: a sheet's columns are guessed from the typed values of their first 1000 rows as Grist's
 * parse_data.py does (Date or DateTime when at least 90% of the cells that are not blank or junk
 * hold dates, else Bool, else Numeric; ties in that order), and a column that is none of those is
 * guessed from its text as a CSV column is (Grist's ValueGuesser). Values that do not fit their
 * column's type are kept as text (alt-text), as Grist keeps them.
 */
import type {ColumnSpec} from '../doc/api-types.js';
import type {GristDoc} from '../doc/gristdoc.js';
import {guessColumnWithParser} from '@gristlite/formula';
import type {CellValue} from '../doc/types.js';
import {BadRequest} from '../base/index.js';
import {IMPORT_BATCH_CELLS, MAX_IMPORT_COLUMNS} from './limits.js';
import type {SourceCell, SourceTable} from './sources.js';

/** Rows whose values decide a column's type (parse_data.get_table_data: the first 1000). */
const GUESS_ROWS = 1000;
/** Cells that are "junk" when deciding a type (parse_data.ColumnDetector._junk_re). */
const JUNK = /^\s*(|-+|\?+|n\/?a)\s*$/i;

interface SheetColumn {
  spec: ColumnSpec;
  index: number;
  /** The cell as written, or null for an empty column (nothing written). */
  convert: ((v: SourceCell) => CellValue) | null;
}

/** Python's str() of a cell (what Grist's AnyConverter makes of it before guessing from text). */
function pyText(v: SourceCell): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'boolean') return v ? 'True' : 'False';
  if (v instanceof Date) {
    const iso = v.toISOString();
    return `${iso.slice(0, 10)} ${iso.slice(11, 19)}`;
  }
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

const seconds = (d: Date) => d.getTime() / 1000;

/** parse_data's basic type of a sheet column, from its sample. */
function basicType(values: SourceCell[]): 'DateTime' | 'Bool' | 'Numeric' | 'Any' {
  let nonJunk = 0;
  const counts = {DateTime: 0, Bool: 0, Numeric: 0};
  for (const v of values) {
    if (v === null || v === undefined || (typeof v === 'string' && JUNK.test(v))) continue;
    nonJunk++;
    if (v instanceof Date) counts.DateTime++;
    if (typeof v === 'boolean') counts.Bool++;
    if (typeof v === 'number' || typeof v === 'boolean') counts.Numeric++;
  }
  let best: 'DateTime' | 'Bool' | 'Numeric' = 'DateTime';
  for (const t of ['Bool', 'Numeric'] as const) if (counts[t] > counts[best]) best = t;
  return counts[best] > 0 && counts[best] >= nonJunk * 0.9 ? best : 'Any';
}

/** A sheet's column: its type from the sample, and how each of its cells is written. */
function sheetColumn(header: string, index: number, sample: SourceCell[], timezone: string): SheetColumn | null {
  const fields: Record<string, CellValue> = header ? {label: header} : {};
  const spec = (type: string): ColumnSpec => ({id: header || null, fields: {...fields, type, isFormula: false}});
  const basic = basicType(sample);
  if (basic === 'DateTime') {
    const dateOnly = sample.every((v) => !(v instanceof Date) || seconds(v) % 86400 === 0);
    return {
      spec: spec(dateOnly ? 'Date' : `DateTime:${timezone}`),
      index,
      convert: (v) => (v instanceof Date ? seconds(v) : v === null || v === '' ? null : pyText(v)),
    };
  }
  if (basic === 'Bool') {
    return {
      spec: spec('Bool'),
      index,
      convert: (v) => (typeof v === 'boolean' ? v : v === null || v === '' ? null : pyText(v)),
    };
  }
  if (basic === 'Numeric') {
    return {
      spec: spec('Numeric'),
      index,
      convert: (v) =>
        typeof v === 'number' ? v : typeof v === 'boolean' ? Number(v) : v === null || v === '' ? null : pyText(v),
    };
  }
  // Any: guessed from the text, as a CSV column is.
  const texts = sample.map(pyText);
  if (texts.every((t) => t === '')) {
    if (!header) return null;
    return {spec: {id: header, fields: {...fields, type: 'Any', isFormula: true, formula: ''}}, index, convert: null};
  }
  const guess = guessColumnWithParser(texts, {locale: 'en-US'}, timezone);
  if (!guess) return {spec: spec('Text'), index, convert: pyText};
  if (guess.widgetOptions) fields.widgetOptions = JSON.stringify(guess.widgetOptions);
  return {spec: spec(guess.type), index, convert: (v) => guess.parse(pyText(v))};
}

/**
 * Writes the tables of a file into a new document (whose starter table is replaced), in one
 * transaction, each table's rows in batches: memory holds a table's first rows and one batch.
 * Returns the tables written; 400 when the file holds none.
 */
export async function writeSourceTables(
  doc: GristDoc,
  tables: AsyncIterable<SourceTable>,
  _kind: 'sheet',
  timezone: string,
  onProgress?: (rows: number) => void,
): Promise<string[]> {
  const written: string[] = [];
  let skipped = 0;
  let total = 0;
  doc.db.exec('BEGIN');
  try {
    doc.removeTable('Table1');
    for await (const table of tables) {
      const width = table.headers.length;
      if (width > MAX_IMPORT_COLUMNS) {
        throw new BadRequest(
          `${table.name} has ${width} columns; at most ${MAX_IMPORT_COLUMNS} can be imported (SQLite's limit of columns in a table)`,
        );
      }
      const it = table.rows[Symbol.asyncIterator]();
      const sample: SourceCell[][] = [];
      let more = true;
      while (sample.length < GUESS_ROWS) {
        const r = await it.next();
        if (r.done) {
          more = false;
          break;
        }
        sample.push(r.value);
      }
      const columns = table.headers
        .map((h, i) => {
          const values = sample.map((r) => r[i]);
          return sheetColumn(h, i, values, timezone);
        })
        .filter((c): c is SheetColumn => c !== null);
      if (!columns.length) {
        skipped++;
        await it.return?.(undefined);
        continue;
      }
      const [{id: tableId}] = doc.addTables([{id: table.name, columns: columns.map((c) => c.spec)}]);
      const colIds = doc.listColumns(tableId).map((c) => c.id);
      const batchRows = Math.max(1, Math.floor(IMPORT_BATCH_CELLS / Math.max(1, width)));
      let batch: SourceCell[][] = [];
      const flush = () => {
        if (!batch.length) return;
        const data: Record<string, CellValue[]> = {};
        columns.forEach((c, k) => {
          if (c.convert) data[colIds[k]] = batch.map((r) => c.convert!(r[c.index] ?? null));
        });
        if (Object.keys(data).length) doc.addColumnar(tableId, data, {parse: false});
        else doc.addRecords(tableId, new Array(batch.length).fill({}), {parse: false});
        total += batch.length;
        batch = [];
        onProgress?.(total);
      };
      for (const r of sample) {
        batch.push(r);
        if (batch.length >= batchRows) flush();
      }
      sample.length = 0;
      for (let r = more ? await it.next() : null; r && !r.done; r = await it.next()) {
        batch.push(r.value);
        if (batch.length >= batchRows) flush();
      }
      flush();
      written.push(tableId);
    }
    if (!written.length) {
      throw new BadRequest(skipped ? `No tables found (${skipped} empty tables skipped)` : 'No tables found');
    }
    doc.db.exec('COMMIT');
    return written;
  } catch (e) {
    if (doc.db.inTransaction) doc.db.exec('ROLLBACK');
    throw e;
  }
}
