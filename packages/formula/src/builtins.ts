/**
 * Python's builtins as formulas see them: types (int, str, list, ...), exception classes and
 * functions (len, sorted, round, ...). Only what is listed here is reachable by name.
 *
 * One thing: the allow-list of builtin names, one entry each, kept together so that what a
 * formula can reach by name is read in one place.
 */
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
import {
  EXC_PARENT,
  ExcObject,
  PyIterator,
  PyRange,
  PySlice,
  PyType,
  binop,
  callValue,
  compareOp,
  excType,
  intToFloat,
  isCallable,
  iterate,
  pyCompare,
  pyLen,
  toArray,
  unaryop,
} from './ops.js';
import {dictFromArgs, getattr, hasattr, sortValues} from './methods.js';
import {formatSpec, roundFloat} from './pyformat.js';
import {currentBudget} from './budget.js';
import {PyFunction} from './compiler.js';

const fn = (name: string, impl: (args: Value[], kw: Kwargs | null) => Value) => new PyCallable(name, impl);

function noKw(name: string, kw: Kwargs | null): void {
  if (kw && Object.keys(kw).length) raise('TypeError', `${name}() takes no keyword arguments`);
}

/** Python's float(str) parsing. */
export function parseFloat_(s: string): number {
  const t = s
    .trim()
    .replace(/_/g, (_m, i, all) => (/\d/.test(all[i - 1] ?? '') && /\d/.test(all[i + 1] ?? '') ? '' : 'x'));
  if (/^[-+]?(inf|infinity)$/i.test(t)) return t.startsWith('-') ? -Infinity : Infinity;
  if (/^[-+]?nan$/i.test(t)) return NaN;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(t))
    raise('ValueError', `could not convert string to float: ${repr(s)}`);
  return Number(t);
}

export function toInt(v: Value, base: Value | undefined = undefined): bigint {
  if (base !== undefined) {
    if (typeof v !== 'string') raise('TypeError', "int() can't convert non-string with explicit base");
    return parseIntStr(v, Number(toNumeric(base)));
  }
  if (typeof v === 'bigint') return v;
  if (typeof v === 'boolean') return v ? 1n : 0n;
  if (typeof v === 'number') {
    if (Number.isNaN(v)) raise('ValueError', 'cannot convert float NaN to integer');
    if (!Number.isFinite(v)) raise('OverflowError', 'cannot convert float infinity to integer');
    return BigInt(Math.trunc(v));
  }
  if (typeof v === 'string') return parseIntStr(v, 10);
  if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
    const o = v as PyObject & {toInt?(): bigint};
    if (o.toInt) return o.toInt();
  }
  return raise(
    'TypeError',
    `int() argument must be a string, a bytes-like object or a real number, not '${typeName(v)}'`,
  );
}

/** CPython 3.11's default `sys.get_int_max_str_digits()`. */
const INT_MAX_STR_DIGITS = 4300;

function parseIntStr(s: string, base: number): bigint {
  let t = s.trim();
  const bad = () => raise('ValueError', `invalid literal for int() with base ${base}: ${repr(s)}`);
  let neg = false;
  if (t[0] === '-' || t[0] === '+') {
    neg = t[0] === '-';
    t = t.slice(1);
  }
  if (base === 0) {
    if (/^0[xX]/.test(t)) {
      base = 16;
      t = t.slice(2);
    } else if (/^0[oO]/.test(t)) {
      base = 8;
      t = t.slice(2);
    } else if (/^0[bB]/.test(t)) {
      base = 2;
      t = t.slice(2);
    } else base = 10;
  } else if (base === 16 && /^0[xX]/.test(t)) t = t.slice(2);
  else if (base === 8 && /^0[oO]/.test(t)) t = t.slice(2);
  else if (base === 2 && /^0[bB]/.test(t)) t = t.slice(2);
  if (!/^[0-9a-zA-Z]+(_[0-9a-zA-Z]+)*$/.test(t)) bad();
  t = t.replace(/_/g, '');
  // CPython 3.11's bound on decimal conversion (sys.get_int_max_str_digits()); parsing is quadratic.
  if (base !== 2 && base !== 4 && base !== 8 && base !== 16 && base !== 32 && t.length > INT_MAX_STR_DIGITS) {
    raise(
      'ValueError',
      `Exceeds the limit (${INT_MAX_STR_DIGITS} digits) for integer string conversion: value has ${t.length} digits; use sys.set_int_max_str_digits() to increase the limit`,
    );
  }
  let r = 0n;
  const B = BigInt(base);
  for (const ch of t.toLowerCase()) {
    const d = parseInt(ch, 36);
    if (Number.isNaN(d) || d >= base) bad();
    r = r * B + BigInt(d);
  }
  return neg ? -r : r;
}

