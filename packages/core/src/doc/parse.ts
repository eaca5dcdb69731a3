/**
 * String parsing that Grist does in Node before values reach the data engine (ValueParser.ts,
 * NumberParse.ts, parseDate.ts), applied to string values unless `noparse` is set, and the type
 * guesser for empty columns receiving strings (ValueGuesser.ts).
 */
import {localToEpoch, validYmd} from './datetime.js';
import type {CellValue} from './types.js';

export interface DocSettings {
  locale: string;
  currency?: string;
}

// ---------------------------------------------------------------------------------------------
// Numbers

interface NumberSymbols { decimal: string, group: string, currency: string }

const symbolsCache = new Map<string, NumberSymbols>();

function numberSymbols(locale: string, currency: string): NumberSymbols {
  const key = `${locale}|${currency}`;
  let s = symbolsCache.get(key);
  if (!s) {
    let parts: Intl.NumberFormatPart[];
    try {
      parts = new Intl.NumberFormat(locale, {style: 'currency', currency}).formatToParts(12345.6);
    } catch {
      parts = new Intl.NumberFormat('en-US', {style: 'currency', currency: 'USD'}).formatToParts(12345.6);
    }
    const get = (type: string, dflt: string) => parts.find((p) => p.type === type)?.value ?? dflt;
    s = {decimal: get('decimal', '.'), group: get('group', ','), currency: get('currency', '$')};
    symbolsCache.set(key, s);
  }
  return s;
}

function defaultCurrency(locale: string): string {
  const region = /[-_]([A-Z]{2})\b/.exec(locale)?.[1];
  return REGION_CURRENCY[region ?? ''] ?? 'USD';
}

const REGION_CURRENCY: Record<string, string> = {
  US: 'USD', GB: 'GBP', FR: 'EUR', DE: 'EUR', ES: 'EUR', IT: 'EUR', NL: 'EUR', BE: 'EUR',
  PT: 'EUR', AT: 'EUR', IE: 'EUR', FI: 'EUR', CA: 'CAD', AU: 'AUD', JP: 'JPY', CN: 'CNY',
  IN: 'INR', BR: 'BRL', CH: 'CHF', RU: 'RUB', MX: 'MXN', NZ: 'NZD', SE: 'SEK', NO: 'NOK',
  DK: 'DKK', PL: 'PLN', UA: 'UAH', KR: 'KRW', ZA: 'ZAR',
};

export interface ParsedNumber {
  value: number;
  isCurrency: boolean;
  isPercent: boolean;
  isParenthesised: boolean;
  hasGroups: boolean;
  decimals: number;
  /** The fraction ends in 0 ("1.20"): only a fixed number of decimals formats it back. */
  trailingZero: boolean;
}

const WHITESPACE = /[\s\u00a0\u202f]/g;

/** NumberParse.parse: currency, percent, parentheses, digit grouping, exponent. */
export function parseNumber(text: string, settings: DocSettings, currency?: string): ParsedNumber | null {
  const sym = numberSymbols(settings.locale, currency || settings.currency || defaultCurrency(settings.locale));
  let s = text.trim();
  let isCurrency = false;
  let isPercent = false;
  if (sym.currency && s.includes(sym.currency)) {
    s = s.replace(sym.currency, '');
    isCurrency = true;
  }
  if (s.includes('%')) {
    s = s.replace('%', '');
    isPercent = true;
  }
  s = s.replace(WHITESPACE, '').replace(/\u2212/g, '-');
  const isParenthesised = s.startsWith('(') && s.endsWith(')');
  if (isParenthesised) { s = s.slice(1, -1); }
  if (!s) { return null; }
  const hasGroups = sym.group !== '' && s.includes(sym.group);
  if (hasGroups) {
    // Groups must sit between digits before the decimal separator.
    const intPart = s.split(sym.decimal)[0];
    if (!new RegExp(`^[-+]?\\d{1,3}(${escapeRe(sym.group)}\\d{3})+$`).test(intPart.replace(/[eE].*$/, ''))) {
      return null;
    }
    s = s.split(sym.group).join('');
  }
  if (sym.decimal !== '.') {
    if (s.includes('.')) { return null; }
    s = s.replace(sym.decimal, '.');
  }
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(s)) { return null; }
  let value = Number(s);
  if (isPercent) { value *= 0.01; }
  if (isParenthesised) { value = -value; }
  const fraction = /\.(\d*)/.exec(s.replace(/[eE].*$/, ''))?.[1] ?? '';
  return {value, isCurrency, isPercent, isParenthesised, hasGroups, decimals: fraction.length,
    trailingZero: fraction.endsWith('0')};
}

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

