/**
 * What the engine's parts share: the tables, the cell being computed, the dirty columns and the
 * changes not yet returned. One per FormulaEngine; every function of the parts takes it first.
 * The dependency records the state holds (edges, sources, trackers) are declared here too, so the
 * tables and indexes that keep them need not import the dependency graph (deps.ts).
 */
import type {CellValue} from './cells/types.js';
import type {Budget} from './budget.js';
import type {DateHooks} from './convert.js';
import type {LookupIndex} from './indexes.js';
import type {FormulaLibrary} from './library.js';
import type {RecordDictHost, Via} from './records.js';
import type {ColData, TableData} from './tables.js';
import {type Value, raise} from './values.js';

/** A dependency between two columns: every row of `dst` on its row of `src`, or through `rowMap`. */
export class Edge {
  identity = false;
  rowMap: Map<number, Set<number>> | null = null;
  constructor(
    readonly src: ColData,
    readonly dst: ColData,
  ) {}
}

export type Source =
  | {kind: 0; edge: Edge; row: number}
  | {kind: 1; index: LookupIndex; key: string}
  | {kind: 2; table: TableData}
  /** A column read through a lookup key (ckey = key + KEY_COL + colId). */
  | {kind: 3; index: LookupIndex; ckey: string; colId: string}
  /** A column read through Table.all. */
  | {kind: 4; table: TableData; colId: string};

export interface Tracker {
  col: ColData;
  row: number;
  sources: Source[];
  track: boolean;
  /** The last (route, column) registered: rows read through the same route add nothing. */
  lastVia: Via;
  lastViaCol: ColData | null;
}

/**
 * A column's changed cells: the first `n` entries of `rows` and `values`. The arrays are sized
 * ahead to the column's dirty cells when its first change is stored: filling a sized array took
 * about an eighth of the time of 100k `push`es here (a whole formula column, issue 43 §1).
 */
export interface CellChanges {
  rows: number[];
  values: CellValue[];
  /** Each changed cell's value before the change, as the engine held it. */
  olds: CellValue[];
  n: number;
}

export interface EngineState {
  readonly tables: Map<string, TableData>;
  /** The cell being computed (what its reads are recorded for), or null outside evaluation. */
  cur: Tracker | null;
  /** Columns that may have dirty cells (recalc visits them). */
  readonly dirtyCols: Set<ColData>;
  /** Changed cells per column in the order computed (a row may appear twice: the last wins). */
  readonly changes: Map<ColData, CellChanges>;
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
