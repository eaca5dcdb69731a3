/**
 * Python's `math` module. Float functions use JS's Math (V8's fdlibm ports: within 1 ulp of
 * CPython's libm, equal in the common cases); domain and range errors are raised as CPython raises
 * them (`ValueError: math domain error`, `OverflowError: math range error`); floor, ceil, trunc,
 * factorial, gcd, lcm, isqrt, comb and perm return ints.
 */
import {type PyObject, PyTuple, type Value, bindArgs, raise, typeName} from '../values.js';
import {fn} from '../datetime.js';
import {floorInt, ceilInt, index, iterOrThrow, num, pyInt, toF, mul} from '../functions/util.js';

type Pole = 'domain' | 'range';

/** A one-argument float function: NaN from a non-NaN input is a domain error; an infinite result
 * from a finite input is a range error, or a domain error at a pole (`pole: 'domain'`). */
function f1(name: string, f: (x: number) => number, pole: Pole = 'range'): PyObject {
  return fn(name, (a, k) => {
    const x = toF(bindArgs(name, ['x'], a, k).x as Value);
    const r = f(x);
    if (Number.isNaN(r) && !Number.isNaN(x)) raise('ValueError', 'math domain error');
    if (!Number.isFinite(r) && !Number.isNaN(r) && Number.isFinite(x)) {
      raise(
        pole === 'domain' ? 'ValueError' : 'OverflowError',
        pole === 'domain' ? 'math domain error' : 'math range error',
      );
    }
    return r;
  });
}

export function mathLog(x: Value, base: Value | undefined): number {
  const ln = (v: Value): number => {
    if (typeof v === 'bigint') {
      if (v <= 0n) raise('ValueError', 'math domain error');
      // Large ints: log via their decimal length, as CPython handles ints beyond float range.
      const s = v.toString();
      if (s.length > 300) return Math.log(Number(`0.${s.slice(0, 17)}`)) + s.length * Math.LN10;
      return Math.log(Number(v));
    }
    const f = toF(v);
    if (f <= 0) raise('ValueError', 'math domain error');
    return Math.log(f);
  };
  const lx = ln(x);
  if (base === undefined) return lx;
  const lb = ln(base);
  if (lb === 0) raise('ZeroDivisionError', 'float division by zero');
  return lx / lb;
}

/** math.log10: exact for powers of ten, as C's log10 is. */
export function log10(x: Value): number {
  if (typeof x === 'bigint' && x > 0n && x.toString().length > 300) return mathLog(x, undefined) / Math.LN10;
  const f = toF(x);
  if (f <= 0) raise('ValueError', 'math domain error');
  return Math.log10(f);
}

export function mathSqrt(x: Value): number {
  const f = toF(x);
  if (f < 0) raise('ValueError', 'math domain error');
  return Math.sqrt(f);
}

export function mathPow(x: Value, y: Value): number {
  const a = toF(x),
    b = toF(y);
  if (a === 0 && b < 0) raise('ValueError', 'math domain error');
  const r = a ** b;
  if (Number.isNaN(r) && !Number.isNaN(a) && !Number.isNaN(b)) raise('ValueError', 'math domain error');
  if (!Number.isFinite(r) && Number.isFinite(a) && Number.isFinite(b)) raise('OverflowError', 'math range error');
  // Python: 1**nan == 1 and nan**0 == 1, as JS; (-1)**inf == 1 where JS gives NaN.
  if (a === -1 && !Number.isFinite(b) && !Number.isNaN(b)) return 1;
  return r;
}

/**
 * Most multiplications factorial, comb and perm make (factorial(20000) has 77,338 digits): each
 * step multiplies a growing int, so the loop is quadratic; larger ones are refused at once.
 */
export const MAX_PRODUCT_STEPS = 20_000;

function checkSteps(steps: bigint | number): void {
  if (BigInt(steps) > BigInt(MAX_PRODUCT_STEPS)) {
    raise('MemoryError', `integer result too large (more than ${MAX_PRODUCT_STEPS} factors)`);
  }
}

