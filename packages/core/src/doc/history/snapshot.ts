/**
 * Rows as they were before a write first touched them (the history's "before"), for one table.
 * Small captures are kept as one object per row; large ones (a recalc or bulk update of thousands
 * of rows) as columns: their ids and one array per column. Building 100k row objects, and reading
 * them back into columns for the bundle, was most of the history's cost of a 100k-row formula
 * column (docs/performance.md, D146).
 */
import type Database from 'better-sqlite3';
import type {ColumnMeta, TableMeta} from '../meta.js';
import type {CellValue} from '../types.js';
import {COLUMNAR_ROWS, readColumns} from './rows.js';

/** A cell a held row does not have (its column was not captured for it). */
export const MISSING: unique symbol = Symbol('missing');
export type OldCell = CellValue | typeof MISSING;

/** Rows captured together, as columns. */
class Block {
  private readonly lo: number;
  /** Whether `ids` are ascending and consecutive (a row's position is then `id - lo`). */
  private readonly dense: boolean;
  private positions: Map<number, number> | null = null;

  constructor(
    readonly ids: readonly number[],
    readonly colIds: readonly string[],
    readonly cells: readonly CellValue[][],
  ) {
    this.lo = ids[0];
    this.dense = ids.every((id, i) => id === this.lo + i);
  }

  /** The position of row `id`, or -1. */
  indexOf(id: number): number {
    if (this.dense) {
      const p = id - this.lo;
      return p >= 0 && p < this.ids.length ? p : -1;
    }
    if (!this.positions) {
      // Built when first asked (a later change of some of these rows in the same write).
      this.positions = new Map();
      for (let i = 0; i < this.ids.length; i++) this.positions.set(this.ids[i], i);
    }
    return this.positions.get(id) ?? -1;
  }

  /** Row `i` as an object, its cells in the order of `colIds` (as `readRows` makes them). */
  row(i: number): Record<string, CellValue> {
    const row: Record<string, CellValue> = {id: this.ids[i]};
    for (let j = 0; j < this.colIds.length; j++) row[this.colIds[j]] = this.cells[j][i];
    return row;
  }
}

/** One table's captured rows. A row set as an object takes the place of the same row in a block. */
export class Snapshot {
  private readonly rows = new Map<number, Record<string, CellValue>>();
  private readonly blocks: Block[] = [];

  get empty(): boolean {
    return this.rows.size === 0 && this.blocks.length === 0;
  }

  private find(id: number): [Block, number] | null {
    for (const b of this.blocks) {
      const p = b.indexOf(id);
      if (p >= 0) return [b, p];
    }
    return null;
  }

  has(id: number): boolean {
    return this.rows.has(id) || (this.blocks.length > 0 && this.find(id) !== null);
  }

  /** Row `id` as an object (made anew for a row held in a block), or undefined. */
  get(id: number): Record<string, CellValue> | undefined {
    const row = this.rows.get(id);
    if (row || !this.blocks.length) return row;
    const at = this.find(id);
    return at ? at[0].row(at[1]) : undefined;
  }

  set(id: number, row: Record<string, CellValue>): void {
    this.rows.set(id, row);
  }

  /** Rows not held yet, as columns: `cells[j][i]` is row `ids[i]`'s cell of `colIds[j]`. */
  setColumns(ids: readonly number[], colIds: readonly string[], cells: readonly CellValue[][]): void {
    if (ids.length) this.blocks.push(new Block(ids, colIds, cells));
  }

  /** Every row held (as objects). */
  *values(): IterableIterator<Record<string, CellValue>> {
    yield* this.rows.values();
    for (const b of this.blocks) {
      for (let i = 0; i < b.ids.length; i++) if (!this.rows.has(b.ids[i])) yield b.row(i);
    }
  }

  /** The rows of `ids` held without some column of `cols`. */
  lacking(ids: readonly number[], cols: readonly string[]): number[] {
    const blockLacks = this.blocks.map((b) => cols.some((c) => !b.colIds.includes(c)));
    return ids.filter((id) => {
      const row = this.rows.get(id);
      if (row) return cols.some((c) => !(c in row));
      for (let k = 0; k < this.blocks.length; k++) if (this.blocks[k].indexOf(id) >= 0) return blockLacks[k];
      return false;
    });
  }

  /**
   * The old cells of rows `ids` for `cols`, as columns: `held[i]` whether row `ids[i]` was captured
   * (null: every one was), `cells[j][i]` its cell of `cols[j]` (MISSING where it was captured
   * without it). The arrays may be the block's own: not to be changed.
   */
  columns(ids: readonly number[], cols: readonly string[]): {held: Uint8Array | null; cells: OldCell[][]} {
    const n = ids.length;
    // One block holding exactly these rows, none of them set as an object since: its arrays.
    const whole = this.blocks.find((b) => b.ids.length === n && b.ids.every((id, i) => id === ids[i]));
    if (whole && !(this.rows.size && ids.some((id) => this.rows.has(id)))) {
      return {
        held: null,
        cells: cols.map((c) => {
          const j = whole.colIds.indexOf(c);
          return j >= 0 ? whole.cells[j] : new Array<OldCell>(n).fill(MISSING);
        }),
      };
    }
    let held: Uint8Array | null = null;
    const cells = cols.map(() => new Array<OldCell>(n));
    const colAt = this.blocks.map((b) => cols.map((c) => b.colIds.indexOf(c)));
    for (let i = 0; i < n; i++) {
      const id = ids[i];
      const row = this.rows.get(id);
      if (row) {
        for (let j = 0; j < cols.length; j++) cells[j][i] = cols[j] in row ? row[cols[j]] : MISSING;
        continue;
      }
      let found = false;
      for (let k = 0; k < this.blocks.length && !found; k++) {
        const p = this.blocks[k].indexOf(id);
        if (p < 0) continue;
        found = true;
        for (let j = 0; j < cols.length; j++) {
          const at = colAt[k][j];
          cells[j][i] = at >= 0 ? this.blocks[k].cells[at][p] : MISSING;
        }
      }
      if (!found) {
        held ??= new Uint8Array(n).fill(1);
        held[i] = 0;
        for (let j = 0; j < cols.length; j++) cells[j][i] = MISSING;
      }
    }
    return {held, cells};
  }
}

/**
 * Keeps rows `wanted` (none held yet, ascending) as columns when they are many rows of a user table:
 * with the default of every cell when all columns are `fresh` (added by the write, never written),
 * else the cells `known` of `colIds` when given, else read (`colIds`, or every column). Returns
 * false, keeping nothing, otherwise.
 */
export function captureColumns(
  snap: Snapshot,
  table: TableMeta,
  wanted: readonly number[],
  colIds: readonly string[] | undefined,
  fresh: readonly ColumnMeta[] | null,
  prepare: (sql: string) => Database.Statement,
  known: CellValue[][] | null = null,
): boolean {
  if (table.isMeta || wanted.length <= COLUMNAR_ROWS) return false;
  if (known && colIds) {
    // The cells as the file holds them, given by the caller (`engineCells`): nothing to read.
    snap.setColumns(wanted, colIds, known);
    return true;
  }
  if (fresh) {
    const cells = fresh.map((c) => new Array<CellValue>(wanted.length).fill(c.ct.defaultValue));
    snap.setColumns(
      wanted,
      fresh.map((c) => c.colId),
      cells,
    );
    return true;
  }
  const cols = (colIds ?? table.columns.map((c) => c.colId)).filter((c) => table.byId.has(c));
  const read = readColumns(prepare, table, wanted, cols);
  snap.setColumns(read.ids, cols, read.cells);
  return true;
}
