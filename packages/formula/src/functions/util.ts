/** Shared helpers of the function library: argument binding, Python's number rules, iteration. */
import {
  type Kwargs,
  PyCallable,
  PyDict,
  PyException,
  type PyObject,
  PySet,
  PyTuple,
  type Value,
  bindArgs,
  raise,
  typeName,
} from '../values.js';

export type Args = Record<string, Value | Value[]>;

/**
 * Defines a Grist function with a Python signature: `params` in order (`*name` collects the rest),
 * `defaults` for optional ones. The implementation gets the bound arguments by name.
 */
export function def(
  name: string,
  params: string[],
  defaults: Record<string, Value>,
  impl: (a: Args) => Value,
): PyCallable {
  return new PyCallable(name, (args: Value[], kwargs: Kwargs | null) =>
    impl(bindArgs(name, params, args, kwargs, defaults)),
  );
}

export const v = (a: Args, k: string): Value => a[k] as Value;
export const rest = (a: Args, k: string): Value[] => a[k] as Value[];

// ---- numbers ----------------------------------------------------------------------------------

/** Python's `isinstance(x, numbers.Number)`: int, float and bool. */
export const isNumber = (x: Value): x is bigint | number | boolean =>
  typeof x === 'bigint' || typeof x === 'number' || typeof x === 'boolean';

/** A number as int (bigint) or float, bool as int; TypeError otherwise (Python's message). */
export function num(x: Value): bigint | number {
  if (typeof x === 'bigint' || typeof x === 'number') return x;
  if (typeof x === 'boolean') return x ? 1n : 0n;
  return raise('TypeError', `must be real number, not ${typeName(x)}`);
}

export function toF(x: Value): number {
  const n = num(x);
  return typeof n === 'bigint' ? Number(n) : n;
}

/** Python's `int(x)` for numbers: truncation toward zero; errors for inf and nan. */
export function pyInt(x: Value): bigint {
  const n = num(x);
  if (typeof n === 'bigint') return n;
  if (Number.isNaN(n)) raise('ValueError', 'cannot convert float NaN to integer');
  if (!Number.isFinite(n)) raise('OverflowError', 'cannot convert float infinity to integer');
  return BigInt(Math.trunc(n));
}

/** Python's `math.floor`/`math.ceil` of a float, as int. */
export function floorInt(x: number): bigint {
  return pyInt(Math.floor(x));
}
export function ceilInt(x: number): bigint {
  return pyInt(Math.ceil(x));
}

/** An argument Python would use as an index (int or bool; TypeError for floats). */
export function index(x: Value, what = 'integer'): number {
  if (typeof x === 'bigint') return Number(x);
  if (typeof x === 'boolean') return x ? 1 : 0;
  return raise('TypeError', `'${typeName(x)}' object cannot be interpreted as an ${what}`);
}

/** Python's `+`, `-`, `*` on ints and floats (int op int stays int). */
export function add(a: Value, b: Value): bigint | number {
  const x = num(a),
    y = num(b);
  if (typeof x === 'bigint' && typeof y === 'bigint') return x + y;
  return Number(x) + Number(y);
}
export function sub(a: Value, b: Value): bigint | number {
  const x = num(a),
    y = num(b);
  if (typeof x === 'bigint' && typeof y === 'bigint') return x - y;
  return Number(x) - Number(y);
}
export function mul(a: Value, b: Value): bigint | number {
  const x = num(a),
    y = num(b);
  if (typeof x === 'bigint' && typeof y === 'bigint') return x * y;
  return Number(x) * Number(y);
}
/** Python's true division `/` (always float). */
export function div(a: Value, b: Value): number {
  const x = num(a),
    y = num(b);
  if (Number(y) === 0)
    raise(
      'ZeroDivisionError',
      typeof x === 'bigint' && typeof y === 'bigint' ? 'division by zero' : 'float division by zero',
    );
  // int / int beyond 2**53 may differ from Python's correctly rounded quotient in the last bit.
  return Number(x) / Number(y);
}
/** Python's `%`: the result has the sign of the divisor. */
export function pmod(a: Value, b: Value): bigint | number {
  const x = num(a),
    y = num(b);
  if (typeof x === 'bigint' && typeof y === 'bigint') {
    if (y === 0n) raise('ZeroDivisionError', 'integer modulo by zero');
    const r = x % y;
    return r !== 0n && r < 0n !== y < 0n ? r + y : r;
  }
  const fx = Number(x),
    fy = Number(y);
  if (fy === 0) raise('ZeroDivisionError', 'float modulo');
  let r = fx % fy;
  if (r !== 0 && r < 0 !== fy < 0) r += fy;
  if (r === 0) r = fy < 0 ? -0 : 0;
  return r;
}
/** Python's `**` for ints and floats. */
export function pow(a: Value, b: Value): bigint | number {
  const x = num(a),
    y = num(b);
  if (typeof x === 'bigint' && typeof y === 'bigint' && y >= 0n) return x ** y;
  const fx = Number(x),
    fy = Number(y);
  if (fx === 0 && fy < 0) raise('ZeroDivisionError', '0.0 cannot be raised to a negative power');
  const r = fx ** fy;
  if (Number.isNaN(r) && fx < 0) raise('ValueError', 'math domain error');
  if (!Number.isFinite(r) && Number.isFinite(fx) && Number.isFinite(fy))
    raise('OverflowError', 'Numerical result out of range');
  return r;
}