// ---------------------------------------------------------------------------------------------
// Dates: a strict parser for the moment.js tokens Grist's date formats use.

const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august',
  'september', 'october', 'november', 'december'];

interface Fields { year?: number, month?: number, day?: number, hour?: number, minute?: number,
  second?: number, ms?: number, pm?: boolean, offsetMin?: number }

interface Token { re: string, set?: (f: Fields, s: string) => boolean }

const TWO_DIGIT_MAX = new Date().getFullYear() + 10 - 2000;

function num(field: keyof Fields) {
  return (f: Fields, s: string) => { (f as Record<string, number>)[field] = Number(s); return true; };
}

const TOKENS: Record<string, Token> = {
  YYYY: {re: '\\d{4}', set: num('year')},
  YY: {re: '\\d{2}', set: (f, s) => { const y = Number(s); f.year = y + (y > TWO_DIGIT_MAX ? 1900 : 2000); return true; }},
  MMMM: {re: '[A-Za-z]+', set: (f, s) => setMonth(f, s, false)},
  MMM: {re: '[A-Za-z]+', set: (f, s) => setMonth(f, s, true)},
  MM: {re: '\\d{2}', set: num('month')},
  M: {re: '\\d{1,2}', set: num('month')},
  Do: {re: '\\d{1,2}(?:st|nd|rd|th)', set: (f, s) => { f.day = parseInt(s, 10); return true; }},
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
  A: {re: '[AaPp][Mm]', set: (f, s) => { f.pm = /^p/i.test(s); return true; }},
  a: {re: '[AaPp][Mm]', set: (f, s) => { f.pm = /^p/i.test(s); return true; }},
  Z: {re: '[+-]\\d{2}:?\\d{2}|Z', set: (f, s) => { f.offsetMin = parseOffset(s); return true; }},
  ZZ: {re: '[+-]\\d{2}:?\\d{2}|Z', set: (f, s) => { f.offsetMin = parseOffset(s); return true; }},
  z: {re: '[A-Za-z]{1,5}'},
};
const TOKEN_RE = /YYYY|YY|MMMM|MMM|MM|M|Do|DD|D|HH|H|hh|h|mm|m|ss|s|SSS|A|a|ZZ|Z|z|\[[^\]]*\]|./g;

function parseOffset(s: string): number {
  if (s === 'Z') { return 0; }
  const digits = s.slice(1).replace(':', '');
  return (s[0] === '-' ? -1 : 1) * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2)));
}

function setMonth(f: Fields, s: string, short: boolean): boolean {
  const lower = s.toLowerCase();
  const i = MONTHS.findIndex((m) => (short ? m.slice(0, 3) === lower : m === lower));
  if (i < 0) { return false; }
  f.month = i + 1;
  return true;
}

const compiled = new Map<string, {re: RegExp, setters: Array<Token['set']>}>();

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
    compiled.set(format, c);
  }
  return c;
}

/** moment.tz(text, format, strict=true, tz).unix(), or null when invalid. */
export function parseWithFormat(text: string, format: string, tz: string): number | null {
  const {re, setters} = compileFormat(format);
  const m = re.exec(text);
  if (!m) { return null; }
  const f: Fields = {};
  for (let i = 0; i < setters.length; i++) {
    const set = setters[i];
    if (set && !set(f, m[i + 1])) { return null; }
  }
  const now = new Date();
  const year = f.year ?? now.getUTCFullYear();
  const month = f.month ?? (f.year === undefined ? now.getUTCMonth() + 1 : 1);
  const day = f.day ?? 1;
  let hour = f.hour ?? 0;
  if (f.pm !== undefined) {
    if (hour < 1 || hour > 12) { return null; }
    hour = (hour % 12) + (f.pm ? 12 : 0);
  }
  const minute = f.minute ?? 0;
  const second = f.second ?? 0;
  if (!validYmd(year, month, day) || hour > 23 || minute > 59 || second > 59) { return null; }
  const wall = Date.UTC(year, month - 1, day, hour, minute, second) / 1000 + (f.ms ?? 0) / 1000;
  if (f.offsetMin !== undefined) { return wall - f.offsetMin * 60; }
  return tz === 'UTC' ? wall : localToEpoch(wall, tz);
}

