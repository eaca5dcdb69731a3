/**
 * The write side of a document: what Grist's data engine (useractions.py) does for record and
 * schema actions, applied directly to SQLite. Every method here runs inside a transaction opened
 * by GristDoc, and keeps `_grist_Tables`, `_grist_Tables_column`, views, sections and fields
 * consistent with the user tables.
 *
 * `DocStorage` holds the connection, statement cache, metadata, change set and hooks, and the
 * metadata-table operations; the rest is done by its parts, each given a source of what it needs
 * (storage-source.ts): records (storage-records.ts), tables (storage-tables.ts), columns
 * (storage-columns.ts) and column renames (storage-renames.ts).
 */
import type Database from 'better-sqlite3';
import {BadRequest, NotFound} from '../base/index.js';
import {type ColumnMeta, type DocMeta, loadMeta, readMetaRows, type TableMeta} from './meta.js';
import {ColumnClasses} from './colstats.js';
import {quoteIdent} from './query.js';
import type {FormulaEngine} from '@gristlite/formula';
import type {BulkCells} from './formulas.js';
import type {CellValue} from './types.js';
import type {BeforeRowsHook, CellsHook, ChangeSet} from './changes.js';
import type {DocGuard} from './guard.js';
import {
  type AddTableOptions,
  type AddTableResult,
  chunks,
  type ColInfo,
  type ColumnsSource,
  type AddColumnHook,
  type DropHook,
  type InsertHook,
  type MetaTables,
  type RecordsSource,
  type TablesSource,
  type WriteOptions,
} from './storage-source.js';
import {StorageRecords} from './storage-records.js';
import {StorageTables} from './storage-tables.js';
import {StorageColumns} from './storage-columns.js';
import {StorageRenames} from './storage-renames.js';
import {KeyIndexes} from './keyindex.js';

export {type BeforeRowsHook, ChangeSet, type TableChange, type WriteActor} from './changes.js';
export {
  type AddTableOptions,
  type AddTableResult,
  type ColInfo,
  MAX_TABLE_COLUMNS,
  type WriteOptions,
} from './storage-source.js';
export {MAX_COLUMNS_ADDED_PER_WRITE} from './storage-columns.js';

/**
 * A document's tables, columns and records in SQLite, with Grist's rules: the low-level write side
 * under `GristDoc` (which adds transactions, formulas and listeners). Named apart from the public
 * `Engine`, which holds every open document.
 */
export class DocStorage implements MetaTables {
  meta: DocMeta;
  changes: ChangeSet | null = null;
  /** Columns added by addColumn in the current write (reset by GristDoc at each write). */
  columnsAdded = 0;
  /** Set by GristDoc for the duration of a write when someone needs old row values. */
  beforeRows: BeforeRowsHook | null = null;
  /** Set by GristDoc for the duration of a write when the history records it. */
  afterInsert: InsertHook | null = null;
  /** Set by GristDoc for the duration of a write when the history records it. */
  beforeDrop: DropHook | null = null;
  /** Set by GristDoc for the duration of a write when the history records it. */
  afterAddColumn: AddColumnHook | null = null;
  /** Set by GristDoc for the duration of a write when the history records it. */
  afterCells: CellsHook | null = null;
  /** Add-or-update's kept column indexes (keyindex.ts), followed by every write. */
  readonly keyIndexes: KeyIndexes;
  /** Set by GristDoc for a write under access rules: told of every direct row change. */
  guard: DocGuard | null = null;
  /** The document's formula engine (set by GristDoc during writes): every data and schema change is mirrored to it. */
  formulas: FormulaEngine | null = null;
  /**
   * Reads every lazy column of the formula engine from SQLite before a table's columns are
   * renamed, dropped or the table rebuilt (a lazy column reads its cells by name later).
   */
  settleFormulaData(): void {
    this.formulas?.loadAllColumns();
  }
  /** Set when metadata the formula engine does not follow changed (summary links): reload it. */
  formulasStale = false;
  /** Whether the formula engine holds the metadata tables (some formula reads them). */
  formulasReadMeta = false;
  /** What this connection's bulk-update SQL function reads (set by GristDoc; formulas.ts). */
  bulkCells: BulkCells = {values: null, base: 0};
  /** What columns hold (storage classes, exact JSON of numbers), for filter, sort and JSON SQL (colstats.ts). */
  readonly classes: ColumnClasses;
  private readonly stmts = new Map<string, Database.Statement>();
  /** What the parts below read and write of this storage (storage-source.ts). */
  private readonly source: RecordsSource & TablesSource & ColumnsSource = ((s: DocStorage) => ({
    get meta() {
      return s.meta;
    },
    get db() {
      return s.db;
    },
    get classes() {
      return s.classes;
    },
    get guard() {
      return s.guard;
    },
    get beforeRows() {
      return s.beforeRows;
    },
    get afterInsert() {
      return s.afterInsert;
    },
    get beforeDrop() {
      return s.beforeDrop;
    },
    get afterAddColumn() {
      return s.afterAddColumn;
    },
    get afterCells() {
      return s.afterCells;
    },
    get formulas() {
      return s.formulas;
    },
    get columnsAdded() {
      return s.columnsAdded;
    },
    set columnsAdded(n: number) {
      s.columnsAdded = n;
    },
    get formulasStale() {
      return s.formulasStale;
    },
    set formulasStale(stale: boolean) {
      s.formulasStale = stale;
    },
    changeSet: () => s.changeSet(),
    stmt: (sql) => s.stmt(sql),
    clearStatements: () => s.stmts.clear(),
    settleFormulaData: () => s.settleFormulaData(),
    reloadMeta: () => s.reloadMeta(),
    getTable: (tableId) => s.getTable(tableId),
    getColumn: (table, colId) => s.getColumn(table, colId),
    maxId: (tableId) => s.maxId(tableId),
    nextPos: (tableId, colId) => s.nextPos(tableId, colId),
    metaAdd: (tableId, rows) => s.metaAdd(tableId, rows),
    metaUpdate: (tableId, id, values) => s.metaUpdate(tableId, id, values),
    metaRemove: (tableId, ids) => s.metaRemove(tableId, ids),
    metaRows: (tableId) => s.metaRows(tableId),
    updateColumns: (table, updates) => s.columns.updateColumns(table, updates),
    columnValues: (table, col) => s.columns.columnValues(table, col),
    removeColumns: (colRefs) => s.columns.removeColumns(colRefs),
    updateRecords: (table, rowIds, colValues, opts) => s.records.updateRecords(table, rowIds, colValues, opts),
    renameSqlColumn: (table, from, to, batch) => s.renames.renameSqlColumn(table, from, to, batch),
    formulaEdits: (rename) => s.renames.formulaEdits(rename),
  }))(this);
  private readonly records = new StorageRecords(this.source);
  private readonly tables = new StorageTables(this.source);
  private readonly columns = new StorageColumns(this.source);
  private readonly renames = new StorageRenames(this.source);

