/**
 * Date: seconds since the epoch at midnight UTC. Converted from numbers and ISO text, parsed with
 * the column's moment.js date format (Grist's parseDateStrict), shown with it.
 */
import {localToEpoch, parseIsoDate, validYmd} from '../datetime.js';
import {formatMoment} from '../moment-format.js';
import {MONTH_NAMES_LOWER} from '../../pyvalues/calendar.js';
import type {DocSettings} from '../cell-value.js';
import {
  BaseType,
  type CellFormatter,
  ConversionError,
  type Converter,
  formatUnknown,
  type SchemaType,
  type TextParser,
  type TypedForm,
  type WidgetOptions,
} from './base.js';

// ---------------------------------------------------------------------------------------------
// A strict parser for the moment.js tokens Grist's date formats use.

const MONTHS = MONTH_NAMES_LOWER;

interface Fields {
  year?: number;
  month?: number;
  day?: number;
  hour?: number;
  minute?: number;
  second?: number;
  ms?: number;
  pm?: boolean;
  offsetMin?: number;
}

interface Token {
  re: string;
  set?: (f: Fields, s: string) => boolean;
}

const TWO_DIGIT_MAX = new Date().getFullYear() + 10 - 2000;

function num(field: keyof Fields) {
  return (f: Fields, s: string) => {
    (f as Record<string, number>)[field] = Number(s);
    return true;
  };
}

const TOKENS: Record<string, Token> = {
  YYYY: {re: '\\d{4}', set: num('year')},
  YY: {
    re: '\\d{2}',
    set: (f, s) => {
      const y = Number(s);
      f.year = y + (y > TWO_DIGIT_MAX ? 1900 : 2000);
      return true;
    },
  },
  MMMM: {re: '[A-Za-z]+', set: (f, s) => setMonth(f, s, false)},
  MMM: {re: '[A-Za-z]+', set: (f, s) => setMonth(f, s, true)},
  MM: {re: '\\d{2}', set: num('month')},
  M: {re: '\\d{1,2}', set: num('month')},
  Do: {
    re: '\\d{1,2}(?:st|nd|rd|th)',
    set: (f, s) => {
      f.day = parseInt(s, 10);
      return true;
    },
  },
  DD: {re: '\\d{2}', set: num('day')},
  D: {re: '\\d{1,2}', set: num('day')},
  HH: {re: '\\d{2}', set: num('hour')},
  H: {re: '\\d{1,2}', set: num('hour')},
  hh: {re: '\\d{2}', set: num('hour')},
  h: {re: '\\d{1,2}', set: num('hour')},
  mm: {re: '\\d{2}', set: num('minute')},
  m: {re: '\\d{1,2}', set: num('minute')},
  ss: {re: '\\d{2}', set: num('second')},
  s: {re: '\\d{1,2}', set: num('second')},
  SSS: {re: '\\d{3}', set: num('ms')},
  A: {
    re: '[AaPp][Mm]',
    set: (f, s) => {
      f.pm = /^p/i.test(s);
      return true;
    },
  },
  a: {
    re: '[AaPp][Mm]',
    set: (f, s) => {
      f.pm = /^p/i.test(s);
      return true;
    },
  },
  Z: {
    re: '[+-]\\d{2}:?\\d{2}|Z',
    set: (f, s) => {
      f.offsetMin = parseOffset(s);
      return true;
    },
  },
  ZZ: {
    re: '[+-]\\d{2}:?\\d{2}|Z',
    set: (f, s) => {
      f.offsetMin = parseOffset(s);
      return true;
    },
  },
  z: {re: '[A-Za-z]{1,5}'},
};
const TOKEN_RE = /YYYY|YY|MMMM|MMM|MM|M|Do|DD|D|HH|H|hh|h|mm|m|ss|s|SSS|A|a|ZZ|Z|z|\[[^\]]*\]|./g;

function parseOffset(s: string): number {
  if (s === 'Z') {
    return 0;
  }
  const digits = s.slice(1).replace(':', '');
  return (s[0] === '-' ? -1 : 1) * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2)));
}

function setMonth(f: Fields, s: string, short: boolean): boolean {
  const lower = s.toLowerCase();
  const i = MONTHS.findIndex((m) => (short ? m.slice(0, 3) === lower : m === lower));
  if (i < 0) {
    return false;
  }
  f.month = i + 1;
  return true;
}

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

