/**
 * What the engine's parts share: the tables, the cell being computed, the dirty columns and the
 * changes not yet returned. One per FormulaEngine; every function of the parts takes it first.
 */
import type {CellValue} from './cells/types.js';
import type {Budget} from './budget.js';
import type {DateHooks} from './convert.js';
import type {Tracker} from './deps.js';
import type {FormulaLibrary} from './library.js';
import type {RecordDictHost} from './records.js';
import type {ColData, TableData} from './tables.js';
import {type Value, raise} from './values.js';

export interface EngineState {
  readonly tables: Map<string, TableData>;
  /** The cell being computed (what its reads are recorded for), or null outside evaluation. */
  cur: Tracker | null;
  /** Columns that may have dirty cells (recalc visits them). */
  readonly dirtyCols: Set<ColData>;
  /** Changed cells per column in the order computed (a row may appear twice: the last wins). */
  readonly changes: Map<ColData, {rows: number[]; values: CellValue[]}>;
  /** Cells evaluated by the current recalc. */
  evaluations: number;
  /** order_by sorts done by the current recalc (not answered from the sort cache). */
  sorts: number;
  /** The table of the last readCell (formulas read one table many times in a row). */
  lastTable: TableData | null;
  /** The FormulaEngine, as records, tables and decoders see it. */
  readonly host: RecordDictHost;
  readonly budget: Budget;
  readonly library: FormulaLibrary;
  readonly builtins: Map<string, Value>;
  readonly hooks: DateHooks;
}

export function getTable(s: EngineState, tableId: string): TableData {
  const t = s.tables.get(tableId);
  if (!t) return raise('KeyError', `no table ${tableId}`);
  return t;
}

export function getCol(s: EngineState, tableId: string, colId: string): ColData {
  const c = getTable(s, tableId).cols.get(colId);
  if (!c) return raise('KeyError', `no column ${tableId}.${colId}`);
  return c;
}
