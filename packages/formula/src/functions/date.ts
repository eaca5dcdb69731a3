/** Grist's date functions (grist-core sandbox/grist/functions/date.py). */
import {
  NOT_IMPLEMENTED,
  type PyCallable,
  type PyObject,
  type Value,
  pyEquals,
  raise,
  repr,
  typeName,
} from '../values.js';
import {PyDate, PyDateTime, PyTime, PyTimedelta, type TzInfo, IanaTz, daysFromCivil, isLeap, now} from '../datetime.js';
import {parseDateText} from './dateparse.js';
import {compareOp} from '../ops.js';
import {def, index, isNumber, iterOrThrow, num, pmod, toF, v} from './util.js';

// ---- the document's time zone ------------------------------------------------------------------

let docZone: string | null = null;
/**
 * Sets the document's time zone (Grist's `_grist_DocInfo.timezone`), used by NOW, TODAY, DTIME,
 * DATEVALUE and XL_TO_DATE when no zone is given. Without one Grist uses UTC.
 */
/** Sets the zone of the document whose formulas run next; returns the one it replaces. */
export function setDocTimezone(name: string | null): string | null {
  const previous = docZone;
  docZone = name;
  return previous;
}
export function docTimezone(): TzInfo {
  return IanaTz.get(docZone || 'UTC');
}

function tzinfoArg(zonelabel: Value): TzInfo {
  if (zonelabel === null || zonelabel === '' || zonelabel === false) return docTimezone();
  if (typeof zonelabel !== 'string') return raise('KeyError', repr(zonelabel));
  return IanaTz.get(zonelabel);
}

// ---- Python operators on dates ------------------------------------------------------------------

function minus(a: Value, b: Value): Value {
  if (a instanceof PyDate) {
    const r = a.binop('-', b, false);
    if (r !== NOT_IMPLEMENTED) return r;
  }
  return raise('TypeError', `unsupported operand type(s) for -: '${typeName(a)}' and '${typeName(b)}'`);
}
function plus(a: PyDate, td: PyTimedelta): PyDate {
  return a.binop('+', td, false) as PyDate;
}
function tdDays(x: Value): number {
  if (!(x instanceof PyTimedelta)) return raise('TypeError', 'expected a timedelta');
  return x.days;
}
const totalSeconds = (td: PyTimedelta) => Number(td.totalMicros()) / 1e6;

/** Python's `a < b` via the objects' compare (raises TypeError for date vs datetime). */
function cmp(a: Value, b: Value): number {
  if (a instanceof PyDate) return a.compare(b);
  return raise('TypeError', `'<' not supported between instances of '${typeName(a)}' and '${typeName(b)}'`);
}

// ---- conversions -----------------------------------------------------------------------------

/** Grist's _make_datetime: datetimes as is, dates at midnight, times today, text parsed. */
export function makeDatetime(x: Value): PyDateTime {
  if (x instanceof PyDateTime) return x;
  if (x instanceof PyDate) return new PyDateTime(x.year, x.month, x.day);
  if (x instanceof PyTime) {
    const t = now(null);
    return new PyDateTime(t.year, t.month, t.day, x.hour, x.minute, x.second, x.microsecond, x.tzinfo);
  }
  if (typeof x === 'string') return parseDateText(x);
  return raise('ValueError', `Invalid date ${repr(x)}`);
}

/** Grist's _make_date: dates as is, the date of datetimes, text parsed; not times. */
export function makeDate(x: Value): PyDate {
  if (x instanceof PyDateTime) return x.date();
  if (x instanceof PyDate) return x;
  if (typeof x === 'string') return parseDateText(x).date();
  return raise('ValueError', `Invalid date ${repr(x)}`);
}

/** `x.year` etc. as Grist reads them: other objects answer for themselves (an invalid cell value
 * raises its InvalidTypedValue, as Grist's AltText does). */
function dateAttr(x: Value, name: 'year' | 'month' | 'day'): bigint {
  if (x instanceof PyDate) return BigInt(x[name]);
  const o = x as PyObject;
  if (o !== null && typeof o === 'object' && !Array.isArray(o) && typeof o.getattr === 'function') {
    const r = o.getattr(name);
    if (typeof r === 'bigint') return r;
    return raise('TypeError', `'${typeName(r)}' object cannot be interpreted as an integer`);
  }
  return raise('AttributeError', `'${typeName(x)}' object has no attribute '${name}'`);
}

export function dtime(value: Value, tz: Value): PyDateTime {
  const d = makeDatetime(value);
  return d.tzinfo ? d : d.withTz(tzinfoArg(tz));
}

