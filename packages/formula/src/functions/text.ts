/** Grist's text functions (grist-core sandbox/grist/functions/text.py). */
import {
  type PyCallable,
  type PyObject,
  PyTuple,
  type Value,
  pyEquals,
  raise,
  str,
  truthy,
  typeName,
} from '../values.js';
import {PyDate} from '../datetime.js';
import {compile} from '../modules/re.js';
import {round} from './math.js';
import {currentBudget} from '../budget.js';
import {parseDateText} from './dateparse.js';
import libphonenumber from 'google-libphonenumber';
import {def, index, isAltText, iterItems, pyInt, rest, slice, strArg, strFind, strLen, toF, v} from './util.js';

/** Python's `"{:,.Nf}".format(x)` (commas optional) for a float. */
export function formatFixed(x: number, decimals: number, commas: boolean): string {
  if (!Number.isFinite(x)) return Number.isNaN(x) ? 'nan' : x > 0 ? 'inf' : '-inf';
  // Python formats with a C int precision; the digits are a size taken from the caller.
  if (decimals > 2 ** 31 - 1) raise('ValueError', 'precision too big');
  currentBudget.checkSize(decimals);
  const neg = x < 0 || Object.is(x, -0);
  const ax = Math.abs(x);
  // toFixed stops at 100 digits; the float's exact expansion has ended by then.
  const zeros = '0'.repeat(Math.max(0, decimals - 100));
  let body =
    ax < 1e21
      ? ax.toFixed(Math.min(decimals, 100)) + zeros
      : BigInt(ax).toString() + (decimals ? `.${'0'.repeat(decimals)}` : '');
  if (commas) {
    const [ip, fp] = body.split('.');
    body = ip.replace(/\B(?=(\d{3})+(?!\d))/g, ',') + (fp !== undefined ? `.${fp}` : '');
  }
  return neg ? `-${body}` : body;
}

/** Python's str.title(): a cased character after an uncased one is upper-cased, others lowered. */
export function titleCase(s: string): string {
  let out = '';
  let prevCased = false;
  for (const ch of s) {
    const lower = ch.toLowerCase(),
      upper = ch.toUpperCase();
    const cased = lower !== upper;
    out += cased ? (prevCased ? lower : upper) : ch;
    prevCased = cased;
  }
  return out;
}

const CONTROL = /[\x00-\x1f\x7f-\x9f]/g;
/** Python's str.strip() whitespace. */
const PY_WS = '\\t\\n\\v\\f\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
const WS_CHAR = new RegExp(`[${PY_WS}]`);
/**
 * Python's str.strip(). A loop from each end, not a `[ws]+$` regex: that one retries at every
 * whitespace run's start, quadratic on "x" + " " * 10**5 + "x" (7 s, issue 37's class).
 */
export function pyStrip(s: string): string {
  let a = 0;
  let b = s.length;
  while (a < b && WS_CHAR.test(s[a])) a++;
  while (b > a && WS_CHAR.test(s[b - 1])) b--;
  return s.slice(a, b);
}

function checkInt(x: Value, what: string): number {
  // Python slicing accepts ints and bools only.
  if (typeof x === 'number') raise('TypeError', 'slice indices must be integers or None or have an __index__ method');
  void what;
  return index(x);
}

/** Python's int() of a string: optional sign, digits with single underscores between them. */
function parseIntText(s: string): bigint | null {
  const t = pyStrip(s);
  if (!/^[+-]?\d+(_\d+)*$/.test(t)) return null;
  return BigInt(t.replace(/_/g, ''));
}
/** Python's float() of a string. */
function parseFloatText(s: string): number | null {
  const t = pyStrip(s).toLowerCase();
  if (/^[+-]?(inf|infinity)$/.test(t)) return t.startsWith('-') ? -Infinity : Infinity;
  if (/^[+-]?nan$/.test(t)) return NaN;
  if (!/^[+-]?((\d+(_\d+)*)(\.(\d+(_\d+)*)?)?|\.\d+(_\d+)*)(e[+-]?\d+(_\d+)*)?$/.test(t)) return null;
  return Number(t.replace(/_/g, ''));
}

