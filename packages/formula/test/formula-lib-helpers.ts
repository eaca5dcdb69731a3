/** Helpers for the function-library tests: Python-like evaluation of doctest expressions. */
import * as assert from 'uvu/assert';
import {gristFunctions, setDocTimezone} from '../src/functions/index.js';
import {
  PyCallable,
  PyDict,
  PyException,
  type PyObject,
  PyTuple,
  type Value,
  pyEquals,
  raise,
  repr,
  str,
} from '../src/values.js';
import {modules} from '../src/modules/index.js';
import {
  type PyClass,
  type PyDate,
  dateClass,
  datetimeClass,
  setClock,
  strftime,
  timeClass,
  timedeltaClass,
  timezoneClass,
  tzinfoFor,
} from '../src/datetime.js';
import {add, div, mul, num, pmod, pow, sub} from '../src/functions/util.js';
import {formatFixed} from '../src/functions/text.js';
import {parseDateText} from '../src/functions/dateparse.js';

export {pyEquals, tzinfoFor};
export const F = gristFunctions;
export const DT: Record<string, PyClass> = {
  date: dateClass,
  datetime: datetimeClass,
  time: timeClass,
  timedelta: timedeltaClass,
  timezone: timezoneClass,
};

// Grist's doctests run with America/New_York as the document's zone.
setDocTimezone('America/New_York');
// A fixed "now" (2026-11-23 15:00 UTC) so that defaults taken from today are stable.
setClock(() => Date.UTC(2026, 10, 23, 15, 0, 0));

export function bin(op: string, a: Value, b: Value): Value {
  const isObj = (x: Value) => x !== null && typeof x === 'object' && !Array.isArray(x) && !(x instanceof PyTuple);
  if (isObj(a) && (a as PyObject).binop) {
    const r = (a as PyObject).binop!(op, b, false);
    if (typeof r !== 'symbol') return r;
  }
  if (isObj(b) && (b as PyObject).binop) {
    const r = (b as PyObject).binop!(op, a, true);
    if (typeof r !== 'symbol') return r;
  }
  switch (op) {
    case '|':
      return BigInt(a as bigint) | BigInt(b as bigint);
    case '<': {
      const o = a as PyObject;
      if (o?.compare) return o.compare(b) < 0;
      return Number(num(a)) < Number(num(b));
    }
    case '+':
      return typeof a === 'string' ? a + (b as string) : add(a, b);
    case '-':
      return sub(a, b);
    case '*':
      return mul(a, b);
    case '/':
      return div(a, b);
    case '%':
      return pmod(a, b);
    case '**':
      return pow(a, b);
    case '//': {
      const x = num(a),
        y = num(b);
      if (typeof x === 'bigint' && typeof y === 'bigint') {
        const q = x / y;
        return x % y !== 0n && x < 0n !== y < 0n ? q - 1n : q;
      }
      return Math.floor(Number(x) / Number(y));
    }
  }
  return raise('TypeError', `unsupported ${op}`);
}

export const tuple = (...items: Value[]) => new PyTuple(items);
export const M = modules;
export const lambdaFn = (f: (...args: Value[]) => Value) => new PyCallable('<lambda>', (args) => f(...args));
export function dict(entries: Array<[Value, Value]>): PyDict {
  const d = new PyDict();
  for (const [k, x] of entries) d.set(k, x);
  return d;
}
export const lazyFn = (f: () => Value) => new PyCallable('<lambda>', () => f());
export const fixed = (x: Value, n: number) => formatFixed(Number(num(x)), n, false);
export const altText = (s: string): PyObject => ({pyType: 'AltText', str: () => s, repr: () => `AltText(${repr(s)})`});

export function iter(x: Value): Value[] {
  if (Array.isArray(x)) return x;
  if (x instanceof PyTuple) return [...x.items];
  const o = x as PyObject;
  if (o?.iter) return [...o.iter()];
  return raise('TypeError', 'not iterable');
}

export function getAttr(obj: Value, name: string): Value {
  const o = obj as PyObject;
  if (o?.getattr) return o.getattr(name);
  return raise('AttributeError', `'${typeof obj}' object has no attribute '${name}'`);
}

export function callAttr(obj: Value, name: string, args: Value[], kwargs: Record<string, Value> | null): Value {
  if (typeof obj === 'string') {
    if (name === 'upper') return obj.toUpperCase();
    if (name === 'lower') return obj.toLowerCase();
    return raise('AttributeError', `'str' object has no attribute '${name}'`);
  }
  const f = getAttr(obj, name) as PyObject;
  return f.call!(args, kwargs);
}

/** Python's round(x, n) for the values in the doctests (no exact binary ties among them). */
function pyRound(x: Value, n?: Value): Value {
  const f = Number(num(x));
  if (n === undefined) return BigInt(Math.round(f));
  const d = Number(n);
  return Number(f.toFixed(d));
}

export const py = {
  round: pyRound,
  len: (x: Value) => BigInt(typeof x === 'string' ? Array.from(x).length : iter(x).length),
  range: (n: Value) => Array.from({length: Number(n)}, (_, i) => BigInt(i)),
  zip: (a: Value, b: Value) => {
    const x = iter(a),
      y = iter(b);
    return x.slice(0, Math.min(x.length, y.length)).map((v, i) => new PyTuple([v, y[i]]));
  },
  int: (x: Value) => (typeof x === 'string' ? BigInt(x) : BigInt(Math.trunc(Number(num(x))))),
  float: (s: Value) => (s === 'nan' ? NaN : s === 'inf' ? Infinity : s === '-inf' ? -Infinity : Number(s)),
  str: (x: Value) => str(x),
  sum: (x: Value) => iter(x).reduce<Value>((t, v) => add(t, v), 0n),
  list: (x: Value) => iter(x),
  isnan: (x: Value) => typeof x === 'number' && Number.isNaN(x),
  show: (dates: Value) => iter(dates).map((d) => strftime(d as PyDate, '%Y-%m-%d %H:%M')),
  parse: (s: Value) => parseDateText(s as string),
};

/** Runs `f` and checks its repr against `want`, or the exception it raises against `exc`. */
export function check(src: string, f: () => Value, want: string | null, exc?: [string, string | null]): void {
  let result: Value;
  try {
    result = f();
  } catch (e) {
    if (!(e instanceof PyException)) throw e;
    if (!exc) assert.unreachable(`${src}: raised ${e.type}: ${e.message}`);
    assert.is(e.type, exc![0], `${src}: exception type`);
    if (exc![1] !== null) assert.is(e.message, exc![1], `${src}: exception message`);
    return;
  }
  if (exc) assert.unreachable(`${src}: expected ${exc[0]}, got ${repr(result)}`);
  if (want === '') {
    assert.is(result, null, src);
    return;
  }
  const got = typeof result === 'string' && !want!.startsWith("'") && !want!.startsWith('"') ? result : repr(result);
  assert.is(got, want, src);
}
