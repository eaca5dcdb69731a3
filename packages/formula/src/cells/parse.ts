/**
 * The type guesser for empty columns receiving strings (ValueGuesser.ts), and the document
 * settings that parsing reads. Each type's own parsing (ValueParser.ts) is in its module under
 * coltypes/.
 */
import {parseWithFormat} from './coltypes/date.js';
import {NUMBER_WHITESPACE, numberSymbols, parseNumber, type ParsedNumber} from './coltypes/numeric.js';
import type {CellValue, DocSettings} from './cell-value.js';

export type {DocSettings} from './cell-value.js';

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

const DATE_FORMAT_OPTIONS = [
  'YYYY-MM-DD',
  'MM-DD-YYYY',
  'MM/DD/YYYY',
  'MM-DD-YY',
  'MM/DD/YY',
  'DD MMM YYYY',
  'MMMM Do, YYYY',
  'DD-MM-YYYY',
];
const TIME_FORMAT_OPTIONS = ['h:mma', 'h:mma z', 'HH:mm', 'HH:mm z', 'HH:mm:ss', 'HH:mm:ss z'];
// Candidates standing in for moment-guess (which Grist uses to propose formats).
const GUESS_FORMATS = [
  ...DATE_FORMAT_OPTIONS,
  'DD/MM/YYYY',
  'YYYY/MM/DD',
  'DD.MM.YYYY',
  ...['YYYY-MM-DD', 'MM/DD/YYYY', 'DD/MM/YYYY'].flatMap((d) =>
    ['HH:mm', 'HH:mm:ss', 'h:mma', 'h:mm A'].map((t) => `${d} ${t}`),
  ),
  'YYYY-MM-DDTHH:mm',
  'YYYY-MM-DDTHH:mm:ss',
  'YYYY-MM-DDTHH:mm:ssZ',
  'YYYY-MM-DDTHH:mm:ss.SSSZ',
];

/**
 * Guesses a column type from strings: Bool ("true"/"false"), then Numeric, then Date/DateTime,
 * else Text (values unchanged). A guess allows up to 10% of non-blank values to stay unparsed.
 * Returns null when every value is blank (the column stays empty).
 */
export function guessColumn(values: Array<string | null>, settings: DocSettings, timezone: string): GuessResult | null {
  const guess = guessColumnWithParser(values, settings, timezone);
  if (!guess) {
    return null;
  }
  const {parse: _parse, ...result} = guess;
  return result;
}

/** guessColumn, with the conversion it chose, to apply to more of the column's text. */
export function guessColumnWithParser(
  values: Array<string | null>,
  settings: DocSettings,
  timezone: string,
): GuessWithParser | null {
  const nonBlank = values.filter((v): v is string => Boolean(v));
  if (!nonBlank.length) {
    return null;
  }
  const maxUnparsed = nonBlank.length * 0.1;

  const tryGuess = (parse: (v: string) => CellValue | undefined, allowBlank = true): CellValue[] | null => {
    const out: CellValue[] = [];
    let unparsed = 0;
    for (const v of values) {
      if (!v) {
        if (!allowBlank) {
          return null;
        }
        out.push(null);
        continue;
      }
      const parsed = parse(v);
      if (parsed === undefined) {
        if (++unparsed > maxUnparsed) {
          return null;
        }
        out.push(v);
      } else {
        out.push(parsed);
      }
    }
    return out;
  };

  const parseBool = (v: string) => (v === 'true' ? true : v === 'false' ? false : undefined);
  const bools = tryGuess(parseBool, false);
  if (bools) {
    return {type: 'Bool', values: bools, parse: (v) => (v ? (parseBool(v) ?? v) : null)};
  }

  const numInfos: ParsedNumber[] = [];
  const parseNum = numberGuesser(settings);
  const numbers = tryGuess((v) => {
    const p = parseNum(v);
    if (p) {
      numInfos.push(p);
    }
    return p?.value;
  });
  if (numbers) {
    const widgetOptions: Record<string, unknown> = {};
    if (numInfos.some((p) => p.isCurrency)) {
      widgetOptions.numMode = 'currency';
    } else if (numInfos.some((p) => p.isPercent)) {
      widgetOptions.numMode = 'percent';
    } else if (numInfos.some((p) => p.hasGroups)) {
      widgetOptions.numMode = 'decimal';
    }
    if (numInfos.some((p) => p.isParenthesised)) {
      widgetOptions.numSign = 'parens';
    }
    if (numInfos.some((p) => p.trailingZero)) {
      widgetOptions.decimals = numInfos.reduce((m, p) => Math.max(m, p.decimals), 0);
    }
    // Plain decimals ("-12.5") parse to Number(v) in a '.'-decimal locale; the rest take the full path.
    const plain = numberSymbols(settings).decimal === '.' ? PLAIN_DECIMAL : null;
    return {
      type: 'Numeric',
      values: numbers,
      parse: (v) => (v ? (plain?.test(v) ? Number(v) : (parseNum(v)?.value ?? v)) : null),
      ...(Object.keys(widgetOptions).length ? {widgetOptions} : {}),
    };
  }

  const format = guessDateFormat(nonBlank, maxUnparsed);
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
          dateFormat,
          timeFormat,
          isCustomDateFormat: !DATE_FORMAT_OPTIONS.includes(dateFormat),
          isCustomTimeFormat: !TIME_FORMAT_OPTIONS.includes(timeFormat),
        },
        values: dates,
        parse: (v) => (v ? (parseDate(v) ?? v) : null),
      };
    }
  }
  return {type: 'Text', values, parse: (v) => v ?? ''};
}

