/** Grist's math functions (grist-core sandbox/grist/functions/math.py), with Python's int/float results. */
import {type PyCallable, type Value, raise, isNumeric} from '../values.js';
import {mathModule, mathLog, mathPow, mathSqrt, factorial, comb, gcd2} from '../modules/math.js';
import {toFloatValue} from '../builtins.js';
import {
  type Args,
  add,
  chain,
  chainNumeric,
  chainNumericA,
  ceilInt,
  def,
  floorInt,
  index,
  iterItems,
  mul,
  num,
  pmod,
  pyAbs,
  pyInt,
  rest,
  strArg,
  toF,
  v,
} from './util.js';

const m = (name: string) => mathModule.getattr!(name) as PyCallable;
/** A one-argument function that is Python's math.<fn>. */
const math1 = (name: string, param: string, mathName: string) =>
  def(name, [param], {}, (a) => m(mathName).call!([v(a, param)], null));

const roundTowardZero = (x: number): bigint => (x >= 0 ? floorInt(x) : ceilInt(x));
const roundAwayFromZero = (x: number): bigint => (x >= 0 ? ceilInt(x) : floorInt(x));

/** `int * factor` with Python's types: int when factor is int, float otherwise. */
function intTimes(i: bigint, factor: Value): bigint | number {
  return mul(i, factor);
}

/** Python's `10 ** n` for an int n: an int for n >= 0, a float otherwise. */
function pow10(n: Value): bigint | number {
  const p = num(n);
  // Every caller takes the factor as a float: beyond 10**308 that raises, so 10n ** p (seconds for
  // a p of 10**9) is not computed.
  if (typeof p === 'bigint' && p > 400n) raise('OverflowError', 'int too large to convert to float');
  if (typeof p === 'bigint') return p >= 0n ? 10n ** p : 10 ** Number(p);
  return 10 ** p;
}

const ROMAN: Array<[number, string]> = [
  [1000, 'M'],
  [900, 'CM'],
  [500, 'D'],
  [400, 'CD'],
  [100, 'C'],
  [90, 'XC'],
  [50, 'L'],
  [40, 'XL'],
  [10, 'X'],
  [9, 'IX'],
  [5, 'V'],
  [4, 'IV'],
  [1, 'I'],
];

/** The `roman` package's toRoman: 1..4999. */
function toRoman(n: number): string {
  if (n <= 0 || n >= 5000) raise('OutOfRangeError', 'number out of range (must be 1..4999)');
  let out = '';
  for (const [val, sym] of ROMAN)
    while (n >= val) {
      out += sym;
      n -= val;
    }
  return out;
}
const ROMAN_RE = /^M{0,4}(CM|CD|D?C{0,3})(XC|XL|L?X{0,3})(IX|IV|V?I{0,3})$/;
/** The `roman` package's fromRoman: strict numerals only. */
function fromRoman(s: string): number {
  if (!s) raise('InvalidRomanNumeralError', 'Input can not be blank');
  if (!ROMAN_RE.test(s)) raise('InvalidRomanNumeralError', `Invalid Roman numeral: ${s}`);
  let i = 0,
    out = 0;
  for (const [val, sym] of ROMAN) {
    while (s.startsWith(sym, i)) {
      out += val;
      i += sym.length;
    }
  }
  return out;
}

function sumValues(values: Iterable<Value>): bigint | number {
  let total: bigint | number = 0n;
  for (const x of values) total = add(total, x);
  return total;
}

function checkFactor(value: Value, factor: Value): void {
  if (toF(factor) < 0 !== toF(value) < 0) raise('ValueError', 'factor argument invalid');
}