  constructor(readonly db: Database.Database) {
    this.meta = loadMeta(db);
    this.classes = new ColumnClasses(db);
    this.keyIndexes = new KeyIndexes(db);
  }

  reloadMeta(): void {
    this.renames.reset();
    this.meta = loadMeta(this.db, this.meta.version);
    this.stmts.clear();
    this.classes.clear();
  }

  /** A prepared statement, reused while the metadata stays the same (the cache is bounded). */
  stmt(sql: string): Database.Statement {
    let s = this.stmts.get(sql);
    if (!s) {
      if (this.stmts.size >= 256) {
        this.stmts.clear();
      }
      s = this.db.prepare(sql);
      this.stmts.set(sql, s);
    }
    return s;
  }

  private changeSet(): ChangeSet {
    if (!this.changes) {
      throw new Error('DocStorage: write outside of a transaction');
    }
    return this.changes;
  }

  getTable(tableId: string): TableMeta {
    const t = this.meta.tables.get(tableId);
    if (!t) {
      throw new NotFound(`Table not found "${tableId}"`);
    }
    return t;
  }

  getColumn(table: TableMeta, colId: string): ColumnMeta {
    const c = table.byId.get(colId);
    if (!c) {
      throw new BadRequest(`Invalid column "${colId}"`);
    }
    return c;
  }

  // -------------------------------------------------------------------------------------------
  // Metadata tables

  private maxId(tableId: string): number {
    const row = this.stmt(`SELECT max(id) AS m FROM ${quoteIdent(tableId)}`).get() as {m: number | null};
    return row.m ?? 0;
  }

  /** Next position after every existing one in a PositionNumber column (Grist appends at the end). */
  /** The next free position (`parentPos`, `tabPos`, `pagePos`) in a metadata table. */
  nextPos(tableId: string, colId: string): number {
    const c = quoteIdent(colId);
    const row = this.stmt(`SELECT max(+${c}) AS m FROM ${quoteIdent(tableId)}
      WHERE typeof(${c}) IN ('integer', 'real') AND ${c} < 1e308`).get() as {m: number | null};
    return Math.floor(row.m ?? 0) + 1;
  }

  metaAdd(tableId: string, rows: Array<Record<string, CellValue>>): number[] {
    const table = this.getTable(tableId);
    let next = this.maxId(tableId) + 1;
    const ids: number[] = [];
    for (const row of rows) {
      const cols = Object.keys(row).filter((k) => table.byId.has(k));
      const sql = `INSERT INTO ${quoteIdent(tableId)} (id${cols.map((c) => ', ' + quoteIdent(c)).join('')})
        VALUES (?${', ?'.repeat(cols.length)})`;
      this.stmt(sql).run(next, ...cols.map((c) => table.byId.get(c)!.encode(row[c])));
      if (this.formulas && this.formulasReadMeta) {
        this.formulas.addRecords(tableId, [next], Object.fromEntries(cols.map((c) => [c, [row[c]]])));
      }
      ids.push(next++);
    }
    this.changeSet().add(tableId, ids);
    return ids;
  }