const PLAIN_DECIMAL = /^-?(0|[1-9]\d{0,14})(\.\d{1,15})?$/;

/** parseNumber's answer for a lossless number, or undefined: what a Numeric guess counts. */
export function guessNumberFull(v: string, settings: DocSettings): ParsedNumber | undefined {
  const p = parseNumber(v, settings);
  // Only lossless parses count: the number must format back to the same text.
  return p && numberRoundTrips(v, p, settings) ? p : undefined;
}

/**
 * guessNumberFull for a column's values, with a path for plain decimals ("-12.50") in a locale
 * whose decimal separator is "." (and whose currency and group symbols cannot occur in one): the
 * same answer without the general parse's replaces and the round trip's (most of a Numeric
 * column's guess, issue 43 §2).
 */
export function numberGuesser(settings: DocSettings): (v: string) => ParsedNumber | undefined {
  const sym = numberSymbols(settings);
  const noSymbol = (x: string) => !/[-+.\d]/.test(x);
  if (sym.decimal !== '.' || !noSymbol(sym.currency) || !noSymbol(sym.group)) {
    return (v) => guessNumberFull(v, settings);
  }
  return (v) => {
    if (!PLAIN_DECIMAL.test(v)) return guessNumberFull(v, settings);
    const dot = v.indexOf('.');
    const fraction = dot < 0 ? '' : v.slice(dot + 1);
    // numberRoundTrips: the digits without trailing zeros must survive a float. Up to 15 of them
    // always do (a double holds 15 significant decimal digits); more are checked as it checks them.
    let kept = fraction.length;
    while (kept > 0 && fraction.charCodeAt(kept - 1) === 48) kept--;
    const negative = v.charCodeAt(0) === 45;
    const wholeEnd = dot < 0 ? v.length : dot;
    if (wholeEnd - (negative ? 1 : 0) + kept > 15) {
      const whole = v.slice(negative ? 1 : 0, wholeEnd);
      const plain = kept ? `${whole}.${fraction.slice(0, kept)}` : whole;
      if (Number(plain).toFixed(kept) !== plain) return undefined;
    }
    return {
      value: Number(v),
      isCurrency: false,
      isPercent: false,
      isParenthesised: false,
      hasGroups: false,
      decimals: fraction.length,
      trailingZero: fraction.endsWith('0'),
    };
  };
}

function numberRoundTrips(text: string, p: ParsedNumber, settings: DocSettings): boolean {
  const sym = numberSymbols(settings);
  const stripped = text
    .replace(NUMBER_WHITESPACE, '')
    .replace(sym.currency, '')
    .replace('%', '')
    .replace(/^\((.*)\)$/, '$1')
    .split(sym.group)
    .join('')
    .replace(sym.decimal, '.')
    .replace(/^[-+]/, '');
  if (/[eE]/.test(stripped)) {
    return false;
  }
  // No leading zeros (other than "0." or "0"), which formatting would drop.
  if (!/^(0|[1-9]\d*)(\.\d+)?$|^\.\d+$/.test(stripped) || !Number.isFinite(p.value)) return false;
  // And no more digits than a float keeps: "12345678902345689" would come back as ...688 (Grist's
  // guesser formats the number again and compares).
  const plain = (stripped.startsWith('.') ? `0${stripped}` : stripped).replace(/(\.\d*?)0+$/, '$1').replace(/\.$/, '');
  const decimals = plain.includes('.') ? plain.length - plain.indexOf('.') - 1 : 0;
  return decimals > 100 || Number(plain).toFixed(decimals) === plain;
}

const SORTED_GUESS_FORMATS = [...GUESS_FORMATS].sort();

/**
 * The format that parses the most of `values` (ties to the lexicographically last, as in Grist).
 * With `maxUnparsed`, a format is dropped as soon as more than that many values fail it: the guess
 * that follows needs no more failures than that of the best format, so a format past it can only
 * be the best when no format qualifies, and then none is taken either (null). The answer is the
 * full count's whenever that one would be taken; a column of text then fails every format after
 * a tenth of its values instead of trying each on all of them (issue 43 §2).
 */
export function guessDateFormat(values: string[], maxUnparsed = Infinity): string | null {
  let best: string | null = null;
  let bestCount = 0;
  for (const format of SORTED_GUESS_FORMATS) {
    let count = 0;
    let failed = 0;
    for (const v of values) {
      if (parseWithFormat(v, format, 'UTC') !== null) {
        count++;
      } else if (++failed > maxUnparsed) {
        count = 0;
        break;
      }
    }
    // Ties go to the lexicographically last format, as in Grist.
    if (count > 0 && count >= bestCount) {
      best = format;
      bestCount = count;
    }
  }
  return best;
}
