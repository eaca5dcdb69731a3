/**
 * The formula engine: an in-memory columnar copy of a document's user tables, kept current by the
 * document through methods mirroring Grist's doc actions, and `recalc()` which brings every
 * affected formula cell up to date and returns only the cells that changed.
 *
 * Dependencies are recorded while formulas run: a read of the same row makes an "identity" edge
 * between columns; a read of another row (through a reference, a RecordSet, `Table.all`) adds that
 * row to the edge's row map (source row -> dependent rows, Grist's inverse reference map); a lookup
 * registers the caller under the looked-up key in the lookup index. Changes mark dependents dirty
 * transitively; dirty cells are computed from an explicit work stack, a cell that reads a dirty cell
 * yields to it first, and a cell that reads one being computed gets CircularRefError.
 */
import type {CellValue} from '../doc/types.js';
import {refTarget} from '../doc/types.js';
import {type Kwargs, PyCallable, PyException, type Value, hashKey, raise, truthy} from './values.js';
import {Budget, setCurrentBudget} from './budget.js';
import {builtinTable} from './builtins.js';
import type {Globals} from './compiler.js';
import {compileFormula} from './grist.js';
import {
  type DateHooks,
  convertResult,
  defaultCell,
  errorCell,
  makeCellDecoder,
  raiseStoredError,
  sameCell,
} from './convert.js';
import {Record, type RecordHost, RecordSet, UserTable, type Via, recordToDict} from './records.js';
import {pyCompare, toArray} from './ops.js';
import {getattr} from './methods.js';
import {tokenize} from './lexer.js';
import {type StaticPlan, staticPlan} from './static-deps.js';
import {defaultLibrary, findModule, type FormulaLibrary} from './library.js';

import {
  RecalcWhen,
  type ColumnSpec,
  type TableSpec,
  type ColValues,
  type RecalcResult,
  type EngineOptions,
} from './engine-types.js';
import {
  ColData,
  TableData,
  RefVia,
  AllVia,
  refKindOf,
  POINT_READS_BEFORE_LOAD,
  type LazyRows,
  type ColumnSource,
} from './tables.js';
import {
  Contains,
  KEY_COL,
  KeyVia,
  type KeySpec,
  LookupIndex,
  SOURCE_LOOKUPS_BEFORE_BUILD,
  containsKeys,
  lookupKey,
  rawKey,
  rawKeyKind,
} from './indexes.js';
import {Edge, type Source, type Tracker, NO_SOURCES, pushSource} from './deps.js';
import {CIRCULAR, NeedCompute} from './recalc.js';

export {RecalcWhen, Contains};
export type {ColumnSpec, TableSpec, ColValues, ColumnChanges, RecalcResult, EngineOptions} from './engine-types.js';
export type {LazyRows, ColumnSource} from './tables.js';

export class FormulaEngine implements RecordHost {
  private tables = new Map<string, TableData>();
  private cur: Tracker | null = null;
  private dirtyCols = new Set<ColData>();
  /** Changed cells per column in the order computed (a row may appear twice: the last wins). */
  private changes = new Map<ColData, {rows: number[]; values: CellValue[]}>();
  private evaluations = 0;
  readonly budget: Budget;
  private readonly library: FormulaLibrary;
  private readonly builtins: Map<string, Value>;
  private readonly hooks: DateHooks;

  constructor(opts: EngineOptions = {}) {
    this.budget = new Budget(opts.budget);
    this.library = opts.library ?? defaultLibrary();
    this.hooks = this.library.dateHooks ?? {};
    this.builtins = builtinTable();
    for (const [k, v] of Object.entries(this.library.functions)) this.builtins.set(k, v);
    for (const [k, v] of Object.entries(this.gristFunctions())) this.builtins.set(k, v);
  }

  // ---- loading and schema -------------------------------------------------------------------

  /** Adds a table with its rows (a document's initial load, or AddTable with data). */
  loadTable(spec: TableSpec, rowIds: number[] = [], values: ColValues = {}): void {
    this.addTable(spec);
    if (rowIds.length) this.addRecords(spec.tableId, rowIds, values, {load: true});
  }

  /**
   * Adds a table whose cells stay in `sources` (by column id; a column without one is read now
   * from `values`) until formulas or changes need them: an open document's engine reads only
   * what its writes touch (issue 26 §2).
   */
  loadLazyTable(spec: TableSpec, rows: LazyRows, sources: (colId: string) => ColumnSource | null): void {
    this.addTable(spec);
    const t = this.table(spec.tableId);
    t.setLazyRows(rows.max, rows.exists, rows.ids);
    t.sortedCache = null;
    t.rowsVersion++;
    t.sourceRowsVersion = t.rowsVersion;
    for (const c of t.cols.values()) {
      const src = sources(c.id);
      if (src) c.setSource(src);
      else c.values = new Array<CellValue>(t.rowIds.length).fill(defaultCell(c.type));
    }
  }

  /**
   * The document is about to change rows in SQLite, before it tells the engine: lazy columns read
   * the cells' current values first (the engine compares old and new), and indexes that need old
   * keys are built. `rowIds` null: every row; `colIds` null: rows are being added or removed.
   */
  beforeChange(tableId: string, rowIds: number[] | null, colIds: string[] | null): void {
    const t = this.tables.get(tableId);
    if (!t) return;
    if (!colIds) void t.rowIds; // rows come or go: the table's row ids are read while they are the old ones
    this.indexBeforeChange(t, colIds);
    if (!colIds) return;
    for (const colId of colIds) {
      const c = t.cols.get(colId);
      if (!c?.isLazy) continue;
      if (!rowIds || rowIds.length > POINT_READS_BEFORE_LOAD) {
        void c.values;
        continue;
      }
      for (const r of rowIds) {
        const slot = t.index.get(r);
        if (slot !== undefined) c.get(slot);
      }
    }
  }

  /** Reads every lazy column whole (before the document changes the shape of its tables). */
  loadAllColumns(): void {
    for (const t of this.tables.values()) for (const c of t.cols.values()) if (c.isLazy) void c.values;
  }

  addTable(spec: TableSpec): void {
    if (this.tables.has(spec.tableId)) raise('ValueError', `table ${spec.tableId} exists`);
    const t = new TableData(spec.tableId, spec.summarySourceTable ?? null);
    t.groupBy = spec.summaryGroupBy ?? [];
    this.tables.set(spec.tableId, t);
    for (const c of spec.columns) this.createColumn(t, c);
    this.schemaNameChanged(spec.tableId);
  }

  removeTable(tableId: string): void {
    const t = this.table(tableId);
    for (const c of [...t.cols.values()]) this.dropColumn(c);
    this.tables.delete(tableId);
    this.lastTable = null;
    this.schemaNameChanged(tableId);
  }

  renameTable(oldId: string, newId: string): void {
    const t = this.table(oldId);
    this.tables.delete(oldId);
    this.lastTable = null;
    t.id = newId;
    t.userTable = null;
    this.tables.set(newId, t);
    for (const tt of this.tables.values()) {
      for (const c of tt.cols.values()) {
        const target = refTarget(c.type);
        if (target === oldId) {
          c.spec = {...c.spec, type: c.type.replace(oldId, newId)};
          c.decode = makeCellDecoder(c.type, this, this.hooks);
        }
      }
      if (tt.summarySource === oldId) tt.summarySource = newId;
    }
    this.schemaNameChanged(oldId);
    this.schemaNameChanged(newId);
  }

  addColumn(tableId: string, spec: ColumnSpec, values?: CellValue[]): void {
    const t = this.table(tableId);
    const c = this.createColumn(t, spec);
    if (values) {
      for (let i = 0; i < t.rowIds.length; i++) c.values[i] = values[i] ?? defaultCell(spec.type);
    }
    if (c.isFormula) this.markDirty(c, t.sortedRowIds());
    this.schemaNameChanged(spec.colId);
  }

  removeColumn(tableId: string, colId: string): void {
    const c = this.col(tableId, colId);
    this.invalidateReaders(c, null);
    this.dropColumn(c);
    c.table.cols.delete(colId);
    this.schemaNameChanged(colId);
  }

