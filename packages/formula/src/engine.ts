/**
 * The formula engine's public API (`FormulaEngine`, documented in README.md): an in-memory columnar
 * copy of a document's user tables, kept current by the document through methods mirroring Grist's
 * doc actions, and `recalc()`, which brings every affected formula cell up to date and returns only
 * the cells that changed. The work is done by the parts this class delegates to, one job a file:
 *
 * - rows.ts: row ids and slots; tables.ts: column and table storage, lazy sources;
 * - indexes.ts: lookup indexes and keys; deps.ts: the dependency graph and invalidation;
 * - reads.ts: what formulas read (cells, columns, lookups, Table.all, summary groups);
 * - recalc.ts: the work stack, evaluation, storing values, the changes;
 * - open.ts: lazy tables and static plans applied at open; schema.ts: schema actions;
 * - data.ts: record actions; globals.ts: names formulas see (tables, builtins, PEEK, RECORD...);
 * - state.ts: what the parts share (EngineState).
 */
import type {CellValue} from './cells/types.js';
import {type Kwargs, type Value, truthy} from './values.js';
import {Budget} from './budget.js';
import {builtinTable} from './builtins.js';
import type {DateHooks} from './convert.js';
import type {AheadRows, RecordHost, RecordSet, Via} from './records.js';
import {defaultLibrary} from './library.js';
import type {ColValues, ColumnSpec, EngineOptions, RecalcResult, TableSpec} from './engine-types.js';
import type {ColumnSource, LazyRows} from './tables.js';
import type {EngineState} from './state.js';
import {allRows, lookup, readCell, readColumn, summaryGroup} from './reads.js';
import {loadAllColumns, loadLazyTable, trustStored} from './open.js';
import {addColumn, addTable, modifyColumn, removeColumn, removeTable, renameColumn, renameTable} from './schema.js';
import {
  addRecords,
  beforeChange,
  invalidateClock,
  recomputeAll,
  removeRecords,
  replaceTableData,
  updateRecords,
} from './data.js';
import {recalc} from './recalc.js';
import {gristFunctions, resolveGlobal} from './globals.js';
import {type ConditionOptions, type RowCondition, compileCondition, evaluateConstant} from './conditions.js';
import type {Expr, Stmt} from './syntax/index.js';

export {RecalcWhen} from './engine-types.js';
export type {ColumnChanges, ColumnSpec, ColValues, EngineOptions, RecalcResult, TableSpec} from './engine-types.js';
export {Contains} from './indexes.js';
export type {ColumnSource, LazyRows} from './tables.js';

/** Grist's formula engine over the tables a host loads: mirrors the host's actions, and `recalc()` computes the formula cells they made dirty (one per open document). */
export class FormulaEngine implements RecordHost {
  readonly budget: Budget;
  private readonly s: EngineState;

  constructor(opts: EngineOptions = {}) {
    this.budget = new Budget(opts.budget);
    const library = opts.library ?? defaultLibrary();
    const hooks: DateHooks = library.dateHooks ?? {};
    this.s = {
      tables: new Map(),
      cur: null,
      dirtyCols: new Set(),
      changes: new Map(),
      evaluations: 0,
      sorts: 0,
      lastTable: null,
      host: this,
      budget: this.budget,
      library,
      builtins: builtinTable(),
      hooks,
    };
    for (const [k, v] of Object.entries(library.functions)) this.s.builtins.set(k, v);
    for (const [k, v] of Object.entries(gristFunctions(this.s))) this.s.builtins.set(k, v);
  }

  // ---- loading and schema -------------------------------------------------------------------

  /** Adds a table with its rows (a document's initial load, or AddTable with data). */
  loadTable(spec: TableSpec, rowIds: number[] = [], values: ColValues = {}): void {
    addTable(this.s, spec);
    if (rowIds.length) addRecords(this.s, spec.tableId, rowIds, values, {load: true});
  }

