/**
 * What the engine takes from the function library: Grist's functions (SUM, IF, ...) as globals,
 * the importable modules, and the date hooks. The library (functions/, modules/, datetime.ts) is
 * written separately; `defaultLibrary()` combines it with the small modules defined here
 * (json, itertools, functools, collections, string, statistics, operator, random).
 */
import {
  Kwargs, PyCallable, PyDict, PyException, PyObject, PyTuple, Value, attributeError, bindArgs, raise, repr, str, toFloat,
  truthy, typeName,
} from './values.js';
import { DateHooks } from './convert.js';
import { PyIterator, binop, callValue, compareOp, getitem, iterate, toArray, pyCompare } from './ops.js';
import { getattr } from './methods.js';
import { currentBudget } from './budget.js';
import { TYPES, toFloatValue } from './builtins.js';
import { gristFunctions } from './functions/index.js';
import { mathModule } from './modules/math.js';
import { reModule } from './modules/re.js';
import {
  MAXYEAR, MINYEAR, UTC, dateClass, dateFromCell, datetimeClass, datetimeFromCell, timeClass, timedeltaClass, timezoneClass, tzinfoClass,
} from './datetime.js';

export interface FormulaLibrary {
  /** Grist's functions, visible to every formula as globals. */
  functions: { [name: string]: PyCallable };
  /** Importable modules by name ('datetime', 'math', 're', ...). */
  modules: { [name: string]: Value };
  dateHooks?: DateHooks;
}

/** A Python module object. */
export class PyModule implements PyObject {
  readonly pyType = 'module';
  constructor(readonly name: string, readonly attrs: { [name: string]: Value }) {}
  getattr(name: string): Value {
    if (Object.prototype.hasOwnProperty.call(this.attrs, name)) return this.attrs[name];
    return raise('AttributeError', `module '${this.name}' has no attribute '${name}'`);
  }
  repr(): string { return `<module '${this.name}'>`; }
}

const fn = (name: string, impl: (args: Value[], kw: Kwargs | null) => Value) => new PyCallable(name, impl);

function gen(name: string, g: () => Generator<Value>): PyIterator {
  return new PyIterator(g(), name);
}

// ---- json -----------------------------------------------------------------------------------

function toJson(v: Value, indent: string | null, level: number, sortKeys: boolean): string {
  const nl = indent === null ? '' : '\n' + indent.repeat(level + 1);
  const end = indent === null ? '' : '\n' + indent.repeat(level);
  const sep = indent === null ? ', ' : ',';
  if (v === null) return 'null';
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'number') return Number.isFinite(v) ? repr(v) : Number.isNaN(v) ? 'NaN' : v > 0 ? 'Infinity' : '-Infinity';
  if (typeof v === 'string') return JSON.stringify(v).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  if (Array.isArray(v) || v instanceof PyTuple) {
    const items = Array.isArray(v) ? v : v.items;
    if (!items.length) return '[]';
    return `[${nl}${items.map((x) => toJson(x, indent, level + 1, sortKeys)).join(sep + nl)}${end}]`;
  }
  if (v instanceof PyDict) {
    let entries = v.entries();
    if (!entries.length) return '{}';
    if (sortKeys) entries = [...entries].sort((a, b) => pyCompare(a[0], b[0]));
    return `{${nl}${entries.map(([k, x]) => `${toJson(typeof k === 'string' ? k : str(k), null, 0, false)}: ${toJson(x, indent, level + 1, sortKeys)}`).join(sep + nl)}${end}}`;
  }
  return raise('TypeError', `Object of type ${typeName(v)} is not JSON serializable`);
}

function fromJson(x: unknown): Value {
  if (x === null || typeof x === 'boolean' || typeof x === 'string') return x as Value;
  if (typeof x === 'number') return Number.isInteger(x) ? BigInt(x) : x;
  if (Array.isArray(x)) return x.map(fromJson);
  const d = new PyDict();
  for (const [k, v] of Object.entries(x as object)) d.set(k, fromJson(v));
  return d;
}

