/**
 * Formatting of Grist dates and times with moment.js format strings (what Grist's DateFormatter
 * does with `moment.tz(ms, tz).format(fmt)`), in English as Grist's server formats them. The wall
 * clock in a zone comes from Intl; unknown zones fall back to UTC as moment-timezone does.
 */
import {zoneOffsetSeconds} from './datetime.js';
import {BoundedMap} from '../memo.js';

import {MONTH_NAMES, WEEKDAY_NAMES_FROM_SUNDAY} from '../pyvalues/calendar.js';

const MONTHS = MONTH_NAMES;
const DAYS = WEEKDAY_NAMES_FROM_SUNDAY;

// moment's English long-date formats.
const LOCAL_FORMATS: Record<string, string> = {
  LTS: 'h:mm:ss A',
  LT: 'h:mm A',
  L: 'MM/DD/YYYY',
  LL: 'MMMM D, YYYY',
  LLL: 'MMMM D, YYYY h:mm A',
  LLLL: 'dddd, MMMM D, YYYY h:mm A',
  l: 'M/D/YYYY',
  ll: 'MMM D, YYYY',
  lll: 'MMM D, YYYY h:mm A',
  llll: 'ddd, MMM D, YYYY h:mm A',
};
const LOCAL_RE = /(\[[^[]*\])|(\\)?(LTS|LT|LL?L?L?|l{1,4})/g;
// moment's formatting tokens (moment/src/lib/format/format.js), plus any single character.
const TOKEN_RE =
  /(\[[^[]*\])|(\\)?([Hh]mm(ss)?|Mo|MM?M?M?|Do|DDDo|DD?D?D?|ddd?d?|do?|w[o|w]?|W[o|W]?|Qo?|N{1,5}|YYYYYY|YYYYY|YYYY|YY|y{2,4}|yo?|gg(ggg?)?|GG(GGG?)?|e|E|a|A|hh?|HH?|kk?|mm?|ss?|S{1,9}|x|X|zz?|ZZ?|.)/g;

interface Wall {
  y: number;
  mo: number;
  d: number;
  h: number;
  mi: number;
  s: number;
  ms: number;
  dow: number;
  doy: number;
  offsetMin: number;
  epochMs: number;
  tz: string;
}

function pad(n: number, width: number): string {
  const s = String(Math.abs(n)).padStart(width, '0');
  return n < 0 ? '-' + s : s;
}

function ordinal(n: number): string {
  const b = n % 10;
  const suffix = Math.floor((n % 100) / 10) === 1 ? 'th' : b === 1 ? 'st' : b === 2 ? 'nd' : b === 3 ? 'rd' : 'th';
  return n + suffix;
}

function offsetText(offsetMin: number, sep: string): string {
  const sign = offsetMin < 0 ? '-' : '+';
  const abs = Math.abs(offsetMin);
  return sign + pad(Math.floor(abs / 60), 2) + sep + pad(abs % 60, 2);
}

const abbrCache = new BoundedMap<string, Intl.DateTimeFormat[]>(1000);

/** The zone abbreviation (moment's `z`): Intl's short name where it has a real one, else "+03". */
function zoneAbbr(w: Wall): string {
  let fmts = abbrCache.get(w.tz);
  if (!fmts) {
    fmts = [];
    for (const locale of ['en-US', 'en-GB', 'en-IN', 'en-AU']) {
      try {
        fmts.push(new Intl.DateTimeFormat(locale, {timeZone: w.tz, timeZoneName: 'short'}));
      } catch {
        break; // Unknown zone.
      }
    }
    abbrCache.set(w.tz, fmts);
  }
  for (const f of fmts) {
    const name = f.formatToParts(new Date(w.epochMs)).find((p) => p.type === 'timeZoneName')?.value;
    if (name && !/^GMT[+-]/.test(name)) return name === 'GMT' && w.offsetMin !== 0 ? offsetAbbr(w.offsetMin) : name;
  }
  return w.tz === 'UTC' || !fmts.length ? 'UTC' : offsetAbbr(w.offsetMin);
}

function offsetAbbr(offsetMin: number): string {
  const text = offsetText(offsetMin, '');
  return text.endsWith('00') ? text.slice(0, -2) : text;
}

/** ISO week-numbering year and week of a date (moment's W and GGGG). */
function isoWeek(w: Wall): {week: number; year: number} {
  const date = new Date(Date.UTC(w.y, w.mo - 1, w.d));
  const dow = (w.dow + 6) % 7; // Monday = 0
  date.setUTCDate(date.getUTCDate() - dow + 3); // Thursday of this week
  const year = date.getUTCFullYear();
  const firstThursday = new Date(Date.UTC(year, 0, 4));
  const week =
    1 +
    Math.round(((date.getTime() - firstThursday.getTime()) / 86400000 - 3 + ((firstThursday.getUTCDay() + 6) % 7)) / 7);
  return {week, year};
}

/** moment's locale week (en: weeks start on Sunday, week 1 contains January 1st). */
function localeWeek(w: Wall): {week: number; year: number} {
  const startOfYear = Date.UTC(w.y, 0, 1);
  const jan1Dow = new Date(startOfYear).getUTCDay();
  const week = Math.floor((w.doy - 1 + jan1Dow) / 7) + 1;
  // The last days of December can belong to week 1 of the next year.
  const nextJan1Dow = new Date(Date.UTC(w.y + 1, 0, 1)).getUTCDay();
  const daysInYear = (Date.UTC(w.y + 1, 0, 1) - startOfYear) / 86400000;
  if (nextJan1Dow !== 0 && w.doy > daysInYear - nextJan1Dow) return {week: 1, year: w.y + 1};
  return {week, year: w.y};
}

function token(tok: string, w: Wall): string {
  switch (tok) {
    case 'M':
      return String(w.mo);
    case 'Mo':
      return ordinal(w.mo);
    case 'MM':
      return pad(w.mo, 2);
    case 'MMM':
      return MONTHS[w.mo - 1].slice(0, 3);
    case 'MMMM':
      return MONTHS[w.mo - 1];
    case 'Q':
      return String(Math.ceil(w.mo / 3));
    case 'Qo':
      return ordinal(Math.ceil(w.mo / 3));
    case 'D':
      return String(w.d);
    case 'Do':
      return ordinal(w.d);
    case 'DD':
      return pad(w.d, 2);
    case 'DDD':
      return String(w.doy);
    case 'DDDo':
      return ordinal(w.doy);
    case 'DDDD':
      return pad(w.doy, 3);
    case 'd':
      return String(w.dow);
    case 'do':
      return ordinal(w.dow);
    case 'dd':
      return DAYS[w.dow].slice(0, 2);
    case 'ddd':
      return DAYS[w.dow].slice(0, 3);
    case 'dddd':
      return DAYS[w.dow];
    case 'e':
      return String(w.dow);
    case 'E':
      return String(w.dow === 0 ? 7 : w.dow);
    case 'w':
      return String(localeWeek(w).week);
    case 'wo':
      return ordinal(localeWeek(w).week);
    case 'ww':
      return pad(localeWeek(w).week, 2);
    case 'W':
      return String(isoWeek(w).week);
    case 'Wo':
      return ordinal(isoWeek(w).week);
    case 'WW':
      return pad(isoWeek(w).week, 2);
    case 'gg':
      return pad(localeWeek(w).year % 100, 2);
    case 'gggg':
      return pad(localeWeek(w).year, 4);
    case 'ggggg':
      return pad(localeWeek(w).year, 5);
    case 'GG':
      return pad(isoWeek(w).year % 100, 2);
    case 'GGGG':
      return pad(isoWeek(w).year, 4);
    case 'GGGGG':
      return pad(isoWeek(w).year, 5);
    case 'YY':
      return pad(((w.y % 100) + 100) % 100, 2);
    case 'YYYY':
      return w.y <= 9999 ? pad(w.y, 4) : '+' + w.y;
    case 'YYYYY':
      return pad(w.y, 5);
    case 'YYYYYY':
      return (w.y < 0 ? '-' : '+') + pad(Math.abs(w.y), 6);
    case 'y':
    case 'yy':
    case 'yyy':
    case 'yyyy':
      return String(w.y);
    case 'yo':
      return ordinal(w.y);
    case 'N':
    case 'NN':
    case 'NNN':
      return w.y > 0 ? 'AD' : 'BC';
    case 'NNNN':
      return w.y > 0 ? 'Anno Domini' : 'Before Christ';
    case 'NNNNN':
      return w.y > 0 ? 'AD' : 'BC';
    case 'a':
      return w.h < 12 ? 'am' : 'pm';
    case 'A':
      return w.h < 12 ? 'AM' : 'PM';
    case 'H':
      return String(w.h);
    case 'HH':
      return pad(w.h, 2);
    case 'h':
      return String(w.h % 12 || 12);
    case 'hh':
      return pad(w.h % 12 || 12, 2);
    case 'k':
      return String(w.h || 24);
    case 'kk':
      return pad(w.h || 24, 2);
    case 'm':
      return String(w.mi);
    case 'mm':
      return pad(w.mi, 2);
    case 's':
      return String(w.s);
    case 'ss':
      return pad(w.s, 2);
    case 'hmm':
      return String(w.h % 12 || 12) + pad(w.mi, 2);
    case 'hmmss':
      return String(w.h % 12 || 12) + pad(w.mi, 2) + pad(w.s, 2);
    case 'Hmm':
      return String(w.h) + pad(w.mi, 2);
    case 'Hmmss':
      return String(w.h) + pad(w.mi, 2) + pad(w.s, 2);
    case 'Z':
      return offsetText(w.offsetMin, ':');
    case 'ZZ':
      return offsetText(w.offsetMin, '');
    case 'z':
    case 'zz':
      return zoneAbbr(w);
    case 'X':
      return String(Math.floor(w.epochMs / 1000));
    case 'x':
      return String(w.epochMs);
  }
  if (/^S+$/.test(tok)) return (pad(w.ms, 3) + '000000').slice(0, tok.length);
  return tok;
}

function wallClock(epochMs: number, tz: string): Wall {
  const offsetSec = zoneOffsetSeconds(tz, epochMs);
  const local = new Date(epochMs + offsetSec * 1000);
  const y = local.getUTCFullYear();
  return {
    y,
    mo: local.getUTCMonth() + 1,
    d: local.getUTCDate(),
    h: local.getUTCHours(),
    mi: local.getUTCMinutes(),
    s: local.getUTCSeconds(),
    ms: local.getUTCMilliseconds(),
    dow: local.getUTCDay(),
    doy: Math.floor((Date.UTC(y, local.getUTCMonth(), local.getUTCDate()) - Date.UTC(y, 0, 1)) / 86400000) + 1,
    offsetMin: Math.round(offsetSec / 60),
    epochMs,
    tz,
  };
}

/** `moment.tz(epochMs, tz).format(format)` for English. An invalid time gives "Invalid date". */
export function formatMoment(epochMs: number, tz: string, format: string): string {
  const ms = Math.trunc(epochMs);
  if (!Number.isFinite(ms) || Math.abs(ms) > 8.64e15) return 'Invalid date';
  const w = wallClock(ms, tz || 'UTC');
  const expanded = format.replace(
    LOCAL_RE,
    (m, escaped: string | undefined, backslash: string | undefined, tok: string) =>
      escaped || backslash ? m : (LOCAL_FORMATS[tok] ?? m),
  );
  return expanded.replace(TOKEN_RE, (_m, escaped: string | undefined, backslash: string | undefined, tok: string) => {
    if (escaped) return escaped.slice(1, -1);
    if (backslash) return tok.replace(/^\\/, '');
    return token(tok, w);
  });
}