export const mathFunctions: Record<string, PyCallable> = {
  ABS: def('ABS', ['value'], {}, (a) => pyAbs(v(a, 'value'))),
  ACOS: math1('ACOS', 'value', 'acos'),
  ACOSH: math1('ACOSH', 'value', 'acosh'),
  ARABIC: def('ARABIC', ['roman_numeral'], {}, (a) =>
    BigInt(fromRoman(strArg(v(a, 'roman_numeral'), 'ARABIC').toUpperCase())),
  ),
  ASIN: math1('ASIN', 'value', 'asin'),
  ASINH: math1('ASINH', 'value', 'asinh'),
  ATAN: math1('ATAN', 'value', 'atan'),
  // Grist's ATAN2(x, y) is math.atan2(y, x), as in spreadsheets.
  ATAN2: def('ATAN2', ['x', 'y'], {}, (a) => m('atan2').call!([v(a, 'y'), v(a, 'x')], null)),
  ATANH: math1('ATANH', 'value', 'atanh'),
  CEILING: def('CEILING', ['value', 'factor'], {factor: 1n}, (a) =>
    intTimes(ceilInt(toF(v(a, 'value')) / divisor(v(a, 'factor'))), v(a, 'factor')),
  ),
  COMBIN: def('COMBIN', ['n', 'k'], {}, (a) => combin(v(a, 'n'), v(a, 'k'))),
  COS: math1('COS', 'angle', 'cos'),
  COSH: math1('COSH', 'value', 'cosh'),
  DEGREES: math1('DEGREES', 'angle', 'degrees'),
  EVEN: def('EVEN', ['value'], {}, (a) => roundAwayFromZero(toF(v(a, 'value')) / 2) * 2n),
  EXP: math1('EXP', 'exponent', 'exp'),
  FACT: def('FACT', ['value'], {}, (a) => factorial(pyInt(v(a, 'value')))),
  FACTDOUBLE: def('FACTDOUBLE', ['value'], {}, (a) => {
    // Product of value, value-2, ... down to 2 (or 1); an empty range raises as Python's reduce does.
    const n = BigInt(index(v(a, 'value')));
    if (n <= 1n) raise('TypeError', 'reduce() of empty iterable with no initial value');
    let r = 1n;
    for (let i = n; i > 1n; i -= 2n) r *= i;
    return r;
  }),
  FLOOR: def('FLOOR', ['value', 'factor'], {factor: 1n}, (a) => {
    checkFactor(v(a, 'value'), v(a, 'factor'));
    return intTimes(floorInt(toF(v(a, 'value')) / divisor(v(a, 'factor'))), v(a, 'factor'));
  }),
  GCD: def('GCD', ['value1', '*more_values'], {}, (a) => {
    const values = [v(a, 'value1'), ...rest(a, 'more_values')].filter((x) => toF(x) !== 0);
    if (values.length === 0) return 0n;
    if (values.some((x) => toF(x) < 0)) raise('ValueError', 'gcd requires non-negative values');
    return values.map(pyInt).reduce(gcd2);
  }),
  INT: def('INT', ['value'], {}, (a) => {
    const x = num(v(a, 'value'));
    return typeof x === 'bigint' ? x : floorInt(x);
  }),
  LCM: def('LCM', ['value1', '*more_values'], {}, (a) => {
    const values = [v(a, 'value1'), ...rest(a, 'more_values')];
    if (values.some((x) => toF(x) < 0)) raise('ValueError', 'gcd requires non-negative values');
    if (values.some((x) => toF(x) === 0)) return 0n;
    return values.map(pyInt).reduce((x, y) => (x * y) / gcd2(x, y));
  }),
  LN: def('LN', ['value'], {}, (a) => mathLog(v(a, 'value'), undefined)),
  LOG: def('LOG', ['value', 'base'], {base: 10n}, (a) => mathLog(v(a, 'value'), v(a, 'base'))),
  LOG10: math1('LOG10', 'value', 'log10'),
  MOD: def('MOD', ['dividend', 'divisor'], {}, (a) => pmod(v(a, 'dividend'), v(a, 'divisor'))),
  MROUND: def('MROUND', ['value', 'factor'], {}, (a) => {
    checkFactor(v(a, 'value'), v(a, 'factor'));
    return intTimes(roundTowardZero(toF(v(a, 'value')) / divisor(v(a, 'factor')) + 0.5), v(a, 'factor'));
  }),
  MULTINOMIAL: def('MULTINOMIAL', ['value1', '*more_values'], {}, (a) => {
    let s: Value = v(a, 'value1');
    let res: bigint | number = 1n;
    for (const x of rest(a, 'more_values')) {
      s = add(s, x);
      res = mul(res, combin(s, x));
    }
    return res;
  }),
  NUM: def('NUM', ['value'], {}, (a) => {
    const x = v(a, 'value');
    return typeof x === 'number' && Number.isInteger(x) ? BigInt(x) : x;
  }),
  ODD: def('ODD', ['value'], {}, (a) => roundAwayFromZero(toF(add(v(a, 'value'), 1n)) / 2) * 2n - 1n),
  PI: def('PI', [], {}, () => Math.PI),
  POWER: def('POWER', ['base', 'exponent'], {}, (a) => mathPow(v(a, 'base'), v(a, 'exponent'))),
  PRODUCT: def('PRODUCT', ['factor1', '*more_factors'], {}, (a) => {
    const values = [...chainNumeric([v(a, 'factor1'), ...rest(a, 'more_factors')])];
    if (values.length === 0) raise('TypeError', 'reduce() of empty iterable with no initial value');
    return values.reduce<bigint | number>((x, y) => mul(x, y), values.shift()!);
  }),
  QUOTIENT: def('QUOTIENT', ['dividend', 'divisor'], {}, (a) =>
    roundTowardZero(toF(v(a, 'dividend')) / divisor(v(a, 'divisor'))),
  ),
  RADIANS: math1('RADIANS', 'angle', 'radians'),
  RAND: def('RAND', [], {}, () => Math.random()),
  RANDBETWEEN: def('RANDBETWEEN', ['low', 'high'], {}, (a) => {
    const low = BigInt(index(v(a, 'low'))),
      high = BigInt(index(v(a, 'high')));
    if (high < low) raise('ValueError', `empty range in randrange(${low}, ${high + 1n})`);
    return low + BigInt(Math.floor(Math.random() * Number(high - low + 1n)));
  }),
  ROMAN: def('ROMAN', ['number', 'form_unused'], {form_unused: null}, (a) => toRoman(Number(pyInt(v(a, 'number'))))),
  ROUND: def('ROUND', ['value', 'places'], {places: 0n}, (a) => round(v(a, 'value'), v(a, 'places'))),
  // Grist takes float(value): text parses ("2.5"), or is a ValueError.
  ROUNDDOWN: def('ROUNDDOWN', ['value', 'places'], {places: 0n}, (a) => {
    const factor = pow10(negate(v(a, 'places')));
    return intTimes(roundTowardZero(toFloatValue(v(a, 'value')) / toF(factor)), factor);
  }),
  ROUNDUP: def('ROUNDUP', ['value', 'places'], {places: 0n}, (a) => {
    const factor = pow10(negate(v(a, 'places')));
    return intTimes(roundAwayFromZero(toFloatValue(v(a, 'value')) / toF(factor)), factor);
  }),
  SERIESSUM: def('SERIESSUM', ['x', 'n', 'm', 'a'], {}, (a) => {
    let total: bigint | number = 0n;
    let i = 0n;
    for (const coef of chain([v(a, 'a')])) {
      const exp = add(v(a, 'n'), mul(i, v(a, 'm')));
      total = add(total, mul(coef, pyPow(v(a, 'x'), exp)));
      i++;
    }
    return total;
  }),
  SIGN: def('SIGN', ['value'], {}, (a) => {
    const x = toF(v(a, 'value'));
    return x === 0 ? 0n : Object.is(Math.sign(x), -1) || x < 0 ? -1n : 1n;
  }),
  SIN: math1('SIN', 'angle', 'sin'),
  SINH: math1('SINH', 'value', 'sinh'),
  SQRT: def('SQRT', ['value'], {}, (a) => mathSqrt(v(a, 'value'))),
  SQRTPI: def('SQRTPI', ['value'], {}, (a) => mathSqrt(Math.PI * toF(v(a, 'value')))),
  SUM: def('SUM', ['value1', '*more_values'], {}, (a) =>
    sumValues(chainNumericA([v(a, 'value1'), ...rest(a, 'more_values')])),
  ),
  SUMPRODUCT: def('SUMPRODUCT', ['array1', '*more_arrays'], {}, (a) => {
    const arrays = [v(a, 'array1'), ...rest(a, 'more_arrays')].map((x) => {
      const items = iterItems(x);
      if (items === null) raise('TypeError', `'${typeof x}' object is not iterable`);
      return items!;
    });
    const len = Math.min(...arrays.map((x) => x.length));
    let total: bigint | number = 0n;
    for (let i = 0; i < len; i++) {
      let p: bigint | number | Value = arrays[0][i];
      for (let j = 1; j < arrays.length; j++) p = mulAny(p, arrays[j][i]);
      total = add(total, p);
    }
    return total;
  }),
  TAN: math1('TAN', 'angle', 'tan'),
  TANH: math1('TANH', 'value', 'tanh'),
  TRUNC: def('TRUNC', ['value', 'places'], {places: 0n}, (a) => {
    const factor = pow10(negate(v(a, 'places')));
    return intTimes(roundTowardZero(toF(v(a, 'value')) / toF(factor)), factor);
  }),
  UUID: def('UUID', [], {}, () => crypto.randomUUID()),
};

