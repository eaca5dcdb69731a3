/**
 * Python's string formatting: format specs (`format(x, spec)`, `str.format`, f-strings) and the
 * `%` operator, with Python's float rounding (half-even on the exact binary value).
 */
import {
  PyDict,
  PyException,
  type PyObject,
  PyTuple,
  type Value,
  floatRepr,
  raise,
  repr,
  str,
  toNumeric,
  typeName,
} from './values.js';
import {C_INT_MAX, C_INT_OVERFLOW, currentBudget, SSIZE_OVERFLOW, SSIZE_T_MAX, sizeArg} from './budget.js';

/** Digits of x rounded to `prec` decimals, exactly as Python's '%.{prec}f' (ties to even). */
export function toFixedPy(x: number, prec: number): string {
  if (!Number.isFinite(x)) return Number.isNaN(x) ? 'nan' : x > 0 ? 'inf' : '-inf';
  // Digits beyond 100 are zeros added here: a size taken from the caller's precision.
  if (prec > 100) currentBudget.checkSize(prec);
  if (Math.abs(x) >= 1e21) {
    // toFixed switches to exponent form: build from the exact integer value.
    const int = BigInt(x).toString();
    return prec > 0 ? `${int}.${'0'.repeat(prec)}` : int;
  }
  const p = Math.min(prec, 100);
  const s = x.toFixed(p);
  if (p + 25 <= 100) {
    const longer = x.toFixed(Math.min(100, p + 25));
    const tail = longer.slice(longer.length - 25);
    if (/^50*$/.test(tail)) {
      // An exact tie: JS rounds away from zero, Python to even.
      let trunc = longer.slice(0, longer.length - 25);
      if (trunc.endsWith('.')) trunc = trunc.slice(0, -1);
      const lastDigit = Number(trunc[trunc.length - 1]);
      if (lastDigit % 2 === 0) return trunc;
    }
  }
  return prec > 100 ? s + '0'.repeat(prec - 100) : s;
}

function expForm(x: number, prec: number, upper = false): string {
  if (!Number.isFinite(x)) return Number.isNaN(x) ? 'nan' : x > 0 ? 'inf' : '-inf';
  const s = x.toExponential(Math.min(prec, 100));
  const [m, e] = s.split('e');
  const en = Number(e);
  const out = `${m}e${en < 0 ? '-' : '+'}${String(Math.abs(en)).padStart(2, '0')}`;
  return upper ? out.toUpperCase() : out;
}

function generalForm(x: number, prec: number, alt: boolean, upper: boolean): string {
  if (!Number.isFinite(x)) return Number.isNaN(x) ? 'nan' : x > 0 ? 'inf' : '-inf';
  const p = prec === 0 ? 1 : prec;
  if (x === 0) return alt ? `${Object.is(x, -0) ? '-' : ''}0.${'0'.repeat(p - 1)}` : Object.is(x, -0) ? '-0' : '0';
  const exp = Number(x.toExponential(p - 1).split('e')[1]);
  let out: string;
  if (exp >= -4 && exp < p) {
    out = toFixedPy(x, p - 1 - exp);
    if (!alt && out.includes('.')) out = out.replace(/\.?0+$/, '');
  } else {
    out = expForm(x, p - 1, upper);
    if (!alt) out = out.replace(/\.?0+e/, 'e').replace(/\.?0+E/, 'E');
  }
  return upper ? out.toUpperCase() : out;
}

/** Python's repr-like float format with a precision and no type ('' type with precision). */
function noTypeFloat(x: number, prec: number | null): string {
  if (prec === null) return floatRepr(x);
  const g = generalForm(x, prec, false, false);
  return /[.en]/.test(g) ? g : `${g}.0`;
}

function groupDigits(intPart: string, sep: string, size = 3): string {
  let out = '';
  for (let i = intPart.length; i > 0; i -= size) {
    const chunk = intPart.slice(Math.max(0, i - size), i);
    out = out ? `${chunk}${sep}${out}` : chunk;
  }
  return out;
}

const C_INT_MAX_N = Number(C_INT_MAX);

