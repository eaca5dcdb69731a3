/**
 * How Python values are represented in gristlite's formula engine: the contract shared by the
 * interpreter (parser, compiler, records, dependency tracking) and the function library.
 *
 *   None -> null            bool  -> boolean          int -> bigint       float -> number
 *   str  -> string          list  -> PyList (Array)    tuple -> PyTuple    dict -> PyDict
 *   set  -> PySet           callable -> PyCallable     exception -> thrown PyException
 *   date/datetime/time/timedelta -> classes in ./datetime.ts
 *   Record / RecordSet -> classes of the interpreter (they implement PyObject)
 *
 * int is a bigint because Python ints are exact and unbounded, and because better-sqlite3 binds a
 * bigint as INTEGER and a number as REAL: a formula's int result is stored as Grist stores it
 * (storage class included) with no guessing. bool is kept apart from int although Python's bool is a
 * subclass of int: arithmetic on booleans goes through `toNumeric`.
 */

import {floatRepr} from './pyvalues/numbers.js';
import {strRepr} from './pyvalues/strings.js';

/** Python's text of floats and strs, from the value layer the document side uses too. */
export {floatRepr, strRepr};

/** A Python value: None, bool, int (bigint), float (number), str, list (array), tuple, dict, set, or an object (dates, records, modules, functions). */
export type Value = null | boolean | bigint | number | string | PyList | PyTuple | PyDict | PySet | PyObject;

/** Anything else a formula can hold: records, dates, modules, functions. */
export interface PyObject {
  /** Python's type name, as `type(x).__name__` gives it (used in error messages and `isinstance`). */
  readonly pyType: string;
  /** Attribute access `x.name`; throw `attributeError(this, name)` when absent. */
  getattr?(name: string): Value;
  /** Call `x(...)`. */
  call?(args: Value[], kwargs: Kwargs | null): Value;
  /** Python's `repr(x)`; `str(x)` uses `str` when given, else `repr`. */
  repr?(): string;
  str?(): string;
  /** Python equality and ordering with another value of the same kind. */
  eq?(other: Value): boolean;
  compare?(other: Value): number;
  /** Hash key for dict/set membership (values that compare equal must give equal keys). */
  hashKey?(): string;
  /** Truthiness (default true). */
  truthy?(): boolean;
  /** Iteration (`for x in obj`, `list(obj)`, `len(obj)`). */
  iter?(): Iterable<Value>;
  len?(): number;
  /** `x[key]`. */
  getitem?(key: Value): Value;
  /**
   * Arithmetic with another value: `op` is the Python operator ('+', '-', '*', '/', '//', '%', '**');
   * `reflected` is true for `other op this`. Return NOT_IMPLEMENTED when the pair is not supported
   * (the interpreter then tries the other operand, then raises TypeError, as Python does).
   */
  binop?(op: string, other: Value, reflected: boolean): Value | typeof NOT_IMPLEMENTED;
}

/** Python's `NotImplemented`, returned by `binop` for unsupported operand pairs. */
export const NOT_IMPLEMENTED: unique symbol = Symbol('NotImplemented');

/** Keyword arguments of a call, by name. */
export type Kwargs = Record<string, Value>;

/** A Python list: a JS array, tagged so that lists and tuples stay apart. */
export type PyList = Value[];

export class PyTuple {
  readonly pyType = 'tuple';
  constructor(readonly items: readonly Value[]) {}
}

/** A Python dict; keys are indexed by `hashKey`, insertion order kept as Python 3.7+ does. */
export class PyDict {
  readonly pyType = 'dict';
  readonly map = new Map<string, [Value, Value]>();
  get(key: Value): Value | undefined {
    return this.map.get(hashKey(key))?.[1];
  }
  set(key: Value, value: Value): void {
    this.map.set(hashKey(key), [key, value]);
  }
  has(key: Value): boolean {
    return this.map.has(hashKey(key));
  }
  delete(key: Value): boolean {
    return this.map.delete(hashKey(key));
  }
  get size(): number {
    return this.map.size;
  }
  keys(): Value[] {
    return [...this.map.values()].map((e) => e[0]);
  }
  values(): Value[] {
    return [...this.map.values()].map((e) => e[1]);
  }
  entries(): Array<[Value, Value]> {
    return [...this.map.values()];
  }
}