  renameColumn(tableId: string, oldId: string, newId: string): void {
    const c = this.col(tableId, oldId);
    const t = c.table;
    this.invalidateReaders(c, null);
    t.cols.delete(oldId);
    c.id = newId;
    c.spec = {...c.spec, colId: newId};
    t.cols.set(newId, c);
    // recalcDeps name columns: follow the rename.
    for (const o of t.cols.values()) {
      if (o.spec.recalcDeps?.includes(oldId))
        o.spec = {...o.spec, recalcDeps: o.spec.recalcDeps.map((d) => (d === oldId ? newId : d))};
    }
    t.depTriggers = null;
    for (const idx of [...t.indexes.values()]) if (idx.colIds.includes(oldId)) this.dropIndex(t, idx);
    this.schemaNameChanged(oldId);
    this.schemaNameChanged(newId);
  }

  /**
   * ModifyColumn: type, formula, isFormula, recalcWhen, recalcDeps. A type change does not convert
   * stored values (the document sends the converted values as a BulkUpdateRecord, as Grist does).
   */
  modifyColumn(tableId: string, colId: string, changes: Partial<Omit<ColumnSpec, 'colId'>>): void {
    const c = this.col(tableId, colId);
    const prev = c.spec;
    c.table.depTriggers = null;
    c.spec = {...prev, ...changes, colId};
    const typeChanged = changes.type !== undefined && changes.type !== prev.type;
    const formulaChanged =
      (changes.formula !== undefined && changes.formula !== prev.formula) ||
      (changes.isFormula !== undefined && changes.isFormula !== prev.isFormula);
    if (typeChanged) {
      c.decode = makeCellDecoder(c.type, this, this.hooks);
      c.rawKeyKind = undefined;
      c.refKind = undefined;
    }
    if (formulaChanged || typeChanged) {
      this.clearSources(c);
      this.compile(c);
      for (const idx of [...c.table.indexes.values()]) if (idx.colIds.includes(colId)) this.dropIndex(c.table, idx);
    }
    if ((formulaChanged || typeChanged) && c.isFormula) this.markDirty(c, c.table.sortedRowIds());
    if (typeChanged || formulaChanged) this.invalidateReaders(c, null);
  }

  private createColumn(t: TableData, spec: ColumnSpec): ColData {
    if (t.cols.has(spec.colId)) raise('ValueError', `column ${t.id}.${spec.colId} exists`);
    const c = new ColData(t, spec.colId, {...spec});
    t.depTriggers = null;
    c.decode = makeCellDecoder(spec.type, this, this.hooks);
    const dflt = defaultCell(spec.type);
    c.values = new Array(t.rowIds.length).fill(dflt);
    t.cols.set(spec.colId, c);
    this.compile(c);
    return c;
  }

  private dropColumn(c: ColData): void {
    c.table.depTriggers = null;
    this.clearSources(c);
    for (const e of c.readers.values()) e.dst.sourceEdges.delete(e);
    c.readers.clear();
    this.dirtyCols.delete(c);
    this.changes.delete(c);
    for (const idx of [...c.table.indexes.values()]) if (idx.colIds.includes(c.id)) this.dropIndex(c.table, idx);
  }

  private dropIndex(t: TableData, idx: LookupIndex): void {
    t.indexes.delete(idx.name);
    t.sortCache.clear();
    for (const callers of idx.callers.values()) for (const [col, rows] of callers) this.markDirty(col, [...rows]);
    for (const callers of idx.colReaders.values()) for (const [col, rows] of callers) this.markDirty(col, [...rows]);
  }

  private compile(c: ColData): void {
    const text = c.spec.formula ?? '';
    c.globals = new Map();
    if (!c.isFormula && !c.isTrigger) {
      c.compiled = null;
      return;
    }
    const globals: Globals = {
      vars: c.globals,
      resolve: (name) => this.resolveGlobal(name),
      importModule: (name) => this.importModule(name),
    };
    const defaultValue = c.decode(defaultCell(c.type));
    c.compiled = compileFormula(text, globals, defaultValue);
    c.readsSelf = false;
    c.volatile = false;
    try {
      const toks = tokenize(text);
      for (let i = 0; i < toks.length; i++) {
        const tk = toks[i];
        if (tk.kind !== 'name') continue;
        if (tk.value === 'NOW' || tk.value === 'TODAY') c.volatile = true;
        if (tk.value === c.id && i >= 2 && toks[i - 1].value === '.' && toks[i - 2].value === 'rec') c.readsSelf = true;
      }
    } catch {
      // Syntax errors are reported by evaluation.
    }
  }

  /** Formulas whose text mentions a name that appeared or disappeared are recomputed. */
  private schemaNameChanged(name: string): void {
    for (const t of this.tables.values()) {
      for (const c of t.cols.values()) {
        if (c.isFormula && c.spec.formula?.includes(name)) {
          this.clearSources(c);
          this.markDirty(c, t.sortedRowIds());
        }
      }
    }
  }

  // ---- data actions -------------------------------------------------------------------------

  /** BulkAddRecord (and AddRecord with one row). */
  addRecords(tableId: string, rowIds: number[], values: ColValues, opts: {load?: boolean} = {}): void {
    const t = this.table(tableId);
    if (!opts.load) this.indexBeforeChange(t, null);
    const given = new Set(Object.keys(values));
    const cols = [...t.cols.values()];
    const srcs = cols.map((c) => (Object.hasOwn(values, c.id) ? values[c.id] : undefined));
    const dflts = cols.map((c) => defaultCell(c.type));
    for (let i = 0; i < rowIds.length; i++) {
      const rowId = rowIds[i];
      if (t.index.has(rowId)) raise('ValueError', `row ${rowId} exists in ${tableId}`);
      const slot = t.free.length ? t.free.pop()! : t.rowIds.length;
      t.rowIds[slot] = rowId;
      t.index.set(rowId, slot);
      for (let j = 0; j < cols.length; j++) {
        const vs = srcs[j];
        cols[j].set(slot, vs && i < vs.length ? vs[i] : dflts[j]);
      }
    }
    t.sortedCache = null;
    t.rowsVersion++;
    if (opts.load) {
      // Loaded formula values are Grist's own; nothing is dirty until something changes.
      return;
    }
    this.rowsAppearedOrVanished(t, rowIds);
    for (const c of t.cols.values()) {
      if (c.isFormula) this.markDirty(c, rowIds);
      else if (c.isTrigger) {
        const when = c.spec.recalcWhen ?? 0;
        if (when === RecalcWhen.NEVER) continue;
        if (given.has(c.id) && !c.readsSelf) continue;
        this.markDirty(c, rowIds);
      }
    }
    // Every column, formula ones included: a new row's formula cell that computes to the value it
    // was given (or its default) is never stored again, so the index must hold that value now.
    for (const c of t.cols.values()) this.updateIndexes(c, rowIds, true);
  }

  /** BulkUpdateRecord (and UpdateRecord). */
  updateRecords(tableId: string, rowIds: number[], values: ColValues): void {
    const t = this.table(tableId);
    const updated = Object.keys(values);
    this.indexBeforeChange(t, updated);
    for (const colId of updated) {
      const c = t.cols.get(colId);
      if (!c) continue;
      const vs = values[colId];
      const changed: number[] = [];
      for (let i = 0; i < rowIds.length; i++) {
        const slot = t.index.get(rowIds[i]);
        if (slot === undefined) continue;
        if (!sameCell(c.get(slot), vs[i])) changed.push(rowIds[i]);
        c.set(slot, vs[i]);
      }
      c.version++;
      if (c.isFormula) continue; // formula values are the engine's own; a write is recomputed below
      if (changed.length) {
        this.invalidateReaders(c, changed);
        this.updateIndexes(c, changed, false);
      }
    }
    // Trigger formulas.
    for (const c of t.cols.values()) {
      if (!c.isTrigger) continue;
      const when = c.spec.recalcWhen ?? 0;
      if (when === RecalcWhen.NEVER) continue;
      if (updated.includes(c.id) && !c.readsSelf) continue;
      let fire = false;
      if (when === RecalcWhen.MANUAL_UPDATES) fire = updated.some((u) => u !== c.id || c.readsSelf);
      else fire = (c.spec.recalcDeps ?? []).some((d) => updated.includes(d));
      if (fire)
        this.markDirty(
          c,
          rowIds.filter((r) => t.index.has(r)),
        );
    }
    // A write to a formula column is overwritten by the formula, as in Grist.
    for (const colId of updated) {
      const c = t.cols.get(colId);
      if (c?.isFormula) this.markDirty(c, rowIds);
    }
  }

