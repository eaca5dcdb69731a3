/**
 * What each column of a user table holds right now: which SQLite storage classes, and whether
 * SQLite's JSON text of its numbers is exactly `JSON.stringify`'s.
 *
 * Storage classes. A column's Grist type makes its usual storage form known (numbers in
 * Int/Numeric/Bool/Date columns, text in Text columns), but alt-text, marshalled values and nulls
 * can appear in any column. Knowing that they are absent lets query.ts emit the plain ORDER BY and
 * WHERE that SQLite runs fast, and keep the exact (slower) typed-compare SQL for the columns that
 * need it. Found by one scan (`SELECT DISTINCT typeof(col)`) the first time a query needs them.
 *
 * JSON of numbers (for recordsjson.ts). SQLite writes integers in full, where JS reads those beyond
 * 2^53 rounded; and it writes a REAL with up to 17 digits and its own notation (`2.0`, `1.0e-07`,
 * `0.33333333333333332`), where JSON.stringify writes the shortest round-trip form (`2`, `1e-7`,
 * `0.3333333333333333`). Rather than predict SQLite's float printing, each value is compared: a
 * column's REALs and wide integers are read once with their `json_quote()` text, and the numbers
 * later written as REALs by the engine are checked the same way (bound to `json_array(?, ...)`)
 * when the answer is next needed.
 *
 * Both are kept until the data may have changed behind our back. Validity is a stamp of
 * `total_changes()` (every row this connection changed, by any code path), `data_version` (commits
 * by other connections) and `schema_version` (DDL by anyone): when it moves, everything is
 * forgotten. The engine's own record writes keep the cache instead: they check the stamp before
 * writing, merge what they stored (and an insert, what the SQL defaults of the columns it left
 * out stored), and re-take the stamp after (see `track`).
 */
import type Database from 'better-sqlite3';
import {quoteIdent} from './identifiers.js';
import {affinityOf} from './types.js';

export const NULL_CLASS = 1;
export const NUM_CLASS = 2;
export const TEXT_CLASS = 4;
export const BLOB_CLASS = 8;
/** Every class: what to assume about a column that cannot be scanned. */
export const ANY_CLASS = NULL_CLASS | NUM_CLASS | TEXT_CLASS | BLOB_CLASS;

/** The storage class of a value bound to (or read from) SQLite. */
export function classOf(v: unknown): number {
  switch (typeof v) {
    case 'number':
    case 'bigint':
    case 'boolean':
      return NUM_CLASS;
    case 'string':
      return TEXT_CLASS;
  }
  return v === null || v === undefined ? NULL_CLASS : BLOB_CLASS;
}

const TYPEOF_CLASS: Record<string, number> = {
  null: NULL_CLASS,
  integer: NUM_CLASS,
  real: NUM_CLASS,
  text: TEXT_CLASS,
  blob: BLOB_CLASS,
};

/** Integers JS reads exactly (better-sqlite3 reads INTEGER as a JS number). */
const MAX_EXACT_INT = 2 ** 53;

/**
 * What a record write stores in one column: its storage classes, and the numbers that may land as
 * REAL, whose JSON text is to be checked (`ColumnClasses.jsonExact`).
 */
export class StoredValues {
  classes = 0;
  private readonly realList: number[] = [];
  /** Arrays given to `addAll` whose reals are not in `realList` yet (most writes never ask). */
  private pending: Array<readonly unknown[]> = [];
  /** The least and greatest numbers written, and whether one had a fraction (`ColumnClasses.range`). */
  min = Number.POSITIVE_INFINITY;
  max = Number.NEGATIVE_INFINITY;
  fractions = false;
  /** INTEGER and NUMERIC affinity store an integral double as an INTEGER of the same value. */
  private readonly intAffinity: boolean;
  /** Whether SQLite may store a text written as a number (numeric affinities): the range is then unknown. */
  readonly textToNumber: boolean;

