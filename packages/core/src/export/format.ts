/**
 * Display formatting of cell values, as Grist's ValueFormatter does it for exports: numbers by the
 * column's number format, dates by its date/time format, references through the formatter of the
 * referenced table's visible column, lists as comma-separated text, errors as `#Name`.
 */
import type { DocSettings } from '../doc/parse.js';
import { baseType, type CellValue } from '../doc/types.js';
import { formatMoment } from './momentfmt.js';

export type CellFormatter = (v: CellValue) => string;

type Options = Record<string, unknown>;

// ---------------------------------------------------------------------------------------------
// Values of no particular type (formatUnknown / formatDecoded in Grist).

/** Grist's csvEncodeCell: quoted when holding a separator, a quote, or edge whitespace. */
function csvEncodeCell(value: string): string {
  return /[,\r\n"]|^\s|\s$/.test(value) ? '"' + value.replace(/"/g, '""') + '"' : value;
}

/** Grist's csvEncodeRow with `{prettier: true}`. */
export function csvEncodeRow(values: string[]): string {
  return values.map(csvEncodeCell).join(', ');
}

function isNestedObject(v: CellValue): boolean {
  return Array.isArray(v) && (v[0] === 'L' || v[0] === 'O');
}

function isoDate(epochSec: number): string {
  const d = new Date(epochSec * 1000);
  return Number.isNaN(d.getTime()) ? 'Invalid Date' : d.toISOString().slice(0, 10);
}

function isoDateTime(epochSec: number): string {
  const d = new Date(epochSec * 1000);
  return Number.isNaN(d.getTime()) ? 'Invalid Date' : d.toISOString();
}

/** RaisedException.toString(): Excel-like for division by zero, else `#ExcName`. */
function formatError(args: CellValue[]): string {
  const [name, message, details] = args;
  switch (name) {
    case 'ZeroDivisionError': return '#DIV/0!';
    case 'UnmarshallableError': return details ? String(details) : '#' + String(name);
    case 'InvalidTypedValue': return `#Invalid ${String(message)}: ${String(details)}`;
  }
  return '#' + String(name);
}

/** The text of a Grist-encoded value as Grist shows it (formatDecoded of decodeObject). */
export function formatUnknown(value: CellValue, isTopLevel = true): string {
  if (value === null || value === undefined) return isTopLevel ? '' : 'null';
  if (!Array.isArray(value)) {
    if (typeof value === 'object') return isTopLevel ? '[object Object]' : JSON.stringify(value);
    return isTopLevel ? String(value) : JSON.stringify(value) ?? 'null';
  }
  const [code, ...args] = value;
  switch (code) {
    case 'L':
      if (!isTopLevel || args.some(isNestedObject)) {
        return '[' + args.map((v) => formatUnknown(v, false)).join(', ') + ']';
      }
      return csvEncodeRow(args.map((v) => formatUnknown(v, true)));
    case 'O': {
      const obj = (args[0] && typeof args[0] === 'object' && !Array.isArray(args[0]) ? args[0] : {}) as Record<string, CellValue>;
      const items = Object.keys(obj).sort().map((k) => `${JSON.stringify(k)}: ${formatUnknown(obj[k], false)}`);
      return '{' + items.join(', ') + '}';
    }
    case 'D':
      return isTopLevel ? formatMoment(Number(args[0]) * 1000, String(args[1]), 'YYYY-MM-DD HH:mm:ssZ') : isoDateTime(Number(args[0]));
    case 'd': return isoDate(Number(args[0]));
    case 'E': return args.length ? formatError(args) : 'E()';
    case 'R': return `${String(args[0])}[${String(args[1])}]`;
    case 'r': return `${String(args[0])}[[${Array.isArray(args[1]) ? args[1].join(',') : String(args[1])}]]`;
    case 'P': return 'Loading...';
    case 'S': return '...';
    case 'C': return 'CENSORED';
    case 'U': return String(args[0]);
  }
  return `${String(code)}(${JSON.stringify(args).slice(1, -1)})`;
}

// ---------------------------------------------------------------------------------------------
// Numbers (NumberFormat.ts)

// The currency of a locale's region (Grist uses the locale-currency package), for common regions.
const EURO = ['AT', 'BE', 'CY', 'DE', 'EE', 'ES', 'FI', 'FR', 'GR', 'HR', 'IE', 'IT', 'LT', 'LU', 'LV', 'MT', 'NL', 'PT', 'SI', 'SK'];
const REGION_CURRENCY: Record<string, string> = {
  ...Object.fromEntries(EURO.map((r) => [r, 'EUR'])),
  US: 'USD', GB: 'GBP', CA: 'CAD', AU: 'AUD', NZ: 'NZD', JP: 'JPY', CN: 'CNY', IN: 'INR', BR: 'BRL',
  CH: 'CHF', RU: 'RUB', MX: 'MXN', SE: 'SEK', NO: 'NOK', DK: 'DKK', PL: 'PLN', UA: 'UAH', KR: 'KRW',
  ZA: 'ZAR', CZ: 'CZK', HU: 'HUF', RO: 'RON', TR: 'TRY', IL: 'ILS', AR: 'ARS', CL: 'CLP', CO: 'COP',
  SG: 'SGD', HK: 'HKD', TW: 'TWD', TH: 'THB', ID: 'IDR', MY: 'MYR', PH: 'PHP', VN: 'VND', EG: 'EGP',
  NG: 'NGN', KE: 'KES', SA: 'SAR', AE: 'AED',
};

function localeCurrency(locale: string): string {
  const region = /[-_]([A-Z]{2})\b/.exec(locale)?.[1];
  return REGION_CURRENCY[region ?? ''] ?? 'USD';
}

function clamp(n: number, lo: number, hi: number): number {
  return Math.min(Math.max(n, lo), hi);
}

function present(v: unknown): boolean {
  return v !== undefined && v !== null;
}

/** Grist's buildNumberFormat: numMode, decimals, maxDecimals, currency, for the doc's locale. */
export function buildNumberFormat(options: Options, settings: DocSettings): Intl.NumberFormat {
  let locale = settings.locale || 'en-US';
  try {
    new Intl.NumberFormat(locale);
  } catch {
    locale = 'en-US';
  }
  const currency = String(options.currency || settings.currency || localeCurrency(locale));
  const nf: Intl.NumberFormatOptions = {};
  switch (options.numMode) {
    case 'currency': Object.assign(nf, { style: 'currency', currency, currencyDisplay: 'narrowSymbol' }); break;
    case 'decimal': nf.useGrouping = true; break;
    case 'percent': nf.style = 'percent'; break;
    case 'scientific': nf.notation = 'scientific'; break;
    default: nf.useGrouping = false;
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

function numericFormatter(options: Options, settings: DocSettings): CellFormatter {
  const nf = buildNumberFormat(options, settings);
  const fmt = options.numSign === 'parens'
    ? (n: number) => (n >= 0 ? ` ${nf.format(n)} ` : `(${nf.format(-n)})`)
    : (n: number) => nf.format(n);
  return (v) => {
    if (v === null) return '';
    if (typeof v === 'number' || typeof v === 'boolean') return fmt(Number(v));
    return formatUnknown(v);
  };
}

// ---------------------------------------------------------------------------------------------
// Dates

function dateFormatter(format: string, timezone: string): CellFormatter {
  return (v) => {
    if (v === null) return '';
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

// ---------------------------------------------------------------------------------------------
// References

/** Shows a row id as `Table[3]` (references whose visible column is the row id). */
export function rowIdFormatter(tableId: string): CellFormatter {
  return (v) => {
    if (typeof v === 'number' || typeof v === 'boolean') return Number(v) > 0 ? `${tableId}[${Number(v)}]` : '';
    return formatUnknown(v);
  };
}

/** An error cell of a reference display: alt-text in a Ref column shows as its text. */
function invalidRefText(v: CellValue): string | null {
  if (Array.isArray(v) && v[0] === 'E' && v[1] === 'InvalidTypedValue' && typeof v[2] === 'string' && v[2].startsWith('Ref')) {
    return String(v[3]);
  }
  return null;
}

function refFormatter(visible: CellFormatter): CellFormatter {
  return (v) => invalidRefText(v) ?? visible(v);
}

function refListFormatter(visible: CellFormatter): CellFormatter {
  return (v) => {
    const invalid = invalidRefText(v);
    if (invalid !== null) return invalid;
    if (!Array.isArray(v) || v[0] !== 'L' || v.slice(1).some(isNestedObject)) return formatUnknown(v);
    return csvEncodeRow(v.slice(1).map((item) => visible(item)));
  };
}

// ---------------------------------------------------------------------------------------------

export interface FormatterArgs {
  /** The column's Grist type, e.g. `Numeric`, `DateTime:Europe/Paris`, `Ref:People`. */
  type: string;
  /** Parsed widgetOptions. */
  options: Options;
  settings: DocSettings;
  /** For Ref/RefList: the formatter of the values shown (the visible column's, or row ids). */
  visible?: CellFormatter;
}

/** Grist's createFormatter (plus the visible-column formatter for references). */
export function createFormatter({ type, options, settings, visible }: FormatterArgs): CellFormatter {
  switch (baseType(type)) {
    case 'Numeric':
      return numericFormatter(options, settings);
    case 'Int':
      return numericFormatter({ decimals: 0, ...options }, settings);
    case 'Bool':
      return (v) => (typeof v === 'boolean' || v === 0 || v === 1 ? String(v) : formatUnknown(v));
    case 'Text': case 'Blob':
      return (v) => (typeof v === 'string' ? v : formatUnknown(v));
    case 'Date':
      return dateFormatter(String(options.dateFormat || 'YYYY-MM-DD'), 'UTC');
    case 'DateTime': {
      const tz = type.startsWith('DateTime:') ? type.slice('DateTime:'.length) : '';
      const timeFormat = options.timeFormat === undefined ? 'h:mma' : String(options.timeFormat);
      return dateFormatter(`${String(options.dateFormat || 'YYYY-MM-DD')} ${timeFormat}`, tz || 'UTC');
    }
    case 'Ref':
      return refFormatter(visible ?? rowIdFormatter(type.slice(4)));
    case 'RefList':
      return refListFormatter(visible ?? rowIdFormatter(type.slice(8)));
    case 'Id':
      return rowIdFormatter(String(options.tableId ?? ''));
    default:
      return (v) => formatUnknown(v);
  }
}