  /** BulkRemoveRecord (and RemoveRecord). */
  removeRecords(tableId: string, rowIds: number[]): void {
    const t = this.table(tableId);
    this.indexBeforeChange(t, null);
    const present = rowIds.filter((r) => t.index.has(r));
    // Dependents of the vanishing rows, computed before the rows go.
    this.rowsAppearedOrVanished(t, present);
    for (const c of t.cols.values()) {
      for (const idx of t.indexes.values()) void idx;
      for (const r of present) {
        c.dirty.delete(r);
        c.errorMessages.delete(r);
        this.clearCellSources(c, r);
        void r;
      }
    }
    for (const idx of t.indexes.values()) {
      for (const r of present) {
        const keys = idx.remove(r);
        if (keys) for (const key of keys) this.dirtyCallers(idx, key);
      }
    }
    for (const r of present) {
      const slot = t.index.get(r)!;
      t.index.delete(r);
      t.rowIds[slot] = -1;
      t.free.push(slot);
    }
    t.sortedCache = null;
    t.rowsVersion++;
  }

  /** ReplaceTableData: every row replaced. */
  replaceTableData(tableId: string, rowIds: number[], values: ColValues): void {
    const t = this.table(tableId);
    this.removeRecords(tableId, t.sortedRowIds().slice());
    t.rowIds = [];
    t.index.clear();
    t.free = [];
    for (const c of t.cols.values()) c.values = [];
    this.addRecords(tableId, rowIds, values);
  }

  /** Marks every formula cell of the document dirty (what opening or importing a document does in Grist). */
  recomputeAll(): void {
    for (const t of this.tables.values()) {
      for (const c of t.cols.values()) {
        if (c.isFormula) {
          this.clearSources(c);
          this.markDirty(c, t.sortedRowIds());
        }
      }
    }
  }

  /**
   * Like recomputeAll, for loaded formula values known to be current (gristlite computed them and
   * kept them so): a formula whose dependencies follow from its text (static-deps.ts) gets them
   * registered without being evaluated; the others are marked for computing, as recomputeAll does.
   * Returns how many formula columns went each way.
   */
  trustStored(): {static: number; computed: number} {
    const schema = {
      colType: (tableId: string, colId: string) => this.tables.get(tableId)?.cols.get(colId)?.type,
      isTable: (name: string) => this.tables.has(name),
    };
    const dynamic: ColData[] = [];
    let statics = 0;
    for (const t of this.tables.values()) {
      for (const c of t.cols.values()) {
        if (!c.isFormula) continue;
        const plan = t.summarySource || c.volatile ? null : staticPlan(c.spec.formula ?? '', t.id, c.id, schema);
        if (plan) {
          // Loading marked formulas naming each loaded table dirty (schemaNameChanged): the
          // stored values are current.
          c.dirty.clear();
          this.clearSources(c);
          this.registerPlan(c, plan);
          statics++;
        } else dynamic.push(c);
      }
    }
    // After the static edges: a static formula reading a recomputed one follows it.
    for (const c of dynamic) {
      this.clearSources(c);
      this.markDirty(c, c.table.sortedRowIds());
    }
    return {static: statics, computed: dynamic.length};
  }

  /** Registers what evaluation of every cell of `c` would, from its static plan and the stored values. */
  private registerPlan(c: ColData, plan: StaticPlan): void {
    const t = c.table;
    for (const colId of plan.cols) {
      const src = t.cols.get(colId);
      if (src) this.edge(src, c).identity = true;
    }
    for (const {ref, col} of plan.refs) {
      const refCol = t.cols.get(ref);
      const target = refCol && this.tables.get(refTarget(refCol.type) ?? '')?.cols.get(col);
      if (target) this.addRefReader(target, (refCol.refVia ??= new RefVia(refCol)), c);
    }
    if (!plan.lookups.length) return;
    const prev = this.cur;
    try {
      for (const r of t.sortedRowIds()) {
        const tracker: Tracker = {
          col: c,
          row: r,
          sources: NO_SOURCES,
          track: true,
          lastVia: undefined,
          lastViaCol: null,
        };
        for (const lk of plan.lookups) {
          const target = this.tables.get(lk.table);
          if (!target) continue;
          let kwargs: Kwargs;
          try {
            this.cur = null;
            kwargs = Object.create(null);
            for (const k of lk.keys)
              kwargs[k.key] =
                'value' in k.from
                  ? k.from.value
                  : k.from.col === 'id' || k.from.col === '_row_id'
                    ? BigInt(r)
                    : this.readCell(t.id, k.from.col, r);
            // What lookup() records, without building the index (it is built when first needed).
            const {idx, key} = this.lookupKeyOf(lk.table, kwargs);
            this.noteLookup(idx, key, tracker);
            const via = idx.via(key);
            for (const colId of lk.cols) {
              const col = target.cols.get(colId);
              if (col) this.noteViaRead(col, via, tracker);
            }
          } catch (e) {
            // An error cell as a key, or a missing key column: evaluation stops there too.
            if (!(e instanceof PyException)) throw e;
          }
        }
        if (tracker.sources.length) c.cellSources.set(r, tracker.sources);
      }
    } finally {
      this.cur = prev;
    }
  }

  /** The clock moved (Grist refreshes NOW()/TODAY() hourly): volatile formulas recompute. */
  invalidateClock(): void {
    for (const t of this.tables.values())
      for (const c of t.cols.values()) if (c.isFormula && c.volatile) this.markDirty(c, t.sortedRowIds());
  }

  /** The current stored value of a cell. */
  getCell(tableId: string, colId: string, rowId: number): CellValue | undefined {
    const t = this.tables.get(tableId);
    const c = t?.cols.get(colId);
    const slot = t?.index.get(rowId);
    if (!c || slot === undefined) return undefined;
    return c.get(slot);
  }

  tableIds(): string[] {
    return [...this.tables.keys()];
  }
  currentColumn(): {tableId: string; colId: string} | null {
    return this.cur ? {tableId: this.cur.col.table.id, colId: this.cur.col.id} : null;
  }
  columnIds(tableId: string): string[] {
    return [...(this.tables.get(tableId)?.cols.keys() ?? [])];
  }
  columnSpec(tableId: string, colId: string): ColumnSpec | undefined {
    return this.tables.get(tableId)?.cols.get(colId)?.spec;
  }
  rowIdsOf(tableId: string): number[] {
    return this.tables.get(tableId)?.sortedRowIds().slice() ?? [];
  }
  /** Whether a recalc has work to do. */
  get pending(): boolean {
    for (const c of this.dirtyCols) if (c.dirty.size) return true;
    return false;
  }

  // ---- dirtiness ----------------------------------------------------------------------------

  /** colId -> trigger columns (recalcWhen DEFAULT) listing it in recalcDeps; cached per table. */
  private depTriggers(t: TableData): Map<string, ColData[]> {
    if (t.depTriggers) return t.depTriggers;
    const m = new Map<string, ColData[]>();
    for (const c of t.cols.values()) {
      if (!c.isTrigger || (c.spec.recalcWhen ?? 0) !== RecalcWhen.DEFAULT) continue;
      for (const d of c.spec.recalcDeps ?? []) {
        let l = m.get(d);
        if (!l) {
          l = [];
          m.set(d, l);
        }
        l.push(c);
      }
    }
    t.depTriggers = m;
    return m;
  }