// PHONE_FORMAT uses Google's libphonenumber, of which Grist's Python `phonenumbers` is a port.
const PNF = libphonenumber.PhoneNumberFormat;
let phoneUtil: libphonenumber.PhoneNumberUtil | null = null;
const PHONE_FORMATS: Record<string, libphonenumber.PhoneNumberFormat> = {
  '+': PNF.INTERNATIONAL,
  INTL: PNF.INTERNATIONAL,
  '#': PNF.NATIONAL,
  NATL: PNF.NATIONAL,
  '*': PNF.E164,
  E164: PNF.E164,
  tel: PNF.RFC3966,
  RFC3966: PNF.RFC3966,
};
/** libphonenumber's parse errors, worded as Python's phonenumbers words them. */
const PARSE_ERRORS: Array<[RegExp, string]> = [
  [/country calling code/i, '(0) Missing or invalid default region.'],
  [/did not seem to be a phone number/i, '(1) The string supplied did not seem to be a phone number.'],
  [/too short after IDD/i, '(2) Phone number too short after IDD'],
  [/too short/i, '(3) The string supplied is too short to be a phone number.'],
  [/too long/i, '(4) The string supplied is too long to be a phone number.'],
];

function phoneParse(
  util: libphonenumber.PhoneNumberUtil,
  text: string,
  country: string | null,
): libphonenumber.PhoneNumber {
  try {
    return util.parse(text, country ?? undefined);
  } catch (e) {
    const msg = e instanceof Error ? e.message : String(e);
    const known = PARSE_ERRORS.find(([re]) => re.test(msg));
    return raise('NumberParseException', known ? known[1] : msg);
  }
}

export function phoneFormat(value: Value, countryIn: Value, formatIn: Value): Value {
  if (!truthy(value)) return value;
  if (typeof value !== 'string') {
    raise(
      'TypeError',
      'Phone number must be a text value. ' +
        'If formatting a value from a Numeric column, convert that column to Text first.',
    );
  }
  let country = countryIn,
    format = formatIn;
  // PHONE_FORMAT(value, "tel") means PHONE_FORMAT(value, None, "tel").
  if (format === null && typeof country === 'string' && Object.hasOwn(PHONE_FORMATS, country)) {
    format = country;
    country = null;
  }
  const util = (phoneUtil ??= libphonenumber.PhoneNumberUtil.getInstance());
  const region = country === null ? null : str(country);
  const parsed = phoneParse(util, value as string, region);
  const fmtName = format === null || format === '' ? '#' : str(format);
  let outFmt = Object.hasOwn(PHONE_FORMATS, fmtName) ? PHONE_FORMATS[fmtName] : undefined;
  if (outFmt === undefined)
    raise('ValueError', 'Unrecognized phone format; try +, INTL, #, NATL, *, E164, tel, or RFC3966');
  // Without a country, the national format would lose the country code.
  if (outFmt === PNF.NATIONAL && !region) outFmt = PNF.INTERNATIONAL;
  let result = util.format(parsed, outFmt);
  if (outFmt === PNF.NATIONAL && region) {
    // A number of another country would be garbled in this country's national format.
    const again = phoneParse(util, result, region);
    if (
      util.format(again, PNF.E164) !== util.format(parsed, PNF.E164) ||
      again.getExtension() !== parsed.getExtension()
    ) {
      result = util.format(parsed, PNF.INTERNATIONAL);
    }
  }
  return result;
}

function concat(values: Value[]): string {
  return values.map((x) => str(x)).join('');
}

