/**
 * Add-or-update's kept indexes (issue 28): `PUT /records` keyed on a column finds its rows by
 * value, and user columns have no SQLite index (Grist documents have none), so every call used to
 * read the whole column (100k rows: most of a 2,000-record upsert's time). The first call keyed on
 * a column now builds a Map of it (the same keys, `lookup.ts`), and every later write keeps it
 * current from what the write changed: rows added or updated have their key cells read again, by
 * id, before the commit; removed rows leave; a schema change or a rolled-back write drops them all.
 *
 * An index is used only at the start of a write that has not touched its table yet (later groups
 * of the same write scan as before), so it always describes the committed table.
 */
import type Database from 'better-sqlite3';
import type {TableChange} from './changes.js';
import {quoteIdent} from './identifiers.js';
import {type ColumnKeys, scanColumns, singleKeyer} from './lookup.js';
import type {TableMeta} from './meta.js';

/**
 * Cells one document's indexes may hold, all columns together (about 60-100 bytes each): a table
 * larger than what is left is scanned on each call instead.
 */
export const KEY_INDEX_MAX_CELLS = 500_000;

/** The key of a row whose value equals nothing (NaN): held, so that the row counts, but unlisted. */
const NO_KEY = Symbol('no key');

/** One column's index: its keys and, for updates and removals, each row's key (by row id). */
interface KeptColumn extends ColumnKeys {
  keyOfRow: unknown[];
  size: number;
}

/** The kept indexes of one document (DocStorage holds them). */
export class KeyIndexes {
  readonly #tables = new Map<string, Map<string, KeptColumn>>();
  #cells = 0;

  constructor(
    private readonly db: Database.Database,
    readonly maxCells = KEY_INDEX_MAX_CELLS,
  ) {}

  /** Whether any index is kept (else writes need not list their changes for it). */
  get active(): boolean {
    return this.#tables.size > 0;
  }

  /** Cells held (for tests and the bound). */
  get cells(): number {
    return this.#cells;
  }

  /**
   * The index of `colId`, built now when missing (one scan, as a call without it makes), or null
   * when the table is too large for what the bound leaves.
   */
  column(table: TableMeta, colId: string): ColumnKeys | null {
    const kept = this.#tables.get(table.tableId)?.get(colId);
    if (kept) return kept;
    const col = table.byId.get(colId);
    if (!col) return null;
    const t = quoteIdent(table.tableId);
    const rowCount = this.db.prepare(`SELECT count(*) FROM ${t}`).pluck().get() as number;
    if (this.#cells + rowCount > this.maxCells) return null;
    const index: KeptColumn = {rows: new Map(), interned: new Map(), keyOfRow: [], size: 0};
    const keyOf = singleKeyer(index.interned);
    scanColumns(this.db, t, [quoteIdent(colId)], (ids, [raw]) => {
      for (let r = 0; r < ids.length; r++) place(index, ids[r], keyOf(col.decode(raw![r]), true), true);
    });
    let cols = this.#tables.get(table.tableId);
    if (!cols) {
      cols = new Map();
      this.#tables.set(table.tableId, cols);
    }
    cols.set(colId, index);
    this.#cells += index.size;
    return index;
  }

  /**
   * Follows one write, inside its transaction (so that reads see its rows): schema changes drop
   * every index; rows of an indexed table that were added, or updated in an indexed column, have
   * their key read again; removed rows leave.
   */
  follow(changes: readonly TableChange[], meta: ReadonlyMap<string, TableMeta>): void {
    if (!this.#tables.size) return;
    if (changes.some((c) => c.tableId === '_grist_Tables' || c.tableId === '_grist_Tables_column')) {
      this.clear();
      return;
    }
    for (const change of changes) {
      const cols = this.#tables.get(change.tableId);
      const table = meta.get(change.tableId);
      if (!cols) continue;
      if (!table) {
        this.clear();
        return;
      }
      for (const [colId, index] of cols) {
        const col = table.byId.get(colId);
        if (!col) {
          this.clear();
          return;
        }
        const before = index.size;
        for (const id of change.removed) unplace(index, id);
        const changed =
          change.columns === null || change.columns.includes(colId)
            ? [...change.added, ...change.updated]
            : change.added;
        if (changed.length) {
          const keyOf = singleKeyer(index.interned);
          const read = this.db.prepare(
            `SELECT id, ${quoteIdent(colId)} FROM ${quoteIdent(change.tableId)} WHERE id IN (SELECT value FROM json_each(?))`,
          );
          for (const [id, raw] of read.raw(true).iterate(JSON.stringify(changed)) as Iterable<[number, unknown]>) {
            unplace(index, id);
            place(index, id, keyOf(col.decode(raw), true), false);
          }
        }
        this.#cells += index.size - before;
      }
    }
    if (this.#cells > this.maxCells) this.clear();
  }

  /** Drops every index (a schema change, a rolled-back write). */
  clear(): void {
    this.#tables.clear();
    this.#cells = 0;
  }
}

/** Adds row `id` under `key` (`ascending`: ids arrive in order, as a scan gives them). */
function place(index: KeptColumn, id: number, key: unknown, ascending: boolean): void {
  index.keyOfRow[id] = key === undefined ? NO_KEY : key;
  index.size++;
  if (key === undefined) return; // NaN equals nothing
  const held = index.rows.get(key);
  if (held === undefined) {
    index.rows.set(key, id); // one row: its id alone, no array
  } else if (typeof held === 'number') {
    index.rows.set(key, held < id ? [held, id] : [id, held]);
  } else if (ascending || held[held.length - 1] < id) {
    held.push(id);
  } else {
    held.splice(position(held, id), 0, id);
  }
}

function unplace(index: KeptColumn, id: number): void {
  const key = index.keyOfRow[id];
  if (key === undefined) return;
  index.keyOfRow[id] = undefined;
  index.size--;
  if (key === NO_KEY) return;
  const held = index.rows.get(key);
  if (held === undefined) return;
  if (typeof held === 'number') {
    if (held === id) index.rows.delete(key);
    return;
  }
  const at = position(held, id);
  if (held[at] === id) held.splice(at, 1);
  if (held.length === 1) index.rows.set(key, held[0]);
}

/** Where `id` is or would go in an ascending list. */
function position(ids: number[], id: number): number {
  let lo = 0;
  let hi = ids.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (ids[mid] < id) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