  private table(tableId: string): TableData {
    const t = this.tables.get(tableId);
    if (!t) return raise('KeyError', `no table ${tableId}`);
    return t;
  }

  private col(tableId: string, colId: string): ColData {
    const c = this.table(tableId).cols.get(colId);
    if (!c) return raise('KeyError', `no column ${tableId}.${colId}`);
    return c;
  }

  /** Marks cells of a computed column dirty, and everything that depends on them. */
  private markDirty(col: ColData, rows: Iterable<number>): void {
    const work: Array<[ColData, Iterable<number>]> = [[col, rows]];
    while (work.length) {
      const [c, rs] = work.pop()!;
      if (!c.isFormula && !c.isTrigger) continue;
      const fresh: number[] = [];
      for (const r of rs) {
        if (!c.dirty.has(r) && c.table.index.has(r)) {
          c.dirty.add(r);
          fresh.push(r);
        }
      }
      if (!fresh.length) continue;
      this.dirtyCols.add(c);
      this.collectReaders(c, fresh, work);
    }
  }

  private collectReaders(c: ColData, rows: number[], work: Array<[ColData, Iterable<number>]>): void {
    for (const [dst, edge] of c.readers) {
      if (!dst.isFormula) continue;
      if (edge.identity) work.push([dst, rows]);
      if (edge.rowMap) {
        const out: number[] = [];
        for (const r of rows) {
          const s = edge.rowMap.get(r);
          if (s) for (const x of s) out.push(x);
        }
        if (out.length) work.push([dst, out]);
      }
    }
    const t = c.table;
    if (t.indexes.size) {
      for (const idx of t.indexes.values()) {
        const isKey = idx.colIds.includes(c.id);
        if (!isKey && !idx.colReaders.size) continue;
        if (!idx.built && !idx.callers.size && !idx.colReaders.size) continue;
        for (const r of rows) {
          // An index not built yet (its callers registered from static plans): the row's key now,
          // which is its key before this change (key columns are indexed before they change).
          const k = idx.built ? idx.keyOf[r] : (this.rowKey(t, idx, r) ?? undefined);
          if (k === undefined) continue;
          for (const key of typeof k === 'string' ? [k] : k) {
            if (isKey) {
              const callers = idx.callers.get(key);
              if (callers) for (const [cc, rs] of callers) work.push([cc, [...rs]]);
            }
            const readers = idx.colReaders.get(key + KEY_COL + c.id);
            if (readers) for (const [cc, rs] of readers) work.push([cc, [...rs]]);
          }
        }
      }
    }
    if (t.allColReaders.size) {
      const readers = t.allColReaders.get(c.id);
      if (readers) for (const [cc, rs] of readers) work.push([cc, [...rs]]);
    }
    if (c.refReaders?.size) this.collectRefReaders(c, rows, work);
  }

  /** Readers of column c through Ref/RefList columns: the rows referring to the given rows of c. */
  private collectRefReaders(c: ColData, rows: number[], work: Array<[ColData, Iterable<number>]>): void {
    for (const [via, dsts] of c.refReaders!) {
      if (!dsts.size) continue;
      const idx = this.refIndex(via);
      if (!idx) {
        c.refReaders!.delete(via);
        continue;
      }
      const out: number[] = [];
      for (const k of rows) {
        const rs = idx.rowsByKey.get('n' + k);
        if (rs) for (const r of rs) out.push(r);
      }
      if (out.length) for (const d of dsts) if (d.isFormula) work.push([d, out]);
    }
  }

  /** Data cells changed (rows null: the whole column): their readers become dirty. */
  private invalidateReaders(c: ColData, rows: number[] | null): void {
    if (rows === null) {
      const all: Array<[ColData, Iterable<number>]> = [];
      for (const dst of c.readers.keys()) if (dst.isFormula) all.push([dst, dst.table.sortedRowIds()]);
      for (const [dst, rs] of all) this.markDirty(dst, rs);
      for (const idx of c.table.indexes.values()) {
        if (idx.colIds.includes(c.id))
          for (const callers of idx.callers.values()) for (const [cc, rs] of callers) this.markDirty(cc, [...rs]);
        const suffix = KEY_COL + c.id;
        for (const [ck, readers] of idx.colReaders) {
          if (ck.endsWith(suffix)) for (const [cc, rs] of readers) this.markDirty(cc, [...rs]);
        }
      }
      const readers = c.table.allColReaders.get(c.id);
      if (readers) for (const [cc, rs] of readers) this.markDirty(cc, [...rs]);
      return;
    }
    const work: Array<[ColData, Iterable<number>]> = [];
    this.collectReaders(c, rows, work);
    for (const [dst, rs] of work) this.markDirty(dst, rs);
  }

  /** Rows added or removed: whoever read those row ids, looked up their keys, or read Table.all. */
  private rowsAppearedOrVanished(t: TableData, rowIds: number[]): void {
    if (!rowIds.length) return;
    for (const c of t.cols.values()) {
      const work: Array<[ColData, Iterable<number>]> = [];
      for (const [dst, edge] of c.readers) {
        if (!edge.rowMap || !dst.isFormula) continue;
        const out: number[] = [];
        for (const r of rowIds) {
          const s = edge.rowMap.get(r);
          if (s) out.push(...s);
        }
        if (out.length) work.push([dst, out]);
      }
      if (c.refReaders?.size) this.collectRefReaders(c, rowIds, work);
      for (const [dst, rs] of work) this.markDirty(dst, rs);
    }
    for (const [cc, rs] of t.allCallers) this.markDirty(cc, [...rs]);
  }

  private dirtyCallers(idx: LookupIndex, key: string): void {
    const callers = idx.callers.get(key);
    if (callers) for (const [cc, rs] of callers) this.markDirty(cc, [...rs]);
  }

  /** Keeps lookup indexes on a column current after its values changed. */
  private updateIndexes(c: ColData, rows: number[], added: boolean): void {
    const t = c.table;
    if (!t.indexes.size) return;
    for (const idx of t.indexes.values()) {
      if (!idx.colIds.includes(c.id) || !idx.built) continue;
      for (const r of rows) {
        const old = idx.remove(r);
        const keys = this.rowKey(t, idx, r);
        if (keys !== null) idx.add(r, keys);
        const now = keys === null ? [] : typeof keys === 'string' ? [keys] : keys;
        // Callers of keys the row left or joined.
        if (old) for (const k of old) if (!now.includes(k)) this.dirtyCallers(idx, k);
        for (const k of now) if (!old?.includes(k)) this.dirtyCallers(idx, k);
      }
      void added;
    }
  }

  /**
   * Builds the indexes of `t` that have callers but were not built (static plans register without
   * building), before rows or key cells change: their old keys are needed to find who to dirty.
   */
  private indexBeforeChange(t: TableData, colIds: string[] | null): void {
    if (!t.indexes.size) return;
    for (const idx of t.indexes.values()) {
      if (idx.built || (!idx.callers.size && !idx.colReaders.size)) continue;
      if (colIds && !idx.colIds.some((c) => colIds.includes(c))) continue;
      this.buildIndex(idx);
    }
  }

  // ---- dependency tracking ------------------------------------------------------------------

  private clearSources(c: ColData): void {
    for (const e of c.refEdges) e.target.refReaders?.get(e.via)?.delete(c);
    c.refEdges = [];
    for (const r of [...c.cellSources.keys()]) this.clearCellSources(c, r);
    for (const e of c.sourceEdges) e.src.readers.delete(c);
    c.sourceEdges.clear();
  }