const json = new PyModule('json', {
  dumps: fn('dumps', (a, kw) => {
    const p = bindArgs('dumps', ['obj'], a.slice(0, 1), null);
    const ind = kw?.indent ?? null;
    const indent = ind === null ? null : typeof ind === 'string' ? ind : ' '.repeat(Number(ind));
    return toJson(p.obj as Value, indent, 0, truthy(kw?.sort_keys ?? false));
  }),
  loads: fn('loads', (a) => {
    const s = a[0];
    if (typeof s !== 'string') raise('TypeError', `the JSON object must be str, not ${typeName(s)}`);
    // Integers keep full precision: JSON.parse gives numbers; big integers are re-read from text.
    try {
      const parsed = JSON.parse(s as string, (_k, v, ctx?: { source?: string }) => (typeof v === 'number' && ctx?.source && /^-?\d+$/.test(ctx.source) ? { __int: ctx.source } : v));
      const fix = (x: unknown): Value => {
        if (x && typeof x === 'object' && !Array.isArray(x) && '__int' in (x as object) && Object.keys(x as object).length === 1) return BigInt((x as { __int: string }).__int);
        if (Array.isArray(x)) return x.map(fix);
        if (x && typeof x === 'object') { const d = new PyDict(); for (const [k, v] of Object.entries(x)) d.set(k, fix(v)); return d; }
        return fromJson(x);
      };
      return fix(parsed);
    } catch (e) {
      if (e instanceof PyException) throw e;
      throw new PyException('JSONDecodeError', e instanceof Error ? e.message : String(e));
    }
  }),
});

// ---- itertools / functools / operator ---------------------------------------------------------