/** A width or precision of a format spec: CPython reads it as a C ssize_t, refusing longer ones. */
function specNumber(digits: string | undefined): string | undefined {
  if (digits !== undefined && BigInt(digits) > SSIZE_T_MAX) {
    raise('ValueError', 'Too many decimal digits in format string');
  }
  return digits;
}

const SPEC_RE = /^(?:(.)?([<>=^]))?([-+ ])?(z)?(#)?(0)?(\d+)?([,_])?(?:\.(\d+))?([bcdeEfFgGnosxX%])?$/s;

/** `format(value, spec)`. */
export function formatSpec(v: Value, spec: string): string {
  if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
    const o = v as PyObject & {format?(spec: string): string};
    if (o.format) return o.format(spec);
  }
  if (spec === '') return str(v);
  const m = SPEC_RE.exec(spec);
  if (!m) return raise('ValueError', 'Invalid format specifier');
  let [, fill, align] = m;
  const [, , , sign, , alt, zero, widthDigits, grouping, precision, type] = m;
  const width = specNumber(widthDigits);
  const prec = precision === undefined ? null : Number(specNumber(precision));
  // CPython formats floats with a C int precision.
  if (prec !== null && prec > C_INT_MAX_N && 'eEfFgG%'.includes(type ?? '') && typeof v !== 'string') {
    return raise('ValueError', 'precision too big');
  }
  let body: string;
  let signStr = '';
  let numeric = false;
  if (zero && !align) {
    fill = '0';
    align = '=';
  }
  if (typeof v === 'string') {
    if (type && type !== 's') return raise('ValueError', `Unknown format code '${type}' for object of type 'str'`);
    if (sign) return raise('ValueError', 'Sign not allowed in string format specifier');
    body = prec === null ? v : Array.from(v).slice(0, prec).join('');
  } else if (typeof v === 'bigint' || typeof v === 'boolean' || typeof v === 'number') {
    numeric = true;
    let t = type ?? '';
    let n = toNumeric(v);
    // bool formats as int under any non-empty spec (`f"{True:>6}"` is "     1").
    if (typeof n === 'bigint' && 'eEfFgG%'.includes(t) && t) n = Number(n);
    if (typeof n === 'number' && 'bcdoxXn'.includes(t) && t) {
      return raise('ValueError', `Unknown format code '${t}' for object of type 'float'`);
    }
    if (typeof n === 'bigint') {
      if (prec !== null) return raise('ValueError', 'Precision not allowed in integer format specifier');
      const neg = n < 0n;
      const a = neg ? -n : n;
      switch (t) {
        case 'b':
          body = a.toString(2);
          if (alt) body = '0b' + body;
          break;
        case 'o':
          body = a.toString(8);
          if (alt) body = '0o' + body;
          break;
        case 'x':
          body = a.toString(16);
          if (alt) body = '0x' + body;
          break;
        case 'X':
          body = a.toString(16).toUpperCase();
          if (alt) body = '0X' + body;
          break;
        case 'c':
          body = String.fromCodePoint(Number(a));
          break;
        default:
          body = a.toString();
          if (grouping) body = groupDigits(body, grouping);
      }
      if ('box'.includes(t.toLowerCase()) && grouping === '_' && t) body = groupDigits(body, '_', 4);
      signStr = neg ? '-' : sign === '+' ? '+' : sign === ' ' ? ' ' : '';
    } else {
      const x = n;
      const neg = x < 0 || Object.is(x, -0);
      const a = Math.abs(x);
      if (t === 'n') t = 'g';
      switch (t) {
        case 'f':
        case 'F':
          body = toFixedPy(a, prec ?? 6);
          if (alt && !body.includes('.')) body += '.';
          if (t === 'F') body = body.toUpperCase();
          break;
        case 'e':
        case 'E':
          body = expForm(a, prec ?? 6, t === 'E');
          break;
        case 'g':
        case 'G':
          body = generalForm(a, prec ?? 6, Boolean(alt), t === 'G');
          break;
        case '%':
          body = toFixedPy(a * 100, prec ?? 6) + '%';
          break;
        default:
          body = noTypeFloat(a, prec);
      }
      if (grouping) {
        const mm = /^(\d+)(.*)$/s.exec(body);
        if (mm) body = groupDigits(mm[1], grouping) + mm[2];
      }
      signStr = neg && !Number.isNaN(x) ? '-' : sign === '+' ? '+' : sign === ' ' ? ' ' : '';
    }
  } else if (v === null || Array.isArray(v) || v instanceof PyTuple || v instanceof PyDict) {
    return raise('TypeError', `unsupported format string passed to ${typeName(v)}.__format__`);
  } else {
    body = str(v);
  }
  const defaultAlign = numeric ? '>' : '<';
  const al = align ?? defaultAlign;
  if (al === '=' && numeric) {
    const w = width ? Number(width) : 0;
    const f = fill ?? ' ';
    let digits = body;
    // Zero padding with grouping inserts separators into the padding, as Python does.
    const need = w - signStr.length - digits.length;
    if (need > 0) {
      currentBudget.checkSize(w);
      if (f === '0' && grouping && /^\d/.test(digits)) {
        const mm = /^([\d,_]+)(.*)$/s.exec(digits)!;
        const raw = mm[1].replace(/[,_]/g, '');
        // The fewest digits whose grouped form reaches the width (L digits group to L + (L-1)/3
        // characters): computed, since adding one zero at a time is quadratic in the width.
        const target = w - mm[2].length - signStr.length;
        let len = Math.max(raw.length, target - Math.floor(target / 4) - 1);
        while (len + Math.floor((len - 1) / 3) < target) len++;
        digits = groupDigits(raw.padStart(len, '0'), grouping) + mm[2];
      } else {
        digits = f.repeat(need) + digits;
      }
    }
    return signStr + digits;
  }
  return pad(signStr + body, fill, al, width);
}

