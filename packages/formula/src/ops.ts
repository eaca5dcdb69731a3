/**
 * Python operators and protocols over the value representation of values.ts: arithmetic with
 * Python's int/float rules, comparisons (TypeError where Python 3 raises it), containment,
 * iteration, len, subscripts and slices, and the exception and type objects.
 *
 * One thing: Python's data model over one value representation: the operators dispatch on the
 * same type tests, and their coercion rules (int/float/bool, sequences) must agree with each other.
 */
import {
  type Kwargs,
  NOT_IMPLEMENTED,
  PyCallable,
  PyDict,
  PyException,
  type PyObject,
  PySet,
  PyTuple,
  type Value,
  attributeError,
  floatRepr,
  hashKey,
  pyEquals,
  raise,
  repr,
  str,
  toNumeric,
  truthy,
  typeName,
} from './values.js';
import {currentBudget, INDEX_OVERFLOW, SSIZE_OVERFLOW, SSIZE_T_MAX, sizeArg} from './budget.js';
import {percentFormat} from './pyformat.js';

// ---- exceptions -------------------------------------------------------------------------------

/**
 * Parent class of each built-in exception (Python's hierarchy, the part formulas meet). No
 * prototype: class names come from formulas (`type(rec)` is its table id).
 */
export const EXC_PARENT: Record<string, string> = Object.assign(Object.create(null) as Record<string, string>, {
  BaseException: '',
  Exception: 'BaseException',
  KeyboardInterrupt: 'BaseException',
  SystemExit: 'BaseException',
  GeneratorExit: 'BaseException',
  ArithmeticError: 'Exception',
  ZeroDivisionError: 'ArithmeticError',
  OverflowError: 'ArithmeticError',
  FloatingPointError: 'ArithmeticError',
  LookupError: 'Exception',
  KeyError: 'LookupError',
  IndexError: 'LookupError',
  AssertionError: 'Exception',
  AttributeError: 'Exception',
  NameError: 'Exception',
  UnboundLocalError: 'NameError',
  TypeError: 'Exception',
  ValueError: 'Exception',
  UnicodeError: 'ValueError',
  RuntimeError: 'Exception',
  RecursionError: 'RuntimeError',
  NotImplementedError: 'RuntimeError',
  StopIteration: 'Exception',
  ImportError: 'Exception',
  ModuleNotFoundError: 'ImportError',
  MemoryError: 'Exception',
  OSError: 'Exception',
  TimeoutError: 'OSError',
  SyntaxError: 'Exception',
  IndentationError: 'SyntaxError',
  // Grist's own exceptions.
  CircularRefError: 'RuntimeError',
  InvalidTypedValue: 'ValueError',
  UnsupportedError: 'Exception',
});

export function isSubclass(type: string, cls: string): boolean {
  for (let t: string | undefined = type; t; t = EXC_PARENT[t]) {
    if (t === cls) return true;
  }
  // Unknown exception types (raised by library code) still count as Exceptions.
  return (cls === 'Exception' || cls === 'BaseException') && !(type in EXC_PARENT);
}

/** A Python exception instance as a value (`except E as e`, `ValueError('x')`). */
export class ExcObject implements PyObject {
  constructor(
    readonly pyType: string,
    readonly args: Value[],
    readonly exc?: PyException,
  ) {}
  get message(): string {
    if (this.args.length === 0) return '';
    if (this.args.length === 1) return this.pyType === 'KeyError' ? repr(this.args[0]) : str(this.args[0]);
    return repr(new PyTuple(this.args));
  }
  getattr(name: string): Value {
    if (name === 'args') return new PyTuple(this.args);
    if (name === 'message') return this.message;
    return attributeError(this, name);
  }
  str(): string {
    return this.message;
  }
  repr(): string {
    return `${this.pyType}(${this.args.map(repr).join(', ')})`;
  }
  toException(): PyException {
    return this.exc ?? new PyException(this.pyType, this.message);
  }
}

export function excToValue(e: PyException): ExcObject {
  let args: Value[] = e.message === '' ? [] : [e.message];
  // KeyError's message is repr(key): give back the key itself as its argument.
  const m = e.type === 'KeyError' ? /^'([^'\\]*)'$/.exec(e.message) : null;
  if (m) args = [m[1]];
  return new ExcObject(e.type, args, e);
}

// ---- type objects ---------------------------------------------------------------------------

