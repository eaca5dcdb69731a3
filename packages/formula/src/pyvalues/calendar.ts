/** English month and weekday names, as Python's `%B`/`%A`, moment's `MMMM`/`dddd` and the date parsers use them. */

export const MONTH_NAMES: readonly string[] = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];

/** Monday first, as Python's `weekday()` counts. */
export const WEEKDAY_NAMES: readonly string[] = [
  'Monday',
  'Tuesday',
  'Wednesday',
  'Thursday',
  'Friday',
  'Saturday',
  'Sunday',
];

/** Lower-case month names, for parsers matching text case-insensitively. */
export const MONTH_NAMES_LOWER: readonly string[] = MONTH_NAMES.map((m) => m.toLowerCase());

/** Sunday first, as JS's `getUTCDay()` and moment's `d` count. */
export const WEEKDAY_NAMES_FROM_SUNDAY: readonly string[] = [WEEKDAY_NAMES[6], ...WEEKDAY_NAMES.slice(0, 6)];

/** Days since 1970-01-01 of a proleptic Gregorian date (Hinnant's days_from_civil). */
export function daysFromCivil(y: number, m: number, d: number): number {
  y -= m <= 2 ? 1 : 0;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}
