/**
 * The pieces the read pipeline (reads.ts) builds its answers from that need none of its state: JSON
 * text a batch at a time, records with their display and censored extras, page positions as cursor
 * text, the read cache's keys, and the read-only connection a stream reads its snapshot on.
 */
import type Database from 'better-sqlite3';
import {Forbidden} from '../base/index.js';
import type {ApiRecord, ColumnInfo, PageEnd, RecordQuery} from './api-types.js';
import {displayDiffers} from './cell-display.js';
import type {CellFormatter} from '@gristlite/formula';
import type {TableReadFilter} from './guard.js';
import type {ColumnMeta} from './meta.js';
import {parseSortParam, quoteIdent} from './query.js';
import {openSnapshot, type StreamOptions} from './stream.js';
import type {CellValue} from './types.js';

/** Column fields in the order `GET /columns` lists them. */
const COLUMN_FIELD_ORDER = [
  'parentId',
  'parentPos',
  'type',
  'widgetOptions',
  'isFormula',
  'formula',
  'label',
  'description',
  'untieColIdFromLabel',
  'summarySourceCol',
  'displayCol',
  'visibleCol',
  'rules',
  'recalcWhen',
  'recalcDeps',
  'reverseCol',
];

/** Whether a read names a filter or a limit (else it reads the whole table). */
export function hasLimitOrFilter(q: RecordQuery): boolean {
  return Boolean((q.limit && q.limit > 0) || (q.filter && Object.keys(q.filter).length) || q.where || q.whereSql);
}

/**
 * Characters of text aimed at for each string a streamed read makes. V8 puts strings over 128 KB
 * in its large-object space, freed only by a full collection: at 1M rows those held ~100 MB
 * between collections. Smaller ones die young.
 */
export const BATCH_CHARS = 32 * 1024;

/**
 * The joined records of `stmt` (`SELECT group_concat(...), max(key)` over `rows` rows after a
 * key), batch after batch until none is left; `bound` follows the key and the row count in its
 * parameters. The row count follows the records' length, so that each batch is ~BATCH_CHARS.
 */
export function keysetBatches(stmt: Database.Statement, bound: unknown[]): Iterator<string | null> {
  let after: number | null = -Infinity;
  let rows = 64;
  return {
    next: () => {
      if (after === null) return {value: undefined, done: true};
      const [text, last] = stmt.get(after, ...bound, rows) as [string | null, number | null];
      if (text === null) {
        after = null;
        return {value: undefined, done: true};
      }
      after = last;
      rows = Math.max(1, Math.min(4096, Math.round((rows * BATCH_CHARS) / Math.max(1, text.length))));
      return {value: text, done: false};
    },
    return: () => {
      after = null;
      return {value: undefined, done: true};
    },
  };
}

/** What `batchJson` leaves out. */
export const SKIP: unique symbol = Symbol('skip');

/** Values stringified at a time by `batchJson` (one JSON.stringify of an array is much faster). */
export const JSON_BATCH = 512;

/**
 * The JSON of `it`'s values mapped by `fn`, JSON_BATCH at a time, as comma-separated text (an
 * array's JSON without its brackets: the same text as each value's, joined); values mapped to SKIP
 * are left out (rows access rules hide), and a batch of none is null.
 */
export function batchJson<T, U>(it: IterableIterator<T>, fn: (v: T) => U | typeof SKIP): Iterator<string | null> {
  let done = false;
  return {
    next: () => {
      if (done) return {value: undefined, done: true};
      const out: U[] = [];
      for (let i = 0; i < JSON_BATCH; i++) {
        const r = it.next();
        if (r.done) {
          done = true;
          break;
        }
        const v = fn(r.value);
        if (v !== SKIP) out.push(v);
      }
      if (!out.length) return done ? {value: undefined, done: true} : {value: null, done: false};
      return {value: JSON.stringify(out).slice(1, -1), done: false};
    },
    return: () => {
      done = true;
      it.return?.();
      return {value: undefined, done: true};
    },
  };
}

/**
 * The JSON of a key column (ids, or positions in an order) read a batch at a time: `read(lo)` gives
 * the batch after key `lo` (from `start`) as its last key and its values, or null at the end. Each
 * batch's key range is appended to `ranges`, for the other columns to read the same rows (`rangeJson`).
 */