/** A class object (`int`, `str`, `ValueError`, ...): callable, usable in isinstance. */
export class PyType implements PyObject {
  readonly pyType = 'type';
  constructor(
    readonly name: string,
    private readonly ctor: ((args: Value[], kwargs: Kwargs | null) => Value) | null,
    /** Whether a value is an instance (for isinstance). */
    readonly test: (v: Value) => boolean,
    readonly attrs: Record<string, Value> = {},
  ) {}
  call(args: Value[], kwargs: Kwargs | null): Value {
    if (!this.ctor) return raise('TypeError', `cannot create '${this.name}' instances`);
    return this.ctor(args, kwargs);
  }
  getattr(name: string): Value {
    if (name === '__name__') return this.name;
    if (Object.hasOwn(this.attrs, name)) return this.attrs[name];
    return raise('AttributeError', `type object '${this.name}' has no attribute '${name}'`);
  }
  repr(): string {
    return `<class '${this.name}'>`;
  }
  hashKey(): string {
    return `type:${this.name}`;
  }
  eq(o: Value): boolean {
    return o instanceof PyType && o.name === this.name;
  }
}

export function excType(name: string): PyType {
  return new PyType(
    name,
    (args) => new ExcObject(name, args),
    (v) => v instanceof ExcObject && isSubclass(v.pyType, name),
  );
}

// ---- iteration ------------------------------------------------------------------------------

/** A Python iterator over a JS iterator (generators, `iter(x)`, map/filter/zip results). */
export class PyIterator implements PyObject {
  readonly pyType: string;
  private done = false;
  constructor(
    private readonly it: Iterator<Value>,
    pyType = 'iterator',
  ) {
    this.pyType = pyType;
  }
  next(): {value: Value; done: boolean} {
    if (this.done) return {value: null, done: true};
    const r = this.it.next();
    if (r.done) {
      this.done = true;
      return {value: null, done: true};
    }
    return {value: r.value, done: false};
  }
  *iter(): Iterable<Value> {
    for (;;) {
      const r = this.next();
      if (r.done) return;
      yield r.value;
    }
  }
  repr(): string {
    return `<${this.pyType} object>`;
  }
}

/** `range(...)`. */
export class PyRange implements PyObject {
  readonly pyType = 'range';
  readonly length: number;
  /** Beyond a C ssize_t CPython cannot take the range's length (len(), list()). */
  readonly huge: boolean;
  constructor(
    readonly start: bigint,
    readonly stop: bigint,
    readonly step: bigint,
  ) {
    if (step === 0n) raise('ValueError', 'range() arg 3 must not be zero');
    const n = step > 0n ? (stop - start + step - 1n) / step : (start - stop - step - 1n) / -step;
    this.length = n > 0n ? Number(n) : 0;
    this.huge = n > SSIZE_T_MAX;
  }
  *iter(): Iterable<Value> {
    const {start, step} = this;
    for (let i = 0; i < this.length; i++) yield start + BigInt(i) * step;
  }
  len(): number {
    if (this.huge) raise('OverflowError', SSIZE_OVERFLOW);
    return this.length;
  }
  getitem(key: Value): Value {
    if (key instanceof PySlice) {
      const [a, , c, n] = key.indices(this.length);
      const start = this.start + BigInt(a) * this.step;
      const step = this.step * BigInt(c);
      return new PyRange(start, start + step * BigInt(n), step);
    }
    let i = indexOf(key, 'range object');
    if (i < 0) i += this.length;
    if (i < 0 || i >= this.length) raise('IndexError', 'range object index out of range');
    return this.start + BigInt(i) * this.step;
  }
  contains(v: Value): boolean {
    if (typeof v !== 'bigint' && typeof v !== 'boolean' && typeof v !== 'number') return false;
    const x = toNumeric(v);
    if (typeof x === 'number' && !Number.isInteger(x)) return false;
    const b = BigInt(x);
    if (this.step > 0n ? b < this.start || b >= this.stop : b > this.start || b <= this.stop) return false;
    return (b - this.start) % this.step === 0n;
  }
  repr(): string {
    return this.step === 1n ? `range(${this.start}, ${this.stop})` : `range(${this.start}, ${this.stop}, ${this.step})`;
  }
  eq(o: Value): boolean {
    return (
      o instanceof PyRange &&
      o.length === this.length &&
      (this.length === 0 || (o.start === this.start && (this.length === 1 || o.step === this.step)))
    );
  }
}

export class PySlice implements PyObject {
  readonly pyType = 'slice';
  constructor(
    readonly lo: Value,
    readonly hi: Value,
    readonly step: Value,
  ) {}
  /** [start, stop, step, count] for a sequence of the given length (Python's slice.indices). */
  indices(len: number): [number, number, number, number] {
    const step = this.step === null ? 1 : indexOf(this.step, 'slice');
    if (step === 0) raise('ValueError', 'slice step cannot be zero');
    const clamp = (v: Value, dflt: number, lo: number, hi: number): number => {
      if (v === null) return dflt;
      let i = indexOf(v, 'slice');
      if (i < 0) i += len;
      return Math.min(Math.max(i, lo), hi);
    };
    let start: number, stop: number;
    if (step > 0) {
      start = clamp(this.lo, 0, 0, len);
      stop = clamp(this.hi, len, 0, len);
    } else {
      start = clamp(this.lo, len - 1, -1, len - 1);
      stop = clamp(this.hi, -1, -1, len - 1);
    }
    const count =
      step > 0 ? Math.max(0, Math.ceil((stop - start) / step)) : Math.max(0, Math.ceil((start - stop) / -step));
    return [start, stop, step, count];
  }
  repr(): string {
    return `slice(${repr(this.lo)}, ${repr(this.hi)}, ${repr(this.step)})`;
  }
}

