/**
 * Checks of record bodies in Grist's words (ts-interface-checker's: `body.records[0].fields is
 * missing`), shared by the HTTP routes and `Session`, so that a malformed write is refused alike
 * whichever way it comes. Checked by hand rather than with a schema library: they run on
 * 500-record bodies, where a plain loop costs little next to the insert itself.
 */
import {BadRequest} from '../base/index.js';

/** A failed check: `<path> <message>`, then the nested reasons (one: "; ", several: lines). */
export interface Failure {
  path: string;
  msg: string;
  nested: Failure[];
}

/** A failure as Grist's checker prints it. */
export function renderFailure(f: Failure, depth = 1): string {
  const head = `${f.path} ${f.msg}`;
  if (f.nested.length === 1) return `${head}; ${renderFailure(f.nested[0], depth)}`;
  return head + f.nested.map((n) => `\n${'    '.repeat(depth)}${renderFailure(n, depth + 1)}`).join('');
}

/** 400 `Invalid payload`, with the failures as Grist's `details.userError`. */
export function invalidPayload(f: Failure | Failure[]): BadRequest {
  const all = Array.isArray(f) ? f : [f];
  return new BadRequest('Invalid payload', {userError: `Error: ${all.map((x) => renderFailure(x)).join('; ')}`});
}

const GRIST_OBJ_CODES = new Set(['L', 'l', 'O', 'D', 'd', 'S', 'C', 'R', 'r', 'E', 'P', 'U', 'V']);

/** Grist's CellValue: number, string, boolean, null, or `[code, ...]` with a known code. */
export function isCellValue(value: unknown): boolean {
  const t = typeof value;
  return (
    value === null ||
    t === 'number' ||
    t === 'string' ||
    t === 'boolean' ||
    (Array.isArray(value) && GRIST_OBJ_CODES.has(value[0] as string))
  );
}

/**
 * Why `value` at `path` is not a CellValue (null when it is one), in Grist's words. Its checker
 * explains a failed union only by the branch that got furthest (scored above 0): an array whose
 * code is unknown fails inside the `[code, ...]` branch and says so; any other value fails every
 * branch at once and is only "none of" them.
 */
export function cellValueFailure(path: string, value: unknown): Failure | null {
  if (isCellValue(value)) return null;
  const nested: Failure[] = Array.isArray(value)
    ? [
        {
          path: `${path}[0]`,
          msg: 'is not a GristObjCode',
          nested: [{path: `${path}[0]`, msg: 'is not a valid enum value', nested: []}],
        },
      ]
    : [];
  return {
    path,
    msg: 'is not a CellValue',
    nested: [{path, msg: 'is none of number, string, boolean, null, 1 more', nested}],
  };
}

function isObject(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

function checkColValues(path: string, value: unknown, failures: Failure[], arrays = false): void {
  // Grist's checker takes any JS object for an interface, so `fields` and `require` may be
  // arrays: their indexes are then their keys (`Invalid column "0"`), as Grist reads them.
  if (!isObject(value) && !(arrays && Array.isArray(value))) {
    failures.push({path, msg: 'is not an object', nested: []});
    return;
  }
  for (const k in value) {
    const cell = (value as Record<string, unknown>)[k];
    const t = typeof cell;
    // The common case first: no path string is built for a valid cell.
    if (cell === null || t === 'number' || t === 'string' || t === 'boolean') {
      continue;
    }
    const f = cellValueFailure(`${path}.${k}`, cell);
    if (f) {
      failures.push(f);
      return;
    }
  }
}

/** Grist's names of the record shapes: POST, PATCH and PUT bodies. */
export type RecordKind = 'NewRecord' | 'Record' | 'AddOrUpdateRecord';

function checkRecord(kind: RecordKind, path: string, rec: unknown): Failure | null {
  const failures: Failure[] = [];
  if (!isObject(rec)) {
    failures.push({path, msg: 'is not an object', nested: []});
  } else if (kind === 'NewRecord') {
    if (rec.fields !== undefined) {
      checkColValues(`${path}.fields`, rec.fields, failures, true);
    }
  } else if (kind === 'Record') {
    if (rec.id === undefined) {
      failures.push({path: `${path}.id`, msg: 'is missing', nested: []});
    } else if (typeof rec.id !== 'number') {
      failures.push({path: `${path}.id`, msg: 'is not a number', nested: []});
    }
    if (rec.fields === undefined) {
      failures.push({path: `${path}.fields`, msg: 'is missing', nested: []});
    } else {
      checkColValues(`${path}.fields`, rec.fields, failures, true);
    }
  } else {
    if (rec.require === undefined) {
      failures.push({path: `${path}.require`, msg: 'is missing', nested: []});
    } else if (typeof rec.require !== 'object' || rec.require === null) {
      // \`require\` is an intersection of two object types: Grist's checker reports each.
      const f: Failure = {path: `${path}.require`, msg: 'is not an object', nested: []};
      failures.push(f, {...f});
    } else if (isObject(rec.require) && rec.require.id !== undefined && typeof rec.require.id !== 'number') {
      failures.push({path: `${path}.require.id`, msg: 'is not a number', nested: []});
    } else {
      checkColValues(`${path}.require`, rec.require, failures, true);
    }
    if (rec.fields !== undefined) {
      checkColValues(`${path}.fields`, rec.fields, failures, true);
    }
  }
  return failures.length ? {path, msg: `is not a ${kind}`, nested: failures} : null;
}

/**
 * `{records: [...]}` with at least one record of the given kind, or 400 Invalid payload naming the
 * path as Grist's checker does (`body.records[0].fields is missing`).
 */
export function recordsBody<T>(kind: RecordKind, body: unknown): T[] {
  if (!isObject(body) || body.records === undefined) {
    throw invalidPayload({path: 'body.records', msg: 'is missing', nested: []});
  }
  return checkRecords<T>(kind, body.records, 'body.records');
}

/** A non-empty array of records of the given kind, found at `path` (for the messages). */
export function checkRecords<T>(kind: RecordKind, records: unknown, path: string): T[] {
  if (!Array.isArray(records)) {
    throw invalidPayload({path, msg: 'is not an array', nested: []});
  }
  if (!records.length) {
    throw invalidPayload(checkRecord(kind, `${path}[0]`, undefined)!);
  }
  for (let i = 0; i < records.length; i++) {
    const f = checkRecord(kind, `${path}[${i}]`, records[i]);
    if (f) {
      throw invalidPayload(f);
    }
  }
  return records as T[];
}

/**
 * Grist applies a PATCH as one bulk action with one set of columns, so records updated together must
 * name the same fields: zipping different sets would write null into the cells a record did not name (issue 23).
 */
export function requireSameFields(records: ReadonlyArray<{fields: Record<string, unknown>}>): void {
  if (records.length < 2) return;
  const keys = (f: Record<string, unknown>) => Object.keys(f).sort().join('\u0000');
  const first = keys(records[0].fields);
  for (let i = 1; i < records.length; i++) {
    if (keys(records[i].fields) !== first) {
      throw new BadRequest('PATCH requires all records to have same fields');
    }
  }
}