  /**
   * Adds a table whose cells stay in `sources` (by column id; a column without one is read now
   * from `values`) until formulas or changes need them: an open document's engine reads only
   * what its writes touch (issue 26 §2).
   */
  loadLazyTable(spec: TableSpec, rows: LazyRows, sources: (colId: string) => ColumnSource | null): void {
    loadLazyTable(this.s, spec, rows, sources);
  }

  /**
   * Like recomputeAll, for loaded formula values known to be current (gristlite computed them and
   * kept them so): a formula whose dependencies follow from its text (static-deps.ts) gets them
   * registered without being evaluated; the others are marked for computing, as recomputeAll does.
   * Returns how many formula columns went each way.
   */
  trustStored(): {static: number; computed: number} {
    return trustStored(this.s);
  }

  /**
   * The document is about to change rows in SQLite, before it tells the engine: lazy columns read
   * the cells' current values first (the engine compares old and new), and indexes that need old
   * keys are built. `rowIds` null: every row; `colIds` null: rows are being added or removed.
   */
  beforeChange(tableId: string, rowIds: number[] | null, colIds: string[] | null): void {
    beforeChange(this.s, tableId, rowIds, colIds);
  }

  /** Reads every lazy column whole (before the document changes the shape of its tables). */
  loadAllColumns(): void {
    loadAllColumns(this.s);
  }

  /** AddTable: a new table, empty, with its columns. */
  addTable(spec: TableSpec): void {
    addTable(this.s, spec);
  }

  /** RemoveTable. */
  removeTable(tableId: string): void {
    removeTable(this.s, tableId);
  }

  /** RenameTable (formulas are not rewritten: see `formulaRenames`). */
  renameTable(oldId: string, newId: string): void {
    renameTable(this.s, oldId, newId);
  }

  /** AddColumn, with the stored values of a data column (one per row, in row order). */
  addColumn(tableId: string, spec: ColumnSpec, values?: CellValue[]): void {
    addColumn(this.s, tableId, spec, values);
  }

  /** RemoveColumn. */
  removeColumn(tableId: string, colId: string): void {
    removeColumn(this.s, tableId, colId);
  }

  /** RenameColumn (formulas are not rewritten: see `formulaRenames`). */
  renameColumn(tableId: string, oldId: string, newId: string): void {
    renameColumn(this.s, tableId, oldId, newId);
  }

  /**
   * ModifyColumn: type, formula, isFormula, recalcWhen, recalcDeps. A type change does not convert
   * stored values (the document sends the converted values as a BulkUpdateRecord, as Grist does).
   */
  modifyColumn(tableId: string, colId: string, changes: Partial<Omit<ColumnSpec, 'colId'>>): void {
    modifyColumn(this.s, tableId, colId, changes);
  }

  /** BulkAddRecord (and AddRecord with one row). */
  addRecords(tableId: string, rowIds: number[], values: ColValues, opts: {load?: boolean} = {}): void {
    addRecords(this.s, tableId, rowIds, values, opts);
  }

  /** BulkUpdateRecord (and UpdateRecord). */
  updateRecords(tableId: string, rowIds: number[], values: ColValues): void {
    updateRecords(this.s, tableId, rowIds, values);
  }

  /** BulkRemoveRecord (and RemoveRecord). */
  removeRecords(tableId: string, rowIds: number[]): void {
    removeRecords(this.s, tableId, rowIds);
  }

  /** ReplaceTableData: every row replaced. */
  replaceTableData(tableId: string, rowIds: number[], values: ColValues): void {
    replaceTableData(this.s, tableId, rowIds, values);
  }

  /** Marks every formula cell of the document dirty (what opening or importing a document does in Grist). */
  recomputeAll(): void {
    recomputeAll(this.s);
  }

  /** The clock moved (Grist refreshes NOW()/TODAY() hourly): volatile formulas recompute. */
  invalidateClock(): void {
    invalidateClock(this.s);
  }

  /** Brings every dirty cell up to date; returns the changed cells. */
  recalc(): RecalcResult {
    return recalc(this.s);
  }

  // ---- state --------------------------------------------------------------------------------