function sliceSeq<T>(seq: readonly T[], s: PySlice): T[] {
  const [start, , step, count] = s.indices(seq.length);
  if (step === 1) return seq.slice(start, start + count);
  const out: T[] = new Array(count);
  for (let i = 0, j = start; i < count; i++, j += step) out[i] = seq[j];
  return out;
}

/** An index argument as a JS number (int or bool; anything else is a TypeError). */
export function indexOf(v: Value, what: string): number {
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (what === 'slice') return raise('TypeError', 'slice indices must be integers or None or have an __index__ method');
  return raise('TypeError', `${what} indices must be integers or slices, not ${typeName(v)}`);
}

/** Iterates any iterable value; raises TypeError for non-iterables. */
export function iterate(v: Value): Iterable<Value> {
  if (Array.isArray(v)) return v;
  if (typeof v === 'string') return v.length < 2 || !/[\ud800-\udbff]/.test(v) ? v.split('') : Array.from(v);
  if (v instanceof PyTuple) return v.items;
  if (v instanceof PyDict) return v.keys();
  if (v instanceof PySet) return v.values();
  if (v !== null && typeof v === 'object') {
    const o = v as PyObject;
    if (o.iter) return o.iter();
  }
  return raise('TypeError', `'${typeName(v)}' object is not iterable`);
}

/** Iterates with the loop budget charged per item. */
export function* iterBudget(v: Value): Iterable<Value> {
  const b = currentBudget;
  for (const x of iterate(v)) {
    b.tick();
    yield x;
  }
}

export function toArray(v: Value): Value[] {
  if (Array.isArray(v)) return v.slice();
  const b = currentBudget;
  // A range knows its length: a huge one fails before the loop, as CPython's length hint does.
  if (v instanceof PyRange) b.checkSize(v.len());
  const out: Value[] = [];
  for (const x of iterate(v)) {
    b.tick();
    out.push(x);
  }
  return out;
}

/** Appends `items` to `target` within the size budget (push(...items) of a long list overflows the JS stack). */
export function appendAll(target: Value[], items: readonly Value[]): Value[] {
  currentBudget.checkSize(target.length + items.length);
  for (let i = 0; i < items.length; i++) target.push(items[i]);
  return target;
}

export function pyLen(v: Value): number {
  if (typeof v === 'string') return strLen(v);
  if (Array.isArray(v)) return v.length;
  if (v instanceof PyTuple) return v.items.length;
  if (v instanceof PyDict || v instanceof PySet) return v.size;
  if (v !== null && typeof v === 'object' && (v as PyObject).len) return (v as PyObject).len!();
  return raise('TypeError', `object of type '${typeName(v)}' has no len()`);
}

const ASTRAL = /[\ud800-\udbff]/;
export function strLen(s: string): number {
  if (!ASTRAL.test(s)) return s.length;
  let n = 0;
  for (const _ of s) n++;
  return n;
}

// ---- arithmetic -----------------------------------------------------------------------------

const BIN_NAMES: Record<string, string> = {};

function opError(op: string, a: Value, b: Value): never {
  return raise('TypeError', `unsupported operand type(s) for ${op}: '${typeName(a)}' and '${typeName(b)}'`);
}

function floorDivInt(a: bigint, b: bigint): bigint {
  if (b === 0n) raise('ZeroDivisionError', 'integer division or modulo by zero');
  const q = a / b;
  return a % b !== 0n && a < 0n !== b < 0n ? q - 1n : q;
}

function modInt(a: bigint, b: bigint): bigint {
  if (b === 0n) raise('ZeroDivisionError', 'integer modulo by zero');
  const r = a % b;
  return r !== 0n && r < 0n !== b < 0n ? r + b : r;
}

function modFloat(a: number, b: number): number {
  if (b === 0) raise('ZeroDivisionError', 'float modulo');
  let r = a % b;
  if (r !== 0) {
    if (r < 0 !== b < 0) r += b;
  } else r = b < 0 ? -0 : 0;
  return r;
}

/** CPython's float floor division (from fmod, as float_divmod): `2.5 // 0.1` is 24.0, not floor(25.000000000000004). */
function floorDivFloat(a: number, b: number): number {
  if (b === 0) raise('ZeroDivisionError', 'float floor division by zero');
  const mod = a % b;
  let div = (a - mod) / b;
  if (mod && b < 0 !== mod < 0) div -= 1;
  if (!div) {
    const q = a / b;
    return q < 0 || Object.is(q, -0) ? -0 : 0;
  }
  const floor = Math.floor(div);
  return div - floor > 0.5 ? floor + 1 : floor;
}