  private clearCellSources(c: ColData, row: number): void {
    const srcs = c.cellSources.get(row);
    if (!srcs) return;
    c.cellSources.delete(row);
    for (const s of srcs) {
      if (s.kind === 0) {
        const set = s.edge.rowMap?.get(s.row);
        if (set) {
          set.delete(row);
          if (!set.size) s.edge.rowMap!.delete(s.row);
        }
      } else if (s.kind === 1) {
        const m = s.index.callers.get(s.key);
        const set = m?.get(c);
        if (set) {
          set.delete(row);
          if (!set.size) {
            m!.delete(c);
            if (!m!.size) s.index.callers.delete(s.key);
          }
        }
      } else if (s.kind === 2) {
        const set = s.table.allCallers.get(c);
        if (set) {
          set.delete(row);
          if (!set.size) s.table.allCallers.delete(c);
        }
      } else if (s.kind === 3) {
        const m = s.index.colReaders.get(s.ckey);
        const set = m?.get(c);
        if (set) {
          set.delete(row);
          if (!set.size) {
            m!.delete(c);
            if (!m!.size) s.index.colReaders.delete(s.ckey);
          }
        }
      } else {
        const m = s.table.allColReaders.get(s.colId);
        const set = m?.get(c);
        if (set) {
          set.delete(row);
          if (!set.size) {
            m!.delete(c);
            if (!m!.size) s.table.allColReaders.delete(s.colId);
          }
        }
      }
    }
  }

  private edge(src: ColData, dst: ColData): Edge {
    let e = src.readers.get(dst);
    if (!e) {
      e = new Edge(src, dst);
      src.readers.set(dst, e);
      dst.sourceEdges.add(e);
    }
    return e;
  }

  private noteRead(col: ColData, row: number, cur: Tracker): void {
    let e = col.lastEdge;
    if (!e || e.dst !== cur.col || !col.readers.has(cur.col)) {
      e = this.edge(col, cur.col);
      col.lastEdge = e;
    }
    if (row === cur.row && col.table === cur.col.table) {
      e.identity = true;
      return;
    }
    if (!e.rowMap) e.rowMap = new Map();
    let s = e.rowMap.get(row);
    if (!s) {
      s = new Set();
      e.rowMap.set(row, s);
    }
    if (!s.has(cur.row)) {
      s.add(cur.row);
      pushSource(cur, {kind: 0, edge: e, row});
    }
  }

  // ---- RecordHost ---------------------------------------------------------------------------

  hasColumn(tableId: string, colId: string): boolean {
    return this.tables.get(tableId)?.cols.has(colId) ?? false;
  }

  rowExists(tableId: string, rowId: number): boolean {
    return this.tables.get(tableId)?.index.has(rowId) ?? false;
  }

  private lastTable: TableData | null = null;

  readCell(tableId: string, colId: string, rowId: number, via?: Via, group?: number[]): Value {
    let t = this.lastTable;
    if (!t || t.id !== tableId) {
      t = this.tables.get(tableId) ?? null;
      this.lastTable = t;
    }
    const c = t?.cols.get(colId);
    if (!t || !c) return raise('AttributeError', `Table '${tableId}' has no column '${colId}'`);
    const cur = this.cur;
    if (cur) {
      if (cur.col === c && cur.row === rowId) {
        // A trigger formula reading its own cell gets the stored value; a formula column, a cycle.
        if (c.isFormula) throw CIRCULAR;
      } else {
        if (cur.track) {
          if (via === undefined) this.noteRead(c, rowId, cur);
          else if (cur.lastVia !== via || cur.lastViaCol !== c) this.noteViaRead(c, via, cur);
        }
        if (c.dirty.size && c.dirty.has(rowId)) {
          // A record of a RecordSet: the set's dirty cells of this column are computed together.
          if (group && group.length > 1)
            throw new NeedCompute(
              c,
              rowId,
              group.filter((r) => c.dirty.has(r) && !(cur.col === c && cur.row === r)),
            );
          throw new NeedCompute(c, rowId);
        }
      }
    }
    const slot = t.index.get(rowId);
    if (slot === undefined) return c.decode(defaultCell(c.type));
    const v = c.get(slot);
    if (c.errorMessages.size && Array.isArray(v) && v[0] === 'E') raiseStoredError(v, c.errorMessages.get(rowId));
    if (cur?.track && cur.row === rowId && cur.col.table === t && cur.col !== c) {
      // A Ref/RefList cell of the reading cell's own row: its records carry the route.
      const kind = (c.refKind ??= refKindOf(c.type));
      if (kind) return c.decode(v, (c.refVia ??= new RefVia(c)));
    }
    return c.decode(v);
  }

  /** A column of several rows (a RecordSet's attribute): dirty cells among them are computed together first. */
  readColumn(tableId: string, colId: string, rowIds: number[], via?: Via): Value[] {
    const c = this.tables.get(tableId)?.cols.get(colId);
    const cur = this.cur;
    if (c && cur && c.dirty.size && rowIds.length > 1) {
      let rows: number[] | null = null;
      for (const r of rowIds) {
        if (c.dirty.has(r) && !(cur.col === c && cur.row === r)) (rows ??= []).push(r);
      }
      if (rows && rows.length > 1) {
        if (cur.track) {
          if (via === undefined) this.noteRead(c, rows[0], cur);
          else this.noteViaRead(c, via, cur);
        }
        throw new NeedCompute(c, rows[0], rows);
      }
    }
    const out: Value[] = new Array(rowIds.length);
    for (let i = 0; i < rowIds.length; i++) out[i] = this.readCell(tableId, colId, rowIds[i], via);
    return out;
  }

  /** The message of the error stored in a cell (Grist's stored error cells hold only its type). */
  errorMessage(tableId: string, colId: string, rowId: number): string | undefined {
    return this.tables.get(tableId)?.cols.get(colId)?.errorMessages.get(rowId);
  }

  allRows(tableId: string): {rows: number[]; via: Via} {
    const t = this.table(tableId);
    const cur = this.cur;
    if (cur?.track) {
      let s = t.allCallers.get(cur.col);
      if (!s) {
        s = new Set();
        t.allCallers.set(cur.col, s);
      }
      if (!s.has(cur.row)) {
        s.add(cur.row);
        pushSource(cur, {kind: 2, table: t});
      }
    }
    return {rows: t.sortedRowIds(), via: t.allVia};
  }

  /** Records a column read through a lookup key or Table.all, once per (route, column) per cell. */
  private noteViaRead(c: ColData, via: Via, cur: Tracker): void {
    cur.lastVia = via;
    cur.lastViaCol = c;
    let m: Map<ColData, Set<number>> | undefined;
    let src: Source;
    if (via instanceof KeyVia) {
      const ckey = via.key + KEY_COL + c.id;
      const map = via.index.colReaders;
      m = map.get(ckey);
      if (!m) {
        m = new Map();
        map.set(ckey, m);
      }
      src = {kind: 3, index: via.index, ckey};
    } else if (via instanceof RefVia) {
      this.addRefReader(c, via, cur.col);
      return;
    } else if (via instanceof AllVia) {
      const map = via.table.allColReaders;
      m = map.get(c.id);
      if (!m) {
        m = new Map();
        map.set(c.id, m);
      }
      src = {kind: 4, table: via.table, colId: c.id};
    } else {
      return;
    }
    let s = m.get(cur.col);
    if (!s) {
      s = new Set();
      m.set(cur.col, s);
    }
    if (!s.has(cur.row)) {
      s.add(cur.row);
      pushSource(cur, src);
    }
  }

  /** Column `dst` reads column `c` through the Ref/RefList column of `via` (of dst's own row). */
  private addRefReader(c: ColData, via: RefVia, dst: ColData): void {
    const readers = (c.refReaders ??= new Map());
    let dsts = readers.get(via);
    if (!dsts) {
      dsts = new Set();
      readers.set(via, dsts);
    }
    if (!dsts.has(dst)) {
      dsts.add(dst);
      dst.refEdges.push({target: c, via});
    }
  }

