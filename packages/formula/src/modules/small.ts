/**
 * The small standard modules formulas may import: time, json, string, itertools, functools (the
 * common functions). Iterator-returning functions return lists (formulas consume them whole).
 */
import {
  type Kwargs,
  PyDict,
  type PyObject,
  PyTuple,
  type Value,
  bindArgs,
  floatRepr,
  hashKey,
  raise,
  str,
  truthy,
  typeName,
} from '../values.js';
import {fn, nowMs} from '../datetime.js';
import {iterOrThrow} from '../functions/util.js';
import {sizeArg} from '../budget.js';

/** A module object: named attributes, AttributeError for the rest. */
export class PyModule implements PyObject {
  readonly pyType = 'module';
  constructor(
    readonly name: string,
    readonly attrs: Record<string, Value>,
  ) {}
  getattr(name: string): Value {
    if (name === '__name__') return this.name;
    if (Object.hasOwn(this.attrs, name)) return this.attrs[name];
    return raise('AttributeError', `module '${this.name}' has no attribute '${name}'`);
  }
  repr(): string {
    return `<module '${this.name}'>`;
  }
  hashKey(): string {
    return `module:${this.name}`;
  }
}

const call = (f: Value, args: Value[]): Value => {
  const o = f as PyObject;
  if (o === null || typeof o !== 'object' || typeof o.call !== 'function') {
    return raise('TypeError', `'${typeName(f)}' object is not callable`);
  }
  return o.call(args, null);
};

// ---- time -------------------------------------------------------------------------------------

export const timeModule = new PyModule('time', {
  time: fn('time', () => nowMs() / 1000),
  time_ns: fn('time_ns', () => BigInt(nowMs()) * 1_000_000n),
});

// ---- string -----------------------------------------------------------------------------------

const lower = 'abcdefghijklmnopqrstuvwxyz';
const upper = lower.toUpperCase();
const punctuation = '!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~';
const whitespace = ' \t\n\r\x0b\x0c';
export const stringModule = new PyModule('string', {
  ascii_lowercase: lower,
  ascii_uppercase: upper,
  ascii_letters: lower + upper,
  digits: '0123456789',
  hexdigits: '0123456789abcdefABCDEF',
  octdigits: '01234567',
  punctuation,
  whitespace,
  printable: '0123456789' + lower + upper + punctuation + whitespace,
  capwords: fn('capwords', (a, k) => {
    const b = bindArgs('capwords', ['s', 'sep'], a, k, {sep: null});
    const s = String(b.s);
    const cap = (w: string) => (w ? w[0].toUpperCase() + w.slice(1).toLowerCase() : w);
    if (b.sep === null)
      return s
        .split(/[ \t\n\r\x0b\x0c]+/)
        .filter(Boolean)
        .map(cap)
        .join(' ');
    return s.split(String(b.sep)).map(cap).join(String(b.sep));
  }),
});

// ---- json -------------------------------------------------------------------------------------

function jsonString(s: string, ensureAscii: boolean): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (ch === '"') out += '\\"';
    else if (ch === '\\') out += '\\\\';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\b') out += '\\b';
    else if (ch === '\f') out += '\\f';
    else if (c < 0x20 || (ensureAscii && c > 0x7e)) {
      const units = c > 0xffff ? [0xd800 + ((c - 0x10000) >> 10), 0xdc00 + ((c - 0x10000) & 0x3ff)] : [c];
      for (const u of units) out += `\\u${u.toString(16).padStart(4, '0')}`;
    } else out += ch;
  }
  return out + '"';
}

interface DumpOpts {
  indent: string | null;
  itemSep: string;
  keySep: string;
  sortKeys: boolean;
  ensureAscii: boolean;
  dflt: Value;
}

function jsonFloat(x: number): string {
  if (Number.isNaN(x)) return 'NaN';
  if (!Number.isFinite(x)) return x > 0 ? 'Infinity' : '-Infinity';
  return floatRepr(x);
}