export class PySet {
  readonly pyType: 'set' | 'frozenset';
  readonly map = new Map<string, Value>();
  constructor(items: Iterable<Value> = [], frozen = false) {
    this.pyType = frozen ? 'frozenset' : 'set';
    for (const v of items) this.map.set(hashKey(v), v);
  }
  has(v: Value): boolean {
    return this.map.has(hashKey(v));
  }
  add(v: Value): void {
    this.map.set(hashKey(v), v);
  }
  get size(): number {
    return this.map.size;
  }
  values(): Value[] {
    return [...this.map.values()];
  }
}

/** A Python exception, thrown as a JS exception. `type` is the Python class name. */
export class PyException extends Error {
  constructor(
    readonly type: string,
    message = '',
    readonly details?: string,
  ) {
    super(message);
  }
}

/** Throw a Python exception of the given type. */
export function raise(type: string, message = ''): never {
  throw new PyException(type, message);
}

// ---- type tests -----------------------------------------------------------------------------

export const isInt = (v: unknown): v is bigint => typeof v === 'bigint';
export const isFloat = (v: unknown): v is number => typeof v === 'number';
/** int, float or bool: what Python's arithmetic accepts. */
export const isNumeric = (v: unknown): v is bigint | number | boolean =>
  typeof v === 'bigint' || typeof v === 'number' || typeof v === 'boolean';
export const isList = (v: unknown): v is PyList => Array.isArray(v);

/** Python's `type(v).__name__`. */
export function typeName(v: Value): string {
  if (v === null) return 'NoneType';
  switch (typeof v) {
    case 'boolean':
      return 'bool';
    case 'bigint':
      return 'int';
    case 'number':
      return 'float';
    case 'string':
      return 'str';
  }
  if (Array.isArray(v)) return 'list';
  return (v as PyObject).pyType;
}

// ---- numbers --------------------------------------------------------------------------------

/** A numeric value as a JS number (for float arithmetic); raises TypeError otherwise. */
export function toFloat(v: Value): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'boolean') return v ? 1 : 0;
  return raise('TypeError', `must be real number, not ${typeName(v)}`);
}

/** bool -> int, leaves int/float alone; raises TypeError for non-numbers. */
export function toNumeric(v: Value): bigint | number {
  if (typeof v === 'bigint' || typeof v === 'number') return v;
  if (typeof v === 'boolean') return v ? 1n : 0n;
  return raise('TypeError', `unsupported operand type: '${typeName(v)}'`);
}

/** A JS integer as a Python int. */
export const int = (n: number): bigint => BigInt(Math.trunc(n));

// ---- truthiness, equality, hashing, str/repr ------------------------------------------------

export function truthy(v: Value): boolean {
  if (v === null) return false;
  switch (typeof v) {
    case 'boolean':
      return v;
    case 'bigint':
      return v !== 0n;
    case 'number':
      return v !== 0; // NaN is truthy in Python
    case 'string':
      return v.length > 0;
  }
  if (Array.isArray(v)) return v.length > 0;
  if (v instanceof PyTuple) return v.items.length > 0;
  if (v instanceof PyDict || v instanceof PySet) return v.size > 0;
  const o = v as PyObject;
  if (o.truthy) return o.truthy();
  if (o.len) return o.len() > 0;
  return true;
}