  constructor(declType: string) {
    const affinity = affinityOf(declType);
    this.intAffinity = affinity === 'INTEGER' || affinity === 'NUMERIC';
    this.textToNumber = this.intAffinity || affinity === 'REAL';
  }

  /** The numbers written that may land as REAL (in the order written), to check their JSON text. */
  get reals(): number[] {
    if (this.pending.length) this.listPending();
    return this.realList;
  }

  private listPending(): void {
    const arrays = this.pending;
    this.pending = [];
    for (const values of arrays) for (let i = 0; i < values.length; i++) this.addReal(values[i]);
  }

  /** A value as bound to SQLite (better-sqlite3 binds every JS number as a double). */
  add(v: unknown): void {
    if (this.pending.length) this.listPending();
    this.addRange(v);
    this.addReal(v);
  }

  /**
   * Every value of `values`, as `add` each: the reals are listed only when asked for, from the
   * array itself, which the caller must not change after. A recalc of a 100k-row column listed
   * ~100k reals that nothing read (issue 43 §1).
   */
  addAll(values: readonly unknown[]): void {
    for (let i = 0; i < values.length; i++) this.addRange(values[i]);
    this.pending.push(values);
  }

  private addRange(v: unknown): void {
    this.classes |= classOf(v);
    if ((typeof v === 'number' && !Number.isNaN(v)) || typeof v === 'bigint') {
      const n = Number(v);
      if (n < this.min) this.min = n;
      if (n > this.max) this.max = n;
      if (!Number.isInteger(n)) this.fractions = true;
    }
  }

  private addReal(v: unknown): void {
    if (typeof v === 'number') {
      if (!(this.intAffinity && Number.isInteger(v) && Math.abs(v) <= MAX_EXACT_INT)) {
        this.realList.push(v);
      }
    } else if (typeof v === 'bigint' && (v > MAX_EXACT_INT || v < -MAX_EXACT_INT)) {
      this.realList.push(Number(v)); // Checked as a REAL, which fails: JS would read it rounded.
    }
  }
}

/** A write in progress: `done()` merges what was written, if nothing else changed meanwhile. */
export interface TrackedWrite {
  /**
   * Call right after the statements ran: what was stored per column, the rows changed, and for an
   * insert, the id of one of the rows it added.
   */
  done(written: Map<string, StoredValues>, rowsChanged: number, newRow?: number): void;
}

/** A SQL default that is a constant: a number, string, blob literal, NULL, TRUE or FALSE. */
const CONSTANT_DEFAULT =
  /^(?:[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:e[-+]?\d+)?|'(?:[^']|'')*'|x'[0-9a-f]*'|null|true|false)$/i;

/** Numbers written but not yet checked, per column; beyond this, the column is scanned again. */
const MAX_UNCHECKED = 100_000;

/** What is known of one column; each part is found when first needed. */
interface ColumnStats {
  /** The storage classes held (a bit set of the *_CLASS constants). */
  classes?: number;
  /** Whether SQLite's JSON text of every stored number is JSON.stringify's of what JS reads. */
  jsonExact?: boolean;
  /** Numbers stored as REAL since `jsonExact` was found true, still to check. */
  unchecked: number[];
  /**
   * The numbers held (`where` conditions: operands.ts). Writes tracked widen it with what they
   * store (values overwritten stay in: a wider range proves less, never wrongly).
   */
  range?: NumberRange;
}

/** The numbers a column holds: their least and greatest (null: none), and whether all are whole. */
export interface NumberRange {
  min: number | null;
  max: number | null;
  integral: boolean;
}

/**
 * What moves whenever a document's data may have changed: rows changed through this connection
 * (by any code), commits by other connections, and schema changes by anyone.
 */
export class DataStamp {
  private readonly stmt: Database.Statement;
  private readonly changesStmt: Database.Statement;
  /** `now()` as last read in this turn of the event loop (`thisTurn`), or null. */
  private turn: [number, number, number] | null = null;

