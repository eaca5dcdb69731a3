/**
 * Time-zone offsets from Intl, for both the document layer (parsing and formatting dates in a
 * column's zone) and the formula engine (`datetime` with tzinfo): one formatter per zone.
 */
import {BoundedMap} from '../memo.js';
import {daysFromCivil} from './calendar.js';

const formatters = new BoundedMap<string, Intl.DateTimeFormat | null>(1000);

/** The wall-clock formatter of an IANA zone, or null for a zone Intl does not know. */
export function zoneFormatter(tz: string): Intl.DateTimeFormat | null {
  let f = formatters.get(tz);
  if (f === undefined) {
    try {
      f = new Intl.DateTimeFormat('en-US', {
        timeZone: tz,
        hourCycle: 'h23',
        year: 'numeric',
        month: 'numeric',
        day: 'numeric',
        hour: 'numeric',
        minute: 'numeric',
        second: 'numeric',
        era: 'short',
      });
    } catch {
      f = null;
    }
    formatters.set(tz, f);
  }
  return f;
}

/** Offset of `tz` from UTC in milliseconds (to the second) at the instant `utcMs`; 0 for an unknown zone. */
export function zoneOffsetMs(tz: string, utcMs: number): number {
  const f = zoneFormatter(tz);
  if (!f) return 0;
  const whole = Math.floor(utcMs / 1000) * 1000;
  const p: {[part: string]: string} = {};
  for (const part of f.formatToParts(new Date(whole))) p[part.type] = part.value;
  const year = p.era === 'BC' || p.era === 'B' ? 1 - Number(p.year) : Number(p.year);
  // Calendar arithmetic, not Date.UTC: it reads years 0-99 as 1900-1999 (and 29 February of a
  // leap year then becomes 1 March 1900).
  const local =
    daysFromCivil(year, Number(p.month), Number(p.day)) * 86_400_000 +
    Number(p.hour) * 3_600_000 +
    Number(p.minute) * 60_000 +
    Number(p.second) * 1000;
  return local - whole;
}