const EXCEL_ZERO = new PyDateTime(1899, 12, 30);

export function dateToXl(value: Value): number {
  return totalSeconds(minus(dtime(value, null), dtime(EXCEL_ZERO, null)) as PyTimedelta) / 86400;
}

/** Grist's DATE: years below 1900 get 1900 added; months and days roll over. */
export function DATE(year: Value, month: Value, day: Value): PyDate {
  let y = BigInt(index(year));
  const mo = BigInt(index(month));
  if (y < 1900n) y += 1900n;
  const normMonth = Number(pmod(mo - 1n, 12n)) + 1;
  const normYear = Number(y + floorDivBig(mo - 1n, 12n));
  const first = PyDate.create(normYear, normMonth, 1);
  const dd = num(day);
  return plus(first, new PyTimedelta(typeof dd === 'bigint' ? Number(dd - 1n) : dd - 1));
}
function floorDivBig(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b !== 0n && a < 0n !== b < 0n ? q - 1n : q;
}

const WEEKDAY_TYPES: Record<number, [number, number]> = {
  1: [6, 1],
  2: [0, 1],
  3: [0, 0],
  11: [0, 1],
  12: [1, 1],
  13: [2, 1],
  14: [3, 1],
  15: [4, 1],
  16: [5, 1],
  17: [6, 1],
};

function weekdayType(rt: Value): [number, number] {
  const t = isNumber(rt) ? toF(rt) : NaN;
  const entry = WEEKDAY_TYPES[t];
  if (!entry)
    raise('ValueError', `Invalid return type ${rt === null ? 'None' : String(typeof rt === 'number' ? repr(rt) : rt)}`);
  return entry;
}

const date360 = (y: number, m: number, d: number) => y * 360 + m * 30 + d;
const lastOfFeb = (d: PyDate) => d.month === 2 && plus(d, new PyTimedelta(1)).month === 3;

/** Tuple comparison (y, m, d) <= (y, m, d). */
const tupleCmp = (a: number[], b: number[]) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2];

function oneYearFrac(start: PyDate, end: PyDate): number {
  return tdDays(minus(end, start)) / (isLeap(start.year) ? 366 : 365);
}

export function yearfrac(startIn: Value, endIn: Value, basisIn: Value): number {
  let start = startIn,
    end = endIn;
  if (pyEquals(start, end)) return 0;
  // Grist orders the dates before reading `.day`: a date against None is a TypeError.
  if (!(start instanceof PyDate) || !(end instanceof PyDate)) compareOp('>', start, end);
  if (!(start instanceof PyDate) || !(end instanceof PyDate)) {
    return raise(
      'AttributeError',
      `'${typeName(start instanceof PyDate ? end : start)}' object has no attribute 'day'`,
    );
  }
  if (cmp(start, end) > 0) [start, end] = [end, start];
  const s = start as PyDate,
    e = end as PyDate;
  let d1 = s.day,
    d2 = e.day;
  const m1 = s.month,
    y1 = s.year,
    m2 = e.month,
    y2 = e.year;
  const basis = isNumber(basisIn) ? toF(basisIn) : NaN;
  if (basis === 0) {
    if (d1 === 31) d1 = 30;
    if (d1 === 30 && d2 === 31) d2 = 30;
    if (lastOfFeb(s)) {
      d1 = 30;
      if (lastOfFeb(e)) d2 = 30;
    }
    return (date360(y2, m2, d2) - date360(y1, m1, d1)) / 360;
  }
  if (basis === 1) {
    let yearLength: number;
    if (tupleCmp([y1 + 1, m1, d1], [y2, m2, d2]) >= 0) {
      if (y1 === y2 && isLeap(y1)) yearLength = 366;
      else if (tupleCmp([y1, m1, d1], [y2, 2, 29]) < 0 && tupleCmp([y2, 2, 29], [y2, m2, d2]) <= 0 && isLeap(y2))
        yearLength = 366;
      else if (tupleCmp([y1, m1, d1], [y1, 2, 29]) <= 0 && tupleCmp([y1, 2, 29], [y2, m2, d2]) < 0 && isLeap(y1))
        yearLength = 366;
      else yearLength = 365;
    } else {
      yearLength = (daysFromCivil(y2 + 1, 1, 1) - daysFromCivil(y1, 1, 1)) / (y2 + 1 - y1);
    }
    return tdDays(minus(e, s)) / yearLength;
  }
  if (basis === -1) {
    if (y1 === y2) return oneYearFrac(s, e);
    return oneYearFrac(s, new PyDate(y1 + 1, 1, 1)) + (y2 - y1 - 1) + oneYearFrac(new PyDate(y2, 1, 1), e);
  }
  if (basis === 2) return tdDays(minus(e, s)) / 360;
  if (basis === 3) return tdDays(minus(e, s)) / 365;
  if (basis === 4) {
    if (d1 === 31) d1 = 30;
    if (d2 === 31) d2 = 30;
    return (date360(y2, m2, d2) - date360(y1, m1, d1)) / 360;
  }
  return raise('ValueError', `Invalid basis argument ${repr(basisIn)}`);
}