export function toFloatValue(v: Value): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return intToFloat(v);
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'string') return parseFloat_(v);
  if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
    const o = v as PyObject & {toFloat?(): number};
    if (o.toFloat) return o.toFloat();
  }
  return raise('TypeError', `float() argument must be a string or a real number, not '${typeName(v)}'`);
}

/** Python's round(). */
export function pyRound(x: Value, nd: Value | undefined): Value {
  if (x !== null && typeof x === 'object' && !Array.isArray(x)) {
    const o = x as PyObject & {round?(nd: Value | undefined): Value};
    if (o.round) return o.round(nd);
  }
  const n = toNumeric(x);
  if (nd === undefined || nd === null) {
    if (typeof n === 'bigint') return n;
    if (Number.isNaN(n)) raise('ValueError', 'cannot convert float NaN to integer');
    if (!Number.isFinite(n)) raise('OverflowError', 'cannot convert float infinity to integer');
    let r = Math.round(n);
    if (Math.abs(n % 1) === 0.5) r = 2 * Math.round(n / 2);
    return BigInt(r);
  }
  const d = Number(toNumeric(nd));
  if (typeof n === 'bigint') {
    if (d >= 0) return n;
    // Rounding to more digits than n has gives 0: 10 ** -d is not computed for a huge -d.
    if (-d > (n < 0n ? -n : n).toString().length) return 0n;
    const p = 10n ** BigInt(-d);
    const q = n / p,
      rem = n % p;
    let r = q;
    const twice = (rem < 0n ? -rem : rem) * 2n;
    if (twice > p || (twice === p && q % 2n !== 0n)) r = n < 0n ? q - 1n : q + 1n;
    return r * p;
  }
  return roundFloat(n, d);
}

function minmax(name: string, args: Value[], kw: Kwargs | null, sign: number): Value {
  const p = bindArgs(name, ['*items', 'key', 'default'], args, kw, {key: null, default: undefined as unknown as Value});
  const items0 = p.items as Value[];
  const key = p.key as Value;
  const hasDefault = kw !== null && Object.hasOwn(kw, 'default');
  if (items0.length === 0) raise('TypeError', `${name} expected at least 1 argument, got 0`);
  if (items0.length > 1 && hasDefault)
    raise('TypeError', `Cannot specify a default for ${name}() with multiple positional arguments`);
  const items = items0.length === 1 ? toArray(items0[0]) : items0;
  if (!items.length) {
    if (hasDefault) return p.default as Value;
    raise('ValueError', `${name}() arg is an empty sequence`);
  }
  let best = items[0];
  let bestKey = key === null ? best : callValue(key, [best], null);
  for (let i = 1; i < items.length; i++) {
    const k = key === null ? items[i] : callValue(key, [items[i]], null);
    if (sign * pyCompare(k, bestKey, sign > 0 ? '>' : '<') > 0) {
      best = items[i];
      bestKey = k;
    }
  }
  return best;
}

function pySum(args: Value[], kw: Kwargs | null): Value {
  const p = bindArgs('sum', ['iterable', 'start'], args, kw, {start: 0n});
  let acc = p.start as Value;
  if (typeof acc === 'string') raise('TypeError', "sum() can't sum strings [use ''.join(seq) instead]");
  let fsum: number | null = typeof acc === 'number' ? acc : null;
  for (const x of iterate(p.iterable as Value)) {
    currentBudget.tick();
    if (fsum !== null && typeof x === 'number') {
      fsum += x;
      continue;
    }
    if (fsum !== null) {
      acc = fsum;
      fsum = null;
    }
    acc = binop('+', acc, x);
    if (typeof acc === 'number') {
      fsum = acc;
    }
  }
  return fsum !== null ? fsum : acc;
}

function intRepr(v: Value, base: number, prefix: string): string {
  const n = toNumeric(v);
  if (typeof n !== 'bigint') raise('TypeError', `'${typeName(v)}' object cannot be interpreted as an integer`);
  const b = n as bigint;
  return (b < 0n ? '-' : '') + prefix + (b < 0n ? -b : b).toString(base);
}