/** Python int -> float with OverflowError as Python raises it. */
export function intToFloat(a: bigint): number {
  const f = Number(a);
  if (!Number.isFinite(f)) raise('OverflowError', 'int too large to convert to float');
  return f;
}

/**
 * Largest int a formula may make, in bits (about 1.2 million decimal digits): a product or power
 * past it is refused before V8 spends seconds on it (`x = x * x` repeated reaches 2^30 bits).
 */
export const MAX_INT_BITS = 4_000_000;
const WORD = 2n ** 64n;

/** The bits of x (rounded up to a multiple of 4 past 64 bits). */
function bitsOf(x: bigint): number {
  const a = x < 0n ? -x : x;
  return a < WORD ? a.toString(2).length : a.toString(16).length * 4;
}

function checkIntBits(bits: number): void {
  if (bits > MAX_INT_BITS) raise('MemoryError', `integer result too large (more than ${MAX_INT_BITS} bits)`);
}

function powNum(a: bigint | number, b: bigint | number): Value {
  if (typeof a === 'bigint' && typeof b === 'bigint') {
    if (b >= 0n) {
      if (b > 100000n && a !== 0n && a !== 1n && a !== -1n) raise('MemoryError', 'integer exponent too large');
      if (a > 1n || a < -1n) checkIntBits(bitsOf(a) * Number(b));
      const r = a ** b;
      return r;
    }
    if (a === 0n) raise('ZeroDivisionError', '0.0 cannot be raised to a negative power');
  }
  const x = typeof a === 'bigint' ? intToFloat(a) : a;
  const y = typeof b === 'bigint' ? Number(b) : b;
  if (x === 0 && y < 0) raise('ZeroDivisionError', '0.0 cannot be raised to a negative power');
  if (x < 0 && !Number.isInteger(y)) raise('ValueError', 'complex results are not supported');
  const r = Number.isInteger(y) ? intPow(x, y) : Math.pow(x, y);
  if (!Number.isFinite(r) && Number.isFinite(x) && Number.isFinite(y))
    raise('OverflowError', "(34, 'Numerical result out of range')");
  return r;
}

/**
 * x ** n for an integer n, correctly rounded as C's pow (which CPython calls) gives it: V8's
 * Math.pow multiplies repeatedly (`7 ** -2` is 0.020408163265306124, Python 0.02040816326530612).
 * Exact in bigints for moderate n; Math.pow elsewhere.
 */
function intPow(x: number, n: number): number {
  // One rounding at most (x * x, 1 / x): already correct.
  if (n >= -1 && n <= 2) return Math.pow(x, n);
  if (!Number.isFinite(x) || x === 0 || Math.abs(n) > 64) return Math.pow(x, n);
  // An integer power of an integer below 2^53 is exact.
  if (n > 0 && Number.isInteger(x)) {
    const r = Math.pow(x, n);
    if (Math.abs(r) < 2 ** 53) return r;
  }
  // |x| = m * 2^e exactly, m an integer.
  let e = 0;
  let m = Math.abs(x);
  while (!Number.isInteger(m)) {
    m *= 2;
    e--;
  }
  const k = Math.abs(n);
  const p = BigInt(m) ** BigInt(k);
  const neg = x < 0 && k % 2 === 1;
  // |x^n| = p * 2^(e*k) for n > 0, 1 / p * 2^(-e*k) for n < 0.
  const r = n > 0 ? ratioToFloat(p, 1n, e * k) : ratioToFloat(1n, p, -e * k);
  return neg ? -r : r;
}

/** num / den * 2^exp2 (positive bigints) rounded to the nearest float, ties to even. */
function ratioToFloat(num: bigint, den: bigint, exp2: number): number {
  // A quotient of at least 55 bits with a sticky bit rounds correctly in one conversion.
  const shift = Math.max(0, 55 + den.toString(2).length - num.toString(2).length);
  const scaled = num << BigInt(shift);
  let q = scaled / den;
  if (q * den !== scaled) q |= 1n;
  const bits = q.toString(2).length;
  // Keep 55 bits + sticky so that Number() does the final rounding (a subnormal result may round twice).
  let drop = bits - 55;
  if (drop > 0) {
    const low = q & ((1n << BigInt(drop)) - 1n);
    q = (q >> BigInt(drop)) | (low ? 1n : 0n);
  } else drop = 0;
  let e = exp2 - shift + drop;
  let f = Number(q);
  // Scale by 2^e in steps that stay exact (above the subnormal range).
  while (e > 0) {
    const step = Math.min(e, 1000);
    f *= 2 ** step;
    e -= step;
  }
  while (e < 0) {
    const step = Math.max(e, -1000);
    f *= 2 ** step;
    e -= step;
  }
  return f;
}