  metaUpdate(tableId: string, id: number, values: Record<string, CellValue>): void {
    const table = this.getTable(tableId);
    const cols = Object.keys(values).filter((k) => table.byId.has(k));
    if (!cols.length) {
      return;
    }
    this.beforeRows?.(tableId, [id]);
    const sql = `UPDATE ${quoteIdent(tableId)} SET ${cols.map((c) => `${quoteIdent(c)} = ?`).join(', ')} WHERE id = ?`;
    this.stmt(sql).run(...cols.map((c) => table.byId.get(c)!.encode(values[c])), id);
    if (this.formulas && this.formulasReadMeta) {
      this.formulas.updateRecords(tableId, [id], Object.fromEntries(cols.map((c) => [c, [values[c]]])));
    }
    this.changeSet().update(tableId, [id], cols);
  }

  metaRemove(tableId: string, ids: number[]): void {
    if (!ids.length) {
      return;
    }
    this.beforeRows?.(tableId, ids);
    for (const part of chunks(ids)) {
      this.db.prepare(`DELETE FROM ${quoteIdent(tableId)} WHERE id IN (${part.map(() => '?').join(',')})`).run(...part);
    }
    if (this.formulas && this.formulasReadMeta) {
      this.formulas.removeRecords(tableId, ids);
    }
    this.changeSet().remove(tableId, ids);
  }

  metaRows(tableId: string): Array<Record<string, CellValue>> {
    return readMetaRows(this.db, tableId);
  }

  // -------------------------------------------------------------------------------------------
  // Records (storage-records.ts)

  /** Parses (if asked), resolves lookups and converts values for one column. */
  convertColumnValues(col: ColumnMeta, values: CellValue[], opts: WriteOptions): CellValue[] {
    return this.records.convertColumnValues(col, values, opts);
  }

  addRecords(
    table: TableMeta,
    rowIds: Array<number | null>,
    colValues: Map<string, CellValue[]>,
    opts: WriteOptions,
  ): number[] {
    return this.records.addRecords(table, rowIds, colValues, opts);
  }

  updateRecords(table: TableMeta, rowIds: number[], colValues: Map<string, CellValue[]>, opts: WriteOptions): void {
    this.records.updateRecords(table, rowIds, colValues, opts);
  }

  removeRecords(table: TableMeta, rowIds: CellValue[]): void {
    this.records.removeRecords(table, rowIds);
  }

  /** Ref cells pointing at removed rows become 0; removed ids leave RefList cells. */
  clearReferencesTo(tableId: string, removed: number[]): void {
    this.records.clearReferencesTo(tableId, removed);
  }

  /** ReplaceTableData: all rows replaced by the given ones. */
  replaceTableData(
    table: TableMeta,
    rowIds: Array<number | null>,
    colValues: Map<string, CellValue[]>,
    opts: WriteOptions,
  ): void {
    this.records.replaceTableData(table, rowIds, colValues, opts);
  }

  // -------------------------------------------------------------------------------------------
  // Schema: tables (storage-tables.ts)

  addTable(
    tableIdIn: string | null | undefined,
    columns: Array<{id?: string | null} & ColInfo>,
    opts: AddTableOptions = {primaryView: true},
  ): AddTableResult {
    return this.tables.addTable(tableIdIn, columns, opts);
  }

  renameTable(table: TableMeta, newIdIn: string): string {
    return this.tables.renameTable(table, newIdIn);
  }

  removeTables(tableRefs: number[]): void {
    this.tables.removeTables(tableRefs);
  }

  // -------------------------------------------------------------------------------------------
  // Schema: columns (storage-columns.ts)

  /** AddColumn (and AddVisibleColumn with `visible`); with `fields: false`, no fields at all. */
  addColumn(
    table: TableMeta,
    colIdIn: string | null | undefined,
    info: ColInfo,
    opts: {visible: boolean; fields?: boolean},
  ): {colRef: number; colId: string} {
    return this.columns.addColumn(table, colIdIn, info, opts);
  }

  /** Updates of `_grist_Tables_column` records (PATCH /columns, ModifyColumn, RenameColumn). */
  updateColumns(table: TableMeta, updates: Array<{colId: string; values: Record<string, CellValue>}>): void {
    this.columns.updateColumns(table, updates);
  }

  /** RemoveColumn (or removal of `_grist_Tables_column` records), with their fields and helpers. */
  removeColumns(colRefs: number[]): void {
    this.columns.removeColumns(colRefs);
  }
}