export const textFunctions: Record<string, PyCallable> = {
  CHAR: def('CHAR', ['table_number'], {}, (a) => {
    const n = index(v(a, 'table_number'));
    if (n < 0 || n > 0x10ffff) raise('ValueError', 'chr() arg not in range(0x110000)');
    return String.fromCodePoint(n);
  }),
  CLEAN: def('CLEAN', ['text'], {}, (a) => strArg(v(a, 'text'), 'CLEAN').replace(CONTROL, '')),
  CODE: def('CODE', ['string'], {}, (a) => {
    const s = strArg(v(a, 'string'), 'CODE');
    if (!s) raise('IndexError', 'string index out of range');
    return BigInt(s.codePointAt(0)!);
  }),
  CONCATENATE: def('CONCATENATE', ['string', '*more_strings'], {}, (a) =>
    concat([v(a, 'string'), ...rest(a, 'more_strings')]),
  ),
  CONCAT: def('CONCAT', ['string', '*more_strings'], {}, (a) => concat([v(a, 'string'), ...rest(a, 'more_strings')])),
  DOLLAR: def('DOLLAR', ['number', 'decimals'], {decimals: 2n}, (a) => {
    const n = v(a, 'number');
    const decimals = index(v(a, 'decimals'));
    const formatted = `$${formatFixed(round(Math.abs(toF(n)), BigInt(decimals)), Math.max(0, decimals), true)}`;
    return toF(n) >= 0 ? formatted : `(${formatted})`;
  }),
  EXACT: def('EXACT', ['string1', 'string2'], {}, (a) => pyEquals(v(a, 'string1'), v(a, 'string2'))),
  FIND: def('FIND', ['find_text', 'within_text', 'start_num'], {start_num: 1n}, (a) => {
    const within = strArg(v(a, 'within_text'), 'FIND');
    const i = strFind(within, strArg(v(a, 'find_text'), 'FIND'), checkInt(v(a, 'start_num'), 'start_num') - 1);
    if (i < 0) raise('ValueError', 'substring not found');
    return BigInt(i + 1);
  }),
  FIXED: def('FIXED', ['number', 'decimals', 'no_commas'], {decimals: 2n, no_commas: false}, (a) => {
    const decimals = index(v(a, 'decimals'));
    return formatFixed(round(v(a, 'number'), BigInt(decimals)), Math.max(0, decimals), !v(a, 'no_commas'));
  }),
  LEFT: def('LEFT', ['string', 'num_chars'], {num_chars: 1n}, (a) => {
    const n = checkInt(v(a, 'num_chars'), 'num_chars');
    if (n < 0) raise('ValueError', 'num_chars invalid');
    return slice(strArg(v(a, 'string'), 'LEFT'), null, n);
  }),
  LEN: def('LEN', ['text'], {}, (a) => BigInt(pyLenOf(v(a, 'text')))),
  LOWER: def('LOWER', ['text'], {}, (a) => strArg(v(a, 'text'), 'LOWER').toLowerCase()),
  MID: def('MID', ['text', 'start_num', 'num_chars'], {}, (a) => {
    const start = checkInt(v(a, 'start_num'), 'start_num');
    if (start < 1) raise('ValueError', 'start_num invalid');
    const n = checkInt(v(a, 'num_chars'), 'num_chars');
    return slice(strArg(v(a, 'text'), 'MID'), start - 1, start - 1 + n);
  }),
  PHONE_FORMAT: def('PHONE_FORMAT', ['value', 'country', 'format'], {country: null, format: null}, (a) =>
    phoneFormat(v(a, 'value'), v(a, 'country'), v(a, 'format')),
  ),
  PROPER: def('PROPER', ['text'], {}, (a) => titleCase(strArg(v(a, 'text'), 'PROPER'))),
  REGEXEXTRACT: def('REGEXEXTRACT', ['text', 'regular_expression'], {}, (a) => {
    const m = compile(v(a, 'regular_expression')).exec('search', strArg(v(a, 'text'), 'REGEXEXTRACT'));
    if (!m) raise('ValueError', 'REGEXEXTRACT text does not match');
    return m!.getattr('lastindex') !== null ? m!.group(1n) : m!.group(0n);
  }),
  REGEXMATCH: def(
    'REGEXMATCH',
    ['text', 'regular_expression'],
    {},
    (a) => compile(v(a, 'regular_expression')).exec('search', strArg(v(a, 'text'), 'REGEXMATCH')) !== null,
  ),
  REGEXREPLACE: def(
    'REGEXREPLACE',
    ['text', 'regular_expression', 'replacement'],
    {},
    (a) => compile(v(a, 'regular_expression')).sub(v(a, 'replacement'), strArg(v(a, 'text'), 'REGEXREPLACE'), 0)[0],
  ),
  REPLACE: def('REPLACE', ['text', 'position', 'length', 'new_text'], {}, (a) => {
    const pos = checkInt(v(a, 'position'), 'position');
    if (pos < 1) raise('ValueError', 'position invalid');
    const text = strArg(v(a, 'text'), 'REPLACE');
    const newText = strArg(v(a, 'new_text'), 'REPLACE');
    return slice(text, null, pos - 1) + newText + slice(text, pos - 1 + checkInt(v(a, 'length'), 'length'), null);
  }),
  REPT: def('REPT', ['text', 'number_times'], {}, (a) => {
    const text = strArg(v(a, 'text'), 'REPT');
    const n = toF(v(a, 'number_times'));
    if (n < 0 || strLen(text) * n > 32767) raise('ValueError', 'number_times invalid');
    return text.repeat(Number(pyInt(v(a, 'number_times'))));
  }),
  RIGHT: def('RIGHT', ['string', 'num_chars'], {num_chars: 1n}, (a) => {
    const n = checkInt(v(a, 'num_chars'), 'num_chars');
    if (n < 0) raise('ValueError', 'num_chars invalid');
    // string[-0:] is the whole string in Python, and so RIGHT(s, 0) in Grist.
    return slice(strArg(v(a, 'string'), 'RIGHT'), -n, null);
  }),
  SEARCH: def('SEARCH', ['find_text', 'within_text', 'start_num'], {start_num: 1n}, (a) => {
    const within = strArg(v(a, 'within_text'), 'SEARCH').toLowerCase();
    const i = strFind(
      within,
      strArg(v(a, 'find_text'), 'SEARCH').toLowerCase(),
      checkInt(v(a, 'start_num'), 'start_num') - 1,
    );
    if (i < 0) raise('ValueError', 'substring not found');
    return BigInt(i + 1);
  }),
  SUBSTITUTE: def('SUBSTITUTE', ['text', 'old_text', 'new_text', 'instance_num'], {instance_num: null}, (a) => {
    const text = str(v(a, 'text')),
      old = str(v(a, 'old_text')),
      repl = str(v(a, 'new_text'));
    if (!old) return text;
    const inst = v(a, 'instance_num');
    if (inst === null) return text.split(old).join(repl);
    if (toF(inst) <= 0) raise('ValueError', 'instance_num invalid');
    // Overlapping occurrences count, as Grist's search from one past the previous hit does.
    let i = -1;
    for (let c = 0; c < index(inst); c++) {
      i = text.indexOf(old, i + 1);
      if (i < 0) return text;
    }
    return text.slice(0, i) + repl + text.slice(i + old.length);
  }),
  T: def('T', ['value'], {}, (a) => {
    const x = v(a, 'value');
    if (typeof x === 'string') return x;
    return isAltText(x) ? str(x) : '';
  }),
  TASTEME: def('TASTEME', ['food'], {}, (a) => {
    const words = compile('\\b[A-Z]+\\b').findall(strArg(v(a, 'food'), 'TASTEME').toUpperCase()) as string[];
    if (words.length === 0) return null;
    return words.some((w) => [...w].some((c, i) => i + 2 < w.length && c === w[i + 2]));
  }),
  TRIM: def('TRIM', ['text'], {}, (a) => pyStrip(strArg(v(a, 'text'), 'TRIM')).replace(/ {2,}/g, ' ')),
  UPPER: def('UPPER', ['text'], {}, (a) => strArg(v(a, 'text'), 'UPPER').toUpperCase()),
  VALUE: def('VALUE', ['text'], {}, (a) => {
    const x = v(a, 'text');
    if (typeof x === 'bigint' || typeof x === 'number' || typeof x === 'boolean' || x instanceof PyDate) return x;
    const text = pyStrip(strArg(x, 'VALUE')).replace(/^\$+/, '');
    const nocommas = text.replace(/,/g, '');
    if (nocommas === '') return 0n;
    const i = parseIntText(nocommas);
    if (i !== null) return i;
    const f = parseFloatText(nocommas);
    if (f !== null) return f;
    try {
      return parseDateText(text);
    } catch {
      return raise('ValueError', 'text cannot be parsed to a number');
    }
  }),
};

function pyLenOf(x: Value): number {
  if (typeof x === 'string') return strLen(x);
  if (Array.isArray(x)) return x.length;
  if (x instanceof PyTuple) return x.items.length;
  if (x !== null && typeof x === 'object') {
    const o = x as PyObject;
    if (o.len) return o.len();
    if ('size' in (o as object)) return (o as unknown as {size: number}).size;
    const items = iterItems(x);
    if (items) return items.length;
  }
  return raise('TypeError', `object of type '${typeName(x)}' has no len()`);
}