const compiled = new Map<string, {re: RegExp; setters: Array<Token['set']>}>();

function compileFormat(format: string) {
  let c = compiled.get(format);
  if (!c) {
    let src = '^';
    const setters: Array<Token['set']> = [];
    for (const tok of format.match(TOKEN_RE) ?? []) {
      const t = TOKENS[tok];
      if (t) {
        src += `(${t.re})`;
        setters.push(t.set);
      } else {
        src += escapeRe(tok.startsWith('[') ? tok.slice(1, -1) : tok);
      }
    }
    c = {re: new RegExp(src + '$'), setters};
    // Keyed on the formats of columns (and their variations): few; bounded all the same.
    if (compiled.size >= 1000) {
      compiled.clear();
    }
    compiled.set(format, c);
  }
  return c;
}

/** moment.tz(text, format, strict=true, tz).unix(), or null when invalid. */
export function parseWithFormat(text: string, format: string, tz: string): number | null {
  return format === 'YYYY-MM-DD' ? parseIsoDay(text, tz) : parseWithFormatGeneral(text, format, tz);
}

/**
 * parseWithFormatGeneral for 'YYYY-MM-DD' (the format of most imported dates) without a regular
 * expression and its fields: a fifth of a 100k-row import's conversions (issue 43 §2).
 */
function parseIsoDay(text: string, tz: string): number | null {
  if (text.length !== 10 || text.charCodeAt(4) !== 45 || text.charCodeAt(7) !== 45) {
    return null;
  }
  const digits = (from: number, to: number) => {
    let n = 0;
    for (let i = from; i < to; i++) {
      const c = text.charCodeAt(i) - 48;
      if (c < 0 || c > 9) return -1;
      n = n * 10 + c;
    }
    return n;
  };
  const year = digits(0, 4);
  const month = digits(5, 7);
  const day = digits(8, 10);
  if (year < 0 || month < 0 || day < 0 || !validYmd(year, month, day)) {
    return null;
  }
  const wall = Date.UTC(year, month - 1, day, 0, 0, 0) / 1000;
  return tz === 'UTC' ? wall : localToEpoch(wall, tz);
}

/** parseWithFormat by the format's compiled expression (any format). */
export function parseWithFormatGeneral(text: string, format: string, tz: string): number | null {
  const {re, setters} = compileFormat(format);
  const m = re.exec(text);
  if (!m) {
    return null;
  }
  const f: Fields = {};
  for (let i = 0; i < setters.length; i++) {
    const set = setters[i];
    if (set && !set(f, m[i + 1])) {
      return null;
    }
  }
  // The current date only for formats without a year or month (a Date per call costs).
  const now = f.year === undefined || f.month === undefined ? new Date() : null;
  const year = f.year ?? now!.getUTCFullYear();
  const month = f.month ?? (f.year === undefined ? now!.getUTCMonth() + 1 : 1);
  const day = f.day ?? 1;
  let hour = f.hour ?? 0;
  if (f.pm !== undefined) {
    if (hour < 1 || hour > 12) {
      return null;
    }
    hour = (hour % 12) + (f.pm ? 12 : 0);
  }
  const minute = f.minute ?? 0;
  const second = f.second ?? 0;
  if (!validYmd(year, month, day) || hour > 23 || minute > 59 || second > 59) {
    return null;
  }
  const wall = Date.UTC(year, month - 1, day, hour, minute, second) / 1000 + (f.ms ?? 0) / 1000;
  if (f.offsetMin !== undefined) {
    return wall - f.offsetMin * 60;
  }
  return tz === 'UTC' ? wall : localToEpoch(wall, tz);
}

const SEPARATORS = /[\W_]+/g;
const UNAMBIGUOUS_FORMATS = [
  'YYYY M D',
  'MMMM D YYYY',
  'MMMM D',
  'MMMM Do YYYY',
  'MMMM Do',
  'D MMMM YYYY',
  'D MMMM',
  'Do MMMM YYYY',
  'Do MMMM',
  'MMMM',
  'MMM D YYYY',
  'MMM D',
  'MMM Do YYYY',
  'MMM Do',
  'D MMM YYYY',
  'D MMM',
  'Do MMM YYYY',
  'Do MMM',
  'MMM',
];

function parseTimeStamp(text: string): number | null {
  return /^[1-9]\d{8,9}$/.test(text) ? Number(text) : null;
}