export function factorial(x: Value): bigint {
  const n = index(x);
  if (n < 0) raise('ValueError', 'factorial() not defined for negative values');
  checkSteps(n);
  let r = 1n;
  for (let i = 2n; i <= BigInt(n); i++) r *= i;
  return r;
}

function bigAbs(x: bigint): bigint {
  return x < 0n ? -x : x;
}
export function gcd2(a: bigint, b: bigint): bigint {
  a = bigAbs(a);
  b = bigAbs(b);
  while (b) [a, b] = [b, a % b];
  return a;
}

function intArg(x: Value): bigint {
  if (typeof x === 'bigint') return x;
  if (typeof x === 'boolean') return x ? 1n : 0n;
  return raise('TypeError', `'${typeName(x)}' object cannot be interpreted as an integer`);
}

export function isqrt(n: bigint): bigint {
  if (n < 0n) raise('ValueError', 'isqrt() argument must be nonnegative');
  if (n < 2n) return n;
  let x = BigInt(Math.floor(Math.sqrt(Number(n))));
  // Newton steps to the exact floor.
  for (;;) {
    const y = (x + n / x) >> 1n;
    if (y >= x) break;
    x = y;
  }
  while (x * x > n) x--;
  while ((x + 1n) * (x + 1n) <= n) x++;
  return x;
}

export function comb(n: bigint, k: bigint): bigint {
  if (n < 0n) raise('ValueError', 'n must be a non-negative integer');
  if (k < 0n) raise('ValueError', 'k must be a non-negative integer');
  if (k > n) return 0n;
  if (k > n - k) k = n - k;
  checkSteps(k);
  let r = 1n;
  for (let i = 1n; i <= k; i++) r = (r * (n - k + i)) / i;
  return r;
}

export function perm(n: bigint, k: bigint | null): bigint {
  if (n < 0n) raise('ValueError', 'n must be a non-negative integer');
  if (k === null) k = n;
  if (k < 0n) raise('ValueError', 'k must be a non-negative integer');
  if (k > n) return 0n;
  checkSteps(k);
  let r = 1n;
  for (let i = n - k + 1n; i <= n; i++) r *= i;
  return r;
}

/** Shewchuk's exactly rounded sum, as CPython's math.fsum. */
export function fsum(values: number[]): number {
  const partials: number[] = [];
  let special = 0,
    inf = 0;
  for (let x of values) {
    if (!Number.isFinite(x)) {
      if (Number.isNaN(x)) special = NaN;
      else inf += x;
      continue;
    }
    let i = 0;
    for (let y of partials) {
      if (Math.abs(x) < Math.abs(y)) [x, y] = [y, x];
      const hi = x + y;
      const lo = y - (hi - x);
      if (lo) partials[i++] = lo;
      x = hi;
    }
    partials.length = i;
    partials.push(x);
  }
  if (Number.isNaN(special)) return NaN;
  if (inf) {
    if (Number.isNaN(inf)) raise('ValueError', '-inf + inf in fsum');
    return inf;
  }
  let n = partials.length;
  let hi = 0;
  if (n > 0) {
    hi = partials[--n];
    let lo = 0;
    while (n > 0) {
      const x = hi;
      const y = partials[--n];
      hi = x + y;
      const yr = hi - x;
      lo = y - yr;
      if (lo) break;
    }
    if (n > 0 && ((lo < 0 && partials[n - 1] < 0) || (lo > 0 && partials[n - 1] > 0))) {
      const y = lo * 2;
      const x = hi + y;
      const yr = x - hi;
      if (y === yr) hi = x;
    }
  }
  return hi;
}

function frexp(x: number): [number, number] {
  if (x === 0 || !Number.isFinite(x)) return [x, 0];
  let e = Math.max(-1073, Math.floor(Math.log2(Math.abs(x))) + 1);
  let m = x * 2 ** -e;
  while (Math.abs(m) < 0.5) {
    m *= 2;
    e--;
  }
  while (Math.abs(m) >= 1) {
    m /= 2;
    e++;
  }
  return [m, e];
}