  /** The current stored value of a cell. */
  getCell(tableId: string, colId: string, rowId: number): CellValue | undefined {
    const t = this.s.tables.get(tableId);
    const c = t?.cols.get(colId);
    const slot = t?.index.get(rowId);
    if (!c || slot === undefined) return undefined;
    return c.get(slot);
  }

  /** The ids of the tables loaded. */
  tableIds(): string[] {
    return [...this.s.tables.keys()];
  }

  /** The column whose cell is being computed, while a formula runs. */
  currentColumn(): {tableId: string; colId: string} | null {
    const cur = this.s.cur;
    return cur ? {tableId: cur.col.table.id, colId: cur.col.id} : null;
  }

  /** A table's column ids. */
  columnIds(tableId: string): string[] {
    return [...(this.s.tables.get(tableId)?.cols.keys() ?? [])];
  }

  /** A column's spec as loaded or last modified. */
  columnSpec(tableId: string, colId: string): ColumnSpec | undefined {
    return this.s.tables.get(tableId)?.cols.get(colId)?.spec;
  }

  /** A table's row ids, ascending. */
  rowIdsOf(tableId: string): number[] {
    return this.s.tables.get(tableId)?.sortedRowIds().slice() ?? [];
  }

  /** Whether a recalc has work to do. */
  get pending(): boolean {
    for (const c of this.s.dirtyCols) if (c.dirty.size) return true;
    return false;
  }

  // ---- conditions (a records API's `where`) --------------------------------------------------

  /**
   * A condition over the rows of `tableId`: `body` (`parseFormulaBody`'s) compiled as a formula
   * column of that table, evaluated outside recalculations over cells as stored (conditions.ts).
   */
  condition(tableId: string, body: Stmt[], opts: ConditionOptions = {}): RowCondition {
    return compileCondition(this.s, tableId, body, opts);
  }

  /** The value of an expression that reads no row, with the names a formula sees (conditions.ts). */
  evaluateConstant(expr: Expr, opts: ConditionOptions = {}): Value {
    return evaluateConstant(this.s, expr, opts);
  }

  /** Whether a formula can name `name` (a table, a builtin, a Grist function, an auto-imported module). */
  resolvesName(name: string): boolean {
    return resolveGlobal(this.s, name) !== undefined;
  }

  // ---- RecordHost (what records, tables and decoders ask while formulas run) -----------------

  /** Whether the table has the column. */
  hasColumn(tableId: string, colId: string): boolean {
    return this.s.tables.get(tableId)?.cols.has(colId) ?? false;
  }

  rowExists(tableId: string, rowId: number): boolean {
    return this.s.tables.get(tableId)?.index.has(rowId) ?? false;
  }

  /** The message of the error stored in a cell (Grist's stored error cells hold only its type). */
  errorMessage(tableId: string, colId: string, rowId: number): string | undefined {
    return this.s.tables.get(tableId)?.cols.get(colId)?.errorMessages.get(rowId);
  }

  readCell(tableId: string, colId: string, rowId: number, via?: Via, group?: number[], ahead?: AheadRows): Value {
    return readCell(this.s, tableId, colId, rowId, via, group, ahead);
  }

  /** A column of several rows (a RecordSet's attribute): dirty cells among them are computed together first. */
  readColumn(tableId: string, colId: string, rowIds: number[], via?: Via): Value[] {
    return readColumn(this.s, tableId, colId, rowIds, via);
  }

  allRows(tableId: string): {rows: number[]; via: Via} {
    return allRows(this.s, tableId);
  }

  /**
   * Grist's getSummarySourceGroup: the source rows whose group-by values are this summary row's
   * (list columns of the source match by CONTAINS, an empty list under the empty value).
   */
  summaryGroup(tableId: string, rowId: number): RecordSet | null {
    return summaryGroup(this.s, tableId, rowId);
  }

  lookup(tableId: string, kwargs: Kwargs, orderBy: Value): {rows: number[]; via: Via} {
    return lookup(this.s, tableId, kwargs, orderBy);
  }
}

export {truthy};