const SEPARATORS = /[\W_]+/g;
const UNAMBIGUOUS_FORMATS = ['YYYY M D', 'MMMM D YYYY', 'MMMM D', 'MMMM Do YYYY', 'MMMM Do',
  'D MMMM YYYY', 'D MMMM', 'Do MMMM YYYY', 'Do MMMM', 'MMMM', 'MMM D YYYY', 'MMM D',
  'MMM Do YYYY', 'MMM Do', 'D MMM YYYY', 'D MMM', 'Do MMM YYYY', 'Do MMM', 'MMM'];

function parseTimeStamp(text: string): number | null {
  return /^[1-9]\d{8,9}$/.test(text) ? Number(text) : null;
}

function partialFormat(input: string, format: string): string {
  const re = /Y+|M+o?|D+o?|[a-zA-Z0-9]+/ig;
  const numInput = input.match(re)?.length ?? 0;
  let numFormat = format.match(re)?.length ?? 0;
  if (numFormat > numInput) {
    if (/Y+/.test(format)) {
      format = format.replace(/Y+/, ' ').trim();
      numFormat -= 1;
    }
    if (numFormat > numInput) { format = format.replace(/M+/, ' ').trim(); }
  }
  return format.replace(/\s+/g, ' ');
}

function formatVariations(dateFormat: string, date: string): string[] {
  let format = dateFormat.replace(/MM+/g, (m) => (m === 'MM' ? 'M' : m))
    .replace(/DD+/g, (m) => (m === 'DD' ? 'D' : m))
    .replace(SEPARATORS, ' ').trim();
  if (format.includes('M') && format.includes('D') && !format.includes('Y')) { format += ' YYYY'; }
  format = partialFormat(date, format);
  const variations = new Set([format]);
  const otherYear = format.replace(/Y{2,4}/, (m) => (m === 'YY' ? 'YYYY' : m === 'YYYY' ? 'YY' : m));
  variations.add(otherYear);
  variations.add(format.replace(/MMM+/, 'M'));
  if (otherYear !== format) { variations.add(otherYear.replace(/MMM+/, 'M')); }
  return [...variations];
}

/** parseDateStrict: the column's date format (separators and padding relaxed), then unambiguous ones. */
export function parseDateStrict(text: string, dateFormat: string | undefined, tz = 'UTC'): number | null {
  if (!text) { return null; }
  const ts = parseTimeStamp(text);
  if (ts !== null) { return ts; }
  const clean = text.replace(SEPARATORS, ' ').trim();
  for (const format of [...formatVariations(dateFormat || 'YYYY-MM-DD', text), ...UNAMBIGUOUS_FORMATS]) {
    const v = parseWithFormat(clean, format, tz);
    if (v !== null) { return v; }
  }
  return null;
}

const TIME_REGEX = /(?:^|\s+|T)(?:(\d\d?)(?::(\d\d?)(?::(\d\d?))?)?|(\d\d?)(\d\d))\s*([ap]m?)?$/i;
const UTC_REGEX = /[^a-zA-Z](UTC?|GMT|Z)$/i;
const NUMERIC_TZ_REGEX = /([+-]\d\d?)(?::?(\d\d))?$/i;

/** parseDateTime: a date (column format) followed by a flexible time and optional zone. */
export function parseDateTime(text: string, dateFormat: string | undefined, tz: string): number | null {
  let s = text.trim();
  if (!s) { return null; }
  const dateOnly = parseDateStrict(s, dateFormat, tz);
  if (dateOnly) { return dateOnly; }
  let offsetMin: number | undefined;
  const utc = UTC_REGEX.exec(s);
  if (utc) {
    offsetMin = 0;
    s = s.slice(0, utc.index + 1).trim();
  } else {
    const num = NUMERIC_TZ_REGEX.exec(s);
    if (num) {
      offsetMin = (num[1][0] === '-' ? -1 : 1) * (Number(num[1].slice(1)) * 60 + Number(num[2] ?? 0));
      s = s.slice(0, num.index).trim();
    }
  }
  const tm = TIME_REGEX.exec(s);
  if (!tm) { return null; }
  let hours = parseInt(tm[1] || tm[4], 10);
  const minutes = Number(tm[2] || tm[5] || 0);
  const seconds = Number(tm[3] || 0);
  const ampm = (tm[6] || '').toLowerCase();
  if (hours < 12 && hours > 0 && ampm.startsWith('p')) { hours += 12; } else if (hours === 12 && ampm.startsWith('a')) { hours = 0; }
  if (hours > 23 || minutes > 59 || seconds > 59) { return null; }
  const date = parseDateStrict(s.slice(0, tm.index).trim(), dateFormat);
  if (!date) { return null; }
  const wall = date + hours * 3600 + minutes * 60 + seconds;
  return offsetMin !== undefined ? wall - offsetMin * 60 : localToEpoch(wall, tz);
}