  constructor(db: Database.Database) {
    this.stmt = db
      .prepare(`SELECT total_changes(), (SELECT data_version FROM pragma_data_version),
      (SELECT schema_version FROM pragma_schema_version)`)
      .raw(true);
    this.changesStmt = db.prepare('SELECT total_changes()').pluck();
  }

  /** [rows changed here, data version, schema version]. */
  now(): [number, number, number] {
    return this.stmt.get() as [number, number, number];
  }

  /**
   * `now()`, where the two versions, which only other connections move (and DDL), may be those
   * read earlier in this turn of the event loop: reading them opens a read transaction on the file
   * (about 5 µs alone, 16% of a 304's server CPU under load), while `total_changes()` reads no page
   * (0.2 µs) and is read every time, so this connection's own writes show at once. A commit made
   * elsewhere shows a turn late at most, as if it had come a moment later (the home store's memo
   * does the same). For HTTP revalidation only: a check that nothing changed between two reads
   * (an import's plan) uses `now()`.
   */
  thisTurn(): [number, number, number] {
    const changes = this.changesStmt.get() as number;
    const turn = this.turn;
    if (turn !== null && turn[0] === changes) return turn;
    const now = this.now();
    if (this.turn === null) {
      setImmediate(() => {
        this.turn = null;
      }).unref();
    }
    this.turn = now;
    return now;
  }
}

/** Numbers compared at a time by `scanJsonExact` (texts under V8's 128 KB large-object size). */
const JSON_CHECK_ROWS = 2000;

export class ColumnClasses {
  private readonly dataStamp: DataStamp;
  private stamp: number[] = [];
  private readonly byTable = new Map<string, Map<string, ColumnStats>>();
  /** Per table, the columns whose SQL default is a constant. */
  private readonly constantDefaults = new Map<string, Set<string>>();
  private checkStmt: Database.Statement | null = null;

  constructor(private readonly db: Database.Database) {
    this.dataStamp = new DataStamp(db);
  }

  clear(): void {
    this.byTable.clear();
    this.constantDefaults.clear();
    this.stamp = [];
  }

  /** Forgets everything if the data may have changed since the cache was last known valid. */
  private validate(): void {
    const now = this.dataStamp.now();
    if (!(now.length === this.stamp.length && now.every((v, i) => v === this.stamp[i]))) {
      this.byTable.clear();
      this.constantDefaults.clear();
      this.stamp = now;
    }
  }

  /**
   * Runs `fn`, whose writes touch no table these classes describe (the action history's rows) and
   * which reports how many rows it changed: what is known is kept, where otherwise those changes
   * would count as a write the engine did not make. The stamp moves by those rows without reading
   * it first (a statement of every recorded write): if it was already stale, it stays so, since
   * the counter only grows.
   */
  aside<T>(fn: () => T, rowsChanged: () => number): T {
    const result = fn();
    if (this.stamp.length) this.stamp = [this.stamp[0] + rowsChanged(), this.stamp[1], this.stamp[2]];
    return result;
  }

  private stats(tableId: string, colId: string): ColumnStats {
    this.validate();
    let cols = this.byTable.get(tableId);
    if (!cols) {
      cols = new Map();
      this.byTable.set(tableId, cols);
    }
    let s = cols.get(colId);
    if (!s) {
      s = {unchecked: []};
      cols.set(colId, s);
    }
    return s;
  }

  /** The classes held by a column (a bit set of the *_CLASS constants). */
  of(tableId: string, colId: string): number {
    if (colId === 'id') {
      return NUM_CLASS;
    }
    const s = this.stats(tableId, colId);
    if (s.classes === undefined) {
      let mask = 0;
      const rows = this.db
        .prepare(`SELECT DISTINCT typeof(${quoteIdent(colId)}) FROM ${quoteIdent(tableId)}`)
        .raw(true)
        .all() as Array<[string]>;
      for (const [t] of rows) {
        mask |= TYPEOF_CLASS[t] ?? ANY_CLASS;
      }
      s.classes = mask;
    }
    return s.classes;
  }