function isinstanceOf(v: Value, cls: Value): boolean {
  if (cls instanceof PyTuple) return cls.items.some((c) => isinstanceOf(v, c));
  if (cls instanceof PyType) return cls.test(v);
  return raise('TypeError', 'isinstance() arg 2 must be a type, a tuple of types, or a union');
}

const isIntLike = (v: Value) => typeof v === 'bigint' || typeof v === 'boolean';

/** The `type` objects of built-in types, by name. */
export const TYPES: Record<string, PyType> = Object.create(null);

function defType(
  name: string,
  ctor: ((a: Value[], kw: Kwargs | null) => Value) | null,
  test: (v: Value) => boolean,
  attrs: Record<string, Value> = {},
): PyType {
  const t = new PyType(name, ctor, test, attrs);
  TYPES[name] = t;
  return t;
}

defType(
  'int',
  (a, kw) => {
    const p = bindArgs('int', ['x', 'base'], a, kw, {x: 0n, base: undefined as unknown as Value});
    return toInt(p.x as Value, p.base as Value | undefined);
  },
  isIntLike,
);
defType(
  'float',
  (a) => (a.length ? toFloatValue(a[0]) : 0),
  (v) => typeof v === 'number',
);
defType(
  'str',
  (a, kw) => {
    noKw('str', kw);
    return a.length ? str(a[0]) : '';
  },
  (v) => typeof v === 'string',
  {join: fn('join', (a) => callValue(getattr(a[0], 'join'), a.slice(1), null))},
);
defType(
  'bool',
  (a) => (a.length ? truthy(a[0]) : false),
  (v) => typeof v === 'boolean',
);
defType(
  'list',
  (a) => (a.length ? toArray(a[0]) : []),
  (v) => Array.isArray(v),
);
defType(
  'tuple',
  (a) => new PyTuple(a.length ? toArray(a[0]) : []),
  (v) => v instanceof PyTuple,
);
defType(
  'dict',
  (a, kw) => {
    const d = new PyDict();
    dictFromArgs(d, a, kw, 'dict');
    return d;
  },
  (v) => v instanceof PyDict,
  {
    fromkeys: fn('fromkeys', (a) => {
      const d = new PyDict();
      // toArray: a range's size is checked first, and each item counts against the loop budget.
      for (const k of toArray(a[0])) {
        hashKey(k);
        d.set(k, a.length > 1 ? a[1] : null);
      }
      return d;
    }),
  },
);
defType(
  'set',
  (a) => {
    const items = a.length ? toArray(a[0]) : [];
    items.forEach(hashKey);
    return new PySet(items);
  },
  (v) => v instanceof PySet && v.pyType === 'set',
);
defType(
  'frozenset',
  (a) => {
    const items = a.length ? toArray(a[0]) : [];
    items.forEach(hashKey);
    return new PySet(items, true);
  },
  (v) => v instanceof PySet && v.pyType === 'frozenset',
);
defType('object', null, () => true);
defType(
  'range',
  (a) => makeRange(a),
  (v) => v instanceof PyRange,
);
defType(
  'slice',
  (a) => (a.length === 1 ? new PySlice(null, a[0], null) : new PySlice(a[0], a[1] ?? null, a[2] ?? null)),
  (v) => v instanceof PySlice,
);
defType(
  'type',
  (a) => {
    if (a.length !== 1) raise('TypeError', 'type() takes 1 argument');
    return typeOf(a[0]);
  },
  (v) => v instanceof PyType,
);
defType('NoneType', null, (v) => v === null);
defType('function', null, (v) => v instanceof PyFunction);

/** Unbound methods (`str.lower`, `list.append`, `dict.get`): call with the instance first. */
for (const [tname, names] of [
  [
    'str',
    'upper lower strip lstrip rstrip split rsplit join replace startswith endswith find rfind index rindex count format title capitalize zfill center ljust rjust isdigit isalpha isalnum isspace isupper islower partition rpartition splitlines casefold swapcase removeprefix removesuffix',
  ],
  ['list', 'append extend insert pop remove index count reverse sort copy clear'],
  ['dict', 'get keys values items pop setdefault update copy clear'],
  ['set', 'add remove discard union intersection difference issubset issuperset'],
] as const) {
  const attrs = (TYPES[tname] as unknown as {attrs: Record<string, Value>}).attrs;
  for (const m of names.split(' ')) {
    if (!(m in attrs))
      attrs[m] = fn(m, (a, kw) => {
        if (!a.length || !TYPES[tname].test(a[0]))
          raise(
            'TypeError',
            `descriptor '${m}' for '${tname}' objects doesn't apply to a '${a.length ? typeName(a[0]) : 'NoneType'}' object`,
          );
        return callValue(getattr(a[0], m), a.slice(1), kw);
      });
  }
}

