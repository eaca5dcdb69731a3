/**
 * Dates and times as Grist stores them: Date = seconds since the epoch at midnight UTC of the
 * date; DateTime = seconds since the epoch (the column's timezone only matters for parsing and
 * display).
 */

import {zoneOffsetMs} from '../pyvalues/zones.js';

/**
 * Offset of `tz` from UTC, in seconds, at the instant `epochMs` (0 for an unknown zone, as
 * moment-timezone and Grist's engine fall back to UTC): the one zone computation that parsing
 * (localToEpoch), display (moment-format.ts) and the formula engine's tzinfo share.
 */
export function zoneOffsetSeconds(tz: string, epochMs: number): number {
  return zoneOffsetMs(tz, epochMs) / 1000;
}

/** Epoch seconds of a wall-clock time (given as if it were UTC) in timezone `tz`. */
export function localToEpoch(wallAsUtcSec: number, tz: string): number {
  let guess = wallAsUtcSec - zoneOffsetSeconds(tz, wallAsUtcSec * 1000);
  guess = wallAsUtcSec - zoneOffsetSeconds(tz, guess * 1000);
  return guess;
}

const ISO_RE =
  /^\s*(\d{4})-(\d{1,2})-(\d{1,2})(?:(?:T|\s+)(\d{1,2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?\s*$/i;

interface IsoParts {
  y: number;
  mo: number;
  d: number;
  h: number;
  mi: number;
  s: number;
  frac: number;
  offset: string | undefined;
}

function parseIsoParts(text: string): IsoParts | null {
  const m = ISO_RE.exec(text);
  if (!m) {
    return null;
  }
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const [h, mi, s] = [Number(m[4] ?? 0), Number(m[5] ?? 0), Number(m[6] ?? 0)];
  if (!validYmd(y, mo, d) || h > 23 || mi > 59 || s > 59) {
    return null;
  }
  const frac = m[7] ? Number('0.' + m[7]) : 0;
  return {y, mo, d, h, mi, s, frac, offset: m[8]};
}

export function validYmd(y: number, mo: number, d: number): boolean {
  if (mo < 1 || mo > 12 || d < 1) {
    return false;
  }
  // Every month has 28 days (a Date per call was a tenth of a date column's import, issue 43 §2);
  // within Date's range of years, as the Date below has it.
  if (d <= 28 && mo >= 1 && y >= -270000 && y <= 270000) {
    return true;
  }
  return d <= new Date(Date.UTC(y, mo, 0)).getUTCDate();
}

/** Grist's `moment.parse_iso_date`: an ISO date, any time part ignored. */
export function parseIsoDate(text: string): number | null {
  const p = parseIsoParts(text);
  return p ? Date.UTC(p.y, p.mo - 1, p.d) / 1000 : null;
}

/** Grist's `moment.parse_iso`: an ISO date-time, read in `tz` unless it carries an offset. */
export function parseIsoDateTime(text: string, tz: string): number | null {
  const p = parseIsoParts(text);
  if (!p) {
    return null;
  }
  const wall = Date.UTC(p.y, p.mo - 1, p.d, p.h, p.mi, p.s) / 1000 + p.frac;
  if (p.offset) {
    if (/^z$/i.test(p.offset)) {
      return wall;
    }
    const sign = p.offset[0] === '-' ? -1 : 1;
    const digits = p.offset.slice(1).replace(':', '');
    return wall - sign * (Number(digits.slice(0, 2)) * 3600 + Number(digits.slice(2) || 0) * 60);
  }
  return localToEpoch(wall, tz);
}