export function rangeBatches(
  ranges: Array<[number, number]>,
  start: number,
  read: (lo: number) => [number, unknown[]] | null,
): Iterator<string | null> {
  let lo = start;
  let done = false;
  return {
    next: () => {
      const batch = done ? null : read(lo);
      if (!batch) {
        done = true;
        return {value: undefined, done: true};
      }
      ranges.push([lo, batch[0]]);
      lo = batch[0];
      return {value: JSON.stringify(batch[1]).slice(1, -1), done: false};
    },
    return: () => {
      done = true;
      return {value: undefined, done: true};
    },
  };
}

/**
 * The JSON of a column read by the key ranges `rangeBatches` found (`read(lo, hi)`: the column's
 * values of the rows with keys in (lo, hi], in order), mapped by `fn`; a batch of none is null.
 */
export function rangeJson(
  ranges: ReadonlyArray<[number, number]>,
  read: (lo: number, hi: number) => unknown[],
  fn: (v: unknown) => unknown,
): Iterator<string | null> {
  let k = 0;
  return {
    next: () => {
      if (k >= ranges.length) return {value: undefined, done: true};
      const [lo, hi] = ranges[k++];
      const values = read(lo, hi);
      if (!values.length) return {value: null, done: false};
      for (let i = 0; i < values.length; i++) values[i] = fn(values[i]);
      return {value: JSON.stringify(values).slice(1, -1), done: false};
    },
    return: () => {
      k = ranges.length;
      return {value: undefined, done: true};
    },
  };
}

/** The page size of a read asked to tell where it stopped, or null (no limit, or Grist's negative one). */
export function pageLimit(q: RecordQuery, page: PageEnd | undefined): number | null {
  return page && q.limit && q.limit > 0 && q.limit < Number.MAX_SAFE_INTEGER ? q.limit : null;
}

/** A position as text, blobs (marshalled values) as `{"b": base64}` and non-finite numbers as `{"n": "Infinity"}`. */
export function encodePosition(position: Readonly<Record<string, unknown>>): string {
  return JSON.stringify(position, (_k, v: unknown) => {
    if (typeof v === 'number' && !Number.isFinite(v)) return {n: String(v)};
    if (
      v &&
      typeof v === 'object' &&
      (v as {type?: string}).type === 'Buffer' &&
      Array.isArray((v as {data?: unknown}).data)
    ) {
      return {b: Buffer.from((v as {data: number[]}).data).toString('base64')};
    }
    return v;
  });
}

/** The position `encodePosition` wrote; throws on anything else. */
export function decodePosition(text: string): Record<string, unknown> {
  const parsed: unknown = JSON.parse(text);
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not a position');
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(parsed)) {
    if (v === null || typeof v === 'number' || typeof v === 'string') out[k] = v;
    else if (v && typeof v === 'object' && typeof (v as {b?: unknown}).b === 'string') {
      out[k] = Buffer.from((v as {b: string}).b, 'base64');
    } else if (v && typeof v === 'object' && ['Infinity', '-Infinity'].includes((v as {n?: string}).n ?? '')) {
      out[k] = Number((v as {n: string}).n);
    } else throw new Error('not a position');
  }
  return out;
}

/** The record of one row (id, then `cols`, as stored): decoded, errors apart, typed if asked. */
export function recordBuilder(
  cols: ColumnMeta[],
  typed: boolean,
  shows: CellFormatter[] | null = null,
): (row: unknown[]) => ApiRecord {
  const n = cols.length;
  const ids = cols.map((c) => c.colId);
  const decoders = cols.map((c) => c.decode);
  const formatters = cols.map((c) => (typed ? c.typed : null));
  return (row) => {
    const fields: Record<string, CellValue> = {};
    let errors: Record<string, string> | undefined;
    let display: Record<string, string> | undefined;
    for (let j = 0; j < n; j++) {
      let v = decoders[j](row[j + 1]);
      const text = shows ? shows[j](v) : null;
      if (Array.isArray(v)) {
        if (v[0] === 'E') {
          if (!typed) {
            (errors ??= {})[ids[j]] = String(v[1]);
            v = null;
          }
        } else if (formatters[j]) {
          v = formatters[j]!(v);
        }
      } else if (formatters[j]) {
        v = formatters[j]!(v);
      }
      fields[ids[j]] = v;
      if (text !== null && displayDiffers(v, text)) (display ??= {})[ids[j]] = text;
    }
    return withExtras({id: row[0] as number, fields}, errors, display);
  };
}