const itertools = new PyModule('itertools', {
  chain: (() => {
    const chain = fn('chain', (a) => gen('chain', function* () { for (const x of a) for (const y of iterate(x)) { currentBudget.tick(); yield y; } }));
    return chain;
  })(),
  product: fn('product', (a, kw) => {
    const rep = Number(kw?.repeat ?? 1n);
    let pools = a.map((x) => toArray(x));
    pools = Array.from({ length: rep }, () => pools).flat();
    return gen('product', function* () {
      let acc: Value[][] = [[]];
      for (const pool of pools) {
        const next: Value[][] = [];
        for (const pre of acc) for (const x of pool) { currentBudget.tick(); next.push([...pre, x]); }
        acc = next;
      }
      for (const t of acc) yield new PyTuple(t);
    });
  }),
  permutations: fn('permutations', (a) => {
    const pool = toArray(a[0]);
    const r = a.length > 1 && a[1] !== null ? Number(a[1]) : pool.length;
    return gen('permutations', function* () {
      const rec = function* (prefix: number[]): Generator<Value> {
        if (prefix.length === r) { yield new PyTuple(prefix.map((i) => pool[i])); return; }
        for (let i = 0; i < pool.length; i++) if (!prefix.includes(i)) { currentBudget.tick(); yield* rec([...prefix, i]); }
      };
      yield* rec([]);
    });
  }),
  combinations: fn('combinations', (a) => {
    const pool = toArray(a[0]);
    const r = Number(a[1]);
    return gen('combinations', function* () {
      const rec = function* (start: number, prefix: Value[]): Generator<Value> {
        if (prefix.length === r) { yield new PyTuple(prefix); return; }
        for (let i = start; i < pool.length; i++) { currentBudget.tick(); yield* rec(i + 1, [...prefix, pool[i]]); }
      };
      yield* rec(0, []);
    });
  }),
  islice: fn('islice', (a) => {
    const src = iterate(a[0]);
    let start = 0, stop: number | null, step = 1;
    if (a.length === 2) stop = a[1] === null ? null : Number(a[1]);
    else { start = a[1] === null ? 0 : Number(a[1]); stop = a[2] === null ? null : Number(a[2]); step = a.length > 3 && a[3] !== null ? Number(a[3]) : 1; }
    return gen('islice', function* () {
      let i = 0;
      for (const x of src) {
        if (stop !== null && i >= stop) return;
        if (i >= start && (i - start) % step === 0) yield x;
        i++;
      }
    });
  }),
  groupby: fn('groupby', (a, kw) => {
    const key = kw?.key ?? a[1] ?? null;
    const items = toArray(a[0]);
    return gen('groupby', function* () {
      let i = 0;
      while (i < items.length) {
        const k = key === null ? items[i] : callValue(key, [items[i]], null);
        const group: Value[] = [];
        while (i < items.length) {
          const k2 = key === null ? items[i] : callValue(key, [items[i]], null);
          if (!compareOp('==', k, k2)) break;
          group.push(items[i++]);
        }
        yield new PyTuple([k, new PyIterator(group[Symbol.iterator](), '_grouper')]);
      }
    });
  }),
  accumulate: fn('accumulate', (a, kw) => {
    const f = a[1] ?? kw?.func ?? null;
    const src = iterate(a[0]);
    return gen('accumulate', function* () {
      let acc: Value | undefined = kw ? kw.initial : undefined;
      if (acc !== undefined) yield acc;
      for (const x of src) {
        acc = acc === undefined ? x : f === null ? binop('+', acc, x) : callValue(f, [acc, x], null);
        yield acc;
      }
    });
  }),
  zip_longest: fn('zip_longest', (a, kw) => {
    const fill = kw?.fillvalue ?? null;
    const lists = a.map((x) => toArray(x));
    const n = Math.max(0, ...lists.map((l) => l.length));
    return gen('zip_longest', function* () { for (let i = 0; i < n; i++) yield new PyTuple(lists.map((l) => (i < l.length ? l[i] : fill))); });
  }),
  count: fn('count', (a) => {
    let i: Value = a[0] ?? 0n;
    const step = a[1] ?? 1n;
    return gen('count', function* () { for (;;) { currentBudget.tick(); yield i; i = binop('+', i, step); } });
  }),
  repeat: fn('repeat', (a) => {
    const times = a.length > 1 ? Number(a[1]) : Infinity;
    return gen('repeat', function* () { for (let i = 0; i < times; i++) { currentBudget.tick(); yield a[0]; } });
  }),
  starmap: fn('starmap', (a) => gen('starmap', function* () { for (const x of iterate(a[1])) yield callValue(a[0], toArray(x), null); })),
  takewhile: fn('takewhile', (a) => gen('takewhile', function* () { for (const x of iterate(a[1])) { if (!truthy(callValue(a[0], [x], null))) return; yield x; } })),
  dropwhile: fn('dropwhile', (a) => gen('dropwhile', function* () { let drop = true; for (const x of iterate(a[1])) { if (drop && truthy(callValue(a[0], [x], null))) continue; drop = false; yield x; } })),
});

const functools = new PyModule('functools', {
  reduce: fn('reduce', (a) => {
    const items = toArray(a[1]);
    let acc: Value;
    let i = 0;
    if (a.length > 2) acc = a[2];
    else {
      if (!items.length) raise('TypeError', 'reduce() of empty iterable with no initial value');
      acc = items[i++];
    }
    for (; i < items.length; i++) acc = callValue(a[0], [acc, items[i]], null);
    return acc;
  }),
  partial: fn('partial', (a, kw) => {
    const [f, ...pre] = a;
    return fn('partial', (b, kw2) => callValue(f, [...pre, ...b], kw || kw2 ? { ...(kw ?? {}), ...(kw2 ?? {}) } : null));
  }),
  cmp_to_key: fn('cmp_to_key', (a) => fn('K', (b) => new CmpKey(a[0], b[0]))),
});

class CmpKey implements PyObject {
  readonly pyType = 'functools.KeyWrapper';
  constructor(private readonly cmp: Value, readonly v: Value) {}
  compare(o: Value): number { return Number(toFloat(callValue(this.cmp, [this.v, (o as CmpKey).v], null))); }
}