  /**
   * Grist's getSummarySourceGroup: the source rows whose group-by values are this summary row's
   * (list columns of the source match by CONTAINS, an empty list under the empty value).
   */
  summaryGroup(tableId: string, rowId: number): RecordSet | null {
    const t = this.table(tableId);
    const src = t.summarySource ? this.tables.get(t.summarySource) : undefined;
    if (!src) return null;
    const groupBy = t.groupBy.length
      ? t.groupBy
      : [...t.cols.values()]
          .filter((c) => !c.isFormula && c.id !== 'manualSort' && src.cols.has(c.id))
          .map((c) => c.id);
    const kw: Kwargs = Object.create(null);
    for (const colId of groupBy) {
      const v = this.readCell(tableId, colId, rowId);
      const srcType = src.cols.get(colId)?.type ?? '';
      if (srcType === 'ChoiceList') kw[colId] = new Contains(v, '');
      else if (srcType.startsWith('RefList:')) kw[colId] = new Contains(v, 0n);
      else kw[colId] = v;
    }
    const {rows, via} = groupBy.length ? this.lookup(src.id, kw, null) : this.allRows(src.id);
    return new RecordSet(this, src.id, rows, kw, null, via);
  }

  /** The key of a row in an index, or its keys for a CONTAINS index; null for a missing row. */
  private rowKey(t: TableData, idx: LookupIndex, row: number): string | string[] | null {
    const slot = t.index.get(row);
    if (slot === undefined) return null;
    if (idx.specs.length === 1 && !idx.specs[0].contains && idx.specs[0].colId !== 'id') {
      // One plain key column (the common lookup): no arrays.
      const c = t.cols.get(idx.specs[0].colId)!;
      const kind = (c.rawKeyKind ??= rawKeyKind(c.type));
      const fast = kind ? rawKey(kind, c.get(slot)) : undefined;
      if (fast !== undefined) return fast;
    }
    let parts: string[] | null = [];
    let groups: string[][] | null = null;
    for (let i = 0; i < idx.specs.length; i++) {
      const spec = idx.specs[i];
      let v: Value;
      if (spec.colId === 'id') v = BigInt(row);
      else {
        const c = t.cols.get(spec.colId)!;
        if (!spec.contains) {
          const kind = (c.rawKeyKind ??= rawKeyKind(c.type));
          const fast = kind ? rawKey(kind, c.get(slot)) : undefined;
          if (fast !== undefined) {
            parts?.push(fast);
            groups?.push([fast]);
            continue;
          }
        }
        try {
          v = c.decode(c.get(slot));
        } catch {
          v = `\0err:${JSON.stringify(c.get(slot))}`;
        }
      }
      if (!spec.contains) {
        parts?.push(lookupKey(v));
        groups?.push([lookupKey(v)]);
        continue;
      }
      if (!groups) {
        groups = parts!.map((p) => [p]);
        parts = null;
      }
      groups.push(containsKeys(v, spec.matchEmpty));
    }
    if (parts) return parts.join('\0');
    // Every combination of the items of the CONTAINS columns.
    let keys: string[] = [''];
    groups!.forEach((g, i) => {
      const next: string[] = [];
      for (const k of keys) for (const x of g) next.push(i ? k + '\0' + x : x);
      keys = next;
    });
    return keys;
  }

  private getIndex(t: TableData, specs: KeySpec[]): LookupIndex {
    const name = specs
      .map((s) =>
        s.contains ? `${s.colId}\u0002${s.matchEmpty === undefined ? '' : lookupKey(s.matchEmpty)}` : s.colId,
      )
      .join('\0');
    let idx = t.indexes.get(name);
    if (!idx) {
      idx = new LookupIndex(t, name, specs);
      t.indexes.set(name, idx);
    }
    return idx;
  }

  private buildIndex(idx: LookupIndex): void {
    if (idx.built) return;
    const t = idx.table;
    // Every row's key: lazy key columns are read whole at once.
    for (const colId of idx.colIds) void t.cols.get(colId)?.values;
    for (const r of t.sortedRowIds()) {
      const key = this.rowKey(t, idx, r);
      if (key !== null) idx.add(r, key);
    }
    idx.built = true;
  }

  /** The index on a Ref column (CONTAINS for RefList) that a RefVia route reads through; null if the column is gone. */
  private refIndex(via: RefVia): LookupIndex | null {
    const c = via.col;
    const t = c.table;
    if (this.tables.get(t.id) !== t || t.cols.get(c.id) !== c) return null;
    const kind = (c.refKind ??= refKindOf(c.type));
    if (!kind) return null;
    const idx = this.getIndex(t, [kind === 2 ? {colId: c.id, contains: true} : {colId: c.id, contains: false}]);
    this.buildIndex(idx);
    return idx;
  }

  /** The index a lookup with these arguments reads, and the key it reads. */
  private lookupKeyOf(
    tableId: string,
    kwargs: Kwargs,
  ): {t: TableData; idx: LookupIndex; key: string; colIds: string[]} {
    const t = this.table(tableId);
    const colIds = Object.keys(kwargs).sort();
    const specs: KeySpec[] = [];
    for (const colId of colIds) {
      if (!t.cols.has(colId) && colId !== 'id') raise('KeyError', `Table '${tableId}' has no column '${colId}'`);
      const v = kwargs[colId];
      specs.push(v instanceof Contains ? {colId, contains: true, matchEmpty: v.matchEmpty} : {colId, contains: false});
    }
    const idx = this.getIndex(t, specs);
    const key = colIds
      .map((k) => {
        const v = kwargs[k];
        return lookupKey(v instanceof Contains ? v.value : v);
      })
      .join('\0');
    return {t, idx, key, colIds};
  }

  /** The cell being computed looked up `key`: a change to the key's rows dirties it. */
  private noteLookup(idx: LookupIndex, key: string, cur: Tracker): void {
    let m = idx.callers.get(key);
    if (!m) {
      m = new Map();
      idx.callers.set(key, m);
    }
    let s = m.get(cur.col);
    if (!s) {
      s = new Set();
      m.set(cur.col, s);
    }
    if (!s.has(cur.row)) {
      s.add(cur.row);
      pushSource(cur, {kind: 1, index: idx, key});
    }
  }

  lookup(tableId: string, kwargs: Kwargs, orderBy: Value): {rows: number[]; via: Via} {
    const {t, idx, key, colIds} = this.lookupKeyOf(tableId, kwargs);
    // Key columns computed by formulas must be current before the index answers.
    for (const colId of colIds) {
      const c = t.cols.get(colId);
      if (c?.dirty.size) {
        const list = c.dirty.list,
          rows: number[] = [];
        for (let i = 0; i < list.length; i++) {
          const r = list[i];
          if (!c.dirty.has(r) || (this.cur && this.cur.col === c && this.cur.row === r)) continue;
          rows.push(r);
        }
        if (rows.length) throw new NeedCompute(c, rows[0], rows);
      }
    }
    const cur = this.cur;
    if (cur?.track) this.noteLookup(idx, key, cur);
    const via = idx.via(key);
    let rows = idx.built ? undefined : this.lookupFromSource(t, idx, kwargs);
    if (!rows) {
      this.buildIndex(idx);
      rows = idx.rows(key);
    }
    if (orderBy !== null && orderBy !== undefined) rows = this.sortRows(tableId, rows, orderBy, via);
    return {rows, via};
  }

  /**
   * The rows of a lookup on one lazy Ref data column (`Items.lookupRecords(Customer=$id)`) read from
   * the column's source, while few were asked: the first write to a document just opened need not
   * read the whole column to build its index. Undefined when the index must answer.
   */
  private lookupFromSource(t: TableData, idx: LookupIndex, kwargs: Kwargs): number[] | undefined {
    if (idx.specs.length !== 1 || idx.specs[0].contains || idx.sourceLookups >= SOURCE_LOOKUPS_BEFORE_BUILD) return;
    const c = t.cols.get(idx.specs[0].colId);
    if (!c || c.isFormula || c.isTrigger || (c.refKind ??= refKindOf(c.type)) !== 1) return;
    const v = kwargs[c.id];
    const id = v instanceof Record ? v.rowId : typeof v === 'bigint' ? Number(v) : NaN;
    // Row 0 is also the key of empty (null) cells, which the source's equality would not find.
    if (!Number.isSafeInteger(id) || id <= 0) return;
    const rows = c.rowsReferring(id);
    if (!rows) return;
    idx.sourceLookups++;
    return rows.filter((r) => t.index.has(r));
  }

