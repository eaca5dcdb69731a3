/**
 * In-memory metadata of an open document: its tables and columns with their per-column codecs,
 * loaded from `_grist_Tables`/`_grist_Tables_column` and the SQLite schema, and reloaded after
 * every schema change.
 */
import type Database from 'better-sqlite3';
import {META_TYPES} from './schema.js';
import {type ColumnType, columnType, type Decoder, type Encoder, typedFormatter} from '@gristlite/formula';
import type {CellValue} from './types.js';

/** One column of `DocMeta`: id, type (parsed once), formula, widget options. */
export interface ColumnMeta {
  /** Row id in `_grist_Tables_column` (0 for the columns of metadata tables). */
  colRef: number;
  colId: string;
  type: string;
  /** The module of the column's type, with the type string parsed (`Ref:T`'s table, a DateTime's zone). */
  ct: ColumnType;
  /** Every `_grist_Tables_column` field of the column, decoded. */
  fields: Record<string, CellValue>;
  isFormula: boolean;
  formula: string;
  /** Parsed `widgetOptions` ({} when empty or invalid). */
  options: Record<string, unknown>;
  /** manualSort and gristHelper_* columns, left out of records unless `hidden` is asked. */
  hidden: boolean;
  /** Declared SQL type of the column in the user table. */
  declType: string;
  encode: Encoder;
  decode: Decoder;
  /** The typed-JSON form of a value (`cellFormat=typed`), or null when it is the value itself. */
  typed: ((v: CellValue) => CellValue) | null;
}

/** One table of `DocMeta`, with its columns. */
export interface TableMeta {
  tableId: string;
  /** Row id in `_grist_Tables` (0 for metadata tables). */
  tableRef: number;
  fields: Record<string, CellValue>;
  /** Columns present in both the metadata and the SQLite table, in metadata row order. */
  columns: ColumnMeta[];
  byId: Map<string, ColumnMeta>;
  isMeta: boolean;
  hasManualSort: boolean;
}

/** A document's tables and columns as read from `_grist_Tables` and `_grist_Tables_column`. */
export interface DocMeta {
  /** User tables in `_grist_Tables` row order, then metadata tables. */
  tables: Map<string, TableMeta>;
  userTables: TableMeta[];
  byRef: Map<number, TableMeta>;
  colsByRef: Map<number, {table: TableMeta; col: ColumnMeta}>;
  schemaVersion: number;
  timezone: string;
  settings: {locale: string; currency?: string};
  /** Bumped on every reload; caches keyed on metadata compare it. */
  version: number;
}

const TABLE_FIELD_TYPES = META_TYPES._grist_Tables;
const COLUMN_FIELD_TYPES = META_TYPES._grist_Tables_column;

/** Default values of `_grist_Tables_column` fields (for documents that predate some of them). */
const COLUMN_FIELD_DEFAULTS: Record<string, CellValue> = {
  parentId: 0,
  parentPos: 0,
  colId: '',
  type: 'Any',
  widgetOptions: '',
  isFormula: false,
  formula: '',
  label: '',
  description: '',
  untieColIdFromLabel: false,
  summarySourceCol: 0,
  displayCol: 0,
  visibleCol: 0,
  rules: null,
  recalcWhen: 0,
  recalcDeps: null,
  reverseCol: 0,
};

const TABLE_FIELD_DEFAULTS: Record<string, CellValue> = {
  tableId: '',
  primaryViewId: 0,
  summarySourceTable: 0,
  onDemand: false,
  rawViewSectionRef: 0,
  recordCardViewSectionRef: 0,
};

function sqlColumns(db: Database.Database, tableId: string): Map<string, string> {
  const rows = db.prepare(`SELECT name, type FROM pragma_table_info(?)`).all(tableId) as Array<{
    name: string;
    type: string;
  }>;
  return new Map(rows.map((r) => [r.name, r.type]));
}

/** Reads all rows of a metadata table, decoded by its schema types. */
export function readMetaRows(db: Database.Database, tableId: string): Array<Record<string, CellValue>> {
  const types = META_TYPES[tableId] ?? {};
  const decoders = new Map(Object.entries(types).map(([c, t]) => [c, columnType(t).decoder()]));
  const anyDecoder = columnType('Any').decoder();
  const rows = db.prepare(`SELECT * FROM "${tableId}" ORDER BY id`).all() as Array<Record<string, unknown>>;
  return rows.map((row) => {
    const out: Record<string, CellValue> = {};
    for (const [k, v] of Object.entries(row)) {
      out[k] = (decoders.get(k) ?? anyDecoder)(v);
    }
    return out;
  });
}