/** Python's `==`. */
export function pyEquals(a: Value, b: Value): boolean {
  if (a === b) return true;
  if (isNumeric(a) && isNumeric(b)) {
    const x = toNumeric(a),
      y = toNumeric(b);
    // int == float compares exactly (Python does not round the int).
    if (typeof x === 'bigint' && typeof y === 'bigint') return x === y;
    if (typeof x === 'number' && typeof y === 'number') return x === y;
    const f = typeof x === 'number' ? x : (y as number);
    const i = typeof x === 'bigint' ? x : (y as bigint);
    return Number.isInteger(f) && BigInt(f) === i;
  }
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a)) return Array.isArray(b) && seqEquals(a, b);
  if (a instanceof PyTuple) return b instanceof PyTuple && seqEquals(a.items, b.items);
  if (a instanceof PyDict) {
    if (!(b instanceof PyDict) || a.size !== b.size) return false;
    for (const [k, v] of a.map) {
      const o = b.map.get(k);
      if (!o || !pyEquals(v[1], o[1])) return false;
    }
    return true;
  }
  if (a instanceof PySet) {
    if (!(b instanceof PySet) || a.size !== b.size) return false;
    for (const k of a.map.keys()) if (!b.map.has(k)) return false;
    return true;
  }
  const o = a as PyObject;
  return o.eq ? o.eq(b) : false;
}