function typeOf(v: Value): PyType {
  const name = typeName(v);
  if (TYPES[name]) return TYPES[name];
  if (v instanceof ExcObject) return excType(v.pyType);
  const o = v as PyObject & {pyClass?(): PyType};
  if (o && typeof o === 'object' && typeof o.pyClass === 'function') return o.pyClass();
  return new PyType(name, null, (x) => typeName(x) === name);
}

function makeRange(a: Value[]): PyRange {
  const ints = a.map((x) => {
    if (!isIntLike(x)) raise('TypeError', `'${typeName(x)}' object cannot be interpreted as an integer`);
    return toNumeric(x) as bigint;
  });
  if (ints.length === 1) return new PyRange(0n, ints[0], 1n);
  if (ints.length === 2) return new PyRange(ints[0], ints[1], 1n);
  if (ints.length === 3) return new PyRange(ints[0], ints[1], ints[2]);
  return raise('TypeError', `range expected at most 3 arguments, got ${a.length}`);
}

function zipValues(a: Value[], kw: Kwargs | null): Value {
  const strict = kw && truthy(kw.strict ?? false);
  const its = a.map((x) => iterate(x)[Symbol.iterator]());
  const gen = function* (): Generator<Value> {
    if (!its.length) return;
    for (;;) {
      const row: Value[] = [];
      for (const it of its) {
        const r = it.next();
        if (r.done) {
          if (strict && row.length) raise('ValueError', 'zip() argument 2 is shorter than argument 1');
          return;
        }
        row.push(r.value);
      }
      currentBudget.tick();
      yield new PyTuple(row);
    }
  };
  return new PyIterator(gen(), 'zip');
}

const _NEXT_DEFAULT = Symbol('none');