// ---------------------------------------------------------------------------------------------
// ChoiceList

/** ChoiceListParser: JSON array or CSV (newlines also split); blanks dropped; null if empty. */
export function parseChoiceList(text: string): CellValue {
  const s = text.trim();
  let items: string[] = [];
  if (s.startsWith('[')) {
    try {
      const parsed = JSON.parse(s);
      if (Array.isArray(parsed)) {
        items = parsed.filter((v) => v !== null && v !== '').map((v) => (typeof v === 'string' ? v : JSON.stringify(v)));
        return items.length ? ['L', ...items] : null;
      }
    } catch {
      // Not JSON: read as CSV below.
    }
  }
  items = parseCsvLine(s.replace(/\r?\n/g, ',')).map((v) => v.trim()).filter((v) => v !== '');
  return items.length ? ['L', ...items] : null;
}

/** Splits one line of CSV (double quotes quote, "" escapes a quote). */
export function parseCsvLine(line: string): string[] {
  const out: string[] = [];
  let cur = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i];
    if (quoted) {
      if (ch === '"' && line[i + 1] === '"') { cur += '"'; i++; } else if (ch === '"') { quoted = false; } else { cur += ch; }
    } else if (ch === '"' && cur.trim() === '') {
      quoted = true;
      cur = '';
    } else if (ch === ',') {
      out.push(cur);
      cur = '';
    } else {
      cur += ch;
    }
  }
  out.push(cur);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Type guessing for strings written to an empty column (ValueGuesser.ts).

export interface GuessResult {
  type: string;
  widgetOptions?: Record<string, unknown>;
  values: CellValue[];
}

/** A guess with the conversion it applied, for more text of the column (a streamed import). */
export interface GuessWithParser extends GuessResult {
  parse: (v: string | null) => CellValue;
}

const DATE_FORMAT_OPTIONS = ['YYYY-MM-DD', 'MM-DD-YYYY', 'MM/DD/YYYY', 'MM-DD-YY', 'MM/DD/YY',
  'DD MMM YYYY', 'MMMM Do, YYYY', 'DD-MM-YYYY'];
const TIME_FORMAT_OPTIONS = ['h:mma', 'h:mma z', 'HH:mm', 'HH:mm z', 'HH:mm:ss', 'HH:mm:ss z'];
// Candidates standing in for moment-guess (which Grist uses to propose formats).
const GUESS_FORMATS = [
  ...DATE_FORMAT_OPTIONS, 'DD/MM/YYYY', 'YYYY/MM/DD', 'DD.MM.YYYY',
  ...['YYYY-MM-DD', 'MM/DD/YYYY', 'DD/MM/YYYY'].flatMap((d) =>
    ['HH:mm', 'HH:mm:ss', 'h:mma', 'h:mm A'].map((t) => `${d} ${t}`)),
  'YYYY-MM-DDTHH:mm', 'YYYY-MM-DDTHH:mm:ss', 'YYYY-MM-DDTHH:mm:ssZ', 'YYYY-MM-DDTHH:mm:ss.SSSZ',
];

/**
 * Guesses a column type from strings: Bool ("true"/"false"), then Numeric, then Date/DateTime,
 * else Text (values unchanged). A guess allows up to 10% of non-blank values to stay unparsed.
 * Returns null when every value is blank (the column stays empty).
 */
export function guessColumn(values: Array<string | null>, settings: DocSettings, timezone: string): GuessResult | null {
  const guess = guessColumnWithParser(values, settings, timezone);
  if (!guess) { return null; }
  const {parse: _parse, ...result} = guess;
  return result;
}

