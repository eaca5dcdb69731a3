import {BadRequest} from '../base/index.js';
import {intSetting} from '../base/index.js';

/** Values a statement parameter may take. JSON booleans are bound as 1/0, as Grist's binding does. */
export type SqlParam = number | bigint | string | Uint8Array | null;

export const INTERRUPT_MESSAGE = 'a slow statement resulted in a database interrupt';
export const NOT_SELECT_MESSAGE = 'only select statements are supported';
export const PRIVATE_PRAGMA_MESSAGE =
  'SQLITE_ERROR: pragma_database_list is not available (it shows server file paths)';

/**
 * Grist's statement checks (SPEC §14.3): drop one trailing `;`, require `select` somewhere,
 * wrap as `select * from (...)` so SQLite can only parse a SELECT, and keep the first statement
 * with its `;` (so that `select 1; select 2` fails as Grist's does: `near ";": syntax error`).
 * Returns the text to prepare.
 */
export function selectText(sql: string): string {
  const body = sql.replace(/;$/, '');
  if (!body.toLowerCase().includes('select')) {
    throw new BadRequest(NOT_SELECT_MESSAGE);
  }
  // pragma_database_list shows the server's absolute file path (SQLite makes every path absolute,
  // so opening by a relative path does not hide it). SQLite folds only ASCII case and no quoting
  // can split a name, so a case-insensitive search finds every use (docs/decisions.md).
  if (/pragma_database_list/i.test(body)) {
    throw new BadRequest(PRIVATE_PRAGMA_MESSAGE);
  }
  const wrapped = `select * from (${body})`;
  const end = firstStatementEnd(wrapped);
  return end < 0 ? wrapped : wrapped.slice(0, end + 1);
}

/**
 * Index of the first `;` that SQLite's tokenizer reads as a statement end (outside quotes,
 * bracketed identifiers and comments), or -1. Grist's binding runs only the first statement and
 * ignores the rest; better-sqlite3 refuses multi-statement text, so the tail is cut off here.
 */
export function firstStatementEnd(text: string): number {
  for (let i = 0; i < text.length; i++) {
    if (text[i] === ';') return i;
    const end = quotedRunEnd(text, i);
    // Unterminated: SQLite reports the error on the whole text.
    if (end === -1) return -1;
    if (end !== null) i = end;
  }
  return -1;
}

/**
 * Where a quoted run, bracketed identifier or comment that starts at `i` ends (the index of its
 * last character), -1 when it never closes, null when none starts there. A doubled quote inside
 * reads as two adjacent quoted runs: the same outcome for both scanners here.
 */
function quotedRunEnd(text: string, i: number): number | null {
  const c = text[i];
  let close: string;
  let from = i + 1;
  if (c === "'" || c === '"' || c === '`') close = c;
  else if (c === '[') close = ']';
  else if (c === '-' && text[i + 1] === '-') close = '\n';
  else if (c === '/' && text[i + 1] === '*') {
    close = '*/';
    from = i + 2;
  } else return null;
  const j = text.indexOf(close, from);
  return j < 0 ? -1 : j + close.length - 1;
}

/** A statement refused or failed for a reason the caller can fix (HTTP 400). */
export class SqlUserError extends Error {}

/**
 * SQLite's SQLITE_MAX_VARIABLE_NUMBER as better-sqlite3 builds it (its `pragma compile_options`
 * says MAX_VARIABLE_NUMBER=32766): the largest `?NNN` and the most parameters one statement has.
 */
export const MAX_VARIABLE_NUMBER = 32766;
const VARIABLE_RANGE = `SQLITE_ERROR: variable number must be between ?1 and ?${MAX_VARIABLE_NUMBER}`;
const TOO_MANY_VARIABLES = 'SQLITE_ERROR: too many SQL variables';

/** End of the run of characters from `at` that `part` accepts (a char-code loop: no copy, no regex). */
function runEnd(text: string, at: number, part: (code: number) => boolean): number {
  let end = at;
  while (end < text.length && part(text.charCodeAt(end))) end++;
  return end;
}

const isDigit = (c: number) => c >= 48 && c <= 57;
/** SQLite's identifier characters: ASCII letters, digits, `_`, `$`, and every non-ASCII one. */
const isIdent = (c: number) =>
  isDigit(c) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c === 36 || c >= 0x80;

/**
 * SQLite's parameter numbering for `text` (the first statement, as cut by selectText): entry i-1 is
 * the name of parameter i (`?NNN`, `:x`, `@x`, `$x`) or null for a plain `?` or an unused number.
 * `?` takes the largest index so far plus one; `?NNN` takes NNN; a name keeps its first index.
 * A number or a count beyond SQLite's bound throws SQLite's own error (SqlUserError) before the
 * list grows: `?99999999` must not allocate 10^8 entries on the request's thread (issue 37).
 */