function numBinop(op: string, x: bigint | number, y: bigint | number, boolish: boolean): Value {
  if (typeof x === 'bigint' && typeof y === 'bigint') {
    switch (op) {
      case '+':
        return x + y;
      case '-':
        return x - y;
      case '*':
        if ((x >= WORD || x <= -WORD) && (y >= WORD || y <= -WORD)) checkIntBits(bitsOf(x) + bitsOf(y));
        return x * y;
      case '/': {
        if (y === 0n) raise('ZeroDivisionError', 'division by zero');
        const r = Number(x) / Number(y);
        if (
          Number.isFinite(r) &&
          (x > 9007199254740992n || x < -9007199254740992n || y > 9007199254740992n || y < -9007199254740992n)
        ) {
          // Correctly rounded for big operands: scale exactly.
          return bigDiv(x, y);
        }
        return r;
      }
      case '//':
        return floorDivInt(x, y);
      case '%':
        return modInt(x, y);
      case '**':
        return powNum(x, y);
      case '<<':
        if (y < 0n) raise('ValueError', 'negative shift count');
        if (y > 100000n) raise('MemoryError', '');
        if (x !== 0n) checkIntBits(bitsOf(x) + Number(y));
        return x << y;
      case '>>':
        if (y < 0n) raise('ValueError', 'negative shift count');
        return x >> y;
      case '&':
        return boolish ? Boolean(x & y) : x & y;
      case '|':
        return boolish ? Boolean(x | y) : x | y;
      case '^':
        return boolish ? Boolean(x ^ y) : x ^ y;
    }
    return NOT_IMPLEMENTED as unknown as Value;
  }
  if (op === '<<' || op === '>>' || op === '&' || op === '|' || op === '^') return NOT_IMPLEMENTED as unknown as Value;
  const a = typeof x === 'bigint' ? intToFloat(x) : x;
  const b = typeof y === 'bigint' ? intToFloat(y) : y;
  switch (op) {
    case '+':
      return a + b;
    case '-':
      return a - b;
    case '*':
      return a * b;
    case '/':
      if (b === 0) raise('ZeroDivisionError', 'float division by zero');
      return a / b;
    case '//':
      return floorDivFloat(a, b);
    case '%':
      return modFloat(a, b);
    case '**':
      return powNum(a, b);
  }
  return NOT_IMPLEMENTED as unknown as Value;
}

function bigDiv(x: bigint, y: bigint): number {
  const neg = x < 0n !== y < 0n;
  let a = x < 0n ? -x : x;
  const b = y < 0n ? -y : y;
  // 0 / y never scales up (the loop below would not end): Python's 0 / -y is -0.0.
  if (a === 0n) return neg ? -0 : 0;
  // Scale to 64 significant bits of quotient, then convert.
  let shift = 0n;
  while (a / b < 1n << 64n) {
    a <<= 32n;
    shift += 32n;
  }
  const q = Number(a / b) / Math.pow(2, Number(shift));
  return neg ? -q : q;
}

/** A repeat factor as CPython takes it: an index-sized integer (OverflowError), then a size (MemoryError). */
function repeatCount(n: Value, len: number): number {
  const k =
    typeof n === 'bigint'
      ? n
      : typeof n === 'boolean'
        ? n
          ? 1n
          : 0n
        : raise('TypeError', `can't multiply sequence by non-int of type '${typeName(n)}'`);
  const count = sizeArg(k, INDEX_OVERFLOW);
  if (count <= 0) return 0;
  currentBudget.checkSize(len * count);
  return count;
}

function seqRepeat<T>(seq: readonly T[], n: Value, what: string): T[] {
  const count = repeatCount(n, seq.length);
  const out: T[] = new Array(seq.length * count);
  // Indexed copies: push(...seq) of a long list overflows the JS stack.
  for (let i = 0, j = 0; i < count; i++) for (let k = 0; k < seq.length; k++) out[j++] = seq[k];
  void what;
  return out;
}

function strRepeat(s: string, n: Value): string {
  const count = repeatCount(n, s.length);
  return count > 0 ? s.repeat(count) : '';
}