/** guessColumn, with the conversion it chose, to apply to more of the column's text. */
export function guessColumnWithParser(values: Array<string | null>, settings: DocSettings, timezone: string): GuessWithParser | null {
  const nonBlank = values.filter((v): v is string => Boolean(v));
  if (!nonBlank.length) { return null; }
  const maxUnparsed = nonBlank.length * 0.1;

  const tryGuess = (parse: (v: string) => CellValue | undefined, allowBlank = true): CellValue[] | null => {
    const out: CellValue[] = [];
    let unparsed = 0;
    for (const v of values) {
      if (!v) {
        if (!allowBlank) { return null; }
        out.push(null);
        continue;
      }
      const parsed = parse(v);
      if (parsed === undefined) {
        if (++unparsed > maxUnparsed) { return null; }
        out.push(v);
      } else {
        out.push(parsed);
      }
    }
    return out;
  };

  const parseBool = (v: string) => (v === 'true' ? true : v === 'false' ? false : undefined);
  const bools = tryGuess(parseBool, false);
  if (bools) { return {type: 'Bool', values: bools, parse: (v) => (v ? parseBool(v) ?? v : null)}; }

  const numInfos: ParsedNumber[] = [];
  const parseNum = (v: string) => {
    const p = parseNumber(v, settings);
    // Only lossless parses count: the number must format back to the same text.
    return p && numberRoundTrips(v, p, settings) ? p : undefined;
  };
  const numbers = tryGuess((v) => {
    const p = parseNum(v);
    if (p) { numInfos.push(p); }
    return p?.value;
  });
  if (numbers) {
    const widgetOptions: Record<string, unknown> = {};
    if (numInfos.some((p) => p.isCurrency)) { widgetOptions.numMode = 'currency'; } else if (numInfos.some((p) => p.isPercent)) { widgetOptions.numMode = 'percent'; } else if (numInfos.some((p) => p.hasGroups)) { widgetOptions.numMode = 'decimal'; }
    if (numInfos.some((p) => p.isParenthesised)) { widgetOptions.numSign = 'parens'; }
    if (numInfos.some((p) => p.trailingZero)) { widgetOptions.decimals = numInfos.reduce((m, p) => Math.max(m, p.decimals), 0); }
    // Plain decimals ("-12.5") parse to Number(v) in a '.'-decimal locale; the rest take the full path.
    const plain = numberSymbols(settings.locale, settings.currency || defaultCurrency(settings.locale)).decimal === '.' ? PLAIN_DECIMAL : null;
    return {type: 'Numeric', values: numbers, parse: (v) => (v ? (plain?.test(v) ? Number(v) : parseNum(v)?.value ?? v) : null),
      ...(Object.keys(widgetOptions).length ? {widgetOptions} : {})};
  }

  const format = guessDateFormat(nonBlank);
  if (format) {
    const cut = format.search(/[hHkaAmsSzZT]|$/);
    const dateFormat = format.slice(0, cut).trim();
    const timeFormat = format.slice(cut).trim();
    const isDateTime = Boolean(timeFormat);
    const tz = isDateTime ? timezone : 'UTC';
    const parseDate = (v: string) => parseWithFormat(v, format, tz) ?? undefined;
    const dates = tryGuess(parseDate);
    if (dates) {
      return {
        type: isDateTime ? `DateTime:${timezone}` : 'Date',
        widgetOptions: {
          dateFormat, timeFormat, isCustomDateFormat: !DATE_FORMAT_OPTIONS.includes(dateFormat),
          isCustomTimeFormat: !TIME_FORMAT_OPTIONS.includes(timeFormat),
        },
        values: dates,
        parse: (v) => (v ? parseDate(v) ?? v : null),
      };
    }
  }
  return {type: 'Text', values, parse: (v) => v ?? ''};
}

const PLAIN_DECIMAL = /^-?(0|[1-9]\d{0,14})(\.\d{1,15})?$/;

function numberRoundTrips(text: string, p: ParsedNumber, settings: DocSettings): boolean {
  const sym = numberSymbols(settings.locale, settings.currency || defaultCurrency(settings.locale));
  const stripped = text.replace(WHITESPACE, '').replace(sym.currency, '').replace('%', '')
    .replace(/^\((.*)\)$/, '$1').split(sym.group).join('').replace(sym.decimal, '.').replace(/^[-+]/, '');
  if (/[eE]/.test(stripped)) { return false; }
  // No leading zeros (other than "0." or "0"), which formatting would drop.
  return /^(0|[1-9]\d*)(\.\d+)?$|^\.\d+$/.test(stripped) && Number.isFinite(p.value);
}

function guessDateFormat(values: string[]): string | null {
  let best: string | null = null;
  let bestCount = 0;
  for (const format of [...GUESS_FORMATS].sort()) {
    let count = 0;
    for (const v of values) {
      if (parseWithFormat(v, format, 'UTC') !== null) { count++; }
    }
    // Ties go to the lexicographically last format, as in Grist.
    if (count > 0 && count >= bestCount) {
      best = format;
      bestCount = count;
    }
  }
  return best;
}