const operator = new PyModule('operator', {
  itemgetter: fn('itemgetter', (a) => fn('itemgetter', (b) => (a.length === 1 ? getitem(b[0], a[0]) : new PyTuple(a.map((k) => getitem(b[0], k)))))),
  attrgetter: fn('attrgetter', (a) => fn('attrgetter', (b) => {
    const get = (name: Value) => String(name).split('.').reduce((o: Value, n) => getattr(o, n), b[0]);
    return a.length === 1 ? get(a[0]) : new PyTuple(a.map(get));
  })),
  add: fn('add', (a) => binop('+', a[0], a[1])),
  sub: fn('sub', (a) => binop('-', a[0], a[1])),
  mul: fn('mul', (a) => binop('*', a[0], a[1])),
  truediv: fn('truediv', (a) => binop('/', a[0], a[1])),
});

// ---- collections ------------------------------------------------------------------------------

class DefaultDict extends PyDict {
  constructor(readonly factory: Value) { super(); }
  missing = (k: Value): Value => {
    if (this.factory === null) throw new PyException('KeyError', repr(k));
    const v = callValue(this.factory, [], null);
    this.set(k, v);
    return v;
  };
}

function counter(a: Value[], kw: Kwargs | null): PyDict {
  const d = new DefaultDict(fn('int', () => 0n));
  if (a.length) {
    if (a[0] instanceof PyDict) for (const [k, v] of a[0].entries()) d.set(k, v);
    else for (const x of iterate(a[0])) d.set(x, binop('+', d.get(x) ?? 0n, 1n));
  }
  for (const [k, v] of Object.entries(kw ?? {})) d.set(k, v);
  return d;
}

const collections = new PyModule('collections', {
  OrderedDict: TYPES.dict,
  defaultdict: fn('defaultdict', (a) => {
    const d = new DefaultDict(a[0] ?? null);
    if (a[1] instanceof PyDict) for (const [k, v] of a[1].entries()) d.set(k, v);
    return d;
  }),
  Counter: fn('Counter', counter),
  namedtuple: fn('namedtuple', () => raise('UnsupportedError', 'collections.namedtuple is not supported')),
  deque: fn('deque', (a) => (a.length ? toArray(a[0]) : [])),
});

// ---- string, statistics, random ----------------------------------------------------------------

const string = new PyModule('string', {
  ascii_letters: 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ',
  ascii_lowercase: 'abcdefghijklmnopqrstuvwxyz',
  ascii_uppercase: 'ABCDEFGHIJKLMNOPQRSTUVWXYZ',
  digits: '0123456789',
  hexdigits: '0123456789abcdefABCDEF',
  octdigits: '01234567',
  punctuation: '!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~',
  whitespace: ' \t\n\r\x0b\x0c',
  printable: '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~ \t\n\r\x0b\x0c',
  capwords: fn('capwords', (a) => String(a[0]).split(/\s+/).filter(Boolean).map((w) => w[0].toUpperCase() + w.slice(1).toLowerCase()).join(' ')),
});