function dumps(v: Value, o: DumpOpts, depth: number): string {
  if (depth > 500) raise('RecursionError', 'maximum recursion depth exceeded while encoding a JSON object');
  if (v === null) return 'null';
  if (v === true) return 'true';
  if (v === false) return 'false';
  if (typeof v === 'bigint') return String(v);
  if (typeof v === 'number') return jsonFloat(v);
  if (typeof v === 'string') return jsonString(v, o.ensureAscii);
  const nl = (d: number) => (o.indent === null ? '' : '\n' + o.indent.repeat(d));
  if (Array.isArray(v) || v instanceof PyTuple) {
    const items = Array.isArray(v) ? v : v.items;
    if (!items.length) return '[]';
    return (
      '[' + nl(depth + 1) + items.map((x) => dumps(x, o, depth + 1)).join(o.itemSep + nl(depth + 1)) + nl(depth) + ']'
    );
  }
  if (v instanceof PyDict) {
    if (!v.size) return '{}';
    let entries = v.entries().map(([k, x]) => {
      let key: string;
      if (typeof k === 'string') key = k;
      else if (typeof k === 'bigint') key = String(k);
      else if (typeof k === 'number') key = jsonFloat(k);
      else if (typeof k === 'boolean') key = k ? 'true' : 'false';
      else if (k === null) key = 'null';
      else return raise('TypeError', `keys must be str, int, float, bool or None, not ${typeName(k)}`);
      return [key, x] as [string, Value];
    });
    if (o.sortKeys) entries = entries.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    return (
      '{' +
      nl(depth + 1) +
      entries
        .map(([k, x]) => jsonString(k, o.ensureAscii) + o.keySep + dumps(x, o, depth + 1))
        .join(o.itemSep + nl(depth + 1)) +
      nl(depth) +
      '}'
    );
  }
  if (o.dflt !== null) return dumps(call(o.dflt, [v]), o, depth + 1);
  return raise('TypeError', `Object of type ${typeName(v)} is not JSON serializable`);
}

/** A JSON parser keeping integers exact (as Python's json gives ints). */
function loads(text: string): Value {
  let i = 0;
  const ws = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i])) i++;
  };
  const err = (msg: string): never => {
    const line = text.slice(0, i).split('\n').length;
    const col = i - text.lastIndexOf('\n', i - 1);
    return raise('JSONDecodeError', `${msg}: line ${line} column ${col} (char ${i})`);
  };
  const value = (): Value => {
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      const d = new PyDict();
      ws();
      if (text[i] === '}') {
        i++;
        return d;
      }
      for (;;) {
        ws();
        if (text[i] !== '"') err('Expecting property name enclosed in double quotes');
        const k = string();
        ws();
        if (text[i] !== ':') err("Expecting ':' delimiter");
        i++;
        d.set(k, value());
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === '}') {
          i++;
          return d;
        }
        err("Expecting ',' delimiter");
      }
    }
    if (c === '[') {
      i++;
      const out: Value[] = [];
      ws();
      if (text[i] === ']') {
        i++;
        return out;
      }
      for (;;) {
        out.push(value());
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === ']') {
          i++;
          return out;
        }
        err("Expecting ',' delimiter");
      }
    }
    if (c === '"') return string();
    for (const [word, val] of [
      ['true', true],
      ['false', false],
      ['null', null],
      ['NaN', NaN],
      ['Infinity', Infinity],
      ['-Infinity', -Infinity],
    ] as Array<[string, Value]>) {
      if (text.startsWith(word, i)) {
        i += word.length;
        return val;
      }
    }
    const m = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i));
    if (!m) return err('Expecting value');
    i += m[0].length;
    return m[2] || m[3] ? Number(m[0]) : BigInt(m[0]);
  };
  const string = (): string => {
    i++;
    let out = '';
    for (;;) {
      if (i >= text.length) err('Unterminated string starting at');
      const c = text[i++];
      if (c === '"') return out;
      if (c === '\\') {
        const e = text[i++];
        const map: Record<string, string> = {
          '"': '"',
          '\\': '\\',
          '/': '/',
          b: '\b',
          f: '\f',
          n: '\n',
          r: '\r',
          t: '\t',
        };
        if (e in map) out += map[e];
        else if (e === 'u') {
          out += String.fromCharCode(parseInt(text.slice(i, i + 4), 16));
          i += 4;
        } else err('Invalid \\escape');
      } else if (c < ' ') {
        err('Invalid control character at');
      } else out += c;
    }
  };
  const v = value();
  ws();
  if (i < text.length) err('Extra data');
  return v;
}

