/**
 * The part of python-dateutil's `parser.parse` that Grist's functions rely on (DATEVALUE, VALUE,
 * DTIME and the date functions given text): ISO dates, M/D/Y with month first on ambiguity, month
 * names, times with AM/PM, `Z`/`UTC`/`+hh:mm` offsets (and dateutil's inverted `UTC+h` POSIX
 * form). Missing fields come from today's date, as dateutil's default does.
 */
import {raise} from '../values.js';
import {MONTH_NAMES_LOWER} from '../pyvalues/calendar.js';
import {FixedTz, PyDateTime, type TzInfo, UTC, daysInMonth, now} from '../datetime.js';

const MONTHS = MONTH_NAMES_LOWER.map((m) => m.slice(0, 3));
const LONG_MONTHS = MONTH_NAMES_LOWER;
const WEEKDAYS = [
  'mon',
  'tue',
  'wed',
  'thu',
  'fri',
  'sat',
  'sun',
  'monday',
  'tuesday',
  'wednesday',
  'thursday',
  'friday',
  'saturday',
  'sunday',
  'tues',
  'wednes',
  'thur',
  'thurs',
];

function monthOf(word: string): number {
  const w = word.toLowerCase().replace(/\.$/, '');
  let i = MONTHS.indexOf(w);
  if (i < 0) i = LONG_MONTHS.indexOf(w);
  if (i < 0 && w === 'sept') i = 8;
  return i + 1;
}

function fail(text: string): never {
  return raise('ParserError', `Unknown string format: ${text}`);
}

/** Two-digit years as dateutil maps them: within 50 years of the current year. */
function fullYear(y: number, digits: number): number {
  if (digits > 2 || y >= 100) return y;
  const thisYear = now(null).year;
  const century = thisYear - (thisYear % 100);
  let full = y + century;
  if (full >= thisYear + 50) full -= 100;
  else if (full < thisYear - 50) full += 100;
  return full;
}