/** Python's binary operators. */
export function binop(op: string, a: Value, b: Value): Value {
  const ta = typeof a,
    tb = typeof b;
  // Fast paths.
  if (ta === 'number' && tb === 'number') {
    switch (op) {
      case '+':
        return (a as number) + (b as number);
      case '-':
        return (a as number) - (b as number);
      case '*':
        return (a as number) * (b as number);
    }
  }
  if (
    (ta === 'bigint' || ta === 'number' || ta === 'boolean') &&
    (tb === 'bigint' || tb === 'number' || tb === 'boolean')
  ) {
    const r = numBinop(op, toNumeric(a), toNumeric(b), ta === 'boolean' && tb === 'boolean');
    if ((r as unknown) !== NOT_IMPLEMENTED) return r;
    return opError(op, a, b);
  }
  if (ta === 'string') {
    if (op === '+') {
      if (tb === 'string') {
        const r = (a as string) + (b as string);
        if (r.length > 100000) currentBudget.checkSize(r.length);
        return r;
      }
      if (!(b !== null && typeof b === 'object' && (b as PyObject).binop)) {
        return raise('TypeError', `can only concatenate str (not "${typeName(b)}") to str`);
      }
    }
    if (op === '*' && (tb === 'bigint' || tb === 'boolean')) return strRepeat(a as string, b);
    if (op === '%') return percentFormat(a as string, b);
  }
  if (tb === 'string' && op === '*' && (ta === 'bigint' || ta === 'boolean')) return strRepeat(b as string, a);
  if (Array.isArray(a)) {
    if (op === '+') {
      if (Array.isArray(b)) {
        currentBudget.checkSize(a.length + b.length);
        return a.concat(b);
      }
      return raise('TypeError', `can only concatenate list (not "${typeName(b)}") to list`);
    }
    if (op === '*') return seqRepeat(a, b, 'list');
  }
  if (Array.isArray(b) && op === '*' && (ta === 'bigint' || ta === 'boolean')) return seqRepeat(b, a, 'list');
  if (a instanceof PyTuple) {
    if (op === '+') {
      if (b instanceof PyTuple) return new PyTuple([...a.items, ...b.items]);
      return raise('TypeError', `can only concatenate tuple (not "${typeName(b)}") to tuple`);
    }
    if (op === '*') return new PyTuple(seqRepeat(a.items, b, 'tuple'));
  }
  if (b instanceof PyTuple && op === '*' && (ta === 'bigint' || ta === 'boolean'))
    return new PyTuple(seqRepeat(b.items, a, 'tuple'));
  if (a instanceof PySet && b instanceof PySet) {
    const frozen = a.pyType === 'frozenset';
    switch (op) {
      case '|':
        return new PySet([...a.values(), ...b.values()], frozen);
      case '&':
        return new PySet(
          a.values().filter((v) => b.has(v)),
          frozen,
        );
      case '-':
        return new PySet(
          a.values().filter((v) => !b.has(v)),
          frozen,
        );
      case '^':
        return new PySet([...a.values().filter((v) => !b.has(v)), ...b.values().filter((v) => !a.has(v))], frozen);
    }
  }
  if (a instanceof PyDict && b instanceof PyDict && op === '|') {
    const d = new PyDict();
    for (const [k, v] of a.entries()) d.set(k, v);
    for (const [k, v] of b.entries()) d.set(k, v);
    return d;
  }
  // Objects (dates, records...).
  if (a !== null && typeof a === 'object' && !Array.isArray(a) && (a as PyObject).binop) {
    const r = (a as PyObject).binop!(op, b, false);
    if (r !== NOT_IMPLEMENTED) return r as Value;
  }
  if (b !== null && typeof b === 'object' && !Array.isArray(b) && (b as PyObject).binop) {
    const r = (b as PyObject).binop!(op, a, true);
    if (r !== NOT_IMPLEMENTED) return r as Value;
  }
  return opError(op, a, b);
}
void BIN_NAMES;

export function unaryop(op: string, v: Value): Value {
  if (typeof v === 'number') {
    if (op === '-') return -v;
    if (op === '+') return v;
  } else if (typeof v === 'bigint' || typeof v === 'boolean') {
    const n = toNumeric(v) as bigint;
    if (op === '-') return -n;
    if (op === '+') return n;
    if (op === '~') return ~n;
  } else if (v !== null && typeof v === 'object' && !Array.isArray(v) && (v as PyObject).binop) {
    const o = v as PyObject;
    if (op === '-') {
      const r = o.binop!('neg', null, false);
      if (r !== NOT_IMPLEMENTED) return r as Value;
    } else if (op === '+') {
      const r = o.binop!('pos', null, false);
      if (r !== NOT_IMPLEMENTED) return r as Value;
      return v;
    }
  }
  return raise('TypeError', `bad operand type for unary ${op}: '${typeName(v)}'`);
}

// ---- comparisons ----------------------------------------------------------------------------

