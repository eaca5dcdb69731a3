/**
 * Compiling a parsed predicate formula (the JSON of `aclFormulaParsed`) into a function of a
 * user and the rows a rule looks at, with Grist's semantics:
 *
 * - names: `rec`, `newRec`, `user`, and the constants `EDITOR`, `OWNER`, `VIEWER` (the strings
 *   `"editors"`, `"owners"`, `"viewers"`); any other name is refused when compiling;
 * - `==`/`is` are JavaScript's `===`, `!=`/`is not` `!==`, `<` and friends and the arithmetic
 *   are JavaScript's (so `None < 5` is true and `True == 1` false); `and`/`or` give booleans;
 * - `a in b`: membership when b is a list, a substring test when both are strings, else false;
 * - `x.attr`: on a row (`rec`, `newRec`, a user attribute's row) the cell, decoded (a Grist
 *   list `["L", ...]` becomes an array, a date a Date, a reference an object); on a plain object
 *   its own property only (never one inherited: `user.constructor` is undefined); on a string
 *   only the methods `.lower()` and `.upper()`; on anything else undefined. On a missing `rec` or
 *   `newRec` it throws NeedRowData (the rule needs row data); on another missing value
 *   "No value for 'user.Office'".
 *
 * Errors: compiling throws PredicateFormulaError (a BadRequest); evaluating throws
 * PredicateEvalError (NeedRowData is one), whatever the input.
 */
import {PredicateFormulaError} from './errors.js';

/** A row a formula reads: `get(colId)` gives the cell as Grist encodes it (undefined if absent). */
export interface RowView {
  /** The cell of a column, as Grist encodes it (undefined for an unknown column). */
  get(colId: string): unknown;
}

/**
 * What a predicate is evaluated on.
 *
 * - `user`: the user's properties (Access, UserID, Email, Name, LinkKey, user attributes, ...),
 *   best as an object with a null prototype; only its own properties are ever read. Give every
 *   property Grist's user always has, null when unknown: `user.Email is None` is `=== null`, so
 *   an absent (undefined) property is not None. A user attribute is a RowView whose `get` gives
 *   the matched row's cells (Grist gives one whose cells are all null when no row matched).
 * - `rec`: the row as it is (for a read, or before a change); absent or null when the check is
 *   about the table as a whole, in which case `rec.X` throws NeedRowData.
 * - `newRec`: the row as a change would leave it.
 */
export interface PredicateInput {
  user: Record<string, unknown>;
  rec?: RowView | null;
  newRec?: RowView | null;
}

/** A compiled predicate: true when the rule's condition holds. */
export type CompiledPredicate = (input: PredicateInput) => boolean;

/** The code of the error thrown when a formula reads `rec` or `newRec` and none was given. */
export const NEED_ROW_DATA = 'NEED_ROW_DATA';

