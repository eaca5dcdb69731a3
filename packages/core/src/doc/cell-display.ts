/**
 * A cell as Grist shows it: the column type's formatter (@gristlite/formula's cells/coltypes) with the column's widget
 * options and the document's settings, references shown through the referenced table's visible
 * column. Exports write these texts (export/plan.ts), and `GET /records?display=true` returns them
 * beside the values (issue 40 §4, D88): one formatter for both.
 *
 * Reference display values are looked up in the referenced table rather than read from the
 * `gristHelper_Display` columns, whose stored values may be stale for rows written before their
 * formula was computed. Grist shows them to whoever may read the reference column, whatever the
 * rules of the referenced table (its helper columns follow the reference column's rules:
 * ACLRuleCollection getHelperCols), and so does this.
 */
import type Database from 'better-sqlite3';
import type {CellFormatter} from '@gristlite/formula';
import {rowIdFormatter} from '@gristlite/formula';
import type {ColumnMeta, DocMeta, TableMeta} from './meta.js';
import {quoteIdent} from './query.js';
import type {CellValue} from './types.js';

/** How many looked-up display values a reference column keeps before starting afresh. */
const LOOKUP_CACHE_LIMIT = 20000;

/**
 * A lookup of the visible column's value of a referenced row (default value for a missing row),
 * read from `db()` (asked at each lookup: a stream reads from its own snapshot).
 */
function visibleLookup(db: () => Database.Database, table: TableMeta, col: ColumnMeta): (id: number) => CellValue {
  const sql = `SELECT ${quoteIdent(col.colId)} FROM ${quoteIdent(table.tableId)} WHERE id = ?`;
  let on: Database.Database | null = null;
  let stmt: Database.Statement | null = null;
  const dflt = col.ct.defaultValue;
  const cache = new Map<number, CellValue>();
  return (id) => {
    let v = cache.get(id);
    if (v === undefined) {
      const conn = db();
      if (conn !== on) {
        on = conn;
        stmt = conn.prepare(sql).pluck();
        cache.clear();
      }
      // (a decoded cell is never undefined)
      const raw: unknown = id > 0 ? stmt!.get(id) : undefined;
      v = raw === undefined ? dflt : col.decode(raw);
      if (cache.size >= LOOKUP_CACHE_LIMIT) cache.clear();
      cache.set(id, v);
    }
    return v as CellValue;
  };
}

/** Grist's isHiddenTable: a missing or summary table, or one named GristHidden*. */
function isHiddenTable(meta: DocMeta, tableId: string): boolean {
  const t = meta.tables.get(tableId);
  return !t || t.isMeta || Number(t.fields.summarySourceTable) !== 0 || tableId.startsWith('GristHidden');
}

/** The text Grist shows for a decoded cell of `col`, references looked up in `db()`. */
export function cellDisplay(db: () => Database.Database, meta: DocMeta, col: ColumnMeta): CellFormatter {
  const settings = meta.settings;
  const target = col.ct.displayTarget;
  if (target === null) return col.ct.formatter(col.options, settings);
  const visible = meta.colsByRef.get(Number(col.fields.visibleCol) || 0);
  if (!visible) {
    return col.ct.formatter(col.options, settings, rowIdFormatter(isHiddenTable(meta, target) ? '' : target));
  }
  const formatter = col.ct.formatter(col.options, settings, visible.col.ct.formatter(visible.col.options, settings));
  const lookup = visibleLookup(db, visible.table, visible.col);
  const one = (v: CellValue): CellValue => (typeof v === 'number' && Number.isInteger(v) ? lookup(v) : v);
  const show: (v: CellValue) => CellValue = col.ct.isList
    ? (v) => (v === null ? ['L'] : Array.isArray(v) && v[0] === 'L' ? ['L', ...v.slice(1).map(one)] : v)
    : one;
  return (v) => formatter(show(v));
}

/**
 * Whether a cell's display text says more than its value: not for text shown as it is, nor for
 * numbers and booleans shown as JSON writes them, nor for an empty cell shown empty (the proposal
 * of grist-core #880 leaves those out of `display`).
 */
export function displayDiffers(v: CellValue, text: string): boolean {
  if (v === null) return text !== '';
  if (typeof v === 'string') return text !== v;
  if (typeof v === 'number' || typeof v === 'boolean') return text !== String(v);
  return true;
}