export const jsonModule = new PyModule('json', {
  dumps: fn('dumps', (a, k) => {
    const b = bindArgs('dumps', ['obj'], a, null);
    const kw: Kwargs = k ?? {};
    const indent = kw.indent ?? null;
    const ind = indent === null ? null : typeof indent === 'string' ? indent : ' '.repeat(Number(indent));
    let itemSep = ind === null ? ', ' : ',',
      keySep = ': ';
    if (kw.separators !== undefined && kw.separators !== null) {
      const seps = iterOrThrow(kw.separators);
      itemSep = str(seps[0]);
      keySep = str(seps[1]);
    }
    return dumps(
      b.obj as Value,
      {
        indent: ind,
        itemSep,
        keySep,
        sortKeys: truthy(kw.sort_keys ?? false),
        ensureAscii: truthy(kw.ensure_ascii ?? true),
        dflt: kw.default ?? null,
      },
      0,
    );
  }),
  loads: fn('loads', (a) => {
    const s = a[0];
    if (typeof s !== 'string')
      return raise('TypeError', `the JSON object must be str, bytes or bytearray, not ${typeName(s)}`);
    return loads(s);
  }),
});

// ---- itertools / functools ----------------------------------------------------------------------

function* combos(items: Value[], r: number, start = 0, acc: Value[] = []): Generator<Value[]> {
  if (acc.length === r) {
    yield acc.slice();
    return;
  }
  for (let i = start; i < items.length; i++) {
    acc.push(items[i]);
    yield* combos(items, r, i + 1, acc);
    acc.pop();
  }
}
function* perms(items: Value[], r: number, used: boolean[] = [], acc: Value[] = []): Generator<Value[]> {
  if (acc.length === r) {
    yield acc.slice();
    return;
  }
  for (let i = 0; i < items.length; i++) {
    if (used[i]) continue;
    used[i] = true;
    acc.push(items[i]);
    yield* perms(items, r, used, acc);
    used[i] = false;
    acc.pop();
  }
}

/** Most items an itertools function returns (they build lists): MemoryError beyond. */
const LIMIT = 1_000_000;

/** A count argument as CPython converts it (a C ssize_t). */
function countArg(v: Value): number {
  if (typeof v === 'boolean') return Number(v);
  if (typeof v !== 'bigint') return raise('TypeError', `'${typeName(v)}' object cannot be interpreted as an integer`);
  return sizeArg(v);
}
/**
 * The items of a pool an itertools function multiplies out, read lazily and refused beyond LIMIT:
 * `product(range(2**31), repeat=4)` must not copy two billion items before counting its result.
 */
function pool(x: Value): Value[] {
  const lazy = x !== null && typeof x === 'object' && !Array.isArray(x) ? (x as PyObject).iter : undefined;
  if (!lazy) return iterOrThrow(x);
  const out: Value[] = [];
  for (const item of lazy.call(x)) {
    out.push(item);
    if (out.length > LIMIT) raise('MemoryError', 'result too large');
  }
  return out;
}
function limited<T>(g: Iterable<T>): T[] {
  const out: T[] = [];
  for (const x of g) {
    out.push(x);
    if (out.length > LIMIT) raise('MemoryError', 'result too large');
  }
  return out;
}

