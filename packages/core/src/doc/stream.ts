/**
 * Large read answers as a stream of bytes (issue 28, D61, D62): rows are read with a statement
 * iterator on a read-only connection of their own, inside one read transaction (one snapshot of
 * the document however long the client takes; WAL lets writers go on), and the next chunk is made
 * only when the transport asks for it, so memory stays bounded by a chunk, not by the answer.
 */
import Database from 'better-sqlite3';
import {TooManyRequests} from '../base/index.js';
import {NATURAL_KEY_FN, naturalKey} from './query.js';

/** How a streamed answer is bounded. */
export interface StreamOptions {
  /**
   * Answers estimated below this many cells (rows times columns, id included) are built whole (and
   * may be answered from the read cache); larger ones stream (and are kept in it when they fit).
   * Default 200,000 (about 2 MB of JSON).
   */
  minCells?: number;
  /**
   * Longest time a stream may hold its read transaction (D62): a reader holding an old snapshot
   * keeps the WAL from being reset, so it grows with every write meanwhile. Past it the stream
   * fails (D61: the connection is cut, the client sees an incomplete body). Default 600,000 ms.
   */
  maxMs?: number;
  /** Approximate characters of each chunk (default 32 Ki: V8 keeps strings over 128 KB apart). */
  chunkChars?: number;
  /**
   * How many streams may be open at once, shared by every read given the same `StreamSlots`
   * (a server gives one to all its requests). Each holds a connection of its own until its
   * reader is done; past the cap a large read answers 429. Absent: no cap.
   */
  slots?: StreamSlots;
}

/** A count of open streams under a cap (GRISTLITE_STREAM_MAX_OPEN). */
export class StreamSlots {
  #open = 0;

  constructor(readonly max: number) {}

  /** Open streams now. */
  get open(): number {
    return this.#open;
  }

  /** Takes a slot, or answers 429 when every slot is taken. */
  take(): void {
    if (this.#open >= this.max) {
      throw new TooManyRequests(
        `Too many large reads streaming at once (${this.max}): try again when one has finished`,
      );
    }
    this.#open++;
  }

  /** Gives back a slot `take` took. */
  release(): void {
    this.#open--;
  }
}

/** The defaults of `StreamOptions` (the server reads GRISTLITE_STREAM_MIN_CELLS and _MAX_MSEC over them). */
export const STREAM_DEFAULTS = {minCells: 200_000, maxMs: 600_000, chunkChars: 32768};

/** A read-only connection to `path` inside a read transaction, with the functions queries use. */
export function openSnapshot(path: string): Database.Database {
  const db = new Database(path, {readonly: true, fileMustExist: true});
  try {
    db.pragma('trusted_schema = OFF');
    // A scan in order gains nothing from better-sqlite3's 16 MB page cache; 2 MB, SQLite's default.
    db.pragma('cache_size = -2000');
    db.function(NATURAL_KEY_FN, {deterministic: true}, naturalKey);
    db.exec('BEGIN');
    return db;
  } catch (e) {
    db.close();
    throw e;
  }
}

/** A streamed answer's whole text, handed to `done` when it was produced to its end and fits. */
export interface StreamKeep {
  maxChars: number;
  done: (text: string) => void;
}

/**
 * One part of a JSON answer: `open` (e.g. `{"records":[`), then the JSON of each item, comma
 * separated (an item may be several values' JSON, comma-separated). Items come from `items()`,
 * called when the part starts (so that a part's statement runs only once the one before has
 * finished: one connection runs one iterator at a time). An item of null is skipped.
 */
export interface JsonPart {
  open: string;
  items: () => Iterator<string | null>;
}

/**
 * The bytes of `parts` followed by `close`, produced a chunk at a time as `next()` is called. The
 * first part's first item is read at construction, so that the snapshot is taken (and any error
 * of the statement raised) before the answer starts. `release` runs once, at the end, on
 * `return()` (a client gone) or on an error, and when `maxMs` passes.
 */
export class JsonStream implements AsyncIterableIterator<Uint8Array> {
  private partIndex = 0;
  private current: Iterator<string | null> | null = null;
  private pending: IteratorResult<string | null> | null = null;
  private count = 0;
  private started = false;
  private done = false;
  private expired = false;
  private readonly timer: NodeJS.Timeout;
  private readonly chunkChars: number;
  private readonly maxMs: number;

  /** The text so far, while it is kept for `keep` (null once it grew past `keep.maxChars`). */
  private kept: string[] | null;
  private keptChars = 0;

  /**
   * `keep`: the whole text is handed to `keep.done` when the answer was produced to its end and
   * had at most `keep.maxChars` characters (the read cache takes it; a client gone or an error
   * hands nothing).
   */
  constructor(
    private readonly parts: JsonPart[],
    private readonly close: string,
    private readonly release: () => void,
    opts: StreamOptions = {},
    private readonly keep?: StreamKeep,
  ) {
    this.kept = keep ? [] : null;
    this.chunkChars = opts.chunkChars ?? STREAM_DEFAULTS.chunkChars;
    this.maxMs = opts.maxMs ?? STREAM_DEFAULTS.maxMs;
    this.timer = setTimeout(() => {
      this.expired = true;
      this.finish();
    }, this.maxMs);
    this.timer.unref();
    try {
      if (parts.length) {
        this.current = parts[0].items();
        this.pending = this.current.next();
      }
    } catch (e) {
      this.finish();
      throw e;
    }
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  async next(): Promise<IteratorResult<Uint8Array>> {
    if (this.expired) {
      throw new Error(`streamed answer not finished within ${this.maxMs} ms (D62)`);
    }
    if (this.done) return {value: undefined, done: true};
    try {
      const text = this.chunk();
      if (text === null) {
        this.finish();
        if (this.kept) this.keep!.done(this.kept.join(''));
        this.kept = null;
        return {value: undefined, done: true};
      }
      if (this.kept) {
        this.keptChars += text.length;
        if (this.keptChars <= this.keep!.maxChars) this.kept.push(text);
        else this.kept = null;
      }
      return {value: Buffer.from(text, 'utf8'), done: false};
    } catch (e) {
      this.finish();
      throw e;
    }
  }

  async return(): Promise<IteratorResult<Uint8Array>> {
    this.finish();
    return {value: undefined, done: true};
  }

  /** The next chunk's text, or null when everything was written. */
  private chunk(): string | null {
    if (this.partIndex > this.parts.length) return null;
    const out: string[] = [];
    let size = 0;
    while (size < this.chunkChars) {
      if (this.partIndex === this.parts.length) {
        out.push(this.close);
        this.partIndex++;
        break;
      }
      const part = this.parts[this.partIndex];
      if (!this.started) {
        out.push(this.partIndex ? ',' + part.open : part.open);
        size += part.open.length;
        this.started = true;
        this.count = 0;
      }
      if (!this.current) {
        this.current = part.items();
        this.pending = null;
      }
      const r = this.pending ?? this.current.next();
      this.pending = null;
      if (r.done) {
        out.push(']');
        this.current = null;
        this.started = false;
        this.partIndex++;
        continue;
      }
      if (r.value === null) continue;
      out.push(this.count++ ? ',' + r.value : r.value);
      size += r.value.length;
    }
    return out.join('');
  }

  private finish(): void {
    if (this.done) return;
    this.done = true;
    clearTimeout(this.timer);
    try {
      this.current?.return?.();
    } catch {
      // The connection goes next anyway.
    }
    this.current = null;
    this.release();
  }
}