/** Python's `abs`. */
export function pyAbs(x: Value): bigint | number {
  const n = num(x);
  return typeof n === 'bigint' ? (n < 0n ? -n : n) : Math.abs(n);
}

/** Python's `<` between numbers (int vs float exact), for max/min/sorted. */
export function numCompare(a: bigint | number, b: bigint | number): number {
  if (typeof a === 'bigint' && typeof b === 'bigint') return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === 'number' && typeof b === 'number') return a < b ? -1 : a > b ? 1 : 0;
  const fa = Number(a),
    fb = Number(b);
  if (fa !== fb) return fa < fb ? -1 : 1;
  // Equal as floats: compare exactly when the float is integral.
  const f = typeof a === 'number' ? a : (b as number);
  if (!Number.isInteger(f)) return 0;
  const ia = typeof a === 'bigint' ? a : BigInt(a),
    ib = typeof b === 'bigint' ? b : BigInt(b as number);
  return ia < ib ? -1 : ia > ib ? 1 : 0;
}

// ---- iteration ----------------------------------------------------------------------------------

/** The items of an iterable value, or null when Python's `iter()` would fail. */
export function iterItems(x: Value): Value[] | null {
  if (Array.isArray(x)) return x;
  if (typeof x === 'string') return Array.from(x);
  if (x instanceof PyTuple) return x.items as Value[];
  if (x instanceof PyDict) return x.keys();
  if (x instanceof PySet) return x.values();
  if (x !== null && typeof x === 'object') {
    const o = x as PyObject;
    if (o.iter) return [...o.iter()];
  }
  return null;
}

export function iterOrThrow(x: Value): Value[] {
  const items = iterItems(x);
  if (items === null) return raise('TypeError', `'${typeName(x)}' object is not iterable`);
  return items;
}

/** Grist's chaining of arguments: iterables contribute their items, other values themselves. */
export function* chain(values: Value[]): Generator<Value> {
  for (const x of values) {
    const items = iterItems(x);
    if (items === null) yield x;
    else yield* items;
  }
}

/** Numbers only (bools excluded), as Grist's SUM-family skips everything else. */
export function* chainNumeric(values: Value[]): Generator<bigint | number> {
  for (const x of chain(values)) if (typeof x === 'bigint' || typeof x === 'number') yield x;
}

/** Bools as ints, numbers as themselves, anything else as 0 (the *A functions). */
export function* chainNumericA(values: Value[]): Generator<bigint | number> {
  for (const x of chain(values)) {
    if (typeof x === 'boolean') yield x ? 1n : 0n;
    else if (typeof x === 'bigint' || typeof x === 'number') yield x;
    else yield 0n;
  }
}

// ---- laziness and errors ------------------------------------------------------------------------

export const isCallable = (x: Value): x is PyObject =>
  x !== null && typeof x === 'object' && !Array.isArray(x) && typeof (x as PyObject).call === 'function';

/** Grist's lazy arguments: a callable is called, anything else returned as is. */
export function lazy(x: Value): Value {
  return isCallable(x) ? (x as PyObject).call!([], null) : x;
}

const ERROR = Symbol('error');
/** Evaluates a lazy value, or returns ERROR when it raises a Python exception (not budget errors). */
export function lazyOrError(x: Value): Value | typeof ERROR {
  try {
    return lazy(x);
  } catch (e) {
    if (e instanceof PyException && !BUDGET_ERRORS.has(e.type)) return ERROR;
    throw e;
  }
}
export {ERROR};
const BUDGET_ERRORS = new Set(['TimeoutError', 'MemoryError']);

/** Grist's AltText: a value of the wrong type in a typed column (the interpreter's invalid value). */
export const isAltText = (x: Value): boolean =>
  x !== null && typeof x === 'object' && !Array.isArray(x) && (x as PyObject).pyType === 'AltText';

// ---- strings ------------------------------------------------------------------------------------

/** Strings as code points (Python indexes code points, JS strings UTF-16 units). */
export function cps(s: string): string[] | null {
  return /[\ud800-\udfff]/.test(s) ? Array.from(s) : null;
}

/** Python's `s[a:b]` with Python's slice rules (negative and out-of-range bounds). */
export function slice(s: string, start: number | null, end: number | null): string {
  const arr = cps(s);
  const n = arr ? arr.length : s.length;
  const norm = (x: number | null, dflt: number) => {
    if (x === null) return dflt;
    if (x < 0) return Math.max(0, x + n);
    return Math.min(x, n);
  };
  const a = norm(start, 0),
    b = norm(end, n);
  if (b <= a) return '';
  return arr ? arr.slice(a, b).join('') : s.slice(a, b);
}

export function strLen(s: string): number {
  const arr = cps(s);
  return arr ? arr.length : s.length;
}

/** Python's `s.find(sub, start)`; -1 when absent. Code-point positions. */
export function strFind(s: string, subStr: string, start: number): number {
  const arr = cps(s);
  const n = arr ? arr.length : s.length;
  if (start < 0) start = Math.max(0, start + n);
  if (start > n) return -1;
  if (!arr && !cps(subStr)) return s.indexOf(subStr, start);
  const prefix = arr ? arr.slice(0, start).join('') : s.slice(0, start);
  const i = s.indexOf(subStr, prefix.length);
  return i < 0 ? -1 : Array.from(s.slice(0, i)).length;
}

export function strArg(x: Value, fname: string): string {
  if (typeof x !== 'string') raise('TypeError', `${fname}() argument must be str, not ${typeName(x)}`);
  return x as string;
}
