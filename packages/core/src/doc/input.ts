/**
 * Checks of a write's input made before its transaction starts (so that nothing fails after the
 * commit): JSON shape and depth, how many schema actions and columns one request may hold, and
 * column ids named twice.
 */
import {BadRequest} from '../base/index.js';
import {MAX_COLUMNS_ADDED_PER_WRITE} from './storage.js';

/**
 * Deepest nesting accepted anywhere in a write's input, counted from the top of the argument (an
 * /apply body is 4 levels before its cells; Grist cell values nest a few more). Issue 11: a value
 * nested 50,000 deep was written, then failed JSON.stringify after the commit.
 */
export const MAX_INPUT_DEPTH = 64;

/**
 * Checks that a write's input is JSON-shaped (null, booleans, numbers, strings, arrays, plain
 * objects) and nested at most MAX_INPUT_DEPTH levels, before any transaction starts.
 */
export function checkInput(value: unknown, what = 'body'): void {
  // Only containers go on the stack; primitives (nearly every value on bulk paths) are checked in place.
  const stack: object[] = [];
  const depths: number[] = [];
  const visit = (v: unknown, depth: number) => {
    if (v === null || v === undefined) {
      return;
    }
    const t = typeof v;
    if (t === 'string' || t === 'number' || t === 'boolean') {
      return;
    }
    if (t !== 'object') {
      throw new BadRequest(`Invalid payload: ${what} holds a value of type ${t}`);
    }
    if (depth > MAX_INPUT_DEPTH) {
      throw new BadRequest(`Invalid payload: ${what} is nested deeper than ${MAX_INPUT_DEPTH} levels`);
    }
    if (!Array.isArray(v)) {
      const proto = Object.getPrototypeOf(v);
      if (proto !== Object.prototype && proto !== null) {
        throw new BadRequest(`Invalid payload: ${what} holds a non-JSON object`);
      }
    }
    stack.push(v as object);
    depths.push(depth);
  };
  visit(value, 1);
  while (stack.length) {
    const v = stack.pop()!;
    const next = depths.pop()! + 1;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        visit(v[i], next);
      }
    } else {
      for (const k in v) {
        visit((v as Record<string, unknown>)[k], next);
      }
    }
  }
}

/**
 * Schema actions one /apply bundle may hold. Each rereads the document's metadata (a few ms, more
 * in wide documents): 300 RemoveColumn actions took 4.7 s, and 1000 fit easily in a 1 MB body.
 */
export const MAX_SCHEMA_ACTIONS_PER_APPLY = 100;
const SCHEMA_ACTIONS = new Set([
  'AddTable',
  'AddEmptyTable',
  'RemoveTable',
  'RenameTable',
  'AddColumn',
  'AddVisibleColumn',
  'AddHiddenColumn',
  'RemoveColumn',
  'RenameColumn',
  'ModifyColumn',
  'SetDisplayFormula',
]);

/** Counts schema actions (and updates of `_grist_Tables`/`_grist_Tables_column` rows) before the write. */
export function checkSchemaActionCount(actions: unknown[]): void {
  let n = 0;
  for (const a of actions) {
    if (!Array.isArray(a)) {
      continue;
    }
    if (SCHEMA_ACTIONS.has(a[0])) {
      n++;
    } else if (
      (a[0] === 'UpdateRecord' || a[0] === 'BulkUpdateRecord') &&
      (a[1] === '_grist_Tables' || a[1] === '_grist_Tables_column')
    ) {
      n += a[0] === 'BulkUpdateRecord' && Array.isArray(a[2]) ? a[2].length : 1;
    }
  }
  if (n > MAX_SCHEMA_ACTIONS_PER_APPLY) {
    throw new BadRequest(`Too many schema actions in one bundle: at most ${MAX_SCHEMA_ACTIONS_PER_APPLY} (${n} given)`);
  }
}

/** The engine's per-write cap on columns added one by one, checked before the write starts. */
export function checkColumnCount(n: number): void {
  if (n > MAX_COLUMNS_ADDED_PER_WRITE) {
    throw new BadRequest(
      `Too many columns added at once: at most ${MAX_COLUMNS_ADDED_PER_WRITE} per request (AddTable takes more)`,
    );
  }
}

/**
 * PATCH/PUT /columns name each column once: a second entry for the same id has no meaning (and
 * 1000 of them made PUT add 1000 columns, issue 11).
 */
export function refuseDuplicateIds(columns: Array<{id: string}>): void {
  const seen = new Set<string>();
  for (const c of columns) {
    if (seen.has(c.id)) {
      throw new BadRequest(`Invalid payload: column id "${c.id}" appears more than once`);
    }
    seen.add(c.id);
  }
}
