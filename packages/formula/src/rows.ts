/** Row ids and slots: where a row's cells are in the column arrays, and sets of row ids. */

/** rowId -> slot, as an array indexed by row id (row ids are small positive integers). */
export class RowIndex {
  private slots: number[] = [];
  private count = 0;
  /**
   * A table whose row ids were not read yet: row r, if it exists, is at slot r - 1, and whether
   * it exists is asked when needed. Changing rows needs them read first (TableData.rowIds).
   */
  private lazy: {max: number; exists: (r: number) => boolean; known: Map<number, boolean>} | null = null;
  get size(): number {
    return this.count;
  }
  has(r: number): boolean {
    if (this.lazy) return this.lazyHas(r);
    return this.slots[r] !== undefined && this.slots[r] >= 0;
  }
  get(r: number): number | undefined {
    if (this.lazy) return this.lazyHas(r) ? r - 1 : undefined;
    const s = this.slots[r];
    return s === undefined || s < 0 ? undefined : s;
  }
  private lazyHas(r: number): boolean {
    const lazy = this.lazy!;
    if (!Number.isInteger(r) || r < 1 || r > lazy.max) return false;
    let known = lazy.known.get(r);
    if (known === undefined) {
      known = lazy.exists(r);
      lazy.known.set(r, known);
    }
    return known;
  }
  /** Rows known only by their largest id and a way to ask whether one exists. */
  fillLazy(max: number, exists: (r: number) => boolean): void {
    this.lazy = {max, exists, known: new Map()};
    this.slots = [];
    this.count = 0;
  }
  get lazyMax(): number {
    return this.lazy?.max ?? 0;
  }
  set(r: number, slot: number): void {
    if (this.lazy) throw new Error('internal: rows of a table changed before its row ids were read');
    if (!this.has(r)) this.count++;
    this.slots[r] = slot;
  }
  delete(r: number): boolean {
    if (this.lazy) throw new Error('internal: rows of a table changed before its row ids were read');
    if (!this.has(r)) return false;
    this.slots[r] = -1;
    this.count--;
    return true;
  }
  clear(): void {
    this.slots = [];
    this.count = 0;
    this.lazy = null;
  }
  /** Row i of `rowIds` at slot i (an empty index; one packed array, not grown an entry at a time). */
  fill(rowIds: number[]): void {
    let max = 0;
    for (const r of rowIds) if (r > max) max = r;
    const slots = new Array<number>(max + 1).fill(-1);
    for (let i = 0; i < rowIds.length; i++) slots[rowIds[i]] = i;
    this.slots = slots;
    this.count = rowIds.length;
    this.lazy = null;
  }
  /** Every row r of `ids` at slot r - 1 (the lazy layout, made explicit). */
  fillById(ids: number[]): void {
    let max = 0;
    for (const r of ids) if (r > max) max = r;
    const slots = new Array<number>(max + 1).fill(-1);
    for (const r of ids) slots[r] = r - 1;
    this.slots = slots;
    this.count = ids.length;
    this.lazy = null;
  }
}

/** A set of row ids: flags by row id plus a list for iteration (entries added while iterating are visited). */
export class RowSet {
  private flags = new Uint8Array(16);
  list: number[] = [];
  size = 0;
  has(r: number): boolean {
    return r < this.flags.length && this.flags[r] === 1;
  }
  add(r: number): this {
    if (r >= this.flags.length) {
      const f = new Uint8Array(Math.max(r + 1, this.flags.length * 2));
      f.set(this.flags);
      this.flags = f;
    }
    if (this.flags[r] !== 1) {
      this.flags[r] = 1;
      this.list.push(r);
      this.size++;
    }
    return this;
  }
  delete(r: number): boolean {
    if (!this.has(r)) return false;
    this.flags[r] = 0;
    if (--this.size === 0) this.list = [];
    return true;
  }
  clear(): void {
    this.flags = new Uint8Array(16);
    this.list = [];
    this.size = 0;
  }
  *[Symbol.iterator](): Iterator<number> {
    const list = this.list;
    for (let i = 0; i < list.length; i++) {
      const r = list[i];
      if (this.flags[r] === 1) yield r;
      if (this.list !== list) {
        // Emptied and restarted: continue with the new list.
        yield* this;
        return;
      }
    }
  }
}