function makeColumn(
  colRef: number,
  colId: string,
  type: string,
  declType: string,
  fields: Record<string, CellValue>,
): ColumnMeta {
  const isFormula = Boolean(fields.isFormula);
  let options: Record<string, unknown> = {};
  try {
    const parsed = JSON.parse(String(fields.widgetOptions || '{}'));
    if (parsed && typeof parsed === 'object') {
      options = parsed;
    }
  } catch {
    // Invalid widgetOptions are ignored, as Grist does.
  }
  const ct = columnType(type);
  return {
    colRef,
    colId,
    type,
    ct,
    fields,
    isFormula,
    formula: String(fields.formula ?? ''),
    options,
    hidden: colId === 'manualSort' || colId.startsWith('gristHelper_'),
    declType,
    encode: ct.encoder(declType),
    decode: ct.decoder(),
    typed: typedFormatter(ct),
  };
}

function finishTable(t: Omit<TableMeta, 'byId' | 'hasManualSort'>): TableMeta {
  const byId = new Map(t.columns.map((c) => [c.colId, c]));
  return {...t, byId, hasManualSort: byId.has('manualSort')};
}

/** `_grist_DocInfo.documentSettings` as an object; `{}` when empty or unreadable. */
export function parseDocSettings(raw: unknown): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(String(raw || '{}'));
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

export function loadMeta(db: Database.Database, previousVersion = 0): DocMeta {
  const docInfo = readMetaRows(db, '_grist_DocInfo')[0] ?? {};
  const parsed = parseDocSettings(docInfo.documentSettings);
  const settings: {locale: string; currency?: string} = {
    locale: (parsed.locale as string) || 'en-US',
    ...(parsed.currency ? {currency: parsed.currency as string} : {}),
  };
  const tables = new Map<string, TableMeta>();
  const byRef = new Map<number, TableMeta>();
  const colsByRef = new Map<number, {table: TableMeta; col: ColumnMeta}>();
  const columnRows = readMetaRows(db, '_grist_Tables_column');
  const userTables: TableMeta[] = [];
  for (const row of readMetaRows(db, '_grist_Tables')) {
    const tableId = String(row.tableId);
    const sqlCols = sqlColumns(db, tableId);
    const fields: Record<string, CellValue> = {};
    for (const k of Object.keys(TABLE_FIELD_TYPES)) {
      fields[k] = row[k] ?? TABLE_FIELD_DEFAULTS[k];
    }
    const columns: ColumnMeta[] = [];
    for (const c of columnRows) {
      if (c.parentId !== row.id) {
        continue;
      }
      const colId = String(c.colId);
      const declType = sqlCols.get(colId);
      if (declType === undefined) {
        continue;
      } // No storage (possible in very old documents).
      const colFields: Record<string, CellValue> = {};
      for (const k of Object.keys(COLUMN_FIELD_TYPES)) {
        colFields[k] = c[k] ?? COLUMN_FIELD_DEFAULTS[k];
      }
      columns.push(makeColumn(Number(c.id), colId, String(c.type), declType, colFields));
    }
    const table = finishTable({tableId, tableRef: Number(row.id), fields, columns, isMeta: false});
    tables.set(tableId, table);
    byRef.set(table.tableRef, table);
    userTables.push(table);
    for (const col of columns) {
      colsByRef.set(col.colRef, {table, col});
    }
  }
  for (const [tableId, types] of Object.entries(META_TYPES)) {
    const sqlCols = sqlColumns(db, tableId);
    if (!sqlCols.size) {
      continue;
    }
    const columns = Object.entries(types)
      .filter(([colId]) => sqlCols.has(colId))
      .map(([colId, type]) => makeColumn(0, colId, type, sqlCols.get(colId)!, {...COLUMN_FIELD_DEFAULTS, colId, type}));
    tables.set(tableId, finishTable({tableId, tableRef: 0, fields: {}, columns, isMeta: true}));
  }
  return {
    tables,
    userTables,
    byRef,
    colsByRef,
    settings,
    schemaVersion: Number(docInfo.schemaVersion ?? 0),
    timezone: String(docInfo.timezone || 'UTC'),
    version: previousVersion + 1,
  };
}
