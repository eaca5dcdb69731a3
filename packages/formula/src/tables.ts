/**
 * Column and table storage: cells by slot, read from a source (a document's SQLite table) only
 * when something needs them (issue 26 §2), and the routes reads through a table take.
 */
import type {CellValue} from './cells/types.js';
import type {CompiledFormula} from './grist.js';
import {type CellDecoder, defaultCell} from './convert.js';
import type {UserTable, Via} from './records.js';
import type {Value} from './values.js';
import type {ColumnSpec} from './engine-types.js';
import {RowIndex, RowSet} from './rows.js';
import type {LookupIndex} from './indexes.js';
import type {Edge, Source} from './state.js';

/**
 * Reads through a Ref/RefList cell of the reading cell's own row (`$Cust.Name`, `SUM($Items.Price)`,
 * `$group.N`): recorded once per (column read, route, reading column); a change to row k of the
 * column read dirties the reading column's rows whose Ref cell is k (or whose RefList holds k),
 * found through the lookup index on the Ref column (Grist's reference relation).
 */
export class RefVia {
  constructor(readonly col: ColData) {}
}
/** Reads through `Table.all`. */
export class AllVia {
  constructor(readonly table: TableData) {}
}

/**
 * Where a column's cells come from until they are needed (a document's SQLite table): the engine
 * of an open document reads cells one by one, or whole columns, only when something uses them.
 */
/** A lazily loaded table's rows: its largest row id, whether a row exists, and every row id ascending. */
export interface LazyRows {
  max: number;
  /** Whether the table has this row. */
  exists(rowId: number): boolean;
  /** Every row id, ascending. */
  ids(): number[];
}

/** A lazily loaded column's cells, read from the host when the engine needs them (the host interface, with `LazyRows`). */
export interface ColumnSource {
  /** Every cell in row id order; with `withIds`, the row ids too (rows changed since the table was loaded). */
  all(withIds: boolean): {cells: CellValue[]; ids: number[] | null};
  /** One cell by row id (undefined: no such row). */
  one(rowId: number): CellValue | undefined;
  /** Row ids whose cell is this row id (a Ref column), ascending, without reading the column. */
  rowsReferring?(rowId: number): number[];
}

/** Point reads of a column before it is read whole instead (a scan costs about as much as this many). */
export const POINT_READS_BEFORE_LOAD = 256;

export class ColData {
  /** The cells by slot, or null while the column is lazy (`source` set, cells read so far in `sparse`). */
  private full: CellValue[] | null = [];
  private sparse: Map<number, CellValue> | null = null;
  private source: ColumnSource | null = null;
  private pointReads = 0;
  compiled: CompiledFormula | null = null;
  decode!: CellDecoder;
  readers = new Map<ColData, Edge>();
  lastEdge: Edge | null = null;
  sourceEdges = new Set<Edge>();
  cellSources = new Map<number, Source[]>();
  dirty = new RowSet();
  computing = new Set<number>();
  /** Incremented whenever a cell of the column changes. */
  version = 0;
  /** 1: Ref, 2: RefList/Attachments, 0: neither (undefined until known). */
  refKind: number | undefined = undefined;
  refVia: RefVia | null = null;
  /** Columns reading this one through a Ref column of their own row: route -> reading columns. */
  refReaders: Map<RefVia, Set<ColData>> | null = null;
  /** Where this column registered such reads (cleared with its sources). */
  refEdges: Array<{target: ColData; via: RefVia}> = [];
  /** How lookup keys are made from this column's stored cells (see rawKeyKind), once known. */
  rawKeyKind: number | undefined = undefined;
  /** Whether the formula's text is static, for the text it had (column-loop.ts `isStatic`). */
  loopStatic: {formula: string; ok: boolean} | null = null;
  /** Trigger formulas that read their own column apply to explicitly set values too. */
  readsSelf = false;
  volatile = false;
  /** Messages of the errors stored in this column (Grist stores only the type; formulas reading the cell see the message). */
  errorMessages = new Map<number, string>();
  globals = new Map<string, Value>();
  constructor(
    public table: TableData,
    public id: string,
    public spec: ColumnSpec,
  ) {}
  /** Every cell by slot (a lazy column is read whole first). */
  get values(): CellValue[] {
    return this.full ?? this.loadAll();
  }
  set values(v: CellValue[]) {
    this.full = v;
    this.sparse = null;
    this.source = null;
  }
  get isLazy(): boolean {
    return this.full === null;
  }
  /** One cell (a lazy column reads it alone, until it has read enough to be read whole). */
  get(slot: number): CellValue {
    if (this.full) return this.full[slot];
    const sparse = this.sparse!;
    const v = sparse.get(slot);
    if (v !== undefined || sparse.has(slot)) return v as CellValue;
    if (++this.pointReads > POINT_READS_BEFORE_LOAD) return this.loadAll()[slot];
    // A stored NULL reads as None (Grist loads NULL as None); only a missing row gets the default.
    const got = this.source!.one(this.table.rowAt(slot));
    const cell = got === undefined ? defaultCell(this.type) : got;
    sparse.set(slot, cell);
    return cell;
  }
  set(slot: number, v: CellValue): void {
    if (this.full) this.full[slot] = v;
    else this.sparse!.set(slot, v);
  }
  /** Rows whose Ref cell is `rowId`, from the source of a lazy column (undefined: not answerable so). */
  rowsReferring(rowId: number): number[] | undefined {
    return this.full === null ? this.source!.rowsReferring?.(rowId) : undefined;
  }
  /** Makes the column lazy: its cells come from `source` when needed. */
  setSource(source: ColumnSource): void {
    this.full = null;
    this.sparse = new Map();
    this.source = source;
    this.pointReads = 0;
  }
  private loadAll(): CellValue[] {
    const t = this.table;
    void t.rowIds; // a lazy table's rows first: they decide where cells go
    const dflt = defaultCell(this.type);
    // Rows added or removed since the table was loaded, or slots not in id order: place the cells by row id.
    const moved = t.rowsVersion !== t.sourceRowsVersion || !t.sourceAligned;
    let {cells, ids} = this.source!.all(moved);
    if (!ids && cells.length !== t.rowIds.length) ({cells, ids} = this.source!.all(true));
    let values: CellValue[];
    if (!ids) values = cells;
    else {
      values = new Array<CellValue>(t.rowIds.length).fill(dflt);
      for (let i = 0; i < ids.length; i++) {
        const slot = t.index.get(ids[i]);
        if (slot !== undefined) values[slot] = cells[i];
      }
    }
    // Cells written (or read) while lazy are the engine's newest.
    for (const [slot, v] of this.sparse!) values[slot] = v;
    this.full = values;
    this.sparse = null;
    this.source = null;
    return values;
  }
  get type(): string {
    return this.spec.type;
  }
  /** Computed by the engine: formula columns, and trigger formulas when triggered. */
  get isFormula(): boolean {
    return this.spec.isFormula;
  }
  get isTrigger(): boolean {
    return !this.spec.isFormula && Boolean(this.spec.formula?.trim());
  }
}