  private sortRows(tableId: string, rows: number[], orderBy: Value, via?: Via): number[] {
    const specs = (typeof orderBy === 'string' ? [orderBy] : toArray(orderBy)).map((s) => {
      if (typeof s !== 'string') raise('TypeError', 'order_by must be a column id or a tuple of column ids');
      const desc = (s as string).startsWith('-');
      return {col: desc ? (s as string).slice(1) : (s as string), desc};
    });
    // The order of a lookup key's rows (or Table.all) by a spec is cached while its columns and rows
    // are unchanged (PREVIOUS/NEXT/RANK and sorted lookups ask for it from every row).
    const t = this.table(tableId);
    const cacheable = via instanceof KeyVia || via instanceof AllVia;
    const specKey = specs.map((sp) => (sp.desc ? '-' : '+') + sp.col).join(',');
    const cols: ColData[] = [];
    if (cacheable) {
      for (const sp of specs) {
        const c = t.cols.get(sp.col);
        if (c) cols.push(c);
      }
      if (via instanceof KeyVia)
        for (const k of via.index.colIds) {
          const c = t.cols.get(k);
          if (c) cols.push(c);
        }
      const hit =
        cols.length ===
        specs.length + (via instanceof KeyVia ? via.index.colIds.filter((k) => t.cols.has(k)).length : 0)
          ? t.sortCache.get(via)?.get(specKey)
          : undefined;
      if (
        hit &&
        hit.rowsVersion === t.rowsVersion &&
        hit.cols.length === cols.length &&
        hit.cols.every((c, i) => c === cols[i] && hit.vers[i] === c.version)
      ) {
        // Same dependencies and waits as reading the sort columns.
        const cur = this.cur;
        for (let i = 0; i < specs.length; i++) {
          const c = cols[i];
          if (cur?.track && (cur.lastVia !== via || cur.lastViaCol !== c)) this.noteViaRead(c, via, cur);
          if (c.dirty.size) {
            const dirty = rows.filter((r) => c.dirty.has(r) && !(cur && cur.col === c && cur.row === r));
            if (dirty.length) throw new NeedCompute(c, dirty[0], dirty);
          }
        }
        return hit.rows;
      }
    }
    const keys = rows.map((r) => specs.map((s) => this.readCell(tableId, s.col, r, via, rows)));
    const idx = rows.map((_, i) => i);
    idx.sort((a, b) => {
      for (let k = 0; k < specs.length; k++) {
        const c = sortCompare(keys[a][k], keys[b][k]);
        if (c) return specs[k].desc ? -c : c;
      }
      return rows[a] - rows[b];
    });
    const sorted = idx.map((i) => rows[i]);
    if (cacheable && cols.length) {
      let m = t.sortCache.get(via);
      if (!m) {
        m = new Map();
        t.sortCache.set(via, m);
      }
      m.set(specKey, {rows: sorted, cols, vers: cols.map((c) => c.version), rowsVersion: t.rowsVersion});
    }
    return sorted;
  }

  // ---- recalculation ------------------------------------------------------------------------

  /** Brings every dirty cell up to date; returns the changed cells. */
  recalc(): RecalcResult {
    const prevBudget = setCurrentBudget(this.budget);
    this.budget.startRecalc();
    this.evaluations = 0;
    try {
      for (;;) {
        let col: ColData | null = null;
        for (const c of this.dirtyCols) {
          if (c.dirty.size) {
            col = c;
            break;
          }
          this.dirtyCols.delete(c);
        }
        if (!col) break;
        // The dirty list grows while computing (visited too); emptied, it restarts (picked up above).
        const dirty = col.dirty,
          list = dirty.list;
        for (let i = 0; i < list.length; i++) {
          const r = list[i];
          if (dirty.has(r)) this.computeFrom(col, r);
          if (dirty.list !== list) break;
        }
      }
    } finally {
      this.budget.endRecalc();
      setCurrentBudget(prevBudget);
    }
    return this.takeChanges();
  }

  private takeChanges(): RecalcResult {
    const result: RecalcResult = {changes: {}, rowsChanged: {}, evaluations: this.evaluations};
    const rowsByTable = new Map<string, number[][]>();
    for (const [c, ch] of this.changes) {
      if (!ch.rows.length || !this.tables.has(c.table.id) || c.table.cols.get(c.id) !== c) continue;
      let {rows: rowIds, values} = ch;
      let ascending = true;
      for (let i = 1; i < rowIds.length; i++)
        if (rowIds[i] <= rowIds[i - 1]) {
          ascending = false;
          break;
        }
      if (!ascending) {
        const last = new Map<number, CellValue>();
        for (let i = 0; i < rowIds.length; i++) last.set(rowIds[i], values[i]);
        rowIds = [...last.keys()].filter((r) => c.table.index.has(r)).sort((a, b) => a - b);
        values = rowIds.map((r) => last.get(r)!);
      }
      if (!rowIds.length) continue;
      const tableChanges = (result.changes[c.table.id] ??= {});
      tableChanges[c.id] = {rowIds, values};
      let lists = rowsByTable.get(c.table.id);
      if (!lists) {
        lists = [];
        rowsByTable.set(c.table.id, lists);
      }
      lists.push(rowIds);
    }
    for (const [t, lists] of rowsByTable) {
      // One column, or columns changed on the same rows: its (ascending) list; else the union.
      const first = lists[0];
      const same = lists.every((l) => l === first || (l.length === first.length && l.every((r, i) => r === first[i])));
      result.rowsChanged[t] = same ? first.slice() : [...new Set(lists.flat())].sort((a, b) => a - b);
    }
    this.changes.clear();
    return result;
  }

  private computeFrom(col: ColData, row: number): void {
    // Fast path: the cell needs nothing dirty.
    const first = this.evaluate(col, row);
    if (!first) {
      col.dirty.delete(row);
      return;
    }
    // Cells waiting for another are in `computing`; reading one of those is a cycle.
    const stack: Array<[ColData, number]> = [[col, row]];
    col.computing.add(row);
    let need: NeedCompute | null = first;
    while (stack.length) {
      if (need) {
        const [c, r] = stack[stack.length - 1];
        if (need.col.computing.has(need.row) || (need.col === c && need.row === r)) {
          c.errorMessages.set(r, CIRCULAR.message);
          this.store(c, r, errorCell(CIRCULAR));
          c.dirty.delete(r);
          c.computing.delete(r);
          stack.pop();
        } else if (need.rows) {
          c.computing.add(r);
          const nc = need.col,
            rows = need.rows;
          for (let i = rows.length - 1; i >= 0; i--) {
            const x = rows[i];
            if (nc.dirty.has(x) && !nc.computing.has(x) && !(nc === c && x === r)) stack.push([nc, x]);
          }
        } else {
          c.computing.add(r);
          stack.push([need.col, need.row]);
        }
        need = null;
      }
      if (!stack.length) break;
      const [c, r] = stack[stack.length - 1];
      if (!c.dirty.has(r)) {
        c.computing.delete(r);
        stack.pop();
        continue;
      }
      need = this.evaluate(c, r);
      if (!need) {
        c.dirty.delete(r);
        c.computing.delete(r);
        stack.pop();
      }
    }
  }

  /** Evaluates one cell and stores its value; returns the dirty cell it must wait for, if any. */
  private evaluate(c: ColData, r: number): NeedCompute | null {
    const t = c.table;
    const slot = t.index.get(r);
    if (slot === undefined) {
      c.dirty.delete(r);
      return null;
    }
    this.clearCellSources(c, r);
    const tracker: Tracker = {
      col: c,
      row: r,
      sources: NO_SOURCES,
      track: c.isFormula,
      lastVia: undefined,
      lastViaCol: null,
    };
    const prev = this.cur;
    this.cur = tracker;
    this.evaluations++;
    let cell: CellValue;
    try {
      this.budget.startCell();
      const value = c.compiled!.run(new Record(this, t.id, r), (t.userTable ??= new UserTable(this, t.id)));
      cell = convertResult(value, c.type);
    } catch (e) {
      if (e instanceof NeedCompute) {
        if (tracker.sources.length) c.cellSources.set(r, tracker.sources);
        this.cur = prev;
        return e;
      }
      cell = this.errorFor(e, c, slot);
    } finally {
      this.cur = prev;
    }
    if (tracker.sources.length) c.cellSources.set(r, tracker.sources);
    this.store(c, r, cell);
    return null;
  }

