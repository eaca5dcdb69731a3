/**
 * Numeric, Int and the position types (ManualSortPos, PositionNumber): Python float()/int()
 * conversion, Grist's NumberParse (currency, percent, parentheses, digit groups) and its
 * NumberFormat (numMode, decimals, currency) for the document's locale.
 */
import type {DocSettings} from '../cell-value.js';
import type {CellValue} from '../cell-value.js';
import {
  BaseType,
  type CellFormatter,
  ConversionError,
  type Converter,
  formatUnknown,
  INT32_MAX,
  INT32_MIN,
  type ParseContext,
  pyFloat,
  type SchemaType,
  type TextParser,
  type WidgetOptions,
} from './base.js';

// ---------------------------------------------------------------------------------------------
// The locale's currency and symbols

// The currency of a locale's region (Grist uses the locale-currency package), for common regions.
const EURO = [
  'AT',
  'BE',
  'CY',
  'DE',
  'EE',
  'ES',
  'FI',
  'FR',
  'GR',
  'HR',
  'IE',
  'IT',
  'LT',
  'LU',
  'LV',
  'MT',
  'NL',
  'PT',
  'SI',
  'SK',
];
const REGION_CURRENCY: Record<string, string> = {
  ...Object.fromEntries(EURO.map((r) => [r, 'EUR'])),
  US: 'USD',
  GB: 'GBP',
  CA: 'CAD',
  AU: 'AUD',
  NZ: 'NZD',
  JP: 'JPY',
  CN: 'CNY',
  IN: 'INR',
  BR: 'BRL',
  CH: 'CHF',
  RU: 'RUB',
  MX: 'MXN',
  SE: 'SEK',
  NO: 'NOK',
  DK: 'DKK',
  PL: 'PLN',
  UA: 'UAH',
  KR: 'KRW',
  ZA: 'ZAR',
  CZ: 'CZK',
  HU: 'HUF',
  RO: 'RON',
  TR: 'TRY',
  IL: 'ILS',
  AR: 'ARS',
  CL: 'CLP',
  CO: 'COP',
  SG: 'SGD',
  HK: 'HKD',
  TW: 'TWD',
  TH: 'THB',
  ID: 'IDR',
  MY: 'MYR',
  PH: 'PHP',
  VN: 'VND',
  EG: 'EGP',
  NG: 'NGN',
  KE: 'KES',
  SA: 'SAR',
  AE: 'AED',
};

/** The currency of the locale's region (USD when unknown). */
export function localeCurrency(locale: string): string {
  const region = /[-_]([A-Z]{2})\b/.exec(locale)?.[1];
  return REGION_CURRENCY[region ?? ''] ?? 'USD';
}

export interface NumberSymbols {
  decimal: string;
  group: string;
  currency: string;
}

const symbolsCache = new Map<string, NumberSymbols>();

/** The decimal and group separators and currency symbol of a locale (the document's currency by default). */
export function numberSymbols(settings: DocSettings, currency?: string): NumberSymbols {
  const cur = currency || settings.currency || localeCurrency(settings.locale);
  const key = `${settings.locale}|${cur}`;
  let s = symbolsCache.get(key);
  if (!s) {
    let parts: Intl.NumberFormatPart[];
    try {
      parts = new Intl.NumberFormat(settings.locale, {style: 'currency', currency: cur}).formatToParts(12345.6);
    } catch {
      parts = new Intl.NumberFormat('en-US', {style: 'currency', currency: 'USD'}).formatToParts(12345.6);
    }
    const get = (type: string, dflt: string) => parts.find((p) => p.type === type)?.value ?? dflt;
    s = {decimal: get('decimal', '.'), group: get('group', ','), currency: get('currency', '$')};
    // Keyed on (locale, currency) pairs: a few per document; cleared past a bound all the same.
    if (symbolsCache.size >= 1000) {
      symbolsCache.clear();
    }
    symbolsCache.set(key, s);
  }
  return s;
}

// ---------------------------------------------------------------------------------------------
// Parsing (NumberParse.ts)

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

/** What number parsing ignores (spaces, no-break spaces). */
export const NUMBER_WHITESPACE = /[\s\u00a0\u202f]/g;

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** NumberParse.parse: currency, percent, parentheses, digit grouping, exponent. */
export function parseNumber(text: string, settings: DocSettings, currency?: string): ParsedNumber | null {
  const sym = numberSymbols(settings, currency);
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
  s = s.replace(NUMBER_WHITESPACE, '').replace(/\u2212/g, '-');
  const isParenthesised = s.startsWith('(') && s.endsWith(')');
  if (isParenthesised) {
    s = s.slice(1, -1);
  }
  if (!s) {
    return null;
  }
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
    if (s.includes('.')) {
      return null;
    }
    s = s.replace(sym.decimal, '.');
  }
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(s)) {
    return null;
  }
  let value = Number(s);
  if (isPercent) {
    value *= 0.01;
  }
  if (isParenthesised) {
    value = -value;
  }
  const fraction = /\.(\d*)/.exec(s.replace(/[eE].*$/, ''))?.[1] ?? '';
  return {
    value,
    isCurrency,
    isPercent,
    isParenthesised,
    hasGroups,
    decimals: fraction.length,
    trailingZero: fraction.endsWith('0'),
  };
}

// ---------------------------------------------------------------------------------------------
// Formatting (NumberFormat.ts)

function clamp(n: number, lo: number, hi: number): number {
  return Math.min(Math.max(n, lo), hi);
}

function present(v: unknown): boolean {
  return v !== undefined && v !== null;
}

