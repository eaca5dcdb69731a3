/**
 * Body checks at the edge, with Grist's error wording. Grist checks bodies with
 * ts-interface-checker; its message names the path, then each named type that failed on the way
 * down, joined with "; " while one thing failed at a level and indented lines when several did:
 * `{"error": "Invalid payload", "details": {"userError": "Error: body.tables[0] is not a TablePost;
 * body.tables[0].columns is missing"}}`. Schemas are valibot's; `TypeNames` say which paths hold a
 * named Grist type (`tables[]` -> TablePost), since valibot has no names.
 */
import * as v from 'valibot';
import {
  cellValueFailure,
  type Failure,
  type CellValue as GristCellValue,
  invalidPayload,
  isCellValue,
  renderFailure,
} from '@gristlite/core/internal';

// The record checks live in core (shared with Session); re-exported for the other routes.
export {cellValueFailure, invalidPayload, isCellValue, renderFailure as render, type Failure};

const CELL_VALUE = 'gristlite:CellValue';
const EMPTY = 'gristlite:empty';

/** A CellValue, reported as Grist reports a bad one. */
export const CellValue = v.custom<GristCellValue>(isCellValue, CELL_VALUE);

/** A non-empty array (Grist's `[T, ...T[]]` tuples: an empty one fails at `[0]`, "is not an object"). */
export function nonEmptyArray<S extends v.GenericSchema>(item: S, message = 'is not an array') {
  return v.pipe(
    v.array(item, message),
    v.check((a) => a.length > 0, EMPTY),
  );
}

/** Which paths hold a named type: `[pattern, name]`, the pattern as `tables[].columns[]`, `*` any key. */
export type TypeNames = ReadonlyArray<readonly [string, string]>;

type Key = string | number;

function keysOf(issue: v.BaseIssue<unknown>): Key[] {
  return (issue.path ?? []).map((item) => (item as {key: Key}).key);
}

function fmt(prefix: string, keys: Key[]): string {
  return prefix + keys.map((k) => (typeof k === 'number' ? `[${k}]` : `.${String(k)}`)).join('');
}

function shape(keys: Key[]): string {
  return keys.map((k, i) => (typeof k === 'number' ? '[]' : `${i ? '.' : ''}${String(k)}`)).join('');
}

function matcher(names: TypeNames): (keys: Key[]) => string | undefined {
  const compiled = names.map(([pattern, name]) => {
    const re = pattern.replace(/[.[\]]/g, (c) => `\\${c}`).replace(/\*/g, '[^.\\[]+');
    return [new RegExp(`^${re}$`), name] as const;
  });
  return (keys) => {
    const s = shape(keys);
    return compiled.find(([re]) => re.test(s))?.[1];
  };
}

function leafMessage(issue: v.BaseIssue<unknown>): string {
  if (issue.input === undefined && issue.kind === 'schema') return 'is missing';
  if (issue.message && !issue.message.startsWith('Invalid ')) return issue.message;
  // valibot says "Array"/"Object"; Grist's checker says "array"/"object".
  const expected = String(issue.expected ?? issue.type).replace(/^(Array|Object)$/, (m) => m.toLowerCase());
  return `is not ${/^[aeiou]/i.test(expected) ? 'an' : 'a'} ${expected}`;
}

/**
 * The issues Grist's checker would report: it stops an array at its first bad item (objects go on,
 * reporting several properties), so issues under a later item of an array are dropped.
 */
function firstItemOnly(issues: readonly v.BaseIssue<unknown>[]): v.BaseIssue<unknown>[] {
  const first = new Map<string, number>();
  return issues.filter((issue) => {
    const keys = keysOf(issue);
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i];
      if (typeof k !== 'number') continue;
      const at = fmt('', keys.slice(0, i));
      const seen = first.get(at);
      if (seen === undefined) first.set(at, k);
      else if (seen !== k) return false;
    }
    return true;
  });
}

/** Grist's failure tree of valibot's issues. */
function failures(issues: readonly v.BaseIssue<unknown>[], prefix: string, names: TypeNames): Failure[] {
  const nameAt = matcher(names);
  const roots: Failure[] = [];
  const child = (list: Failure[], path: string, msg: string): Failure => {
    let f = list.find((x) => x.path === path && x.msg === msg);
    if (!f) list.push((f = {path, msg, nested: []}));
    return f;
  };
  for (const issue of firstItemOnly(issues)) {
    let keys = keysOf(issue);
    let leaf: Failure;
    if (issue.message === EMPTY) {
      keys = [...keys, 0];
      leaf = {path: fmt(prefix, keys), msg: 'is not an object', nested: []};
    } else if (issue.message === CELL_VALUE) {
      leaf = cellValueFailure(fmt(prefix, keys), issue.input)!;
    } else {
      leaf = {path: fmt(prefix, keys), msg: leafMessage(issue), nested: []};
    }
    let level = roots;
    for (let i = 1; i <= keys.length; i++) {
      const name = nameAt(keys.slice(0, i));
      // A CellValue leaf names its own type.
      if (!name || (i === keys.length && issue.message === CELL_VALUE)) continue;
      level = child(level, fmt(prefix, keys.slice(0, i)), `is not a ${name}`).nested;
    }
    if (!level.some((x) => x.path === leaf.path && x.msg === leaf.msg)) level.push(leaf);
  }
  return roots;
}

/** Parses `input` with `schema` or throws 400 Invalid payload in Grist's words. */
export function validate<S extends v.GenericSchema>(
  schema: S,
  input: unknown,
  prefix = 'body',
  names: TypeNames = [],
): v.InferOutput<S> {
  const r = v.safeParse(schema, input);
  if (r.success) return r.output;
  throw invalidPayload(failures(r.issues, prefix, names));
}
