/** Grist's statistics functions (grist-core sandbox/grist/functions/stats.py). */
import {type PyCallable, PyTuple, type Value, raise, typeName} from '../values.js';
import {PyDate} from '../datetime.js';
import {dtime} from './date.js';
import {
  add,
  chain,
  chainNumeric,
  chainNumericA,
  def,
  div,
  isNumber,
  iterOrThrow,
  mul,
  numCompare,
  rest,
  sub,
  toF,
  v,
} from './util.js';

const all = (a: Record<string, Value | Value[]>) => [v(a, 'value'), ...rest(a, 'more_values')];

/** Grist's _average: a float total divided by the count (ZeroDivisionError when empty). */
function average(values: Iterable<bigint | number>): number {
  let total = 0,
    count = 0;
  for (const x of values) {
    total += Number(x);
    count++;
  }
  if (count === 0) raise('ZeroDivisionError', 'float division by zero');
  return total / count;
}

function pySum(values: Iterable<bigint | number>): bigint | number {
  let t: bigint | number = 0n;
  for (const x of values) t = add(t, x);
  return t;
}

/** Python's max/min over numbers, dates and datetimes, comparing dates as DTIME does. */
function extreme(values: Value[], sign: 1 | -1, dateKey: boolean): Value {
  let best: Value = values[0];
  let bestKey: Value = dateKey && best instanceof PyDate ? dtime(best, null) : best;
  for (let i = 1; i < values.length; i++) {
    const x = values[i];
    const key = dateKey && x instanceof PyDate ? dtime(x, null) : x;
    if (compareKeys(key, bestKey) * sign > 0) {
      best = x;
      bestKey = key;
    }
  }
  return best;
}

function compareKeys(a: Value, b: Value): number {
  if ((typeof a === 'bigint' || typeof a === 'number') && (typeof b === 'bigint' || typeof b === 'number')) {
    return numCompare(a, b);
  }
  if (a instanceof PyDate && b instanceof PyDate) return a.compare(b);
  return raise('TypeError', `'>' not supported between instances of '${typeName(a)}' and '${typeName(b)}'`);
}

function numericOrDate(values: Value[]): Value[] {
  const out: Value[] = [];
  for (const x of chain(values)) {
    if (typeof x === 'bigint' || typeof x === 'number' || x instanceof PyDate) out.push(x);
  }
  return out;
}

/** Standard deviation as Grist computes it: sum of squared deviations from the mean. */
function stddev(data: Array<bigint | number>, ddof: number): number {
  const n = data.length;
  if (n === 0) raise('ZeroDivisionError', 'float division by zero');
  const mean = div(pySum(data), n ? BigInt(n) : 1n) as number;
  let ss: bigint | number = 0n;
  for (const x of data) {
    const d = toF(sub(x, mean));
    ss = add(ss, d * d);
  }
  if (n - ddof === 0) raise('ZeroDivisionError', 'float division by zero');
  return Math.sqrt(toF(ss) / (n - ddof));
}

export const statsFunctions: Record<string, PyCallable> = {
  AVERAGE: def('AVERAGE', ['value', '*more_values'], {}, (a) => average(chainNumeric(all(a)))),
  AVERAGEA: def('AVERAGEA', ['value', '*more_values'], {}, (a) => average(chainNumericA(all(a)))),
  AVERAGE_WEIGHTED: def('AVERAGE_WEIGHTED', ['pairs'], {}, (a) => {
    let sumValue = 0,
      sumWeight = 0;
    for (const pair of iterOrThrow(v(a, 'pairs'))) {
      const items = pair instanceof PyTuple ? pair.items : iterOrThrow(pair);
      if (items.length !== 2) raise('ValueError', `too many values to unpack (expected 2)`);
      const [value, weight] = items;
      const ok = (x: Value) => isNumber(x) && typeof x !== 'boolean';
      if (ok(value) && ok(weight)) {
        sumValue += toF(mul(value, weight));
        sumWeight += toF(weight);
      }
    }
    if (sumWeight === 0) raise('ZeroDivisionError', 'float division by zero');
    return sumValue / sumWeight;
  }),
  COUNT: def('COUNT', ['value', '*more_values'], {}, (a) => BigInt(numericOrDate(all(a)).length)),
  COUNTA: def('COUNTA', ['value', '*more_values'], {}, (a) => BigInt([...chain(all(a))].length)),
  MAX: def('MAX', ['value', '*more_values'], {}, (a) => {
    const values = numericOrDate(all(a));
    return values.length ? extreme(values, 1, true) : 0n;
  }),
  MAXA: def('MAXA', ['value', '*more_values'], {}, (a) => {
    const values = [...chainNumericA(all(a))];
    return values.length ? extreme(values, 1, false) : 0n;
  }),
  MEDIAN: def('MEDIAN', ['value', '*more_values'], {}, (a) => {
    const values = [...chainNumeric(all(a))].sort(numCompare);
    if (values.length === 0) raise('ValueError', 'MEDIAN requires at least one number');
    const n = values.length;
    if (n % 2 === 0) return toF(add(values[n / 2 - 1], values[n / 2])) / 2;
    return values[(n - 1) / 2];
  }),
  MIN: def('MIN', ['value', '*more_values'], {}, (a) => {
    const values = numericOrDate(all(a));
    return values.length ? extreme(values, -1, true) : 0n;
  }),
  MINA: def('MINA', ['value', '*more_values'], {}, (a) => {
    const values = [...chainNumericA(all(a))];
    return values.length ? extreme(values, -1, false) : 0n;
  }),
  STDEV: def('STDEV', ['value', '*more_values'], {}, (a) => stddev([...chainNumeric(all(a))], 1)),
  STDEVA: def('STDEVA', ['value', '*more_values'], {}, (a) => stddev([...chainNumericA(all(a))], 1)),
  STDEVP: def('STDEVP', ['value', '*more_values'], {}, (a) => stddev([...chainNumeric(all(a))], 0)),
  STDEVPA: def('STDEVPA', ['value', '*more_values'], {}, (a) => stddev([...chainNumericA(all(a))], 0)),
};
