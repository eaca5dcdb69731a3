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
  /**
   * Adds each row of `rows` not in the set and for which `keep` holds; returns those, in order.
   * The same as `add` one at a time, built in arrays sized ahead: appending 100k rows one `push`
   * at a time took ~8x as long (marking a new formula column's rows dirty, issue 43 §1).
   */
  addAll(rows: readonly number[], keep: (r: number) => boolean): number[] {
    let fresh = new Array<number>(rows.length);
    let n = 0;
    let max = 0;
    for (let i = 0; i < rows.length; i++) {
      const r = rows[i];
      if (!this.has(r) && keep(r)) {
        fresh[n++] = r;
        if (r > max) max = r;
      }
    }
    if (n && max >= this.flags.length) {
      const f = new Uint8Array(Math.max(max + 1, this.flags.length * 2));
      f.set(this.flags);
      this.flags = f;
    }
    // Flagged in order, a row listed twice once.
    const flags = this.flags;
    let m = 0;
    for (let i = 0; i < n; i++) {
      const r = fresh[i];
      if (flags[r] !== 1) {
        flags[r] = 1;
        fresh[m++] = r;
      }
    }
    if (!m) return [];
    this.size += m;
    if (this.list.length === 0 && m === rows.length) {
      // Every row is new to an empty set: `fresh` (a copy of `rows`) becomes its list, as `delete`
      // replaces the list when the set empties, and the caller gets its own array back.
      this.list = fresh;
      return rows as number[];
    }
    if (m < rows.length) fresh = fresh.slice(0, m);
    const list = this.list;
    for (let i = 0; i < m; i++) list.push(fresh[i]);
    return fresh;
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
