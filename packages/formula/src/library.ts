/**
 * What the engine takes from the function library: Grist's functions (SUM, IF, ...) as globals,
 * the importable modules, and the date hooks. The library (functions/, modules/, datetime.ts) is
 * written separately; `defaultLibrary()` combines its modules (modules/index.ts) with the small
 * ones defined here (collections, statistics, operator, random).
 */
import {PyModule, modules as libraryModules} from './modules/index.js';
import {
  type Kwargs,
  PyCallable,
  PyDict,
  PyException,
  PyTuple,
  type Value,
  attributeError,
  raise,
  repr,
  toFloat,
} from './values.js';
import type {DateHooks} from './convert.js';
import {binop, callValue, compareOp, getitem, iterate, toArray, pyCompare} from './ops.js';
import {getattr} from './methods.js';
import {TYPES, toFloatValue} from './builtins.js';
import {gristFunctions} from './functions/index.js';
import {dateFromCell, datetimeFromCell} from './datetime.js';

export interface FormulaLibrary {
  /** Grist's functions, visible to every formula as globals. */
  functions: {[name: string]: PyCallable};
  /** Importable modules by name ('datetime', 'math', 're', ...). */
  modules: {[name: string]: Value};
  dateHooks?: DateHooks;
}

const fn = (name: string, impl: (args: Value[], kw: Kwargs | null) => Value) => new PyCallable(name, impl);

// ---- operator ---------------------------------------------------------------------------------

const operator = new PyModule('operator', {
  itemgetter: fn('itemgetter', (a) =>
    fn('itemgetter', (b) => (a.length === 1 ? getitem(b[0], a[0]) : new PyTuple(a.map((k) => getitem(b[0], k))))),
  ),
  attrgetter: fn('attrgetter', (a) =>
    fn('attrgetter', (b) => {
      const get = (name: Value) =>
        String(name)
          .split('.')
          .reduce((o: Value, n) => getattr(o, n), b[0]);
      return a.length === 1 ? get(a[0]) : new PyTuple(a.map(get));
    }),
  ),
  add: fn('add', (a) => binop('+', a[0], a[1])),
  sub: fn('sub', (a) => binop('-', a[0], a[1])),
  mul: fn('mul', (a) => binop('*', a[0], a[1])),
  truediv: fn('truediv', (a) => binop('/', a[0], a[1])),
});

// ---- collections ------------------------------------------------------------------------------

class DefaultDict extends PyDict {
  constructor(readonly factory: Value) {
    super();
  }
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

function nums(v: Value): number[] {
  return toArray(v).map((x) => toFloatValue(x));
}
function mean(xs: number[]): number {
  if (!xs.length) raise('StatisticsError', 'mean requires at least one data point');
  return xs.reduce((s, x) => s + x, 0) / xs.length;
}
function variance(xs: number[], sample: boolean): number {
  if (xs.length < (sample ? 2 : 1))
    raise(
      'StatisticsError',
      `${sample ? 'variance' : 'pvariance'} requires at least ${sample ? 'two data points' : 'one data point'}`,
    );
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
    let best: Value = items[0],
      n = -1n;
    for (const [k, c] of counts.entries())
      if ((c as bigint) > n) {
        best = k;
        n = c as bigint;
      }
    return best;
  }),
});

const random = new PyModule('random', {
  random: fn('random', () => Math.random()),
  randint: fn('randint', (a) => {
    const lo = Number(a[0]),
      hi = Number(a[1]);
    return BigInt(lo + Math.floor(Math.random() * (hi - lo + 1)));
  }),
  choice: fn('choice', (a) => {
    const items = toArray(a[0]);
    if (!items.length) raise('IndexError', 'Cannot choose from an empty sequence');
    return items[Math.floor(Math.random() * items.length)];
  }),
  uniform: fn('uniform', (a) => {
    const lo = toFloat(a[0]),
      hi = toFloat(a[1]);
    return lo + Math.random() * (hi - lo);
  }),
  shuffle: fn('shuffle', (a) => {
    const l = a[0] as Value[];
    for (let i = l.length - 1; i > 0; i--) {
      const j = Math.floor(Math.random() * (i + 1));
      [l[i], l[j]] = [l[j], l[i]];
    }
    return null;
  }),
});

/** The modules defined in this file. */
export const LOCAL_MODULES: {[name: string]: Value} = {operator, collections, statistics, random};

let registered: FormulaLibrary | null = null;

/**
 * Registers the function library (functions/index.ts, modules/, datetime hooks). Called once by
 * the library's entry point; until then the engine runs with the local modules and no Grist
 * functions beyond its own (PEEK, RECORD, PREVIOUS, NEXT, RANK, VLOOKUP).
 */
export function registerLibrary(lib: Partial<FormulaLibrary>): void {
  registered = {
    functions: {...(registered?.functions ?? {}), ...(lib.functions ?? {})},
    modules: {...(registered?.modules ?? {}), ...(lib.modules ?? {})},
    dateHooks: lib.dateHooks ?? registered?.dateHooks,
  };
}

/** The function library's functions, modules and date classes, with the modules of this file. */
export function defaultLibrary(): FormulaLibrary {
  return {
    functions: {...gristFunctions, ...(registered?.functions ?? {})},
    modules: {...LOCAL_MODULES, ...libraryModules, ...(registered?.modules ?? {})},
    dateHooks: registered?.dateHooks ?? {
      date: (ts) => dateFromCell(ts),
      datetime: (ts, tz) => datetimeFromCell(ts, tz),
    },
  };
}

/** The module `name` of a library, or undefined (own names only: `import constructor` finds nothing). */
export function findModule(lib: FormulaLibrary, name: string): Value | undefined {
  return Object.hasOwn(lib.modules, name) ? lib.modules[name] : undefined;
}

export {attributeError, compareOp};