function seqEquals(a: readonly Value[], b: readonly Value[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (!pyEquals(a[i], b[i])) return false;
  return true;
}

/** A string key such that pyEquals(a, b) implies hashKey(a) === hashKey(b). Lists are unhashable. */
export function hashKey(v: Value): string {
  if (v === null) return 'N';
  switch (typeof v) {
    case 'boolean':
      return v ? 'n1' : 'n0';
    case 'bigint':
      return `n${v}`;
    case 'number':
      return Number.isInteger(v) ? `n${BigInt(v)}` : `f${v}`;
    case 'string':
      return `s${v}`;
  }
  if (v instanceof PyTuple) return `t(${v.items.map(hashKey).join(',')})`;
  const o = v as PyObject;
  if (!Array.isArray(v) && o.hashKey) return o.hashKey();
  return raise('TypeError', `unhashable type: '${typeName(v)}'`);
}

/** Python's `repr(v)`. */
/**
 * Longest text repr() builds of a container: the default size budget (budget.ts maxSize). A list
 * holding one list 10^4 times is small, its text is not; items are counted as they are written.
 */
export const MAX_REPR_CHARS = 10_000_000;

function reprJoin<T>(items: Iterable<T>, each: (x: T) => string): string {
  const parts: string[] = [];
  let n = 0;
  for (const x of items) {
    const part = each(x);
    n += part.length + 2;
    if (n > MAX_REPR_CHARS) throw reprTooLarge();
    parts.push(part);
  }
  return parts.join(', ');
}

/**
 * At least how long repr(v) is, counted without building it (1 character and a separator an item,
 * strings their length): MemoryError past MAX_REPR_CHARS, before a shared part is written out
 * again and again. RecursionError past 1000 levels.
 */
function checkReprSize(v: Value): void {
  let n = 0;
  const visit = (x: Value, depth: number): void => {
    if (depth > 1000)
      throw new PyException('RecursionError', 'maximum recursion depth exceeded while getting the repr of an object');
    const items = Array.isArray(x)
      ? x
      : x instanceof PyTuple
        ? x.items
        : x instanceof PyDict
          ? x.entries().flat()
          : x instanceof PySet
            ? x.values()
            : null;
    if (items === null) return;
    n += 2 + 3 * items.length;
    if (n > MAX_REPR_CHARS) throw reprTooLarge();
    for (const item of items) {
      if (typeof item === 'string') n += item.length;
      else if (item !== null && typeof item === 'object') visit(item, depth + 1);
    }
    if (n > MAX_REPR_CHARS) throw reprTooLarge();
  };
  visit(v, 0);
}

function reprTooLarge(): PyException {
  return new PyException('MemoryError', `result too large (more than ${MAX_REPR_CHARS} characters)`);
}

/** Python's `repr()` of a value. */
export function repr(v: Value): string {
  if (
    v !== null &&
    typeof v === 'object' &&
    (Array.isArray(v) || v instanceof PyTuple || v instanceof PyDict || v instanceof PySet)
  ) {
    checkReprSize(v);
  }
  return reprChecked(v);
}

function reprChecked(v: Value): string {
  if (v === null) return 'None';
  switch (typeof v) {
    case 'boolean':
      return v ? 'True' : 'False';
    case 'bigint':
      return String(v);
    case 'number':
      return floatRepr(v);
    case 'string':
      return strRepr(v);
  }
  if (Array.isArray(v)) return `[${reprJoin(v, reprChecked)}]`;
  if (v instanceof PyTuple) {
    return v.items.length === 1 ? `(${reprChecked(v.items[0])},)` : `(${reprJoin(v.items, reprChecked)})`;
  }
  if (v instanceof PyDict) return `{${reprJoin(v.entries(), ([k, x]) => `${reprChecked(k)}: ${reprChecked(x)}`)}}`;
  if (v instanceof PySet) {
    const inner = reprJoin(v.values(), reprChecked);
    if (v.pyType === 'frozenset') return v.size ? `frozenset({${inner}})` : 'frozenset()';
    return v.size ? `{${inner}}` : 'set()';
  }
  const o = v as PyObject;
  return o.repr ? o.repr() : `<${o.pyType} object>`;
}

/** Python's `str(v)`. */
export function str(v: Value): string {
  if (typeof v === 'string') return v;
  if (v !== null && typeof v === 'object' && !Array.isArray(v) && (v as PyObject).str) return (v as PyObject).str!();
  return repr(v);
}

/** `AttributeError` as Python words it. */
export function attributeError(obj: Value, name: string): never {
  return raise('AttributeError', `'${typeName(obj)}' object has no attribute '${name}'`);
}

// ---- callables ------------------------------------------------------------------------------

export type NativeImpl = (args: Value[], kwargs: Kwargs | null) => Value;

/** A function implemented in TypeScript (a builtin, a module function or a Grist function). */
export class PyCallable implements PyObject {
  readonly pyType = 'builtin_function_or_method';
  constructor(
    readonly name: string,
    readonly impl: NativeImpl,
  ) {}
  call(args: Value[], kwargs: Kwargs | null): Value {
    return this.impl(args, kwargs);
  }
  repr(): string {
    return `<built-in function ${this.name}>`;
  }
}

/**
 * Binds positional and keyword arguments to named parameters, as a Python signature would:
 * `params` lists parameter names in order; a name starting with `*` collects the remaining
 * positional arguments (as an array); `defaults` gives values for optional parameters.
 * Raises TypeError on unknown keywords, duplicates and missing arguments.
 */
export function bindArgs(
  fname: string,
  params: readonly string[],
  args: Value[],
  kwargs: Kwargs | null,
  defaults: Record<string, Value> = {},
): Record<string, Value | Value[]> {
  const out: Record<string, Value | Value[]> = {};
  let i = 0;
  for (const p of params) {
    if (p.startsWith('*')) {
      out[p.slice(1)] = args.slice(i);
      i = args.length;
      continue;
    }
    if (i < args.length) out[p] = args[i++];
  }
  if (i < args.length) {
    raise('TypeError', `${fname}() takes ${params.length} positional arguments but ${args.length} were given`);
  }
  for (const [k, v] of Object.entries(kwargs ?? {})) {
    if (!params.includes(k)) raise('TypeError', `${fname}() got an unexpected keyword argument '${k}'`);
    if (Object.hasOwn(out, k)) raise('TypeError', `${fname}() got multiple values for argument '${k}'`);
    out[k] = v;
  }
  for (const p of params) {
    if (p.startsWith('*') || Object.hasOwn(out, p)) continue;
    if (Object.hasOwn(defaults, p)) out[p] = defaults[p];
    else raise('TypeError', `${fname}() missing required positional argument: '${p}'`);
  }
  return out;
}