const NEW_MOON = new PyDate(1900, 1, 1);
const SYNODIC_MONTH = 29.530588853;
const MOONS = ['🌑', '🌒', '🌓', '🌔', '🌕', '🌖', '🌗', '🌘'];

/** Python's divmod of two non-negative floats. */
function floatDivmod(x: number, y: number): [number, number] {
  const m = x % y;
  const div = (x - m) / y;
  let fd = Math.floor(div);
  if (div - fd > 0.5) fd += 1;
  return [fd, m];
}

function isoweeknum(x: Value): bigint {
  return BigInt(makeDatetime(x).isocalendar()[1]);
}

export const dateFunctions: Record<string, PyCallable> = {
  DTIME: def('DTIME', ['value', 'tz'], {tz: null}, (a) => dtime(v(a, 'value'), v(a, 'tz'))),
  XL_TO_DATE: def('XL_TO_DATE', ['value', 'tz'], {tz: null}, (a) =>
    plus(dtime(EXCEL_ZERO, v(a, 'tz')), PyTimedelta.construct([], {days: v(a, 'value')})),
  ),
  DATE_TO_XL: def('DATE_TO_XL', ['date_value'], {}, (a) => dateToXl(v(a, 'date_value'))),
  DATE: def('DATE', ['year', 'month', 'day'], {}, (a) => DATE(v(a, 'year'), v(a, 'month'), v(a, 'day'))),
  DATEDIF: def('DATEDIF', ['start_date', 'end_date', 'unit'], {}, (a) => {
    const s = makeDate(v(a, 'start_date')),
      e = makeDate(v(a, 'end_date'));
    const unit = v(a, 'unit');
    const monthDelta = s.day <= e.day ? 0 : 1;
    const yearDelta = tupleCmp([0, s.month, s.day], [0, e.month, e.day]) <= 0 ? 0 : 1;
    switch (unit) {
      case 'D':
        return BigInt(tdDays(minus(e, s)));
      case 'M':
        return BigInt((e.year - s.year) * 12 + (e.month - s.month) - monthDelta);
      case 'Y':
        return BigInt(e.year - s.year - yearDelta);
      case 'MD':
        return BigInt(tdDays(minus(e, DATE(BigInt(e.year), BigInt(e.month - monthDelta), BigInt(s.day)))));
      case 'YM':
        return pmod(BigInt(e.month - s.month - monthDelta), 12n);
      case 'YD':
        return BigInt(tdDays(minus(e, DATE(BigInt(e.year - yearDelta), BigInt(s.month), BigInt(s.day)))));
    }
    return raise('ValueError', `Invalid unit ${typeof unit === 'string' ? unit : repr(unit)}`);
  }),
  DATEVALUE: def('DATEVALUE', ['date_string', 'tz'], {tz: null}, (a) => {
    const ds = v(a, 'date_string');
    if (typeof ds !== 'string') raise('TypeError', `Parser must be a string or character stream, not ${typeName(ds)}`);
    return parseDateText(ds as string).withTz(tzinfoArg(v(a, 'tz')));
  }),
  DAY: def('DAY', ['date'], {}, (a) => BigInt(makeDatetime(v(a, 'date')).day)),
  DAYS: def('DAYS', ['end_date', 'start_date'], {}, (a) =>
    BigInt(tdDays(minus(makeDatetime(v(a, 'end_date')), makeDatetime(v(a, 'start_date'))))),
  ),
  EDATE: def('EDATE', ['start_date', 'months'], {}, (a) => {
    const s = v(a, 'start_date');
    return DATE(dateAttr(s, 'year'), dateAttr(s, 'month') + BigInt(index(v(a, 'months'))), dateAttr(s, 'day'));
  }),
  DATEADD: def(
    'DATEADD',
    ['start_date', 'days', 'months', 'years', 'weeks'],
    {days: 0n, months: 0n, years: 0n, weeks: 0n},
    (a) => {
      const s = v(a, 'start_date');
      // Python's evaluation order: year, then month, then day.
      const year = dateAttr(s, 'year') + BigInt(index(v(a, 'years')));
      const month = dateAttr(s, 'month') + BigInt(index(v(a, 'months')));
      const days = num(v(a, 'days')),
        weeks = num(v(a, 'weeks'));
      const day =
        typeof days === 'bigint' && typeof weeks === 'bigint'
          ? dateAttr(s, 'day') + days + weeks * 7n
          : Number(dateAttr(s, 'day')) + Number(days) + Number(weeks) * 7;
      return DATE(year, month, day);
    },
  ),
  EOMONTH: def('EOMONTH', ['start_date', 'months'], {}, (a) => {
    const s = v(a, 'start_date');
    const first = DATE(dateAttr(s, 'year'), dateAttr(s, 'month') + BigInt(index(v(a, 'months'))) + 1n, 1n);
    return minus(first, new PyTimedelta(1));
  }),
  HOUR: def('HOUR', ['time'], {}, (a) => BigInt(makeDatetime(v(a, 'time')).hour)),
  ISOWEEKNUM: def('ISOWEEKNUM', ['date'], {}, (a) => isoweeknum(v(a, 'date'))),
  MINUTE: def('MINUTE', ['time'], {}, (a) => BigInt(makeDatetime(v(a, 'time')).minute)),
  MONTH: def('MONTH', ['date'], {}, (a) => BigInt(makeDatetime(v(a, 'date')).month)),
  NOW: def('NOW', ['tz'], {tz: null}, (a) => now(tzinfoArg(v(a, 'tz')))),
  SECOND: def('SECOND', ['time'], {}, (a) => BigInt(makeDatetime(v(a, 'time')).second)),
  TODAY: def('TODAY', ['tz'], {tz: null}, (a) => now(tzinfoArg(v(a, 'tz'))).date()),
  WEEKDAY: def('WEEKDAY', ['date', 'return_type'], {return_type: 1n}, (a) => {
    const [first, idx] = weekdayType(v(a, 'return_type'));
    return BigInt(((((makeDatetime(v(a, 'date')).weekday() - first) % 7) + 7) % 7) + idx);
  }),
  WEEKNUM: def('WEEKNUM', ['date', 'return_type'], {return_type: 1n}, (a) => {
    const rt = v(a, 'return_type');
    if (isNumber(rt) && toF(rt) === 21) return isoweeknum(v(a, 'date'));
    const [first] = weekdayType(rt);
    const d = makeDatetime(v(a, 'date'));
    const jan1 = new PyDateTime(d.year, 1, 1);
    const week1Start = minus(jan1, new PyTimedelta((((jan1.weekday() - first) % 7) + 7) % 7)) as PyDateTime;
    return BigInt(Math.floor(tdDays(minus(d, week1Start)) / 7) + 1);
  }),
  YEAR: def('YEAR', ['date'], {}, (a) => BigInt(makeDatetime(v(a, 'date')).year)),
  YEARFRAC: def('YEARFRAC', ['start_date', 'end_date', 'basis'], {basis: 0n}, (a) =>
    yearfrac(v(a, 'start_date'), v(a, 'end_date'), v(a, 'basis')),
  ),
  MOONPHASE: def('MOONPHASE', ['date', 'output'], {output: 'emoji'}, (a) => {
    const days = totalSeconds(minus(makeDatetime(v(a, 'date')).date(), NEW_MOON) as PyTimedelta) / 86400;
    const age = pmod(days, SYNODIC_MONTH) as number;
    const phase = age / SYNODIC_MONTH;
    const output = v(a, 'output');
    if (output === 'fraction') return phase;
    if (output === 'days') return age;
    const [quarter, frac] = floatDivmod(pmod(phase + 0.05, 1) as number, 0.25);
    const i = quarter * 2 + (frac > 0.1 ? 1 : 0);
    if (output === 'lunacy') return i === 4 ? '🐺' : '🕺';
    return MOONS[i];
  }),
  NETWORKDAYS: def('NETWORKDAYS', ['start_date', 'end_date', 'holidays'], {holidays: []}, (a) => {
    let s = makeDate(v(a, 'start_date')),
      e = makeDate(v(a, 'end_date'));
    const holidays = new Set(iterOrThrow(v(a, 'holidays')).map((h) => makeDate(h).epochDays()));
    let sign = 1n;
    if (s.compare(e) > 0) {
      sign = -1n;
      [s, e] = [e, s];
    }
    let count = 0n;
    const end = e.epochDays();
    for (let d = s.epochDays(); d <= end; d++) {
      const wd = (((d + 3) % 7) + 7) % 7;
      if (wd < 5 && !holidays.has(d)) count++;
    }
    return sign * count;
  }),
};