  /** Whether `of` and `jsonExact` answer for this column without scanning the table. */
  known(tableId: string, colId: string): boolean {
    if (colId === 'id') {
      return true;
    }
    const s = this.stats(tableId, colId);
    return s.classes !== undefined && (s.jsonExact !== undefined || !(s.classes & NUM_CLASS));
  }

  /**
   * Whether `json_quote()` of every number in the column is exactly `JSON.stringify()` of the value
   * better-sqlite3 reads for it (text, nulls and blobs are not numbers, and not considered).
   */
  jsonExact(tableId: string, colId: string): boolean {
    if (colId === 'id') {
      // The INTEGER PRIMARY KEY: its extremes are enough, and cost two index lookups.
      // (Compared in SQL: JS would read them rounded.)
      const t = quoteIdent(tableId);
      return (
        this.db
          .prepare(`SELECT coalesce((SELECT min(id) FROM ${t}) >= ${-MAX_EXACT_INT}
        AND (SELECT max(id) FROM ${t}) <= ${MAX_EXACT_INT}, 1)`)
          .pluck()
          .get() === 1
      );
    }
    const s = this.stats(tableId, colId);
    if (s.jsonExact === undefined) {
      s.jsonExact = this.scanJsonExact(tableId, colId);
    } else if (s.unchecked.length) {
      s.jsonExact = s.jsonExact && this.realsJsonExact(s.unchecked);
      s.unchecked = [];
    }
    return s.jsonExact;
  }

  /**
   * The values JS reads against SQLite's JSON of the same values, in order, a range of ids at a
   * time (a whole column at once held ~100 MB at 1M rows while a streamed read began).
   */
  private scanJsonExact(tableId: string, colId: string): boolean {
    const c = quoteIdent(colId);
    const t = quoteIdent(tableId);
    const numbers = `(typeof(${c}) = 'real'
      OR (typeof(${c}) = 'integer' AND ${c} NOT BETWEEN ${-MAX_EXACT_INT} AND ${MAX_EXACT_INT}))`;
    const values = this.db
      .prepare(`SELECT ${c}, id FROM ${t} WHERE id > ? AND ${numbers} ORDER BY id LIMIT ${JSON_CHECK_ROWS}`)
      .raw(true);
    const text = this.db
      .prepare(`SELECT json_group_array(${c} ORDER BY id) FROM ${t} WHERE id > ? AND id <= ? AND ${numbers}`)
      .pluck();
    for (let after = -Infinity; ; ) {
      const rows = values.all(after) as [unknown, number][];
      if (!rows.length) return true;
      const last = rows[rows.length - 1][1];
      if (JSON.stringify(rows.map((r) => r[0])) !== text.get(after, last)) return false;
      after = last;
    }
  }

  /** Whether SQLite's JSON text of these numbers, bound as REALs, is JSON.stringify's. */
  private realsJsonExact(values: number[]): boolean {
    const n = 100;
    this.checkStmt ??= this.db.prepare(`SELECT json_array(?${', ?'.repeat(n - 1)})`).pluck();
    for (let i = 0; i < values.length; i += n) {
      const chunk = values.slice(i, i + n);
      while (chunk.length < n) {
        chunk.push(chunk[0]);
      } // Padded with copies of its first value.
      if (this.checkStmt.get(...chunk) !== JSON.stringify(chunk)) {
        return false;
      }
    }
    return true;
  }

  /**
   * The numbers a column holds (one scan, kept as the classes are: until the data changes other
   * than by the engine's tracked writes, which widen it). A `where` condition reads it after every
   * write, so that a write elsewhere (or a small one here) costs no scan of a large table.
   */
  range(tableId: string, colId: string): NumberRange {
    const s = this.stats(tableId, colId);
    if (!s.range) {
      const c = `+${quoteIdent(colId)}`;
      const [min, max, fractions] = this.db
        .prepare(
          `SELECT min(${c}), max(${c}), max(${c} <> round(${c})) FROM ${quoteIdent(tableId)} ` +
            `WHERE typeof(${quoteIdent(colId)}) IN ('integer', 'real')`,
        )
        .raw(true)
        .get() as [number | null, number | null, number | null];
      s.range = {min, max, integral: !fractions};
    }
    return s.range;
  }