function isclose(a: number, b: number, relTol: number, absTol: number): boolean {
  if (relTol < 0 || absTol < 0) raise('ValueError', 'tolerances must be non-negative');
  if (a === b) return true;
  if (!Number.isFinite(a) || !Number.isFinite(b)) return false;
  const d = Math.abs(b - a);
  return d <= Math.abs(relTol * b) || d <= Math.abs(relTol * a) || d <= absTol;
}

class MathModule implements PyObject {
  readonly pyType = 'module';
  readonly attrs: Record<string, Value>;
  constructor() {
    const two = (name: string, f: (x: number, y: number) => Value) =>
      fn(name, (a, k) => {
        const b = bindArgs(name, ['x', 'y'], a, k);
        return f(toF(b.x as Value), toF(b.y as Value));
      });
    this.attrs = {
      pi: Math.PI,
      e: Math.E,
      tau: 2 * Math.PI,
      inf: Infinity,
      nan: NaN,
      sqrt: fn('sqrt', (a, k) => mathSqrt(bindArgs('sqrt', ['x'], a, k).x as Value)),
      cbrt: f1('cbrt', Math.cbrt),
      exp: f1('exp', Math.exp),
      exp2: f1('exp2', (x) => 2 ** x),
      expm1: f1('expm1', Math.expm1),
      log: fn('log', (a, k) => {
        const b = bindArgs('log', ['x', 'base'], a, k, {base: undefined as unknown as Value});
        return mathLog(b.x as Value, b.base as Value | undefined);
      }),
      log10: fn('log10', (a, k) => log10(bindArgs('log10', ['x'], a, k).x as Value)),
      log2: f1('log2', Math.log2, 'domain'),
      log1p: f1('log1p', Math.log1p, 'domain'),
      pow: fn('pow', (a, k) => {
        const b = bindArgs('pow', ['x', 'y'], a, k);
        return mathPow(b.x as Value, b.y as Value);
      }),
      sin: f1('sin', Math.sin),
      cos: f1('cos', Math.cos),
      tan: f1('tan', Math.tan),
      asin: f1('asin', Math.asin),
      acos: f1('acos', Math.acos),
      atan: f1('atan', Math.atan),
      atan2: two('atan2', Math.atan2),
      sinh: f1('sinh', Math.sinh),
      cosh: f1('cosh', Math.cosh),
      tanh: f1('tanh', Math.tanh),
      asinh: f1('asinh', Math.asinh),
      acosh: f1('acosh', Math.acosh),
      atanh: f1('atanh', Math.atanh, 'domain'),
      degrees: f1('degrees', (x) => x * (180 / Math.PI)),
      radians: f1('radians', (x) => x * (Math.PI / 180)),
      hypot: fn('hypot', (a) => Math.hypot(...a.map(toF))),
      dist: fn('dist', (a, k) => {
        const b = bindArgs('dist', ['p', 'q'], a, k);
        const p = iterOrThrow(b.p as Value).map(toF),
          q = iterOrThrow(b.q as Value).map(toF);
        if (p.length !== q.length) raise('ValueError', 'both points must have the same number of dimensions');
        return Math.hypot(...p.map((x, i) => x - q[i]));
      }),
      floor: fn('floor', (a, k) => {
        const x = num(bindArgs('floor', ['x'], a, k).x as Value);
        return typeof x === 'bigint' ? x : floorInt(x);
      }),
      ceil: fn('ceil', (a, k) => {
        const x = num(bindArgs('ceil', ['x'], a, k).x as Value);
        return typeof x === 'bigint' ? x : ceilInt(x);
      }),
      trunc: fn('trunc', (a, k) => pyInt(bindArgs('trunc', ['x'], a, k).x as Value)),
      fabs: f1('fabs', Math.abs),
      factorial: fn('factorial', (a, k) => factorial(bindArgs('factorial', ['n'], a, k).n as Value)),
      gcd: fn('gcd', (a) => a.map(intArg).reduce((x, y) => gcd2(x, y), 0n)),
      lcm: fn('lcm', (a) =>
        a.map(intArg).reduce((x, y) => (x === 0n || y === 0n ? 0n : bigAbs(x * y) / gcd2(x, y)), 1n),
      ),
      isqrt: fn('isqrt', (a, k) => isqrt(intArg(bindArgs('isqrt', ['n'], a, k).n as Value))),
      comb: fn('comb', (a, k) => {
        const b = bindArgs('comb', ['n', 'k'], a, k);
        return comb(intArg(b.n as Value), intArg(b.k as Value));
      }),
      perm: fn('perm', (a, k) => {
        const b = bindArgs('perm', ['n', 'k'], a, k, {k: null});
        return perm(intArg(b.n as Value), b.k === null ? null : intArg(b.k as Value));
      }),
      fmod: two('fmod', (x, y) => {
        if (y === 0 || !Number.isFinite(x)) raise('ValueError', 'math domain error');
        return x % y;
      }),
      remainder: two('remainder', (x, y) => {
        if (y === 0 || !Number.isFinite(x)) raise('ValueError', 'math domain error');
        const n = x / y;
        let r = Math.round(n);
        if (Math.abs(n - Math.trunc(n)) === 0.5) r = 2 * Math.round(n / 2);
        return x - r * y;
      }),
      copysign: two('copysign', (x, y) => (Math.sign(y) === -1 || Object.is(y, -0) ? -Math.abs(x) : Math.abs(x))),
      isnan: fn('isnan', (a) => Number.isNaN(toF(a[0]))),
      isinf: fn('isinf', (a) => {
        const x = toF(a[0]);
        return !Number.isFinite(x) && !Number.isNaN(x);
      }),
      isfinite: fn('isfinite', (a) => Number.isFinite(toF(a[0]))),
      isclose: fn('isclose', (a, k) => {
        const b = bindArgs('isclose', ['a', 'b'], a, null);
        return isclose(
          toF(b.a as Value),
          toF(b.b as Value),
          k?.rel_tol !== undefined ? toF(k.rel_tol) : 1e-9,
          k?.abs_tol !== undefined ? toF(k.abs_tol) : 0,
        );
      }),
      fsum: fn('fsum', (a) => fsum(iterOrThrow(a[0]).map(toF))),
      prod: fn('prod', (a, k) => {
        const start = k?.start ?? 1n;
        let r: Value = start;
        for (const x of iterOrThrow(a[0])) r = mul(r, x);
        return r;
      }),
      modf: fn('modf', (a) => {
        const x = toF(a[0]);
        if (!Number.isFinite(x)) return new PyTuple([Number.isNaN(x) ? x : Math.sign(x) * 0, x]);
        const i = Math.trunc(x);
        return new PyTuple([x - i === 0 ? (x < 0 || Object.is(x, -0) ? -0 : 0) : x - i, i]);
      }),
      frexp: fn('frexp', (a) => {
        const [m, e] = frexp(toF(a[0]));
        return new PyTuple([m, BigInt(e)]);
      }),
      ldexp: fn('ldexp', (a) => {
        const x = toF(a[0]);
        const e = Number(intArg(a[1]));
        let r = x;
        // Split the scaling so that 2**e itself does not overflow or underflow.
        let rem = e;
        while (rem > 1000) {
          r *= 2 ** 1000;
          rem -= 1000;
        }
        while (rem < -1000) {
          r *= 2 ** -1000;
          rem += 1000;
        }
        r *= 2 ** rem;
        if (!Number.isFinite(r) && Number.isFinite(x)) raise('OverflowError', 'math range error');
        return r;
      }),
    };
  }
  getattr(name: string): Value {
    if (Object.hasOwn(this.attrs, name)) return this.attrs[name];
    return raise('AttributeError', `module 'math' has no attribute '${name}'`);
  }
  repr(): string {
    return "<module 'math' (built-in)>";
  }
}

export const mathModule: PyObject = new MathModule();