export const itertoolsModule = new PyModule('itertools', {
  chain: Object.assign(
    fn('chain', (a) => a.flatMap((x) => iterOrThrow(x))),
    {},
  ),
  product: fn('product', (a, k) => {
    const repeat = countArg(k?.repeat ?? 1n);
    if (repeat < 0) raise('ValueError', 'repeat argument cannot be negative');
    let pools = a.map((x) => pool(x));
    // The result's size is known: refused before the pools are repeated or multiplied out.
    if (!pools.some((p) => p.length === 0)) {
      let count = 1;
      for (const p of pools) count *= p.length ** repeat;
      if (count > LIMIT || pools.length * repeat > LIMIT) raise('MemoryError', 'result too large');
    }
    pools = Array.from({length: repeat}, () => pools).flat();
    let result: Value[][] = [[]];
    for (const pool of pools) {
      result = limited(result.flatMap((r) => pool.map((x) => [...r, x])));
    }
    return result.map((r) => new PyTuple(r));
  }),
  permutations: fn('permutations', (a, k) => {
    const b = bindArgs('permutations', ['iterable', 'r'], a, k, {r: null});
    const items = pool(b.iterable as Value);
    const r = b.r === null ? items.length : Number(b.r);
    return limited(perms(items, r)).map((x) => new PyTuple(x));
  }),
  combinations: fn('combinations', (a, k) => {
    const b = bindArgs('combinations', ['iterable', 'r'], a, k);
    return limited(combos(pool(b.iterable as Value), Number(b.r))).map((x) => new PyTuple(x));
  }),
  groupby: fn('groupby', (a, k) => {
    const b = bindArgs('groupby', ['iterable', 'key'], a, k, {key: null});
    const out: Value[] = [];
    let curKey: Value | undefined,
      group: Value[] = [];
    for (const x of iterOrThrow(b.iterable as Value)) {
      const key = b.key === null ? x : call(b.key as Value, [x]);
      if (curKey === undefined || hashKeySafe(key) !== hashKeySafe(curKey)) {
        if (curKey !== undefined) out.push(new PyTuple([curKey, group]));
        curKey = key;
        group = [];
      }
      group.push(x);
    }
    if (curKey !== undefined) out.push(new PyTuple([curKey, group]));
    return out;
  }),
  islice: fn('islice', (a) => {
    const items = iterOrThrow(a[0]);
    const [start, stop, step] = a.length === 2 ? [0, a[1], 1] : [a[1] ?? 0, a[2] ?? null, a[3] ?? 1];
    const s = Number(start ?? 0),
      e = stop === null ? items.length : Number(stop),
      st = Number(step ?? 1);
    // A step below 1 would loop for ever.
    if (!(st >= 1)) raise('ValueError', 'Step for islice() must be a positive integer or None.');
    if (!(s >= 0)) raise('ValueError', 'Indices for islice() must be None or an integer: 0 <= x <= sys.maxsize.');
    const out: Value[] = [];
    for (let i = s; i < Math.min(e, items.length); i += st) out.push(items[i]);
    return out;
  }),
  accumulate: fn('accumulate', (a, k) => {
    const b = bindArgs('accumulate', ['iterable', 'func'], a, k, {func: null});
    const out: Value[] = [];
    let acc: Value | undefined = k?.initial;
    if (acc !== undefined) out.push(acc);
    for (const x of iterOrThrow(b.iterable as Value)) {
      acc = acc === undefined ? x : b.func === null ? addValues(acc, x) : call(b.func as Value, [acc, x]);
      out.push(acc);
    }
    return out;
  }),
  repeat: fn('repeat', (a) => {
    if (a.length < 2) raise('ValueError', 'itertools.repeat without times is infinite');
    const times = countArg(a[1]);
    if (times > LIMIT) raise('MemoryError', 'result too large');
    return Array.from({length: Math.max(0, times)}, () => a[0]);
  }),
  zip_longest: fn('zip_longest', (a, k) => {
    const lists = a.map((x) => iterOrThrow(x));
    const fill = k?.fillvalue ?? null;
    const n = Math.max(0, ...lists.map((l) => l.length));
    return Array.from({length: n}, (_, i) => new PyTuple(lists.map((l) => (i < l.length ? l[i] : fill))));
  }),
  starmap: fn('starmap', (a) => iterOrThrow(a[1]).map((x) => call(a[0], iterOrThrow(x)))),
});

function hashKeySafe(v: Value): string {
  try {
    return hashKey(v);
  } catch {
    return `id:${String(v)}`;
  }
}

/** `+` for accumulate's default: numbers, strings and lists. */
function addValues(x: Value, y: Value): Value {
  if (typeof x === 'string' && typeof y === 'string') return x + y;
  if (Array.isArray(x) && Array.isArray(y)) return [...x, ...y];
  if ((typeof x === 'bigint' || typeof x === 'boolean') && (typeof y === 'bigint' || typeof y === 'boolean')) {
    return BigInt(x) + BigInt(y);
  }
  if (
    (typeof x === 'number' || typeof x === 'bigint' || typeof x === 'boolean') &&
    (typeof y === 'number' || typeof y === 'bigint' || typeof y === 'boolean')
  )
    return Number(x) + Number(y);
  const o = x as PyObject;
  if (o?.binop) {
    const r = o.binop('+', y, false);
    if (typeof r !== 'symbol') return r;
  }
  return raise('TypeError', `unsupported operand type(s) for +: '${typeName(x)}' and '${typeName(y)}'`);
}

export const functoolsModule = new PyModule('functools', {
  reduce: fn('reduce', (a) => {
    if (a.length < 2) raise('TypeError', `reduce expected at least 2 arguments, got ${a.length}`);
    const items = iterOrThrow(a[1]);
    let acc: Value;
    let i = 0;
    if (a.length > 2) acc = a[2];
    else {
      if (!items.length) raise('TypeError', 'reduce() of empty iterable with no initial value');
      acc = items[i++];
    }
    for (; i < items.length; i++) acc = call(a[0], [acc, items[i]]);
    return acc;
  }),
  partial: fn('partial', (a, k) => {
    const [f, ...bound] = a;
    return fn('partial', (a2, k2) =>
      (f as PyObject).call!([...bound, ...a2], k || k2 ? {...(k ?? {}), ...(k2 ?? {})} : null),
    );
  }),
});
