/**
 * The dependency graph: edges between columns (same row, or row maps source row -> dependent
 * rows), what each computed cell read (its sources), and the trackers of cells being computed.
 */
import type {Via} from './records.js';
import type {ColData, TableData} from './tables.js';
import type {LookupIndex} from './indexes.js';

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
  | {kind: 3; index: LookupIndex; ckey: string}
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

export const NO_SOURCES: Source[] = [];
export function pushSource(cur: Tracker, s: Source): void {
  if (cur.sources === NO_SOURCES) cur.sources = [s];
  else cur.sources.push(s);
}