  /**
   * Starts a record write to `tableId` by the engine, to be called just before its statements.
   * If the cache was valid then and the write changed exactly `rowsChanged` rows and nothing else,
   * the columns in `written` gain the classes stored and their numbers to check, and the columns
   * an insert did not list gain those of their SQL default (`learnDefaults`). Otherwise the cache
   * is cleared at the next use.
   */
  track(tableId: string): TrackedWrite {
    this.validate();
    const before = this.stamp;
    return {
      done: (written, rowsChanged, newRow) => {
        const now = this.dataStamp.now();
        if (now[0] !== before[0] + rowsChanged || now[1] !== before[1] || now[2] !== before[2]) {
          return;
        }
        const cols = this.byTable.get(tableId);
        if (cols) {
          for (const [colId, s] of cols) {
            const w = written.get(colId);
            if (!w) {
              continue;
            }
            if (s.classes !== undefined) {
              s.classes |= w.classes;
            }
            if (s.range && w.textToNumber && w.classes & TEXT_CLASS) {
              s.range = undefined;
            } else if (s.range && w.min <= w.max) {
              s.range = {
                min: Math.min(s.range.min ?? w.min, w.min),
                max: Math.max(s.range.max ?? w.max, w.max),
                integral: s.range.integral && !w.fractions,
              };
            }
            if (!s.jsonExact || !w.reals.length) {
              continue;
            }
            if (s.unchecked.length + w.reals.length > MAX_UNCHECKED) {
              s.jsonExact = undefined;
              s.unchecked = [];
            } else {
              for (const v of w.reals) {
                s.unchecked.push(v);
              }
            }
          }
          if (newRow !== undefined) {
            this.learnDefaults(
              tableId,
              cols,
              [...cols.keys()].filter((c) => !written.has(c)),
              newRow,
            );
          }
        }
        this.stamp = now;
      },
    };
  }

  /**
   * After an insert, the columns it did not list hold their SQL default in every new row. A
   * constant default is the same stored value in each, read from one of them (`newRow`); a column
   * whose default is an expression is forgotten.
   */
  private learnDefaults(tableId: string, cols: Map<string, ColumnStats>, unlisted: string[], newRow: number): void {
    let constant = this.constantDefaults.get(tableId);
    if (!constant) {
      const rows = this.db.prepare(`SELECT name, dflt_value FROM pragma_table_info(?)`).raw(true).all(tableId) as Array<
        [string, string | null]
      >;
      constant = new Set(rows.filter(([, d]) => d === null || CONSTANT_DEFAULT.test(d)).map(([name]) => name));
      this.constantDefaults.set(tableId, constant);
    }
    const learnt = unlisted.filter((c) => constant.has(c));
    for (const c of unlisted) {
      if (!constant.has(c)) {
        cols.delete(c);
      }
    }
    if (!learnt.length) {
      return;
    }
    const values = this.db
      .prepare(
        `SELECT ${learnt
          .map((c) => {
            const q = quoteIdent(c);
            return `typeof(${q}), ${q}, iif(typeof(${q}) IN ('integer', 'real'), json_quote(${q}), NULL)`;
          })
          .join(', ')} FROM ${quoteIdent(tableId)} WHERE id = ?`,
      )
      .raw(true)
      .get(newRow) as unknown[];
    learnt.forEach((colId, i) => {
      const [type, value, json] = values.slice(3 * i, 3 * i + 3);
      const s = cols.get(colId)!;
      if (s.classes !== undefined) {
        s.classes |= TYPEOF_CLASS[type as string] ?? ANY_CLASS;
      }
      if (json !== null && JSON.stringify(value) !== json) {
        s.jsonExact = false;
        s.unchecked = [];
      }
    });
  }
}
