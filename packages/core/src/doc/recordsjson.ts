/**
 * The JSON text of GET /records written by SQLite, one `||` expression per record, for reads where
 * that text is exactly `JSON.stringify(fetchRecords(...))`. Building records as JS objects and
 * stringifying them costs ~2.5x what SQLite takes to write the same text.
 *
 * The text is the same where every selected column holds only what SQLite writes as JSON.stringify
 * writes what the JS path makes of it (colstats.ts knows what each column holds):
 * - text: SQLite escapes `"`, `\` and the control characters exactly as JSON.stringify does and
 *   copies every other byte; invalid UTF-8 then decodes to the same U+FFFD characters, in the
 *   record text as in the cell alone, since the bytes around a cell are ASCII;
 * - numbers: only where colstats has compared each one's JSON text (`jsonExact`);
 * - nulls; Bool 0/1 as false/true; the `cellFormat=typed` forms of Date, DateTime and Ref numbers,
 *   and of nulls in list columns, from the `typed` form each type module declares.
 * Anything else needs the JS decoder and takes the JS path for the whole read: marshalled blobs
 * (lists and other values in Any columns, alt-text of other types, errors with their `errors`
 * map), list columns holding text (JSON that becomes `["L", ...]`), a number whose text differs,
 * and column ids that a JS object would not keep, once and in order, as plain keys.
 */
import {BLOB_CLASS, type ColumnClasses, NUM_CLASS, TEXT_CLASS} from './colstats.js';
import {quoteIdent} from './identifiers.js';
import type {ColumnMeta, TableMeta} from './meta.js';

/**
 * Column ids written as they are (`"A":`) and kept by a JS object in insertion order: not an
 * array index (JS puts those first) and not `__proto__` (not an own property). Each must also
 * appear once (a JS object keeps one key).
 */
const PLAIN_KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** A SQL string literal. */
function sqlText(s: string): string {
  return `'${s.replace(/'/g, "''")}'`;
}

/** SQL giving the JSON text of one cell of `col`, or null when it could differ from the JS path's. */
function cellJson(table: TableMeta, col: ColumnMeta, typed: boolean, stats: ColumnClasses): string | null {
  const classes = stats.of(table.tableId, col.colId);
  if (classes & BLOB_CLASS) {
    return null;
  }
  if (classes & TEXT_CLASS && col.ct.isList) {
    return null;
  }
  if (classes & NUM_CLASS && !stats.jsonExact(table.tableId, col.colId)) {
    return null;
  }
  const c = quoteIdent(col.colId);
  const json = `json_quote(${c})`;
  if (col.type === 'Bool') {
    // `+`: no affinity, so that only numbers equal 0 or 1, as in the decoder.
    return `CASE +${c} WHEN 1 THEN 'true' WHEN 0 THEN 'false' ELSE ${json} END`;
  }
  if (!typed) {
    return json;
  }
  // A number n as the array `[...before, n, ...after]`, other values as they are.
  const numberIn = (before: unknown[], after: unknown[] = []) => {
    const head = `[${before.map((v) => JSON.stringify(v) + ',').join('')}`;
    const tail = `${after.map((v) => ',' + JSON.stringify(v)).join('')}]`;
    return (
      `CASE WHEN typeof(${c}) IN ('integer', 'real') THEN ${sqlText(head)} || ${json} || ${sqlText(tail)} ` +
      `ELSE ${json} END`
    );
  };
  // A null as a fixed value, other values as they are.
  const nullAs = (value: unknown) => `CASE WHEN ${c} IS NULL THEN ${sqlText(JSON.stringify(value))} ELSE ${json} END`;
  // The type's typed form, as its module declares it (lists holding text took the JS path above).
  const form = col.ct.typed;
  if (form?.number) {
    return numberIn(form.number.before, form.number.after);
  }
  if (form?.ofNull) {
    return nullAs(form.ofNull());
  }
  return json;
}

/**
 * A SQL expression giving the JSON text of one record (`{"id":..,"fields":{..}}`) with the columns
 * `cols`, exactly as JSON.stringify writes the record fetchRecords builds; or null when some
 * column's text could differ, and the JS path must answer. What colstats does not know yet is
 * found by scanning the table only with `scan` (for a read of the whole table, which costs about as
 * much); else the JS path answers (a filtered or limited read may be a small one).
 */
/** Columns beyond which the records' JSON is built in JS rather than by SQLite. */
const MAX_SQL_COLUMNS = 150;

export function recordJsonSql(
  table: TableMeta,
  cols: ColumnMeta[],
  typed: boolean,
  stats: ColumnClasses,
  scan: boolean,
): string | null {
  if (!stats.jsonExact(table.tableId, 'id')) {
    return null;
  }
  // Each column deepens the || chain; SQLite refuses expressions deeper than 1000 (a 600-column
  // table failed with "Expression tree is too large"). Wide tables are built in JS.
  if (cols.length > MAX_SQL_COLUMNS) {
    return null;
  }
  const fields: string[] = [];
  const keys = new Set<string>();
  for (const col of cols) {
    if (!PLAIN_KEY.test(col.colId) || col.colId === '__proto__' || keys.has(col.colId)) {
      return null;
    }
    if (!scan && !stats.known(table.tableId, col.colId)) {
      return null;
    }
    keys.add(col.colId);
    const cell = cellJson(table, col, typed, stats);
    if (cell === null) {
      return null;
    }
    fields.push(`'${fields.length ? ',' : ''}"${col.colId}":' || ${cell}`);
  }
  return `'{"id":' || "id" || ',"fields":{' || ${fields.length ? fields.join(' || ') + ' || ' : ''}'}}'`;
}