/** Grist's buildNumberFormat: numMode, decimals, maxDecimals, currency, for the doc's locale. */
export function buildNumberFormat(options: WidgetOptions, settings: DocSettings): Intl.NumberFormat {
  let locale = settings.locale || 'en-US';
  try {
    new Intl.NumberFormat(locale);
  } catch {
    locale = 'en-US';
  }
  const currency = String(options.currency || settings.currency || localeCurrency(locale));
  const nf: Intl.NumberFormatOptions = {};
  switch (options.numMode) {
    case 'currency':
      Object.assign(nf, {style: 'currency', currency, currencyDisplay: 'narrowSymbol'});
      break;
    case 'decimal':
      nf.useGrouping = true;
      break;
    case 'percent':
      nf.style = 'percent';
      break;
    case 'scientific':
      nf.notation = 'scientific';
      break;
    default:
      nf.useGrouping = false;
  }
  if (present(options.decimals) && Number.isFinite(Number(options.decimals))) {
    nf.minimumFractionDigits = clamp(Number(options.decimals), 0, 20);
  }
  let minimum = 0;
  try {
    minimum = new Intl.NumberFormat(locale, nf).resolvedOptions().minimumFractionDigits ?? 0;
  } catch {
    // A bad currency code: fall back to the default one below.
    nf.currency = 'USD';
    minimum = new Intl.NumberFormat(locale, nf).resolvedOptions().minimumFractionDigits ?? 0;
  }
  if (present(options.maxDecimals) && Number.isFinite(Number(options.maxDecimals))) {
    nf.maximumFractionDigits = clamp(Number(options.maxDecimals), minimum, 20);
  } else if (!options.numMode) {
    nf.maximumFractionDigits = clamp(10, minimum, 20);
  }
  return new Intl.NumberFormat(locale, nf);
}

function numberFormatter(options: WidgetOptions, settings: DocSettings): CellFormatter {
  const nf = buildNumberFormat(options, settings);
  const fmt =
    options.numSign === 'parens'
      ? (n: number) => (n >= 0 ? ` ${nf.format(n)} ` : `(${nf.format(-n)})`)
      : (n: number) => nf.format(n);
  return (v) => {
    if (v === null) {
      return '';
    }
    if (typeof v === 'number' || typeof v === 'boolean') {
      return fmt(Number(v));
    }
    return formatUnknown(v);
  };
}

/** Group and decimal separators of the locale, from formatting 1000.1 (absent ones are omitted). */
function numberSeparators(locale: string): {groupChar?: string; decimalChar?: string} {
  let parts: Intl.NumberFormatPart[];
  try {
    parts = new Intl.NumberFormat(locale).formatToParts(1000.1);
  } catch {
    parts = new Intl.NumberFormat('en-US').formatToParts(1000.1);
  }
  return {
    groupChar: parts.find((p) => p.type === 'group')?.value,
    decimalChar: parts.find((p) => p.type === 'decimal')?.value,
  };
}

// ---------------------------------------------------------------------------------------------

function numberParser(options: WidgetOptions, ctx: ParseContext): TextParser {
  const currency = typeof options.currency === 'string' ? options.currency : undefined;
  return (text) => parseNumber(text, ctx.settings, currency)?.value ?? text;
}

/** Python float(); "" and null are empty. */
export const toNumeric: Converter = (v: CellValue) => (v === '' || v === null ? null : pyFloat(v));

export class NumericType extends BaseType {
  override readonly sqlType = 'NUMERIC';
  override readonly sqlDefault = '0';
  override readonly defaultValue = 0;
  override readonly holdsFloats = true;

  override converter(): Converter {
    return toNumeric;
  }

  override parser(options: WidgetOptions, ctx: ParseContext): TextParser {
    return numberParser(options, ctx);
  }

  override formatter(options: WidgetOptions, settings: DocSettings): CellFormatter {
    return numberFormatter(options, settings);
  }

  override schemaType(options: WidgetOptions, locale: string): SchemaType {
    return {type: 'number', bareNumber: options.numMode === 'decimal', ...numberSeparators(locale)};
  }
}

export class IntType extends BaseType {
  override readonly holdsFloats = false;
  override readonly sqlType = 'INTEGER';
  override readonly sqlDefault = '0';
  override readonly defaultValue = 0;

  /** Python int(float(v)) within 32 bits; "" and null are empty. */
  override converter(): Converter {
    return (v) => {
      if (v === '' || v === null) {
        return null;
      }
      const f = pyFloat(v);
      if (!Number.isFinite(f)) {
        throw new ConversionError();
      }
      const i = Math.trunc(f);
      if (i < INT32_MIN || i > INT32_MAX) {
        throw new ConversionError();
      }
      return i === 0 ? 0 : i; // no -0
    };
  }

  override parser(options: WidgetOptions, ctx: ParseContext): TextParser {
    return numberParser(options, ctx);
  }

  override formatter(options: WidgetOptions, settings: DocSettings): CellFormatter {
    return numberFormatter({decimals: 0, ...options}, settings);
  }

  override schemaType(options: WidgetOptions, locale: string): SchemaType {
    return {type: 'integer', bareNumber: options.numMode === 'decimal', groupChar: numberSeparators(locale).groupChar};
  }
}

/** ManualSortPos and PositionNumber: floats whose empty value sorts last (infinity). */
export class PositionType extends BaseType {
  override readonly sqlType = 'NUMERIC';
  override readonly sqlDefault = '1e999';
  override readonly defaultValue = Infinity;
  override readonly holdsFloats = true;

  override converter(): Converter {
    return (v) => (v === '' || v === null ? Infinity : pyFloat(v));
  }
}
