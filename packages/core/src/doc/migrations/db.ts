/**
 * The document operations migrations are written in: Grist's doc actions as DocStorage applies them
 * to SQLite (AddTable, AddColumn, RemoveColumn, RenameTable, ModifyColumn, Add/Update/Replace
 * records), reading and writing metadata rows with the codecs of the current metadata schema.
 */
import type Database from 'better-sqlite3';
import {quoteIdent} from '../identifiers.js';
import {META_TYPES} from '../schema.js';
import {type CellValue, makeDecoder, makeEncoder, sqlDefaultFor, sqlTypeFor} from '../types.js';

export type Row = Record<string, CellValue> & {id: number};

interface ColInfo {
  name: string;
  type: string;
  dflt_value: string | null;
  pk: number;
}

export class MigrationDb {
  constructor(readonly db: Database.Database) {}

  hasTable(tableId: string): boolean {
    return this.db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?`).get(tableId) !== undefined;
  }

  tableNames(): string[] {
    return this.db
      .prepare(`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY rowid`)
      .pluck()
      .all() as string[];
  }

  columnInfo(tableId: string): ColInfo[] {
    return this.db.prepare(`SELECT name, type, dflt_value, pk FROM pragma_table_info(?)`).all(tableId) as ColInfo[];
  }

  hasColumn(tableId: string, colId: string): boolean {
    return this.columnInfo(tableId).some((c) => c.name === colId);
  }

  /** The Grist type of a metadata column (deprecated columns read as Any). */
  metaType(tableId: string, colId: string): string {
    return META_TYPES[tableId]?.[colId] ?? 'Any';
  }

  /** AddTable: `id INTEGER PRIMARY KEY` and one column per Grist type (DocStorage._columnDef). */
  addTable(tableId: string, cols: Array<[string, string]>): void {
    const defs = cols.map(([c, t]) => `, ${quoteIdent(c)} ${sqlTypeFor(t)} DEFAULT ${sqlDefaultFor(t)}`);
    this.db.exec(`CREATE TABLE ${quoteIdent(tableId)} (id INTEGER PRIMARY KEY${defs.join('')})`);
  }

  /** AddColumn (skipped when the column is already there). Returns whether it was added. */
  addColumn(tableId: string, colId: string, type: string): boolean {
    if (this.hasColumn(tableId, colId)) {
      return false;
    }
    this.db.exec(
      `ALTER TABLE ${quoteIdent(tableId)} ADD COLUMN ${quoteIdent(colId)} ${sqlTypeFor(type)} DEFAULT ${sqlDefaultFor(type)}`,
    );
    return true;
  }

  /** Rebuilds a table from column specs, copying `values` (SQL expressions) per column. */
  rebuild(tableId: string, specs: string[], values: string[]): void {
    const tmp = quoteIdent(`_tmp_${tableId}`);
    this.db.exec(`CREATE TABLE ${tmp} (${specs.join(', ')})`);
    this.db.exec(`INSERT INTO ${tmp} SELECT ${values.join(', ')} FROM ${quoteIdent(tableId)}`);
    this.db.exec(`DROP TABLE ${quoteIdent(tableId)}`);
    this.db.exec(`ALTER TABLE ${tmp} RENAME TO ${quoteIdent(tableId)}`);
  }

  /** RemoveColumn: DocStorage rebuilds the table without it (a missing column is no error). */
  removeColumn(tableId: string, colId: string): void {
    const info = this.columnInfo(tableId);
    if (!info.some((c) => c.name === colId)) {
      return;
    }
    const rest = info.filter((c) => c.name !== colId && c.name !== 'id');
    this.rebuild(
      tableId,
      ['id INTEGER PRIMARY KEY', ...rest.map(colSpec)],
      ['id', ...rest.map((c) => quoteIdent(c.name))],
    );
  }

  /** RenameTable (through a temporary name when only the case changes, as DocStorage does). */
  renameTable(from: string, to: string): void {
    if (from === to) {
      return;
    }
    if (from.toLowerCase() === to.toLowerCase()) {
      this.db.exec(`ALTER TABLE ${quoteIdent(from)} RENAME TO ${quoteIdent(`_tmp_${from}`)}`);
      from = `_tmp_${from}`;
    }
    this.db.exec(`ALTER TABLE ${quoteIdent(from)} RENAME TO ${quoteIdent(to)}`);
  }

  /** Every row of a metadata table, decoded with the current schema's types. */
  rows(tableId: string): Row[] {
    if (!this.hasTable(tableId)) {
      return [];
    }
    const raw = this.db.prepare(`SELECT * FROM ${quoteIdent(tableId)} ORDER BY id`).all() as Array<
      Record<string, unknown>
    >;
    return raw.map((r) => {
      const out: Record<string, CellValue> = {};
      for (const [k, v] of Object.entries(r)) {
        out[k] = k === 'id' ? Number(v) : makeDecoder(this.metaType(tableId, k))(v);
      }
      return out as Row;
    });
  }

  nextId(tableId: string): number {
    const n = this.db.prepare(`SELECT max(id) AS n FROM ${quoteIdent(tableId)}`).get() as {n: number | null};
    return (n.n ?? 0) + 1;
  }

  private encode(tableId: string, values: Record<string, CellValue>): {cols: string[]; params: unknown[]} {
    const decl = new Map(this.columnInfo(tableId).map((c) => [c.name, c.type]));
    const cols: string[] = [];
    const params: unknown[] = [];
    for (const [k, v] of Object.entries(values)) {
      if (!decl.has(k)) {
        continue;
      } // As TableDataSet: values of absent columns are dropped.
      cols.push(k);
      params.push(makeEncoder(this.metaType(tableId, k), decl.get(k)!)(v));
    }
    return {cols, params};
  }

  /** AddRecord; `id` null lets SQLite pick max(id)+1. Returns the row id. */
  insert(tableId: string, id: number | null, values: Record<string, CellValue>): number {
    const {cols, params} = this.encode(tableId, values);
    const names = ['id', ...cols].map(quoteIdent).join(', ');
    const marks = ['?', ...cols.map(() => '?')].join(', ');
    const res = this.db
      .prepare(`INSERT INTO ${quoteIdent(tableId)} (${names}) VALUES (${marks})`)
      .run(id === null ? null : BigInt(id), ...(params as never[]));
    return Number(res.lastInsertRowid);
  }

  update(tableId: string, id: number, values: Record<string, CellValue>): void {
    const {cols, params} = this.encode(tableId, values);
    if (!cols.length) {
      return;
    }
    const sets = cols.map((c) => `${quoteIdent(c)} = ?`).join(', ');
    this.db.prepare(`UPDATE ${quoteIdent(tableId)} SET ${sets} WHERE id = ?`).run(...(params as never[]), BigInt(id));
  }

  /** ReplaceTableData: all rows go, the given ones (ids 1..n) come. */
  replaceAll(tableId: string, rows: Array<Record<string, CellValue>>): void {
    this.db.exec(`DELETE FROM ${quoteIdent(tableId)}`);
    rows.forEach((r, i) => this.insert(tableId, i + 1, r));
  }
}

/** A column spec from `PRAGMA table_info`, as DocStorage._sqlColSpecFromDBInfo writes it. */
export function colSpec(info: {name: string; type: string; dflt_value: string | null}): string {
  return `${quoteIdent(info.name)} ${info.type} DEFAULT ${info.dflt_value}`;
}

/** Python's `json.loads`, returning `{}` for invalid JSON (migrations.py's safe_parse). */
export function safeParse(text: CellValue): unknown {
  if (typeof text !== 'string') {
    return {};
  }
  try {
    return JSON.parse(text);
  } catch {
    return {};
  }
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Python's `json.dumps` (ensure_ascii): non-ASCII escaped as \uXXXX; separators `, `/`: ` by
 * default, `,`/`:` when compact (what migrations write with separators=(',', ':')).
 */
export function pyJsonDumps(value: unknown, compact = false): string {
  const [itemSep, keySep] = compact ? [',', ':'] : [', ', ': '];
  const str = (s: string) =>
    JSON.stringify(s).replace(/[\u0080-\uffff]/g, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`);
  const dump = (v: unknown): string => {
    if (v === null || v === undefined) {
      return 'null';
    }
    if (typeof v === 'string') {
      return str(v);
    }
    if (typeof v === 'number') {
      return Number.isFinite(v) ? String(v) : v > 0 ? 'Infinity' : v < 0 ? '-Infinity' : 'NaN';
    }
    if (typeof v === 'boolean') {
      return v ? 'true' : 'false';
    }
    if (Array.isArray(v)) {
      return `[${v.map(dump).join(itemSep)}]`;
    }
    return `{${Object.entries(v as Record<string, unknown>)
      .map(([k, x]) => `${str(k)}${keySep}${dump(x)}`)
      .join(itemSep)}}`;
  };
  return dump(value);
}