function mulAny(a: Value, b: Value): Value {
  if (!isNumeric(a) || !isNumeric(b)) raise('TypeError', 'unsupported operand type(s) for *');
  return mul(a, b);
}

function negate(x: Value): bigint | number {
  const n = num(x);
  return typeof n === 'bigint' ? -n : -n;
}

function divisor(x: Value): number {
  const f = toF(x);
  if (f === 0) raise('ZeroDivisionError', 'float division by zero');
  return f;
}

/** Python's `x ** y` for SERIESSUM (int ** non-negative int stays int). */
function pyPow(x: Value, y: Value): bigint | number {
  const a = num(x),
    b = num(y);
  if (typeof a === 'bigint' && typeof b === 'bigint' && b >= 0n) return a ** b;
  if (Number(a) === 0 && Number(b) < 0) raise('ZeroDivisionError', '0.0 cannot be raised to a negative power');
  return Number(a) ** Number(b);
}

function combin(n: Value, k: Value): bigint | number {
  const ni = num(n),
    ki = num(k);
  if (typeof ni !== 'bigint' || typeof ki !== 'bigint') {
    raise('TypeError', "'float' object cannot be interpreted as an integer");
  }
  // biome-ignore lint/complexity/useMathMinMax: bigints (Math.min takes numbers only)
  const kk = ni - ki < ki ? ni - ki : ki;
  if (kk === 0n) return 1n;
  if (kk < 0n) raise('TypeError', 'reduce() of empty iterable with no initial value');
  return comb(ni, kk);
}

/** Grist's ROUND: half away from zero, always a float. */
export function round(value: Value, places: Value): number {
  const p = toF(pow10(places));
  const x = toF(value);
  // Grist divides float(int) by p: never -0.0 (Math.ceil(-0.4) is -0), so FIXED(-0.1, 0) is "0".
  return ((x >= 0 ? Math.floor(x * p + 0.5) : Math.ceil(x * p - 0.5)) + 0) / p;
}

export type {Args};