function nums(v: Value): number[] { return toArray(v).map((x) => toFloatValue(x)); }
function mean(xs: number[]): number {
  if (!xs.length) raise('StatisticsError', 'mean requires at least one data point');
  return xs.reduce((s, x) => s + x, 0) / xs.length;
}
function variance(xs: number[], sample: boolean): number {
  if (xs.length < (sample ? 2 : 1)) raise('StatisticsError', `${sample ? 'variance' : 'pvariance'} requires at least ${sample ? 'two data points' : 'one data point'}`);
  const m = mean(xs);
  return xs.reduce((s, x) => s + (x - m) ** 2, 0) / (xs.length - (sample ? 1 : 0));
}
const statistics = new PyModule('statistics', {
  mean: fn('mean', (a) => {
    const items = toArray(a[0]);
    if (!items.length) raise('StatisticsError', 'mean requires at least one data point');
    const allInt = items.every((x) => typeof x === 'bigint');
    const m = mean(items.map((x) => toFloatValue(x)));
    return allInt && Number.isInteger(m) ? BigInt(m) : m;
  }),
  fmean: fn('fmean', (a) => mean(nums(a[0]))),
  median: fn('median', (a) => {
    const items = toArray(a[0]).sort((x, y) => pyCompare(x, y));
    if (!items.length) raise('StatisticsError', 'no median for empty data');
    const n = items.length;
    return n % 2 ? items[(n - 1) / 2] : binop('/', binop('+', items[n / 2 - 1], items[n / 2]), 2n);
  }),
  stdev: fn('stdev', (a) => Math.sqrt(variance(nums(a[0]), true))),
  pstdev: fn('pstdev', (a) => Math.sqrt(variance(nums(a[0]), false))),
  variance: fn('variance', (a) => variance(nums(a[0]), true)),
  pvariance: fn('pvariance', (a) => variance(nums(a[0]), false)),
  mode: fn('mode', (a) => {
    const items = toArray(a[0]);
    if (!items.length) raise('StatisticsError', 'no mode for empty data');
    const counts = new PyDict();
    for (const x of items) counts.set(x, ((counts.get(x) as bigint) ?? 0n) + 1n);
    let best: Value = items[0], n = -1n;
    for (const [k, c] of counts.entries()) if ((c as bigint) > n) { best = k; n = c as bigint; }
    return best;
  }),
});

const random = new PyModule('random', {
  random: fn('random', () => Math.random()),
  randint: fn('randint', (a) => { const lo = Number(a[0]), hi = Number(a[1]); return BigInt(lo + Math.floor(Math.random() * (hi - lo + 1))); }),
  choice: fn('choice', (a) => { const items = toArray(a[0]); if (!items.length) raise('IndexError', 'Cannot choose from an empty sequence'); return items[Math.floor(Math.random() * items.length)]; }),
  uniform: fn('uniform', (a) => { const lo = toFloat(a[0]), hi = toFloat(a[1]); return lo + Math.random() * (hi - lo); }),
  shuffle: fn('shuffle', (a) => { const l = a[0] as Value[]; for (let i = l.length - 1; i > 0; i--) { const j = Math.floor(Math.random() * (i + 1)); [l[i], l[j]] = [l[j], l[i]]; } return null; }),
});

/** The modules defined in this file. */
export const LOCAL_MODULES: { [name: string]: Value } = { json, itertools, functools, operator, collections, string, statistics, random };

let registered: FormulaLibrary | null = null;

/**
 * Registers the function library (functions/index.ts, modules/, datetime hooks). Called once by
 * the library's entry point; until then the engine runs with the local modules and no Grist
 * functions beyond its own (PEEK, RECORD, PREVIOUS, NEXT, RANK, VLOOKUP).
 */
export function registerLibrary(lib: Partial<FormulaLibrary>): void {
  registered = {
    functions: { ...(registered?.functions ?? {}), ...(lib.functions ?? {}) },
    modules: { ...(registered?.modules ?? {}), ...(lib.modules ?? {}) },
    dateHooks: lib.dateHooks ?? registered?.dateHooks,
  };
}

const datetimeModule = new PyModule('datetime', {
  date: dateClass, datetime: datetimeClass, time: timeClass, timedelta: timedeltaClass, timezone: timezoneClass,
  tzinfo: tzinfoClass, UTC, MINYEAR: BigInt(MINYEAR), MAXYEAR: BigInt(MAXYEAR),
});

/** The function library's functions, modules and date classes, with the modules of this file. */
export function defaultLibrary(): FormulaLibrary {
  return {
    functions: { ...gristFunctions, ...(registered?.functions ?? {}) },
    modules: { ...LOCAL_MODULES, datetime: datetimeModule, math: mathModule, re: reModule, ...(registered?.modules ?? {}) },
    dateHooks: registered?.dateHooks ?? { date: (ts) => dateFromCell(ts), datetime: (ts, tz) => datetimeFromCell(ts, tz) },
  };
}

export { attributeError, compareOp };
