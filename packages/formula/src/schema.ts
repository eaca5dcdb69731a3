/**
 * Schema actions (AddTable, RenameColumn, ModifyColumn...): the engine's tables and columns follow
 * the document's, formulas are compiled, and whatever read a changed name is recomputed.
 */
import type {CellValue} from './cells/types.js';
import {refTarget} from './cells/types.js';
import {raise} from './values.js';
import type {Globals} from './compiler.js';
import {compileFormula} from './grist.js';
import {defaultCell, makeCellDecoder} from './convert.js';
import {tokenize} from './syntax/index.js';
import type {ColumnSpec, TableSpec} from './engine-types.js';
import {ColData, TableData} from './tables.js';
import type {LookupIndex} from './indexes.js';
import {clearSources, invalidateReaders, markDirty} from './deps.js';
import {importModule, resolveGlobal} from './globals.js';
import {type EngineState, getCol, getTable} from './state.js';

export function addTable(s: EngineState, spec: TableSpec): void {
  if (s.tables.has(spec.tableId)) raise('ValueError', `table ${spec.tableId} exists`);
  const t = new TableData(spec.tableId, spec.summarySourceTable ?? null);
  t.groupBy = spec.summaryGroupBy ?? [];
  s.tables.set(spec.tableId, t);
  for (const c of spec.columns) createColumn(s, t, c);
  schemaNameChanged(s, spec.tableId);
}

export function removeTable(s: EngineState, tableId: string): void {
  const t = getTable(s, tableId);
  for (const c of [...t.cols.values()]) dropColumn(s, c);
  s.tables.delete(tableId);
  s.lastTable = null;
  schemaNameChanged(s, tableId);
}

export function renameTable(s: EngineState, oldId: string, newId: string): void {
  const t = getTable(s, oldId);
  s.tables.delete(oldId);
  s.lastTable = null;
  t.id = newId;
  t.userTable = null;
  s.tables.set(newId, t);
  for (const tt of s.tables.values()) {
    for (const c of tt.cols.values()) {
      const target = refTarget(c.type);
      if (target === oldId) {
        c.spec = {...c.spec, type: c.type.replace(oldId, newId)};
        c.decode = makeCellDecoder(c.type, s.host, s.hooks);
      }
    }
    if (tt.summarySource === oldId) tt.summarySource = newId;
  }
  schemaNameChanged(s, oldId);
  schemaNameChanged(s, newId);
}

export function addColumn(s: EngineState, tableId: string, spec: ColumnSpec, values?: CellValue[]): void {
  const t = getTable(s, tableId);
  const c = createColumn(s, t, spec);
  if (values) {
    // A NULL given for a row stays None (not the type's default), as Grist keeps it.
    const dflt = defaultCell(spec.type);
    for (let i = 0; i < t.rowIds.length; i++) c.values[i] = values[i] === undefined ? dflt : values[i];
  }
  if (c.isFormula) markDirty(s, c, t.sortedRowIds());
  schemaNameChanged(s, spec.colId);
}

export function removeColumn(s: EngineState, tableId: string, colId: string): void {
  const c = getCol(s, tableId, colId);
  invalidateReaders(s, c, null);
  dropColumn(s, c);
  c.table.cols.delete(colId);
  schemaNameChanged(s, colId);
}

export function renameColumn(s: EngineState, tableId: string, oldId: string, newId: string): void {
  const c = getCol(s, tableId, oldId);
  const t = c.table;
  invalidateReaders(s, c, null);
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
  for (const idx of [...t.indexes.values()]) if (idx.colIds.includes(oldId)) dropIndex(s, t, idx);
  schemaNameChanged(s, oldId);
  schemaNameChanged(s, newId);
}

/**
 * ModifyColumn: type, formula, isFormula, recalcWhen, recalcDeps. A type change does not convert
 * stored values (the document sends the converted values as a BulkUpdateRecord, as Grist does).
 */