/** A record with its error types and display texts, when it has any (in /records' key order). */
/** A cell as a read under access rules censors it. */
export function isCensored(v: CellValue | undefined): boolean {
  return Array.isArray(v) && v.length === 1 && v[0] === 'C';
}

export function withExtras(
  r: ApiRecord,
  errors: Record<string, string> | undefined,
  display: Record<string, string> | undefined,
): ApiRecord {
  if (errors) r.errors = errors;
  if (display) r.display = display;
  return r;
}

/** The result columns of a record read: id, then `cols`. */
export function columnList(cols: ColumnMeta[]): string {
  return `"id"${cols.map((c) => ', ' + quoteIdent(c.colId)).join('')}`;
}

/** A column as `GET /columns` describes it. */
export function columnInfo(c: ColumnMeta): ColumnInfo {
  const fields: Record<string, CellValue> = {colRef: c.colRef};
  for (const k of COLUMN_FIELD_ORDER) {
    fields[k] = c.fields[k];
  }
  return {id: c.colId, fields};
}

/**
 * Under access rules a query may not filter or sort on a column the user cannot read, wholly or in
 * some rows: which rows come back, and in what order, would tell the hidden values (decision DA6;
 * Grist filters and sorts first, then hides). Refused in plain words, 403.
 */
export function checkQueryColumns(q: RecordQuery, filter: TableReadFilter): void {
  const named: Array<[string, 'filter' | 'sort']> = [];
  if (q.filter && typeof q.filter === 'object' && !Array.isArray(q.filter)) {
    for (const c of Object.keys(q.filter)) named.push([c, 'filter']);
  }
  for (const spec of parseSortParam(q.sort)) {
    if (typeof spec === 'string') named.push([/^-?([^:]*)/.exec(spec)![1], 'sort']);
  }
  for (const [colId, use] of named) {
    const hidden = filter.hiddenCols.has(colId);
    if (hidden || filter.censoredCols?.has(colId)) {
      throw new Forbidden(
        `Cannot ${use} by column "${colId}": access rules hide ${hidden ? 'it' : 'some of its cells'} from you, ` +
          'and the rows returned would reveal the hidden values',
      );
    }
  }
}

/**
 * The fewest characters a cell of a streamed answer is taken to write (`"Qty":1,` is 8), so that
 * an answer is kept for the read cache while it streams only when it is likely to fit.
 */
export const KEEP_CHARS_PER_CELL = 8;

/** The read cache's key of a GET /records answer (the document and its data stamp aside). */
export function recordsCacheKey(tableId: string, q: RecordQuery, paging: boolean): string {
  return JSON.stringify([
    tableId,
    q.filter ?? null,
    q.sort ?? null,
    q.limit ?? 0,
    Boolean(q.hidden),
    q.cellFormat ?? 'normal',
    Boolean(q.display),
    q.after ? encodePosition(q.after) : null,
    paging,
    q.where ?? null,
  ]);
}

/** The body of a cached paging answer (where it stopped, a newline, the body), `page.next` set. */
export function pagedBody(text: string, page: PageEnd): string {
  const cut = text.indexOf('\n');
  page.next = cut > 0 ? decodePosition(text.slice(0, cut)) : null;
  return text.slice(cut + 1);
}

/**
 * A connection of its own for a stream, holding one of `opts.slots` (429 when none is free) until
 * `release` (called once however often: at the end, on `return()`, on an error).
 */
export function openStream(path: string, opts: StreamOptions): {db: Database.Database; release: () => void} {
  opts.slots?.take();
  let db: Database.Database;
  try {
    db = openSnapshot(path);
  } catch (e) {
    opts.slots?.release();
    throw e;
  }
  let released = false;
  return {
    db,
    release: () => {
      if (released) return;
      released = true;
      db.close();
      opts.slots?.release();
    },
  };
}