/** An error while evaluating a compiled predicate (a rule that errors loses its allow bits). */
export class PredicateEvalError extends Error {
  constructor(
    message: string,
    readonly code?: string,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** The formula reads a row (`rec` or `newRec`) that the caller did not give. */
export class NeedRowData extends PredicateEvalError {
  constructor(readonly which: string) {
    super(`Missing row data '${which}'`, NEED_ROW_DATA);
  }
}

const NEED_REC = new NeedRowData('rec');
const NEED_NEW_REC = new NeedRowData('newRec');

/**
 * One error per variable, made once: rules without a row throw it for every rule that reads one,
 * and building an Error (its stack) is what that would cost (measured: most of a row-rule write).
 */
function needRowData(which: string): NeedRowData {
  return which === 'rec' ? NEED_REC : NEED_NEW_REC;
}

/** Whether an error says the rule needs row data. */
export function isNeedRowData(e: unknown): e is NeedRowData {
  return e instanceof PredicateEvalError && e.code === NEED_ROW_DATA;
}

const CONSTANTS: Record<string, string> = {EDITOR: 'editors', OWNER: 'owners', VIEWER: 'viewers'};
const VARIABLES = new Set(['rec', 'newRec', 'user']);

type Node = unknown[];
type Fn = (input: PredicateInput) => unknown;

/** A method the formula may call (only these are callable). */
class Method {
  constructor(readonly call: (...args: unknown[]) => unknown) {}
}

/**
 * Compiles the parsed form of a formula (`JSON.parse(aclFormulaParsed)`). Throws a
 * PredicateFormulaError for an unknown variable ("Unknown variable 'len'") or a malformed tree.
 */
export function compilePredicate(parsed: unknown): CompiledPredicate {
  let fn: Fn;
  try {
    fn = compileNode(parsed);
  } catch (e) {
    if (e instanceof PredicateFormulaError) throw e;
    // Only a tree nested beyond the stack gets here.
    throw new PredicateFormulaError('', 'Formula too deeply nested');
  }
  return (input) => {
    try {
      return Boolean(fn(input));
    } catch (e) {
      if (e instanceof PredicateEvalError) throw e;
      // JavaScript's own errors (an object that has no primitive value in `+`, a deep stack).
      throw new PredicateEvalError(e instanceof Error ? e.message : String(e));
    }
  };
}

function asNode(node: unknown): Node {
  if (!Array.isArray(node) || typeof node[0] !== 'string') {
    throw new PredicateFormulaError('', `Unknown node type '${Array.isArray(node) ? String(node[0]) : String(node)}'`);
  }
  return node;
}

function compileNode(raw: unknown): Fn {
  const node = asNode(raw);
  const args = node.slice(1);
  const binary = (f: (a: any, b: any) => unknown): Fn => {
    const [a, b] = [compileNode(args[0]), compileNode(args[1])];
    return (input) => f(a(input), b(input));
  };
  switch (node[0]) {
    case 'And': {
      const parts = args.map(compileNode);
      return (input) => parts.every((p) => p(input));
    }
    case 'Or': {
      const parts = args.map(compileNode);
      return (input) => parts.some((p) => p(input));
    }
    case 'Add':
      return binary((a, b) => a + b);
    case 'Sub':
      return binary((a, b) => a - b);
    case 'Mult':
      return binary((a, b) => a * b);
    case 'Div':
      return binary((a, b) => a / b);
    case 'Mod':
      return binary((a, b) => a % b);
    case 'Not': {
      const a = compileNode(args[0]);
      return (input) => !a(input);
    }
    case 'Eq':
    case 'Is':
      return binary((a, b) => a === b);
    case 'NotEq':
    case 'IsNot':
      return binary((a, b) => a !== b);
    case 'Lt':
      return binary((a, b) => a < b);
    case 'LtE':
      return binary((a, b) => a <= b);
    case 'Gt':
      return binary((a, b) => a > b);
    case 'GtE':
      return binary((a, b) => a >= b);
    case 'In':
      return binary((a, b) => includes(b, a));
    case 'NotIn':
      return binary((a, b) => !includes(b, a));
    case 'List': {
      const parts = args.map(compileNode);
      return (input) => parts.map((p) => p(input));
    }
    case 'Const': {
      const value = args[0];
      return () => value;
    }
    case 'Name': {
      const name = args[0];
      if (typeof name === 'string' && Object.hasOwn(CONSTANTS, name)) {
        const value = CONSTANTS[name];
        return () => value;
      }
      if (typeof name !== 'string' || !VARIABLES.has(name)) {
        throw new PredicateFormulaError('', `Unknown variable '${String(name)}'`);
      }
      return (input) => input[name as keyof PredicateInput];
    }
    case 'Attr': {
      const valueNode = asNode(args[0]);
      const value = compileNode(valueNode);
      const attr = String(args[1]);
      return (input) => getAttr(value(input), attr, valueNode);
    }
    case 'Call': {
      const funcNode = asNode(args[0]);
      const parts = args.map(compileNode);
      return (input) => {
        const values = parts.map((p) => p(input));
        const func = values[0];
        if (!(func instanceof Method)) throw new PredicateEvalError(`Not a function: '${describe(funcNode)}'`);
        return func.call(...values.slice(1));
      };
    }
    case 'keywords': {
      // f(a, b=2) is [Call, f, a, [keywords, [b, 2]]]: the keywords arrive as one object.
      const pairs = args.filter(
        (p): p is [string, unknown] => Array.isArray(p) && p.length === 2 && typeof p[0] === 'string',
      );
      const keys = pairs.map((p) => p[0]);
      const values = pairs.map((p) => compileNode(p[1]));
      return (input) => Object.fromEntries(keys.map((k, i) => [k, values[i](input)]));
    }
    case 'Comment':
      return compileNode(args[0]);
  }
  throw new PredicateFormulaError('', `Unknown node type '${node[0]}'`);
}

function includes(haystack: unknown, needle: unknown): boolean {
  if (Array.isArray(haystack)) return haystack.includes(needle);
  // Substrings too, as in Grist (so `user.Email in "alice@x.com"` also matches "ice@x.com").
  if (typeof haystack === 'string' && typeof needle === 'string') return haystack.includes(needle);
  return false;
}

/** `user.Office.City` for a node, as Grist names it in errors. */
function describe(node: Node): string {
  if (node[0] === 'Name') return String(node[1]);
  if (node[0] === 'Attr' && Array.isArray(node[1])) return `${describe(node[1])}.${String(node[2])}`;
  return 'value';
}

function getAttr(value: unknown, attr: string, valueNode: Node): unknown {
  if (value === null || value === undefined) {
    if (valueNode[0] === 'Name' && (valueNode[1] === 'rec' || valueNode[1] === 'newRec')) {
      throw needRowData(valueNode[1]);
    }
    throw new PredicateEvalError(`No value for '${describe(valueNode)}'`);
  }
  if (typeof value === 'string') {
    if (attr === 'lower') return new Method(() => value.toLowerCase());
    if (attr === 'upper') return new Method(() => value.toUpperCase());
    return undefined;
  }
  if (typeof value !== 'object' || Array.isArray(value)) return undefined;
  const get = (value as {get?: unknown}).get;
  if (typeof get === 'function' && !(value instanceof Method)) {
    return decodeCell(get.call(value, attr));
  }
  return Object.hasOwn(value, attr) ? (value as Record<string, unknown>)[attr] : undefined;
}

/** A Grist date (`["d", seconds]`). */
export class GristDate extends Date {
  override toString(): string {
    return this.toISOString().slice(0, 10);
  }
}
/** A Grist date and time (`["D", seconds, timezone]`). */
export class GristDateTime extends Date {
  constructor(
    ms: number,
    readonly timezone: string,
  ) {
    super(ms);
  }
  override toString(): string {
    return this.toISOString();
  }
}
/** A reference (`["R", tableId, rowId]`). */
export class Reference {
  constructor(
    readonly tableId: string,
    readonly rowId: unknown,
  ) {}
  toString(): string {
    return `${this.tableId}[${String(this.rowId)}]`;
  }
}
/** A reference list (`["r", tableId, rowIds]`). */
export class ReferenceList {
  constructor(
    readonly tableId: string,
    readonly rowIds: unknown,
  ) {}
  toString(): string {
    return `${this.tableId}[[${String(this.rowIds)}]]`;
  }
}
/** A formula error in a cell (`["E", name, message, ...]`). */
export class RaisedException {
  constructor(
    readonly name: unknown,
    readonly message?: unknown,
    readonly details?: unknown,
  ) {}
  toString(): string {
    return `#${String(this.name)}`;
  }
}
/** Any other encoded value (pending, censored, unknown type codes...). */
export class OtherValue {
  constructor(
    readonly code: string,
    readonly value?: unknown,
  ) {}
  toString(): string {
    return this.code === 'U' ? String(this.value) : this.code === 'C' ? 'CENSORED' : `${this.code}`;
  }
}

/** A cell as Grist encodes it, decoded the way Grist's rule evaluation sees it. */
export function decodeCell(value: unknown): unknown {
  if (!Array.isArray(value)) return value;
  const code = value[0];
  const args = value.slice(1);
  switch (code) {
    case 'L':
      return args.map(decodeCell);
    case 'O': {
      const obj = args[0];
      const out: Record<string, unknown> = Object.create(null);
      if (obj && typeof obj === 'object') {
        for (const k of Object.keys(obj).sort()) out[k] = decodeCell((obj as Record<string, unknown>)[k]);
      }
      return out;
    }
    case 'd':
      return new GristDate(Number(args[0]) * 1000);
    case 'D':
      return new GristDateTime(Number(args[0]) * 1000, String(args[1]));
    case 'R':
      return new Reference(String(args[0]), args[1]);
    case 'r':
      return new ReferenceList(String(args[0]), args[1]);
    case 'E':
      if (args.length) return new RaisedException(args[0], args[1], args[2]);
      break;
    case 'P':
    case 'S':
    case 'C':
      return new OtherValue(code);
    case 'U':
      return new OtherValue('U', args[0]);
  }
  return new OtherValue('U', `${String(code)}(${safeJson(args).slice(1, -1)})`);
}

function safeJson(v: unknown): string {
  try {
    return JSON.stringify(v) ?? '[]';
  } catch {
    return '[]';
  }
}