  private errorFor(e: unknown, c: ColData, slot: number): CellValue {
    let pe: PyException;
    if (e instanceof PyException) pe = e;
    else if (e instanceof RangeError && /call stack/i.test(e.message))
      pe = new PyException('RecursionError', 'maximum recursion depth exceeded');
    else pe = new PyException('UnsupportedError', `internal error: ${e instanceof Error ? e.message : String(e)}`);
    c.errorMessages.set(c.table.rowIds[slot], pe.message);
    if (c.isTrigger) {
      // Grist keeps the previous value of a trigger formula's cell inside the error.
      const prev = c.get(slot);
      return errorCell(
        pe,
        Array.isArray(prev) && prev[0] === 'E' ? ((prev[4] as {u?: CellValue} | undefined)?.u ?? null) : prev,
      );
    }
    return errorCell(pe);
  }

  private store(c: ColData, r: number, cell: CellValue): void {
    const t = c.table;
    const slot = t.index.get(r);
    if (slot === undefined) return;
    if (c.errorMessages.size && !(Array.isArray(cell) && cell[0] === 'E')) c.errorMessages.delete(r);
    const old = c.get(slot);
    if (sameCell(old, cell) && typeof old === typeof cell) return;
    if (t.indexes.size) this.indexBeforeChange(t, [c.id]);
    c.set(slot, cell);
    c.version++;
    let m = this.changes.get(c);
    if (!m) {
      m = {rows: [], values: []};
      this.changes.set(c, m);
    }
    m.rows.push(r);
    m.values.push(cell);
    // Trigger formulas (recalcWhen DEFAULT) whose recalcDeps include this formula column fire.
    if (c.isFormula) {
      const triggers = this.depTriggers(t).get(c.id);
      if (triggers) for (const tc of triggers) this.markDirty(tc, [r]);
    }
    if (c.isTrigger) {
      // A trigger cell is data: its readers recompute.
      this.invalidateReaders(c, [r]);
    }
    if (t.indexes.size) this.updateIndexes(c, [r], false);
  }

  // ---- globals ------------------------------------------------------------------------------

  private resolveGlobal(name: string): Value | undefined {
    // Tables are defined after `from functions import *` in Grist's usercode: they shadow functions (table T vs T()).
    const t = this.tables.get(name);
    if (t) return (t.userTable ??= new UserTable(this, name));
    const b = this.builtins.get(name);
    if (b !== undefined) return b;
    const m = findModule(this.library, name);
    if (m !== undefined && AUTO_IMPORTED.has(name)) return m;
    return undefined;
  }

  private importModule(name: string): Value {
    const m = findModule(this.library, name);
    if (m === undefined) {
      throw new PyException(
        KNOWN_MODULES.has(name) ? 'ImportError' : 'ModuleNotFoundError',
        `No module named '${name}'`,
      );
    }
    return m;
  }

  /** Grist functions that need the engine: PEEK, RECORD, VLOOKUP, PREVIOUS, NEXT, RANK. */
  private gristFunctions(): {[name: string]: PyCallable} {
    const fns: {[name: string]: PyCallable} = {};
    fns.PEEK = new PyCallable('PEEK', (args) => {
      const thunk = args[0];
      const cur = this.cur;
      if (!cur) return typeof thunk === 'object' && thunk instanceof PyCallable ? thunk.call([], null) : thunk;
      const saved = cur.track;
      cur.track = false;
      try {
        return thunk instanceof PyCallable ? thunk.call([], null) : thunk;
      } finally {
        cur.track = saved;
      }
    });
    fns.CONTAINS = new PyCallable('CONTAINS', (args, kw) => {
      const matchEmpty = kw && 'match_empty' in kw ? kw.match_empty : args.length > 1 ? args[1] : undefined;
      if (matchEmpty !== undefined) hashKey(matchEmpty); // TypeError for unhashable, as Grist checks
      return new Contains(args[0] ?? null, matchEmpty);
    });
    fns.RECORD = new PyCallable('RECORD', (args, kw) => {
      const expand = kw?.expand_refs ?? args[2] ?? 0n;
      const iso = kw?.dates_as_iso ?? args[1] ?? false;
      return recordToDict(this, args[0], truthy(iso), Number(expand));
    });
    fns.VLOOKUP = new PyCallable('VLOOKUP', (args, kw) => {
      const table = args[0];
      if (!(table instanceof UserTable)) raise('TypeError', 'VLOOKUP requires a table');
      return getattr(table, 'lookupOne') instanceof PyCallable
        ? (getattr(table, 'lookupOne') as PyCallable).call([], kw)
        : null;
    });
    const neighbor = (name: string, delta: number) =>
      new PyCallable(name, (args, kw) => {
        const rec = args[0];
        if (!(rec instanceof Record)) raise('TypeError', `${name}() requires a record`);
        const r = rec as Record;
        const groupBy = kw?.group_by ?? null;
        const orderBy = kw?.order_by ?? null;
        const rows = this.groupRows(r, groupBy, orderBy);
        const i = rows.indexOf(r.rowId);
        const j = i + delta;
        return new Record(this, r.tableId, i >= 0 && j >= 0 && j < rows.length ? rows[j] : 0);
      });
    fns.PREVIOUS = neighbor('PREVIOUS', -1);
    fns.NEXT = neighbor('NEXT', 1);
    fns.RANK = new PyCallable('RANK', (args, kw) => {
      const rec = args[0];
      if (!(rec instanceof Record)) raise('TypeError', 'RANK() requires a record');
      const order = kw?.order ?? 'asc';
      const rows = this.groupRows(rec as Record, kw?.group_by ?? null, kw?.order_by ?? null);
      const i = rows.indexOf((rec as Record).rowId);
      if (i < 0) return null;
      return BigInt(String(order).toLowerCase() === 'desc' ? rows.length - i : i + 1);
    });
    return fns;
  }

  /** Rows of rec's group (group_by columns equal to rec's) in order_by order. */
  private groupRows(rec: Record, groupBy: Value, orderBy: Value): number[] {
    const cols = groupBy === null ? [] : typeof groupBy === 'string' ? [groupBy] : toArray(groupBy).map(String);
    const kw: Kwargs = Object.create(null);
    for (const c of cols) kw[c] = rec.getattr(c);
    if (cols.length) return this.lookup(rec.tableId, kw, orderBy).rows;
    const {rows, via} = this.allRows(rec.tableId);
    return orderBy === null ? rows : this.sortRows(rec.tableId, rows, orderBy, via);
  }
}

/** Modules formulas see without importing (Grist's generated usercode imports datetime, math, re). */
const AUTO_IMPORTED = new Set(['datetime', 'math', 're']);
/** Modules Grist provides to formulas (an import of one not yet available is an ImportError). */
const KNOWN_MODULES = new Set([
  'datetime',
  'math',
  're',
  'time',
  'json',
  'itertools',
  'functools',
  'statistics',
  'collections',
  'random',
  'string',
  'decimal',
  'dateutil',
  'dateutil.parser',
  'dateutil.relativedelta',
  'dateutil.tz',
  'six',
  'moment',
  'unicodedata',
  'operator',
  'calendar',
]);

/** Sort comparison for order_by: None first, mixed types by type name (never throws). */
function sortCompare(a: Value, b: Value): number {
  if (a === b) return 0;
  if (a === null) return -1;
  if (b === null) return 1;
  try {
    const c = pyCompare(a, b);
    return Number.isNaN(c) ? 0 : c;
  } catch {
    const ta = typeof a,
      tb = typeof b;
    return ta < tb ? -1 : ta > tb ? 1 : 0;
  }
}

export {truthy};
