import Database from 'better-sqlite3';
import {readsPrivateTables} from '../webhooks/schema.js';
import {bindArgs, NOT_SELECT_MESSAGE, parameterNames, SqlUserError, type SqlParam} from './statement.js';

export {SqlUserError};

export interface ResultCaps {
  maxRows: number;
  /** Cap on the UTF-8 size of the records' JSON text. */
  maxBytes: number;
}

/** Defaults of the caps; see docs: a result larger than this needs a LIMIT or narrower columns. */
export const DEFAULT_MAX_ROWS = 1_000_000;
/** Largest answer of one SQL statement, in bytes, unless configured. */
export const DEFAULT_MAX_BYTES = 64 * 1024 * 1024;

/** Opens a document for the sandbox: read-only at every level SQLite offers through better-sqlite3. */
export function openReadOnly(path: string): Database.Database {
  const db = new Database(path, {readonly: true, fileMustExist: true});
  try {
    db.unsafeMode(false);
    db.pragma('query_only = 1');
    // Schema-defined views/triggers/defaults may not call functions that have side effects.
    db.pragma('trusted_schema = 0');
  } catch (e) {
    db.close();
    throw e;
  }
  return db;
}

/**
 * Prepares `text` (one statement: better-sqlite3 refuses more), refuses it unless it is a pure
 * read, and returns the JSON text of its `records` array (`[{"fields": {...}}, ...]`); Buffers
 * serialise as Express serialises them, `{"type":"Buffer","data":[...]}`. `privateChecked`: the
 * caller already knows the program opens no private table (sql/bounded.ts).
 */
export function executeSelect(
  db: Database.Database,
  text: string,
  args: SqlParam[],
  caps: ResultCaps,
  opts: {privateChecked?: boolean} = {},
): string {
  let stmt: Database.Statement;
  try {
    stmt = db.prepare(text);
  } catch (e) {
    throw asUserError(e);
  }
  return runSelect(db, stmt, text, args, caps, opts);
}

/** `executeSelect` with the statement already prepared (sql/bounded.ts keeps them). */
export function runSelect(
  db: Database.Database,
  stmt: Database.Statement,
  text: string,
  args: SqlParam[],
  caps: ResultCaps,
  opts: {privateChecked?: boolean} = {},
): string {
  try {
    // ATTACH reports readonly and `... RETURNING` reports reader: only both together mean a pure read.
    if (!stmt.reader || !stmt.readonly) {
      throw new SqlUserError(NOT_SELECT_MESSAGE);
    }
    // Webhook secrets and the outbox live in private tables that only owners may see (via the API).
    const bound = bindArgs(parameterNames(text), args);
    if (typeof bound === 'string') {
      throw new SqlUserError(bound);
    }
    if (!opts.privateChecked && readsPrivateTables(db, text, bound)) {
      throw new SqlUserError('SQLITE_ERROR: gristlite private tables cannot be queried');
    }
    const parts: string[] = [];
    let bytes = 2;
    for (const row of stmt.iterate(...bound) as IterableIterator<Record<string, unknown>>) {
      if (parts.length >= caps.maxRows) {
        throw new SqlUserError(`the result has more than ${caps.maxRows} rows; add a LIMIT to the statement`);
      }
      // Checked before stringifying so that one huge value cannot exhaust memory on its way to JSON.
      if (bytes + minJsonSize(row) > caps.maxBytes) {
        throw tooLarge(caps);
      }
      const part = `{"fields":${JSON.stringify(row)}}`;
      bytes += Buffer.byteLength(part) + 1;
      if (bytes > caps.maxBytes) {
        throw tooLarge(caps);
      }
      parts.push(part);
    }
    return `[${parts.join(',')}]`;
  } catch (e) {
    throw asUserError(e);
  }
}

/** better-sqlite3 reports a wrong number or type of arguments as RangeError / TypeError. */
function asUserError(e: unknown): unknown {
  return e instanceof RangeError || e instanceof TypeError ? new SqlUserError(e.message) : e;
}

/**
 * The message to answer with (400) for an error from opening a document or running a statement,
 * or undefined for anything else (a bug). SQLite errors read as Grist shows them: `SQLITE_ERROR: ...`.
 */
export function userMessage(e: unknown): string | undefined {
  if (e instanceof SqlUserError) {
    return e.message;
  }
  if (e instanceof Database.SqliteError) {
    return `${e.code}: ${e.message}`;
  }
  return undefined;
}

function tooLarge(caps: ResultCaps): SqlUserError {
  return new SqlUserError(`the result is larger than ${caps.maxBytes} bytes; select fewer rows or columns`);
}

/** A lower bound of a row's JSON size, cheap to compute. */
function minJsonSize(row: Record<string, unknown>): number {
  let size = 0;
  for (const key in row) {
    const v = row[key];
    size += key.length + 4;
    if (typeof v === 'string') {
      size += v.length;
    } else if (Buffer.isBuffer(v)) {
      size += 2 * v.length;
    }
  }
  return size;
}