/** Python's ordering: negative/0/positive, or TypeError for unorderable pairs. */
export function pyCompare(a: Value, b: Value, op = '<'): number {
  const ta = typeof a,
    tb = typeof b;
  if (ta === 'number' && tb === 'number')
    return (a as number) < (b as number) ? -1 : (a as number) > (b as number) ? 1 : a === b ? 0 : NaN;
  if (
    (ta === 'bigint' || ta === 'number' || ta === 'boolean') &&
    (tb === 'bigint' || tb === 'number' || tb === 'boolean')
  ) {
    const x = toNumeric(a),
      y = toNumeric(b);
    if (typeof x === 'bigint' && typeof y === 'bigint') return x < y ? -1 : x > y ? 1 : 0;
    if (typeof x === 'number' && Number.isNaN(x)) return NaN;
    if (typeof y === 'number' && Number.isNaN(y)) return NaN;
    // int vs float: exact when the float is integral and finite.
    if (typeof x === 'bigint' && Number.isInteger(y)) {
      const yy = BigInt(y);
      return x < yy ? -1 : x > yy ? 1 : 0;
    }
    if (typeof y === 'bigint' && Number.isInteger(x)) {
      const xx = BigInt(x);
      return xx < y ? -1 : xx > y ? 1 : 0;
    }
    const fx = Number(x),
      fy = Number(y);
    return fx < fy ? -1 : fx > fy ? 1 : 0;
  }
  if (ta === 'string' && tb === 'string') return strCompare(a as string, b as string);
  if (Array.isArray(a) && Array.isArray(b)) return seqCompare(a, b, op);
  if (a instanceof PyTuple && b instanceof PyTuple) return seqCompare(a.items, b.items, op);
  if (a instanceof PySet && b instanceof PySet) {
    const sub = a.values().every((v) => b.has(v));
    const sup = b.values().every((v) => a.has(v));
    if (sub && sup) return 0;
    if (sub) return -1;
    if (sup) return 1;
    return NaN;
  }
  if (a !== null && typeof a === 'object' && !Array.isArray(a) && (a as PyObject).compare) {
    const r = (a as PyObject).compare!(b);
    if ((r !== undefined && !Number.isNaN(r as number)) || (a as PyObject).pyType === typeName(b)) return r;
  }
  if (b !== null && typeof b === 'object' && !Array.isArray(b) && (b as PyObject).compare) {
    const r = (b as PyObject).compare!(a);
    if (r !== undefined && !Number.isNaN(r)) return -r;
  }
  return raise('TypeError', `'${op}' not supported between instances of '${typeName(a)}' and '${typeName(b)}'`);
}

/**
 * Python's order of strings: by code point. JavaScript's `<` compares UTF-16 units, which puts
 * characters beyond U+FFFF (surrogate pairs) before U+E000-U+FFFF; Python (and SQLite's BINARY
 * order of UTF-8 text) puts them after.
 */
export function strCompare(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) {
      const sx = x >= 0xd800 && x <= 0xdfff;
      const sy = y >= 0xd800 && y <= 0xdfff;
      if (sx !== sy) return sx ? 1 : -1;
      return x < y ? -1 : 1;
    }
  }
  return a.length < b.length ? -1 : 1;
}

function seqCompare(a: readonly Value[], b: readonly Value[], op: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    if (!pyEquals(a[i], b[i])) return pyCompare(a[i], b[i], op);
  }
  return a.length - b.length;
}

export function compareOp(op: string, a: Value, b: Value): boolean {
  switch (op) {
    case '==':
      return pyEquals(a, b);
    case '!=':
      return !pyEquals(a, b);
    case '<':
      return pyCompare(a, b, op) < 0;
    case '<=':
      return pyCompare(a, b, op) <= 0;
    case '>':
      return pyCompare(a, b, op) > 0;
    case '>=':
      return pyCompare(a, b, op) >= 0;
    case 'in':
      return contains(b, a);
    case 'not in':
      return !contains(b, a);
    case 'is':
      return isSame(a, b);
    case 'is not':
      return !isSame(a, b);
  }
  return raise('SyntaxError', `unknown comparison ${op}`);
}

function isSame(a: Value, b: Value): boolean {
  if (a === b) return true;
  // Small ints and interned strings behave as identical in CPython; values compare by identity otherwise.
  if (typeof a === 'bigint' && typeof b === 'bigint') return a === b;
  return false;
}

export function contains(container: Value, item: Value): boolean {
  if (typeof container === 'string') {
    if (typeof item !== 'string')
      return raise('TypeError', `'in <string>' requires string as left operand, not ${typeName(item)}`);
    return container.includes(item);
  }
  if (Array.isArray(container)) return container.some((x) => pyEquals(x, item));
  if (container instanceof PyTuple) return container.items.some((x) => pyEquals(x, item));
  if (container instanceof PyDict) return container.has(item);
  if (container instanceof PySet) return container.has(item);
  if (container instanceof PyRange) return container.contains(item);
  if (container !== null && typeof container === 'object') {
    const o = container as PyObject & {contains?(v: Value): boolean};
    if (o.contains) return o.contains(item);
    if (o.iter) {
      for (const x of o.iter()) if (pyEquals(x, item)) return true;
      return false;
    }
  }
  return raise('TypeError', `argument of type '${typeName(container)}' is not iterable`);
}

// ---- subscripts -----------------------------------------------------------------------------