function partialFormat(input: string, format: string): string {
  const re = /Y+|M+o?|D+o?|[a-zA-Z0-9]+/gi;
  const numInput = input.match(re)?.length ?? 0;
  let numFormat = format.match(re)?.length ?? 0;
  if (numFormat > numInput) {
    if (/Y+/.test(format)) {
      format = format.replace(/Y+/, ' ').trim();
      numFormat -= 1;
    }
    if (numFormat > numInput) {
      format = format.replace(/M+/, ' ').trim();
    }
  }
  return format.replace(/\s+/g, ' ');
}

function formatVariations(dateFormat: string, date: string): string[] {
  let format = dateFormat
    .replace(/MM+/g, (m) => (m === 'MM' ? 'M' : m))
    .replace(/DD+/g, (m) => (m === 'DD' ? 'D' : m))
    .replace(SEPARATORS, ' ')
    .trim();
  if (format.includes('M') && format.includes('D') && !format.includes('Y')) {
    format += ' YYYY';
  }
  format = partialFormat(date, format);
  const variations = new Set([format]);
  const otherYear = format.replace(/Y{2,4}/, (m) => (m === 'YY' ? 'YYYY' : m === 'YYYY' ? 'YY' : m));
  variations.add(otherYear);
  variations.add(format.replace(/MMM+/, 'M'));
  if (otherYear !== format) {
    variations.add(otherYear.replace(/MMM+/, 'M'));
  }
  return [...variations];
}

/** parseDateStrict: the column's date format (separators and padding relaxed), then unambiguous ones. */
export function parseDateStrict(text: string, dateFormat: string | undefined, tz = 'UTC'): number | null {
  if (!text) {
    return null;
  }
  const ts = parseTimeStamp(text);
  if (ts !== null) {
    return ts;
  }
  const clean = text.replace(SEPARATORS, ' ').trim();
  for (const format of [...formatVariations(dateFormat || 'YYYY-MM-DD', text), ...UNAMBIGUOUS_FORMATS]) {
    const v = parseWithFormat(clean, format, tz);
    if (v !== null) {
      return v;
    }
  }
  return null;
}

// ---------------------------------------------------------------------------------------------

/** Date and DateTime conversion: numbers and encoded dates as they are, ISO text parsed, "" and null empty. */
export function dateConverter(parseText: (text: string) => number | null): Converter {
  return (v) => {
    if (v === '' || v === null) {
      return null;
    }
    if (typeof v === 'number') {
      return v;
    }
    if (typeof v === 'boolean') {
      return v ? 1 : 0;
    }
    if (Array.isArray(v) && (v[0] === 'd' || v[0] === 'D') && typeof v[1] === 'number') {
      return v[1];
    }
    if (typeof v === 'string') {
      const ts = parseText(v);
      if (ts !== null) {
        return ts;
      }
    }
    throw new ConversionError();
  };
}

/** Grist's DateFormatter: numbers (and encoded dates, in their own zone) by a moment.js format. */
export function dateFormatter(format: string, timezone: string): CellFormatter {
  return (v) => {
    if (v === null) {
      return '';
    }
    let tz = timezone;
    let ts: number;
    if (typeof v === 'number') {
      ts = v;
    } else if (Array.isArray(v) && (v[0] === 'd' || v[0] === 'D')) {
      tz = (v[2] as string) || tz;
      ts = Number(v[1]);
    } else {
      return formatUnknown(v);
    }
    return formatMoment(ts * 1000, tz, format);
  };
}

/** The column's date format (Grist's default when unset). */
export function dateFormatOf(options: WidgetOptions): string {
  return String(options.dateFormat || 'YYYY-MM-DD');
}

export class DateType extends BaseType {
  override readonly sqlType = 'DATE';
  override readonly holdsFloats = true;
  override readonly typed: TypedForm = {number: {before: ['d'], after: []}};

  override converter(): Converter {
    return dateConverter(parseIsoDate);
  }

  override parser(options: WidgetOptions): TextParser {
    const format = options.dateFormat as string | undefined;
    return (text) => parseDateStrict(text, format) ?? text;
  }

  override formatter(options: WidgetOptions, _settings: DocSettings): CellFormatter {
    return dateFormatter(dateFormatOf(options), 'UTC');
  }

  override schemaType(options: WidgetOptions): SchemaType {
    return {type: 'date', format: 'any', gristFormat: options.dateFormat || 'YYYY-MM-DD'};
  }
}