/** column.is_visible_column: not id/manualSort, not `#...`, not `gristHelper_...`. */
export function isVisibleColumn(colId: string): boolean {
  return colId !== 'id' && colId !== 'manualSort' && !colId.startsWith('#') && !colId.startsWith('gristHelper_');
}

/** Python's sort of strings (by code point; UTF-16 order differs only beyond the BMP). */
export function byString<T>(key: (t: T) => string): (a: T, b: T) => number {
  return (a, b) => {
    const x = key(a);
    const y = key(b);
    return x < y ? -1 : x > y ? 1 : 0;
  };
}

/** summary.encode_summary_table_name: `<source>_summary_<sorted group-by colIds>` (or `<source>_summary`). */
export function summaryTableName(source: string, groupBy: readonly string[]): string {
  return groupBy.length ? `${source}_summary_${[...groupBy].sort().join('_')}` : `${source}_summary`;
}

/** Text matched literally inside a RegExp. */
export function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Grist's _copy_widget_options: widget options without conditional style rules, as Python's json.dumps writes them. */
export function withoutRulesOptions(options: CellValue): CellValue {
  if (!options) {
    return options;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(typeof options === 'string' ? options : String(options));
  } catch {
    return options;
  }
  if (!isPlainObject(parsed)) {
    return options;
  }
  const {rulesOptions: _dropped, ...rest} = parsed;
  return pyJsonDumps(rest);
}