function pad(s: string, fill: string | undefined, align: string, width: string | undefined): string {
  const w = width ? Number(width) : 0;
  if (s.length >= w) return s;
  const len = Array.from(s).length;
  if (len >= w) return s;
  currentBudget.checkSize(w);
  const f = fill ?? ' ';
  const n = w - len;
  switch (align) {
    case '<':
      return s + f.repeat(n);
    case '^':
      return f.repeat(Math.floor(n / 2)) + s + f.repeat(n - Math.floor(n / 2));
    default:
      return f.repeat(n) + s;
  }
}

/** A `%` width or precision written in the format: CPython's bounds (a C ssize_t, a C int) and wording. */
function percentNumber(digits: string, what: 'width' | 'precision'): number {
  if (BigInt(digits) > (what === 'width' ? SSIZE_T_MAX : C_INT_MAX)) raise('ValueError', `${what} too big`);
  return Number(digits);
}

/** A `*` width or precision taken from the arguments, converted as CPython converts it. */
function starArg(v: Value, message: string, max: bigint): number {
  const n = toNumeric(v);
  return typeof n === 'bigint' ? sizeArg(n, message, max) : Number(n);
}

/** `fmt % args`. */
export function percentFormat(fmt: string, args: Value): string {
  const list: Value[] = args instanceof PyTuple ? [...args.items] : [args];
  const mapping =
    args instanceof PyDict
      ? args
      : args !== null &&
          typeof args === 'object' &&
          !(args instanceof PyTuple) &&
          !Array.isArray(args) &&
          (args as PyObject).getitem
        ? args
        : null;
  let ai = 0;
  let used = false;
  const next = (): Value => {
    if (ai >= list.length) raise('TypeError', 'not enough arguments for format string');
    used = true;
    return list[ai++];
  };
  const re = /%(?:\(([^)]*)\))?([-+ #0]*)(\*|\d+)?(?:\.(\*|\d+))?[hlL]?([diouxXeEfFgGcrsa%])?/g;
  let out = '';
  let last = 0;
  let m: RegExpExecArray | null;
  while ((m = re.exec(fmt))) {
    out += fmt.slice(last, m.index);
    last = re.lastIndex;
    const [, key, flags, widthS, precS, conv] = m;
    if (!conv)
      return raise(
        'ValueError',
        `unsupported format character '${fmt[re.lastIndex] ?? ''}' (0x${(fmt.charCodeAt(re.lastIndex) || 0).toString(16)}) at index ${re.lastIndex}`,
      );
    if (conv === '%') {
      out += '%';
      continue;
    }
    const width =
      widthS === '*' ? starArg(next(), SSIZE_OVERFLOW, SSIZE_T_MAX) : widthS ? percentNumber(widthS, 'width') : 0;
    const prec =
      precS === '*'
        ? starArg(next(), C_INT_OVERFLOW, C_INT_MAX)
        : precS !== undefined
          ? percentNumber(precS, 'precision')
          : null;
    let val: Value;
    if (key !== undefined) {
      if (!mapping) return raise('TypeError', 'format requires a mapping');
      used = true;
      if (mapping instanceof PyDict) {
        const got = mapping.get(key);
        if (got === undefined) throw new PyException('KeyError', repr(key));
        val = got;
      } else val = (mapping as PyObject).getitem!(key);
    } else {
      val = next();
    }
    let body: string;
    let signed = false;
    switch (conv) {
      case 's':
        body = str(val);
        break;
      case 'r':
      case 'a':
        body = repr(val);
        break;
      case 'c':
        body = typeof val === 'string' ? val : String.fromCodePoint(Number(toNumeric(val)));
        break;
      case 'd':
      case 'i':
      case 'u': {
        if (typeof val === 'string' || val === null || typeof val === 'object') {
          return raise('TypeError', `%${conv} format: a real number is required, not ${typeName(val)}`);
        }
        const n = toNumeric(val);
        body = (typeof n === 'number' ? BigInt(Math.trunc(n)) : n).toString();
        signed = true;
        break;
      }
      case 'o':
      case 'x':
      case 'X': {
        const n = toNumeric(val);
        if (typeof n !== 'bigint')
          return raise('TypeError', `%${conv} format: an integer is required, not ${typeName(val)}`);
        body = n.toString(conv === 'o' ? 8 : 16);
        if (conv === 'X') body = body.toUpperCase();
        if (flags.includes('#')) body = body.replace(/^(-?)/, `$1${conv === 'o' ? '0o' : conv === 'x' ? '0x' : '0X'}`);
        signed = true;
        break;
      }
      default: {
        if (typeof val === 'string' || val === null || typeof val === 'object') {
          return raise('TypeError', `must be real number, not ${typeName(val)}`);
        }
        const x = Number(toNumeric(val));
        const a = Math.abs(x);
        const p = prec ?? 6;
        if (conv === 'f' || conv === 'F') body = toFixedPy(a, p);
        else if (conv === 'e' || conv === 'E') body = expForm(a, p, conv === 'E');
        else body = generalForm(a, p, flags.includes('#'), conv === 'G');
        if (x < 0 || Object.is(x, -0)) body = '-' + body;
        signed = true;
      }
    }
    if (prec !== null && (conv === 's' || conv === 'r' || conv === 'a')) body = body.slice(0, prec);
    if (signed && !body.startsWith('-')) {
      if (flags.includes('+')) body = '+' + body;
      else if (flags.includes(' ')) body = ' ' + body;
    }
    if (body.length < width) {
      currentBudget.checkSize(width);
      if (flags.includes('-')) body = body.padEnd(width);
      else if (flags.includes('0') && signed) {
        const sign = /^[-+ ]/.test(body) ? body[0] : '';
        body = sign + body.slice(sign.length).padStart(width - sign.length, '0');
      } else body = body.padStart(width);
    }
    out += body;
  }
  out += fmt.slice(last);
  if (!mapping && ai < list.length && !(list.length === 1 && !used && false)) {
    return raise('TypeError', 'not all arguments converted during string formatting');
  }
  if (mapping && !used && !(args instanceof PyDict)) {
    return raise('TypeError', 'not all arguments converted during string formatting');
  }
  return out;
}

/** Python's round-half-even of x to `nd` decimals (round(x, nd) for floats). */
export function roundFloat(x: number, nd: number): number {
  if (!Number.isFinite(x)) return x;
  if (nd > 300) return x;
  if (nd < -308) return 0 * x;
  if (nd >= 0) {
    return Number(toFixedPy(x, nd));
  }
  const f = Math.pow(10, -nd);
  const y = x / f;
  let r = Math.round(y);
  if (Math.abs(y - Math.trunc(y)) === 0.5) r = 2 * Math.round(y / 2);
  return r * f;
}