export const BUILTIN_FUNCTIONS: Record<string, PyCallable> = {
  len: fn('len', (a, kw) => {
    noKw('len', kw);
    if (a.length !== 1) raise('TypeError', `len() takes exactly one argument (${a.length} given)`);
    return BigInt(pyLen(a[0]));
  }),
  abs: fn('abs', (a) => {
    const v = a[0];
    if (typeof v === 'number') return Math.abs(v);
    if (isIntLike(v)) {
      const n = toNumeric(v) as bigint;
      return n < 0n ? -n : n;
    }
    if (v !== null && typeof v === 'object' && (v as PyObject).binop)
      return unaryop('-', v) && compareOp('<', v, binop('-', v, v)) ? unaryop('-', v) : v;
    return raise('TypeError', `bad operand type for abs(): '${typeName(v)}'`);
  }),
  min: fn('min', (a, kw) => minmax('min', a, kw, -1)),
  max: fn('max', (a, kw) => minmax('max', a, kw, 1)),
  sum: fn('sum', pySum),
  round: fn('round', (a, kw) => {
    const p = bindArgs('round', ['number', 'ndigits'], a, kw, {ndigits: null});
    return pyRound(p.number as Value, p.ndigits as Value);
  }),
  sorted: fn('sorted', (a, kw) => {
    if (a.length !== 1) raise('TypeError', `sorted expected 1 argument, got ${a.length}`);
    const p = bindArgs('sorted', ['key', 'reverse'], [], kw, {key: null, reverse: false});
    return sortValues(toArray(a[0]), p.key as Value, truthy(p.reverse as Value));
  }),
  reversed: fn('reversed', (a) => {
    const v = a[0];
    if (
      v instanceof PyDict ||
      v instanceof PySet ||
      (v !== null &&
        typeof v === 'object' &&
        !Array.isArray(v) &&
        !(v instanceof PyTuple) &&
        !(v instanceof PyRange) &&
        !(v as PyObject).len)
    ) {
      if (v instanceof PyDict) return new PyIterator(v.keys().reverse()[Symbol.iterator](), 'dict_reversekeyiterator');
      raise('TypeError', `'${typeName(v)}' object is not reversible`);
    }
    return new PyIterator(toArray(v).reverse()[Symbol.iterator](), 'list_reverseiterator');
  }),
  enumerate: fn('enumerate', (a, kw) => {
    const p = bindArgs('enumerate', ['iterable', 'start'], a, kw, {start: 0n});
    const src = iterate(p.iterable as Value);
    let i = toNumeric(p.start as Value) as bigint;
    const gen = function* (): Generator<Value> {
      for (const x of src) {
        currentBudget.tick();
        yield new PyTuple([i++, x]);
      }
    };
    return new PyIterator(gen(), 'enumerate');
  }),
  zip: fn('zip', zipValues),
  map: fn('map', (a) => {
    if (a.length < 2) raise('TypeError', 'map() must have at least two arguments.');
    const f = a[0];
    if (a.length === 2) {
      const src = iterate(a[1]);
      const gen = function* (): Generator<Value> {
        for (const x of src) {
          currentBudget.tick();
          yield callValue(f, [x], null);
        }
      };
      return new PyIterator(gen(), 'map');
    }
    const z = zipValues(a.slice(1), null) as PyIterator;
    const gen = function* (): Generator<Value> {
      for (const t of z.iter()) yield callValue(f, [...(t as PyTuple).items], null);
    };
    return new PyIterator(gen(), 'map');
  }),
  filter: fn('filter', (a) => {
    const f = a[0];
    const src = iterate(a[1]);
    const gen = function* (): Generator<Value> {
      for (const x of src) {
        currentBudget.tick();
        if (f === null ? truthy(x) : truthy(callValue(f, [x], null))) yield x;
      }
    };
    return new PyIterator(gen(), 'filter');
  }),
  any: fn('any', (a) => {
    for (const x of iterate(a[0])) {
      currentBudget.tick();
      if (truthy(x)) return true;
    }
    return false;
  }),
  all: fn('all', (a) => {
    for (const x of iterate(a[0])) {
      currentBudget.tick();
      if (!truthy(x)) return false;
    }
    return true;
  }),
  isinstance: fn('isinstance', (a) => {
    if (a.length !== 2) raise('TypeError', `isinstance expected 2 arguments, got ${a.length}`);
    return isinstanceOf(a[0], a[1]);
  }),
  issubclass: fn('issubclass', (a) => {
    const [c, p] = a;
    if (!(c instanceof PyType)) raise('TypeError', 'issubclass() arg 1 must be a class');
    const ps = p instanceof PyTuple ? p.items : [p];
    return ps.some(
      (x) =>
        x instanceof PyType &&
        (x.name === (c as PyType).name ||
          ((c as PyType).name in EXC_PARENT && isSubclassName((c as PyType).name, x.name)) ||
          x.name === 'object' ||
          (x.name === 'int' && (c as PyType).name === 'bool')),
    );
  }),
  repr: fn('repr', (a) => repr(a[0])),
  ascii: fn('ascii', (a) =>
    repr(a[0]).replace(/[^\x00-\x7f]/g, (c) => {
      const n = c.codePointAt(0)!;
      return n < 0x100 ? `\\x${n.toString(16).padStart(2, '0')}` : `\\u${n.toString(16).padStart(4, '0')}`;
    }),
  ),
  chr: fn('chr', (a) => {
    const n = Number(toNumeric(a[0]));
    if (!isIntLike(a[0])) raise('TypeError', `'${typeName(a[0])}' object cannot be interpreted as an integer`);
    if (n < 0 || n > 0x10ffff) raise('ValueError', 'chr() arg not in range(0x110000)');
    return String.fromCodePoint(n);
  }),
  ord: fn('ord', (a) => {
    const s = a[0];
    if (typeof s !== 'string') return raise('TypeError', `ord() expected string of length 1, but ${typeName(s)} found`);
    const chars = Array.from(s);
    if (chars.length !== 1)
      raise('TypeError', `ord() expected a character, but string of length ${chars.length} found`);
    return BigInt(chars[0].codePointAt(0)!);
  }),
  hex: fn('hex', (a) => intRepr(a[0], 16, '0x')),
  oct: fn('oct', (a) => intRepr(a[0], 8, '0o')),
  bin: fn('bin', (a) => intRepr(a[0], 2, '0b')),
  divmod: fn('divmod', (a) => new PyTuple([binop('//', a[0], a[1]), binop('%', a[0], a[1])])),
  pow: fn('pow', (a, kw) => {
    const p = bindArgs('pow', ['base', 'exp', 'mod'], a, kw, {mod: null});
    if (p.mod === null) return binop('**', p.base as Value, p.exp as Value);
    const b = toNumeric(p.base as Value),
      e = toNumeric(p.exp as Value),
      m = toNumeric(p.mod as Value);
    if (typeof b !== 'bigint' || typeof e !== 'bigint' || typeof m !== 'bigint')
      raise('TypeError', 'pow() 3rd argument not allowed unless all arguments are integers');
    if (m === 0n) raise('ValueError', 'pow() 3rd argument cannot be 0');
    let r = 1n,
      base = ((b % m) + m) % m,
      ex = e;
    if (ex < 0n) raise('ValueError', 'base is not invertible for the given modulus');
    while (ex > 0n) {
      if (ex & 1n) r = (r * base) % m;
      base = (base * base) % m;
      ex >>= 1n;
    }
    return m < 0n && r > 0n ? r + m : r;
  }),
  hasattr: fn('hasattr', (a) =>
    typeof a[1] === 'string' ? hasattr(a[0], a[1]) : raise('TypeError', 'hasattr(): attribute name must be string'),
  ),
  getattr: fn('getattr', (a) => {
    if (typeof a[1] !== 'string') raise('TypeError', 'getattr(): attribute name must be string');
    if (a.length > 2) {
      try {
        return getattr(a[0], a[1] as string);
      } catch (e) {
        if (e instanceof PyException && e.type === 'AttributeError') return a[2];
        throw e;
      }
    }
    return getattr(a[0], a[1] as string);
  }),
  callable: fn('callable', (a) => isCallable(a[0])),
  iter: fn('iter', (a) => {
    const v = a[0];
    if (v instanceof PyIterator) return v;
    return new PyIterator(iterate(v)[Symbol.iterator]());
  }),
  next: fn('next', (a) => {
    const it = a[0];
    if (!(it instanceof PyIterator)) return raise('TypeError', `'${typeName(it)}' object is not an iterator`);
    const r = it.next();
    if (r.done) {
      if (a.length > 1) return a[1];
      throw new PyException('StopIteration', '');
    }
    return r.value;
  }),
  format: fn('format', (a) => formatSpec(a[0], a.length > 1 ? String(a[1]) : '')),
  hash: fn('hash', (a) => {
    const k = hashKey(a[0]);
    let h = 0;
    for (let i = 0; i < k.length; i++) h = (h * 31 + k.charCodeAt(i)) | 0;
    return typeof a[0] === 'bigint' ? a[0] : BigInt(h);
  }),
  id: fn('id', () => raise('UnsupportedError', 'id() is not supported')),
  print: fn('print', () => null),
  vars: fn('vars', () => raise('UnsupportedError', 'vars() is not supported')),
  locals: fn('locals', () => raise('UnsupportedError', 'locals() is not supported')),
  globals: fn('globals', () => raise('UnsupportedError', 'globals() is not supported')),
  dir: fn('dir', () => raise('UnsupportedError', 'dir() is not supported')),
  eval: fn('eval', () => raise('UnsupportedError', "eval() is not supported by gristlite's formula engine")),
  exec: fn('exec', () => raise('UnsupportedError', "exec() is not supported by gristlite's formula engine")),
  compile: fn('compile', () => raise('UnsupportedError', 'compile() is not supported')),
  open: fn('open', () => raise('UnsupportedError', 'open() is not available to formulas')),
  input: fn('input', () => raise('UnsupportedError', 'input() is not available to formulas')),
  __import__: fn('__import__', () => raise('ImportError', '__import__ is not available to formulas')),
};

function isSubclassName(c: string, p: string): boolean {
  for (let t: string | undefined = c; t; t = EXC_PARENT[t]) if (t === p) return true;
  return false;
}

export const EXCEPTION_TYPES: Record<string, PyType> = Object.fromEntries(
  Object.keys(EXC_PARENT).map((name) => [name, excType(name)]),
);

/** Every builtin name, as a lookup table. */
export function builtinTable(): Map<string, Value> {
  const m = new Map<string, Value>();
  for (const [k, v] of Object.entries(TYPES)) if (k !== 'NoneType' && k !== 'function') m.set(k, v);
  for (const [k, v] of Object.entries(BUILTIN_FUNCTIONS)) m.set(k, v);
  for (const [k, v] of Object.entries(EXCEPTION_TYPES)) m.set(k, v);
  return m;
}

export {floatRepr, pyEquals, ExcObject};