export function modifyColumn(
  s: EngineState,
  tableId: string,
  colId: string,
  changes: Partial<Omit<ColumnSpec, 'colId'>>,
): void {
  const c = getCol(s, tableId, colId);
  const prev = c.spec;
  c.table.depTriggers = null;
  c.spec = {...prev, ...changes, colId};
  const typeChanged = changes.type !== undefined && changes.type !== prev.type;
  const formulaChanged =
    (changes.formula !== undefined && changes.formula !== prev.formula) ||
    (changes.isFormula !== undefined && changes.isFormula !== prev.isFormula);
  if (typeChanged) {
    c.decode = makeCellDecoder(c.type, s.host, s.hooks);
    c.rawKeyKind = undefined;
    c.refKind = undefined;
  }
  if (formulaChanged || typeChanged) {
    clearSources(c);
    compile(s, c);
    for (const idx of [...c.table.indexes.values()]) if (idx.colIds.includes(colId)) dropIndex(s, c.table, idx);
  }
  if ((formulaChanged || typeChanged) && c.isFormula) markDirty(s, c, c.table.sortedRowIds());
  if (typeChanged || formulaChanged) invalidateReaders(s, c, null);
}

export function createColumn(s: EngineState, t: TableData, spec: ColumnSpec): ColData {
  if (t.cols.has(spec.colId)) raise('ValueError', `column ${t.id}.${spec.colId} exists`);
  const c = new ColData(t, spec.colId, {...spec});
  t.depTriggers = null;
  c.decode = makeCellDecoder(spec.type, s.host, s.hooks);
  const dflt = defaultCell(spec.type);
  c.values = new Array(t.rowIds.length).fill(dflt);
  t.cols.set(spec.colId, c);
  compile(s, c);
  return c;
}

export function dropColumn(s: EngineState, c: ColData): void {
  c.table.depTriggers = null;
  clearSources(c);
  for (const e of c.readers.values()) e.dst.sourceEdges.delete(e);
  c.readers.clear();
  s.dirtyCols.delete(c);
  s.changes.delete(c);
  for (const idx of [...c.table.indexes.values()]) if (idx.colIds.includes(c.id)) dropIndex(s, c.table, idx);
}

export function dropIndex(s: EngineState, t: TableData, idx: LookupIndex): void {
  t.indexes.delete(idx.name);
  t.sortCache.clear();
  for (const callers of idx.callers.values()) for (const [col, rows] of callers) markDirty(s, col, [...rows]);
  for (const callers of idx.colReaders.values()) for (const [col, rows] of callers) markDirty(s, col, [...rows]);
}

export function compile(s: EngineState, c: ColData): void {
  const text = c.spec.formula ?? '';
  c.globals = new Map();
  if (!c.isFormula && !c.isTrigger) {
    c.compiled = null;
    // A data column has nothing to compute: cells it had waiting as an (empty) formula column,
    // before a write turned it into data, are dropped, else the next recalculation would store
    // an error over them (Grist's docapi test "supports cellFormat=typed" met ["E", "UnsupportedError"]).
    c.dirty.clear();
    s.dirtyCols.delete(c);
    return;
  }
  const globals: Globals = {
    vars: c.globals,
    resolve: (name) => resolveGlobal(s, name),
    importModule: (name) => importModule(s, name),
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
      if (tk.value !== c.id) continue;
      if (tk.dollar || (i >= 2 && toks[i - 1].value === '.' && toks[i - 2].value === 'rec')) c.readsSelf = true;
    }
  } catch {
    // Syntax errors are reported by evaluation.
  }
}

/** Formulas whose text mentions a name that appeared or disappeared are recomputed. */
export function schemaNameChanged(s: EngineState, name: string): void {
  for (const t of s.tables.values()) {
    for (const c of t.cols.values()) {
      if (c.isFormula && c.spec.formula?.includes(name)) {
        clearSources(c);
        markDirty(s, c, t.sortedRowIds());
      }
    }
  }
}