export function parameterNames(text: string): (string | null)[] {
  const names: (string | null)[] = [];
  const byName = new Map<string, number>();
  const place = (index: number, name: string | null) => {
    if (index > MAX_VARIABLE_NUMBER) {
      throw new SqlUserError(TOO_MANY_VARIABLES);
    }
    while (names.length < index) {
      names.push(null);
    }
    if (name !== null) {
      names[index - 1] = name;
      byName.set(name, index);
    }
  };
  for (let i = 0; i < text.length; i++) {
    const end = quotedRunEnd(text, i);
    if (end !== null) {
      if (end < 0) break;
      i = end;
      continue;
    }
    const c = text[i];
    if (c === '?') {
      const digits = text.slice(i + 1, runEnd(text, i + 1, isDigit));
      if (digits === '') {
        place(names.length + 1, null);
      } else {
        // Measured as text first: a 400-digit number is no safe integer.
        const value = digits.replace(/^0+/, '');
        const n = value.length > 6 ? Number.POSITIVE_INFINITY : Number(value);
        if (n < 1 || n > MAX_VARIABLE_NUMBER) {
          throw new SqlUserError(VARIABLE_RANGE);
        }
        const name = `?${digits}`;
        place(byName.get(name) ?? n, name);
      }
      i += digits.length;
    } else if (c === ':' || c === '@' || c === '$') {
      const ident = text.slice(i + 1, runEnd(text, i + 1, isIdent));
      if (ident !== '') {
        const name = c + ident;
        place(byName.get(name) ?? names.length + 1, name);
        i += ident.length;
      }
    }
  }
  return names;
}

/**
 * The arguments for better-sqlite3 (plain values, then an object of named ones) that bind
 * `args[i]` to parameter i+1, as Grist's node-sqlite3 binds an array: numbered parameters (`?2`)
 * take their own position, and parameters beyond the args are bound null. More args than
 * parameters is SQLite's SQLITE_RANGE (Grist: the same error, as a 500).
 */
export function bindArgs(names: (string | null)[], args: SqlParam[]): unknown[] | string {
  if (args.length > names.length) {
    return 'SQLITE_RANGE: column index out of range';
  }
  const plain: unknown[] = [];
  const named: Record<string, unknown> = {};
  let hasNamed = false;
  names.forEach((name, i) => {
    const value = i < args.length ? args[i] : null;
    if (name === null) {
      plain.push(value);
    } else {
      named[name.slice(1)] = value;
      hasNamed = true;
    }
  });
  return hasNamed ? [...plain, named] : plain;
}

/** Checks and converts the `args` of a request into bindable values. */
export function sqlParams(args: unknown[] | null | undefined): SqlParam[] {
  if (args == null) {
    return [];
  }
  if (!Array.isArray(args)) {
    throw new BadRequest('args must be an array or null');
  }
  return args.map((a, i) => {
    if (typeof a === 'boolean') {
      return a ? 1 : 0;
    }
    if (
      a === null ||
      typeof a === 'number' ||
      typeof a === 'bigint' ||
      typeof a === 'string' ||
      a instanceof Uint8Array
    ) {
      return a;
    }
    throw new BadRequest(`args[${i}] must be a number, string, boolean or null`);
  });
}

/**
 * SPEC §14.4: a request can only lower the configured timeout, and 0 (or none) means the default.
 */
export function effectiveTimeoutMs(defaultMs: number, requestedMs?: number): number {
  return Math.max(0, Math.min(defaultMs, requestedMs || defaultMs));
}

/** GRISTLITE_SQL_TIMEOUT_MSEC, else GRIST_SQL_TIMEOUT_MSEC, else 1000 ms. */
export function sqlTimeoutFromEnv(env: NodeJS.ProcessEnv): number {
  for (const name of ['GRISTLITE_SQL_TIMEOUT_MSEC', 'GRIST_SQL_TIMEOUT_MSEC']) {
    const raw = env[name];
    if (raw === undefined || raw === '') {
      continue;
    }
    const value = Number(raw);
    if (!Number.isInteger(value) || value < 0) {
      throw new Error(`${name} must be a non-negative integer (milliseconds), got ${JSON.stringify(raw)}`);
    }
    return value;
  }
  return 1000;
}

/**
 * The pool's bounds (docs/operations.md): GRISTLITE_SQL_WORKERS (2), GRISTLITE_SQL_MAX_QUEUE (64),
 * GRISTLITE_SQL_MAX_PER_USER (4), GRISTLITE_SQL_MAX_PER_DOC (8), GRISTLITE_SQL_QUEUE_TIMEOUT_MSEC (10000),
 * GRISTLITE_SQL_PREEMPT_MSEC (100), GRISTLITE_SQL_RESERVE_MSEC (5000); GRISTLITE_SQL_INLINE (1: see sql/bounded.ts).
 */
export function sqlPoolSettingsFromEnv(env: NodeJS.ProcessEnv) {
  return {
    size: intSetting(env, 'GRISTLITE_SQL_WORKERS', 1),
    maxQueue: intSetting(env, 'GRISTLITE_SQL_MAX_QUEUE', 0),
    maxPerUser: intSetting(env, 'GRISTLITE_SQL_MAX_PER_USER', 1),
    maxPerDoc: intSetting(env, 'GRISTLITE_SQL_MAX_PER_DOC', 1),
    queueTimeoutMs: intSetting(env, 'GRISTLITE_SQL_QUEUE_TIMEOUT_MSEC', 0),
    preemptAfterMs: intSetting(env, 'GRISTLITE_SQL_PREEMPT_MSEC', 0),
    reserveMs: intSetting(env, 'GRISTLITE_SQL_RESERVE_MSEC', 0),
    // Statements SQLite proves bounded run on the document's connection (sql/bounded.ts); 0: never.
    inline: intSetting(env, 'GRISTLITE_SQL_INLINE', 0) !== 0,
  };
}