export function getitem(obj: Value, key: Value): Value {
  if (Array.isArray(obj)) {
    if (key instanceof PySlice) return sliceSeq(obj, key);
    let i = indexOf(key, 'list');
    if (i < 0) i += obj.length;
    if (i < 0 || i >= obj.length) raise('IndexError', 'list index out of range');
    return obj[i];
  }
  if (typeof obj === 'string') {
    const chars = ASTRAL.test(obj) ? Array.from(obj) : null;
    const len = chars ? chars.length : obj.length;
    if (key instanceof PySlice) {
      if (chars) return sliceSeq(chars, key).join('');
      const [start, , step, count] = key.indices(len);
      if (step === 1) return obj.slice(start, start + count);
      let out = '';
      for (let i = 0, j = start; i < count; i++, j += step) out += obj[j];
      return out;
    }
    let i = indexOf(key, 'string');
    if (i < 0) i += len;
    if (i < 0 || i >= len) raise('IndexError', 'string index out of range');
    return chars ? chars[i] : obj[i];
  }
  if (obj instanceof PyTuple) {
    if (key instanceof PySlice) return new PyTuple(sliceSeq(obj.items, key));
    let i = indexOf(key, 'tuple');
    if (i < 0) i += obj.items.length;
    if (i < 0 || i >= obj.items.length) raise('IndexError', 'tuple index out of range');
    return obj.items[i];
  }
  if (obj instanceof PyDict) {
    const v = obj.get(key);
    if (v === undefined) {
      const dflt = (obj as PyDict & {missing?: (k: Value) => Value}).missing;
      if (dflt) return dflt(key);
      throw new PyException('KeyError', repr(key));
    }
    return v;
  }
  if (obj !== null && typeof obj === 'object' && (obj as PyObject).getitem) return (obj as PyObject).getitem!(key);
  if (obj instanceof PyType) {
    // `list[int]` style generic aliases: harmless, return the type.
    return obj;
  }
  return raise('TypeError', `'${typeName(obj)}' object is not subscriptable`);
}

export function setitem(obj: Value, key: Value, value: Value): void {
  if (Array.isArray(obj)) {
    if (key instanceof PySlice) {
      const [start, stop, step] = key.indices(obj.length);
      const vals = toArray(value);
      if (step === 1) {
        obj.splice(start, Math.max(0, stop - start), ...vals);
        return;
      }
      const [, , , count] = key.indices(obj.length);
      if (vals.length !== count)
        raise('ValueError', `attempt to assign sequence of size ${vals.length} to extended slice of size ${count}`);
      for (let i = 0, j = start; i < count; i++, j += step) obj[j] = vals[i];
      return;
    }
    let i = indexOf(key, 'list');
    if (i < 0) i += obj.length;
    if (i < 0 || i >= obj.length) raise('IndexError', 'list assignment index out of range');
    obj[i] = value;
    return;
  }
  if (obj instanceof PyDict) {
    hashKey(key);
    obj.set(key, value);
    return;
  }
  const o = obj as PyObject & {setitem?(k: Value, v: Value): void};
  if (o !== null && typeof o === 'object' && o.setitem) {
    o.setitem(key, value);
    return;
  }
  raise('TypeError', `'${typeName(obj)}' object does not support item assignment`);
}

export function delitem(obj: Value, key: Value): void {
  if (Array.isArray(obj)) {
    if (key instanceof PySlice) {
      const [start, , step, count] = key.indices(obj.length);
      const idx: number[] = [];
      for (let i = 0, j = start; i < count; i++, j += step) idx.push(j);
      idx.sort((x, y) => y - x).forEach((j) => obj.splice(j, 1));
      return;
    }
    let i = indexOf(key, 'list');
    if (i < 0) i += obj.length;
    if (i < 0 || i >= obj.length) raise('IndexError', 'list assignment index out of range');
    obj.splice(i, 1);
    return;
  }
  if (obj instanceof PyDict) {
    if (!obj.delete(key)) throw new PyException('KeyError', repr(key));
    return;
  }
  raise('TypeError', `'${typeName(obj)}' object does not support item deletion`);
}

// ---- calls ----------------------------------------------------------------------------------

export function callValue(fn: Value, args: Value[], kwargs: Kwargs | null): Value {
  if (fn !== null && typeof fn === 'object' && !Array.isArray(fn)) {
    const o = fn as PyObject;
    if (o.call) return o.call(args, kwargs);
  }
  return raise('TypeError', `'${typeName(fn)}' object is not callable`);
}

export function isCallable(v: Value): boolean {
  return v !== null && typeof v === 'object' && !Array.isArray(v) && typeof (v as PyObject).call === 'function';
}

/** A bound method of a built-in type. */
export function method(name: string, impl: (args: Value[], kwargs: Kwargs | null) => Value): PyCallable {
  return new PyCallable(name, impl);
}

export {truthy, floatRepr};