export class TableData {
  private ids: number[] = [];
  /** Reads the row ids of a table loaded without them (TableData.rowIds); null once read. */
  private loadIds: (() => number[]) | null = null;
  /** Whether slots are in the order of the source's `ORDER BY id` (lazy columns read in that order). */
  sourceAligned = true;
  /** Row id by slot (-1: a free slot); a lazy table reads its row ids here first. */
  get rowIds(): number[] {
    if (this.loadIds) this.readRowIds();
    return this.ids;
  }
  set rowIds(ids: number[]) {
    this.ids = ids;
    this.loadIds = null;
  }
  /** The row id of a slot, without reading a lazy table's row ids (row r is at slot r - 1 there). */
  rowAt(slot: number): number {
    return this.loadIds ? slot + 1 : this.ids[slot];
  }
  /** A table whose rows are read when first needed: until then row r is at slot r - 1. */
  setLazyRows(max: number, exists: (r: number) => boolean, ids: () => number[]): void {
    this.ids = [];
    this.loadIds = ids;
    this.index.fillLazy(max, exists);
  }
  private readRowIds(): void {
    const ids = this.loadIds!();
    this.loadIds = null;
    let max = this.index.lazyMax;
    for (const r of ids) if (r > max) max = r;
    if (ids.length === max) {
      // Ids 1..n: slot r - 1 is also the source's order.
      this.ids = ids;
      this.index.fill(ids);
      return;
    }
    const rowIds = new Array<number>(max).fill(-1);
    for (const r of ids) rowIds[r - 1] = r;
    for (let slot = 0; slot < max; slot++) if (rowIds[slot] < 0) this.free.push(slot);
    this.ids = rowIds;
    this.index.fillById(ids);
    this.sourceAligned = false;
  }
  /** rowId -> slot in the column arrays. */
  index = new RowIndex();
  cols = new Map<string, ColData>();
  indexes = new Map<string, LookupIndex>();
  allCallers = new Map<ColData, Set<number>>();
  /** Columns read through Table.all: colId -> dependent cells. */
  allColReaders = new Map<string, Map<ColData, Set<number>>>();
  allVia = new AllVia(this);
  sortedCache: number[] | null = null;
  free: number[] = [];
  userTable: UserTable | null = null;
  groupBy: string[] = [];
  /** Incremented when rows are added or removed (with ColData.version: validity of sort caches). */
  rowsVersion = 0;
  /** rowsVersion when lazy columns were given their sources (their cells are in that row order). */
  sourceRowsVersion = -1;
  /** Sorted rows of a lookup key or Table.all by an order_by spec: route -> spec -> entry. */
  sortCache = new Map<Via, Map<string, SortEntry>>();
  /** See FormulaEngine.depTriggers (reset on schema changes). */
  depTriggers: Map<string, ColData[]> | null = null;
  constructor(
    public id: string,
    public summarySource: string | null,
  ) {}
  sortedRowIds(): number[] {
    if (!this.sortedCache) {
      const ids = this.rowIds.filter((r) => r > 0);
      let ascending = true;
      for (let i = 1; i < ids.length; i++)
        if (ids[i] < ids[i - 1]) {
          ascending = false;
          break;
        }
      this.sortedCache = ascending ? ids : ids.sort((a, b) => a - b);
    }
    return this.sortedCache;
  }
}

/** A cached order of a route's rows; `pos` (row id -> index in `rows`) is built when a row asks for its place. */
export interface SortEntry {
  rows: number[];
  cols: ColData[];
  vers: number[];
  rowsVersion: number;
  /** cols[0..nSpecs] are the order's columns, the rest the lookup key's. */
  nSpecs: number;
  pos: Map<number, number> | null;
}

/** 1: Ref, 2: RefList/Attachments, 0: other types. */
export function refKindOf(type: string): number {
  if (type.startsWith('Ref:')) return 1;
  if (type.startsWith('RefList:') || type === 'Attachments') return 2;
  return 0;
}
