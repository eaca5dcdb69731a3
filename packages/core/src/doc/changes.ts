// What one write changed: per table, the rows added, updated and removed (GristDoc reports them to listeners).
import type {CellValue} from './types.js';
/** What one write changed in one table (metadata tables included). */
export interface TableChange {
  tableId: string;
  added: number[];
  updated: number[];
  removed: number[];
  /**
   * The columns whose cells the write set in updated rows (formula results included), or null
   * when some update did not say (then any column may have changed).
   */
  columns: string[] | null;
}

/**
 * Who made a write, as listeners see it: the caller's user (null ids for anonymous or in-process
 * writes without one) and, beyond Grist, the document API key that authorised the request.
 */
export interface WriteActor {
  userId: number | null;
  email: string | null;
  name: string | null;
  /** The document API key (issue 30) the request showed, when it came with one. */
  apiKeyId?: number;
}

/**
 * Told of the cells a write of many rows stored in one column (a recalc's, a bulk update's), as
 * bound to SQLite, when there are more than `minRows`: the action history takes them rather than
 * reading them back (D146).
 */
export interface CellsHook {
  readonly minRows: number;
  written(tableId: string, colId: string, ids: readonly number[], cells: readonly unknown[]): void;
}

/**
 * Called before user rows are updated or removed, with their ids (webhooks read old values then).
 * `colIds`: the only columns the write is about to change (else any, or rows go). `cells`: when the
 * caller knows them (a recalc: the formula engine's values), each column's cells of `rowIds` as the
 * file holds them now, `cells[j][i]` for `colIds[j]` and `rowIds[i]`, values as the engine holds them.
 */
export type BeforeRowsHook = (
  tableId: string,
  rowIds: number[],
  colIds?: readonly string[],
  cells?: ReadonlyArray<readonly CellValue[]>,
) => void;

/**
 * Changes made during one write, per table. Operations are recorded as they happen (cheap on bulk
 * paths) and merged when listed: a row added then updated is reported as added, a row added then
 * removed is not reported at all.
 */
export class ChangeSet {
  private readonly ops = new Map<string, Array<['a' | 'u' | 'r', number[]]>>();
  /** Per table, the columns updates named; a table is absent once an update named none. */
  private readonly cols = new Map<string, Set<string>>();
  private readonly anyCols = new Set<string>();
  /** Tables changed by the write itself, not only by the data engine on its behalf (`engineMade`). */
  private readonly direct = new Set<string>();
  private engineDepth = 0;

  /**
   * Runs `fn`, whose changes the data engine makes on the write's behalf (an empty column's type
   * guessed from its first values): Grist checks such changes against no access rule, as they are
   * not the caller's own actions (GranularAccess checks direct actions only).
   */
  engineMade<T>(fn: () => T): T {
    this.engineDepth++;
    try {
      return fn();
    } finally {
      this.engineDepth--;
    }
  }

  /** The tables the write changed itself (see `engineMade`). */
  directTableIds(): string[] {
    return [...this.direct].filter((t) => this.ops.has(t));
  }

  private record(tableId: string, kind: 'a' | 'u' | 'r', ids: number[]): void {
    if (this.engineDepth === 0) this.direct.add(tableId);
    let t = this.ops.get(tableId);
    if (!t) {
      t = [];
      this.ops.set(tableId, t);
    }
    t.push([kind, ids]);
  }

  add(tableId: string, ids: number[]): void {
    this.record(tableId, 'a', ids);
  }
  /** Rows updated; `colIds` names the columns set (omitted: any column may have changed). */
  update(tableId: string, ids: number[], colIds?: Iterable<string>): void {
    this.record(tableId, 'u', ids);
    if (!ids.length) return;
    if (!colIds) {
      this.anyCols.add(tableId);
      return;
    }
    let set = this.cols.get(tableId);
    if (!set) {
      set = new Set();
      this.cols.set(tableId, set);
    }
    for (const c of colIds) set.add(c);
  }
  remove(tableId: string, ids: number[]): void {
    this.record(tableId, 'r', ids);
  }

  /** Follows a table rename, so that changes are reported under the table's final id. */
  rename(from: string, to: string): void {
    const t = this.ops.get(from);
    if (t) {
      this.ops.delete(from);
      this.ops.set(to, t);
    }
    const c = this.cols.get(from);
    if (c) {
      this.cols.delete(from);
      this.cols.set(to, c);
    }
    if (this.anyCols.delete(from)) this.anyCols.add(to);
    if (this.direct.delete(from)) this.direct.add(to);
  }

  drop(tableId: string): void {
    this.ops.delete(tableId);
    this.cols.delete(tableId);
    this.anyCols.delete(tableId);
  }

  /** The tables the write touched (without listing their rows). */
  tableIds(): string[] {
    return [...this.ops.keys()];
  }

  /** Whether the write changed rows of this table. */
  touched(tableId: string): boolean {
    return this.ops.has(tableId);
  }

  list(): TableChange[] {
    const out: TableChange[] = [];
    for (const [tableId, ops] of this.ops) {
      const columns = () => (this.anyCols.has(tableId) ? null : [...(this.cols.get(tableId) ?? [])]);
      // One operation on ascending (so distinct) ids, the common bulk case: no merging needed
      // (a formula column added to 100k rows spent ~10 ms building these sets).
      if (ops.length === 1 && ascending(ops[0][1])) {
        const [kind, ids] = ops[0];
        if (ids.length) {
          out.push({
            tableId,
            added: kind === 'a' ? ids.slice() : [],
            updated: kind === 'u' ? ids.slice() : [],
            removed: kind === 'r' ? ids.slice() : [],
            columns: columns(),
          });
        }
        continue;
      }
      const added = new Set<number>();
      const updated = new Set<number>();
      const removed = new Set<number>();
      for (const [kind, ids] of ops) {
        for (const id of ids) {
          if (kind === 'a') {
            added.add(id);
            removed.delete(id);
          } else if (kind === 'u') {
            if (!added.has(id)) {
              updated.add(id);
            }
          } else {
            updated.delete(id);
            if (!added.delete(id)) {
              removed.add(id);
            }
          }
        }
      }
      if (added.size || updated.size || removed.size) {
        out.push({tableId, added: [...added], updated: [...updated], removed: [...removed], columns: columns()});
      }
    }
    return out;
  }

  get isEmpty(): boolean {
    return this.list().length === 0;
  }
}

function ascending(ids: readonly number[]): boolean {
  for (let i = 1; i < ids.length; i++) if (ids[i] <= ids[i - 1]) return false;
  return true;
}