/** Parses text as dateutil would; returns a naive datetime, or an aware one when text has a zone. */
export function parseDateText(text: string): PyDateTime {
  const today = now(null);
  let s = ` ${text.trim()} `;
  if (!text.trim()) fail(text);
  let hour: number | null = null,
    minute = 0,
    second = 0,
    us = 0;
  let tz: TzInfo | null = null;

  // ISO 8601 with T separator: 2012-01-02T10:20:30.5+01:00
  s = s.replace(/(\d)T(\d\d)/, '$1 $2');

  // Time of day: H:MM[:SS[.ffffff]] with optional am/pm.
  const tm = /\s(\d{1,2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,6})\d*)?)?\s*(a\.?m\.?|p\.?m\.?)?(?=[\s+\-zZ]|$)/i.exec(s);
  if (tm) {
    hour = Number(tm[1]);
    minute = Number(tm[2]);
    second = Number(tm[3] ?? 0);
    us = tm[4] ? Number(tm[4].padEnd(6, '0')) : 0;
    const ampm = tm[5]?.toLowerCase()[0];
    if (ampm) {
      if (hour > 12 || hour === 0) fail(text);
      if (ampm === 'p' && hour < 12) hour += 12;
      if (ampm === 'a' && hour === 12) hour = 0;
    }
    s = s.slice(0, tm.index) + ' ' + s.slice(tm.index + tm[0].length);
  } else {
    const hm = /\s(\d{1,2})\s*(am|pm|a\.m\.|p\.m\.)(?=\s)/i.exec(s);
    if (hm) {
      hour = Number(hm[1]);
      if (hour > 12 || hour === 0) fail(text);
      const p = hm[2].toLowerCase()[0];
      if (p === 'p' && hour < 12) hour += 12;
      if (p === 'a' && hour === 12) hour = 0;
      s = s.slice(0, hm.index) + ' ' + s.slice(hm.index + hm[0].length);
    }
  }
  if (hour !== null && (hour > 23 || minute > 59 || second > 59)) fail(text);

  // Zones: "UTC+12:00" (dateutil reads a sign after a zone name as POSIX does: inverted),
  // "+01:00", "Z", "UTC", "GMT".
  const zm = /\s(UTC|GMT)?\s*([+-])(\d{1,2})(?::?(\d{2}))?(?=\s)/i.exec(s);
  if (zm && (zm[1] || hour !== null)) {
    let ms = (Number(zm[3]) * 60 + Number(zm[4] ?? 0)) * 60_000;
    if (zm[2] === '-') ms = -ms;
    if (zm[1]) ms = -ms;
    tz = ms === 0 ? UTC : new FixedTz(ms);
    s = s.slice(0, zm.index) + ' ' + s.slice(zm.index + zm[0].length);
  } else {
    const zn = /\s(UTC|GMT|Z)(?=\s)/i.exec(s);
    if (zn) {
      tz = UTC;
      s = s.slice(0, zn.index) + ' ' + s.slice(zn.index + zn[0].length);
    }
  }

  // Date: remaining tokens.
  const tokens = s.split(/[\s,/\-.]+/).filter((t) => t && !/^(at|on|of|the|and)$/i.test(t));
  let year: number | null = null,
    month: number | null = null,
    day: number | null = null;
  const nums: Array<[number, number]> = [];
  for (const t of tokens) {
    if (/^\d+$/.test(t)) {
      if (t.length === 8 && nums.length === 0 && tokens.length === 1) {
        year = Number(t.slice(0, 4));
        month = Number(t.slice(4, 6));
        day = Number(t.slice(6));
        continue;
      }
      nums.push([Number(t), t.length]);
      continue;
    }
    const mo = monthOf(t);
    if (mo) {
      if (month !== null) fail(text);
      month = mo;
      continue;
    }
    if (/^\d+(st|nd|rd|th)$/i.test(t)) {
      nums.push([Number(t.replace(/\D+$/, '')), 2]);
      continue;
    }
    if (WEEKDAYS.includes(t.toLowerCase().replace(/\.$/, ''))) continue;
    return fail(text);
  }
  if (year === null) {
    if (month !== null) {
      // A month name: the numbers are day and year (a 4-digit or >31 number is the year).
      for (const [n, len] of nums) {
        if ((len >= 3 || n > 31) && year === null) year = n;
        else if (day === null) day = n;
        else if (year === null) year = fullYear(n, len);
        else fail(text);
      }
    } else if (nums.length === 3) {
      const [a, b, c] = nums;
      if (a[1] >= 3 || a[0] > 31) {
        [year, month, day] = [a[0], b[0], c[0]];
      } else {
        [month, day, year] = [a[0], b[0], fullYear(c[0], c[1])];
        if (month > 12 && day <= 12) [month, day] = [day, month];
      }
    } else if (nums.length === 2) {
      const [a, b] = nums;
      if (a[1] >= 3 || a[0] > 31) [year, month] = [a[0], b[0]];
      else if (b[1] >= 3 || b[0] > 31) [month, year] = [a[0], b[0]];
      else {
        [month, day] = [a[0], b[0]];
        if (month > 12 && day <= 12) [month, day] = [day, month];
      }
    } else if (nums.length === 1) {
      const [n, len] = nums[0];
      if (len >= 3) year = n;
      else if (n <= 31) day = n;
      else fail(text);
    } else if (nums.length > 3) {
      fail(text);
    }
  }
  const y = year ?? today.year;
  const m = month ?? today.month;
  const d = day ?? (month === null && year !== null ? today.day : today.day);
  if (m < 1 || m > 12 || d < 1 || y < 1 || y > 9999 || d > daysInMonth(y, m)) {
    if (m >= 1 && m <= 12 && d > daysInMonth(y, m) && d <= 31)
      raise('ParserError', `day is out of range for month: ${text}`);
    return fail(text);
  }
  return new PyDateTime(y, m, d, hour ?? 0, minute, second, us, tz);
}
