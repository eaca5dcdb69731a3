/**
 * Python's str()/repr() of the values the data engine sees, used where Grist turns a value it
 * cannot convert into "alt-text" (`six.text_type(value)`), and the engine's number formatting for
 * Text columns. Values are in Grist's cell encoding (`["L", ...]` lists, `["d", ts]` dates...).
 */
import type {CellValue} from './types.js';

/** repr() of a Python float. */
export function pyFloatRepr(v: number): string {
  if (Number.isNaN(v)) {
    return 'nan';
  }
  if (!Number.isFinite(v)) {
    return v > 0 ? 'inf' : '-inf';
  }
  if (v === 0) {
    return Object.is(v, -0) ? '-0.0' : '0.0';
  }
  // Shortest round-tripping digits, as both JS and Python use; only the layout differs.
  const [mant, expStr] = Math.abs(v).toExponential().split('e');
  const exp = Number(expStr);
  const digits = mant.replace('.', '');
  const sign = v < 0 ? '-' : '';
  if (exp >= -4 && exp < 16) {
    let s: string;
    if (exp < 0) {
      s = '0.' + '0'.repeat(-exp - 1) + digits;
    } else if (digits.length > exp + 1) {
      s = digits.slice(0, exp + 1) + '.' + digits.slice(exp + 1);
    } else {
      s = digits + '0'.repeat(exp + 1 - digits.length) + '.0';
    }
    return sign + s;
  }
  const m = digits.length > 1 ? digits[0] + '.' + digits.slice(1) : digits;
  return `${sign}${m}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
}

/** Python's `"%.15g" % v`. */
export function formatG15(v: number): string {
  if (Number.isNaN(v)) {
    return 'nan';
  }
  if (!Number.isFinite(v)) {
    return v > 0 ? 'inf' : '-inf';
  }
  const [mant, expStr] = v.toExponential(14).split('e');
  const exp = Number(expStr);
  const strip = (s: string) => (s.includes('.') ? s.replace(/0+$/, '').replace(/\.$/, '') : s);
  if (exp >= -4 && exp < 15) {
    return strip(v.toFixed(Math.max(0, 14 - exp)));
  }
  return `${strip(mant)}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
}

/**
 * str() of a number the engine holds. `isFloat` true: a float (Numeric, Date... columns); false: a
 * Python int when integral (Int columns); left out: a value as Grist's marshalling hands JSON
 * numbers to its engine, 32-bit integers as ints and every other number (-0 included) as a float.
 */
export function pyNumberStr(v: number, isFloat?: boolean): string {
  const isInt =
    isFloat === undefined ? v === (v | 0) && !Object.is(v, -0) : !isFloat && Number.isInteger(v) && Math.abs(v) < 1e21;
  if (isInt) {
    return BigInt(v).toString();
  }
  return pyFloatRepr(v);
}

export function pyStringRepr(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (ch === '\\') {
      out += '\\\\';
    } else if (ch === quote) {
      out += '\\' + quote;
    } else if (ch === '\n') {
      out += '\\n';
    } else if (ch === '\r') {
      out += '\\r';
    } else if (ch === '\t') {
      out += '\\t';
    } else if (c < 0x20 || c === 0x7f) {
      out += '\\x' + c.toString(16).padStart(2, '0');
    } else {
      out += ch;
    }
  }
  return out + quote;
}

function isoDate(ts: number): string {
  const d = new Date(ts * 1000);
  return Number.isNaN(d.getTime()) ? String(ts) : d.toISOString().slice(0, 10);
}

/**
 * str() of a decoded value. `tuples` renders lists as Python tuples (ChoiceList cells are tuples
 * in the engine). `isFloat` marks numbers held as floats (Numeric, Date... columns).
 */
export function pyStr(v: CellValue, opts: {tuples?: boolean; isFloat?: boolean} = {}): string {
  if (typeof v === 'string') {
    return v;
  }
  if (Array.isArray(v) && v[0] === 'd' && typeof v[1] === 'number' && Number.isFinite(v[1])) {
    return isoDate(v[1]);
  }
  if (Array.isArray(v) && v[0] === 'R') {
    return `${String(v[1])}[${String(v[2])}]`;
  }
  return pyRepr(v, opts);
}

export function pyRepr(v: CellValue, opts: {tuples?: boolean; isFloat?: boolean} = {}): string {
  if (v === null || v === undefined) {
    return 'None';
  }
  if (typeof v === 'boolean') {
    return v ? 'True' : 'False';
  }
  if (typeof v === 'number') {
    return pyNumberStr(v, opts.isFloat);
  }
  if (typeof v === 'string') {
    return pyStringRepr(v);
  }
  if (Array.isArray(v)) {
    const [code, ...args] = v;
    const inner = {isFloat: opts.isFloat};
    switch (code) {
      case 'L': {
        const items = args.map((a) => pyRepr(a, inner));
        if (opts.tuples) {
          return `(${items.join(', ')}${items.length === 1 ? ',' : ''})`;
        }
        return `[${items.join(', ')}]`;
      }
      case 'O': {
        const obj = (args[0] ?? {}) as Record<string, CellValue>;
        return `{${Object.entries(obj)
          .map(([k, x]) => `${pyStringRepr(k)}: ${pyRepr(x, inner)}`)
          .join(', ')}}`;
      }
      case 'd': {
        if (typeof args[0] !== 'number' || !Number.isFinite(args[0])) {
          return JSON.stringify(v);
        }
        const [y, m, d] = isoDate(args[0]).split('-').map(Number);
        return `datetime.date(${y}, ${m}, ${d})`;
      }
      case 'R':
        return `${String(args[0])}[${String(args[1])}]`;
      case 'r':
        return `${String(args[0])}[${pyRepr(['L', ...((args[1] ?? []) as CellValue[])])}]`;
      default:
        return JSON.stringify(v);
    }
  }
  return JSON.stringify(v);
}
