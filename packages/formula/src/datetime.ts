/**
 * Python's `datetime` types for formulas: date, datetime (naive and aware), time, timedelta and
 * tzinfo (fixed offsets and IANA zones), plus the conversions between them and Grist's cell
 * encoding (Date: seconds since epoch at UTC midnight; DateTime: seconds since epoch).
 *
 * IANA zones use the host's `Intl` (ICU's tz data, kept current by Node releases): no library
 * needed, and offsets are cached per 15-minute bucket so that a column of DateTime cells does not
 * pay for `formatToParts` on every read. Ambiguous and missing local times are resolved as Grist's
 * `moment.tzinfo` does (see `IanaTz.utcoffsetLocal`).
 *
 * One thing: Python's `datetime` module, as CPython keeps it in one module too; its types call
 * each other (a datetime is a date with a time, arithmetic goes through timedelta, strftime reads
 * all of them), so splitting it would only spread one set of rules over several files.
 */
import {
  type Kwargs,
  NOT_IMPLEMENTED,
  type PyObject,
  PyTuple,
  type Value,
  attributeError,
  bindArgs,
  isNumeric,
  raise,
  toFloat,
  typeName,
} from './values.js';
import {PyType} from './ops.js';
import {MONTH_NAMES, WEEKDAY_NAMES, daysFromCivil} from './pyvalues/calendar.js';
import {zoneFormatter, zoneOffsetMs} from './pyvalues/zones.js';

export const MINYEAR = 1;
export const MAXYEAR = 9999;
const DAY_US = 86_400_000_000;
const DAY_MS = 86_400_000;
/** Ordinal (0001-01-01 is 1) of 1970-01-01. */
export const EPOCH_ORD = 719163;

// ---- calendar arithmetic --------------------------------------------------------------------

export function isLeap(y: number): boolean {
  return y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
}
const DIM = [0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
export function daysInMonth(y: number, m: number): number {
  return m === 2 && isLeap(y) ? 29 : DIM[m];
}

export {daysFromCivil};

export function civilFromDays(z: number): [number, number, number] {
  z += 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const y = yoe + era * 400;
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp + (mp < 10 ? 3 : -9);
  return [m <= 2 ? y + 1 : y, m, d];
}

const floorDiv = (a: number, b: number) => Math.floor(a / b);
const mod = (a: number, b: number) => ((a % b) + b) % b;
const pad = (n: number, w = 2) => {
  const s = String(Math.abs(n)).padStart(w, '0');
  return n < 0 ? `-${s}` : s;
};

function intArg(v: Value, what = 'integer'): number {
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'number') return raise('TypeError', `'float' object cannot be interpreted as an integer`);
  return raise('TypeError', `${what} argument expected, got ${typeName(v)}`);
}

function checkDate(y: number, m: number, d: number): void {
  if (y < MINYEAR || y > MAXYEAR) raise('ValueError', `year ${y} is out of range`);
  if (m < 1 || m > 12) raise('ValueError', 'month must be in 1..12');
  if (d < 1 || d > daysInMonth(y, m)) raise('ValueError', 'day is out of range for month');
}

function checkTime(h: number, mi: number, s: number, us: number): void {
  if (h < 0 || h > 23) raise('ValueError', 'hour must be in 0..23');
  if (mi < 0 || mi > 59) raise('ValueError', 'minute must be in 0..59');
  if (s < 0 || s > 59) raise('ValueError', 'second must be in 0..59');
  if (us < 0 || us > 999999) raise('ValueError', 'microsecond must be in 0..999999');
}

const isObj = (v: Value): v is PyObject & object => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Python's round-half-even for the microseconds of float arithmetic. */
function roundHalfEven(x: number): number {
  const r = Math.round(x);
  return Math.abs(x - Math.trunc(x)) === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

// ---- timedelta ------------------------------------------------------------------------------

export class PyTimedelta implements PyObject {
  readonly pyType = 'timedelta';
  readonly days: number;
  readonly seconds: number;
  readonly microseconds: number;

  /** Normalizes as Python does: 0 <= seconds < 86400, 0 <= microseconds < 1e6. */
  constructor(days: number, seconds = 0, microseconds = 0) {
    let us = microseconds;
    let s = seconds + floorDiv(us, 1e6);
    us = mod(us, 1e6);
    let d = days + floorDiv(s, 86400);
    s = mod(s, 86400);
    if (!Number.isInteger(d) || !Number.isInteger(s) || !Number.isInteger(us)) {
      // Fractions (from floats) are carried down to microseconds and rounded there, as Python does.
      const di = Math.trunc(d),
        si = Math.trunc(s);
      const frac = (d - di) * 86400e6 + (s - si) * 1e6 + us;
      const total = BigInt(di) * 86_400_000_000n + BigInt(si) * 1_000_000n + BigInt(roundHalfEven(frac));
      const D = 86_400_000_000n;
      let q = total / D,
        r = total % D;
      if (r < 0n) {
        r += D;
        q -= 1n;
      }
      d = Number(q);
      s = Number(r / 1_000_000n);
      us = Number(r % 1_000_000n);
    }
    if (Math.abs(d) > 999999999) raise('OverflowError', `days=${d}; must have magnitude <= 999999999`);
    this.days = d;
    this.seconds = s;
    this.microseconds = us;
  }

  static fromMicros(total: bigint): PyTimedelta {
    const D = 86_400_000_000n;
    let d = total / D;
    let r = total % D;
    if (r < 0n) {
      r += D;
      d -= 1n;
    }
    return new PyTimedelta(Number(d), Number(r / 1_000_000n), Number(r % 1_000_000n));
  }

  /** Keyword construction as `timedelta(days, seconds, microseconds, milliseconds, minutes, hours, weeks)`. */
  static construct(args: Value[], kwargs: Kwargs | null): PyTimedelta {
    const a = bindArgs(
      'timedelta',
      ['days', 'seconds', 'microseconds', 'milliseconds', 'minutes', 'hours', 'weeks'],
      args,
      kwargs,
      {days: 0n, seconds: 0n, microseconds: 0n, milliseconds: 0n, minutes: 0n, hours: 0n, weeks: 0n},
    );
    const n = (k: string) => {
      const v = a[k] as Value;
      if (!isNumeric(v)) raise('TypeError', `unsupported type for timedelta ${k} component: ${typeName(v)}`);
      return v;
    };
    const allInt = Object.keys(a).every((k) => typeof a[k] !== 'number');
    if (allInt) {
      const b = (k: string) => {
        const v = n(k);
        return typeof v === 'bigint' ? v : BigInt(v ? 1 : 0);
      };
      return PyTimedelta.fromMicros(
        b('days') * 86_400_000_000n +
          b('weeks') * 604_800_000_000n +
          b('hours') * 3_600_000_000n +
          b('minutes') * 60_000_000n +
          b('seconds') * 1_000_000n +
          b('milliseconds') * 1000n +
          b('microseconds'),
      );
    }
    const f = (k: string) => toFloat(n(k));
    return new PyTimedelta(
      f('days') + f('weeks') * 7,
      f('hours') * 3600 + f('minutes') * 60 + f('seconds'),
      f('milliseconds') * 1000 + f('microseconds'),
    );
  }

  totalMicros(): bigint {
    return BigInt(this.days) * 86_400_000_000n + BigInt(this.seconds * 1e6 + this.microseconds);
  }
  /** Total microseconds as a JS number (exact below ~285 years). */
  microsNum(): number {
    return this.days * DAY_US + this.seconds * 1e6 + this.microseconds;
  }
  totalSeconds(): number {
    return this.days * 86400 + this.seconds + this.microseconds / 1e6;
  }

  getattr(name: string): Value {
    switch (name) {
      case 'days':
        return BigInt(this.days);
      case 'seconds':
        return BigInt(this.seconds);
      case 'microseconds':
        return BigInt(this.microseconds);
      case 'total_seconds':
        return fn('total_seconds', () => Number(this.totalMicros()) / 1e6);
    }
    return attributeError(this, name);
  }

  repr(): string {
    const parts: string[] = [];
    if (this.days) parts.push(`days=${this.days}`);
    if (this.seconds) parts.push(`seconds=${this.seconds}`);
    if (this.microseconds) parts.push(`microseconds=${this.microseconds}`);
    return `datetime.timedelta(${parts.length ? parts.join(', ') : '0'})`;
  }
  str(): string {
    const h = Math.floor(this.seconds / 3600),
      m = Math.floor((this.seconds % 3600) / 60),
      s = this.seconds % 60;
    let out = `${h}:${pad(m)}:${pad(s)}`;
    if (this.microseconds) out += `.${pad(this.microseconds, 6)}`;
    if (this.days) out = `${this.days} day${Math.abs(this.days) !== 1 ? 's' : ''}, ${out}`;
    return out;
  }
  eq(o: Value): boolean {
    return o instanceof PyTimedelta && this.compareTd(o) === 0;
  }
  compare(o: Value): number {
    if (!(o instanceof PyTimedelta)) return cmpTypeError(this, o);
    return this.compareTd(o);
  }
  private compareTd(o: PyTimedelta): number {
    return this.days - o.days || this.seconds - o.seconds || this.microseconds - o.microseconds;
  }
  hashKey(): string {
    return `td:${this.days}:${this.seconds}:${this.microseconds}`;
  }
  truthy(): boolean {
    return !!(this.days || this.seconds || this.microseconds);
  }
  neg(): PyTimedelta {
    return PyTimedelta.fromMicros(-this.totalMicros());
  }

  binop(op: string, other: Value, reflected: boolean): Value | typeof NOT_IMPLEMENTED {
    if (other instanceof PyTimedelta) {
      const a = reflected ? other : this,
        b = reflected ? this : other;
      const x = a.totalMicros(),
        y = b.totalMicros();
      switch (op) {
        case '+':
          return PyTimedelta.fromMicros(x + y);
        case '-':
          return PyTimedelta.fromMicros(x - y);
        case '/':
          if (y === 0n) raise('ZeroDivisionError', 'division by zero');
          return Number(x) / Number(y);
        case '//':
          if (y === 0n) raise('ZeroDivisionError', 'integer division or modulo by zero');
          return bigFloorDiv(x, y);
        case '%':
          if (y === 0n) raise('ZeroDivisionError', 'integer division or modulo by zero');
          return PyTimedelta.fromMicros(x - bigFloorDiv(x, y) * y);
      }
      return NOT_IMPLEMENTED;
    }
    if (typeof other === 'bigint' || typeof other === 'boolean') {
      const k = typeof other === 'bigint' ? other : other ? 1n : 0n;
      if (op === '*') return PyTimedelta.fromMicros(this.totalMicros() * k);
      if (!reflected && (op === '//' || op === '/')) {
        if (k === 0n) raise('ZeroDivisionError', 'integer division or modulo by zero');
        if (op === '//') return PyTimedelta.fromMicros(bigFloorDiv(this.totalMicros(), k));
        return PyTimedelta.fromMicros(BigInt(roundHalfEven(Number(this.totalMicros()) / Number(k))));
      }
      return NOT_IMPLEMENTED;
    }
    if (typeof other === 'number') {
      if (op === '*') return PyTimedelta.fromMicros(BigInt(roundHalfEven(Number(this.totalMicros()) * other)));
      if (op === '/' && !reflected) {
        if (other === 0) raise('ZeroDivisionError', 'division by zero');
        return PyTimedelta.fromMicros(BigInt(roundHalfEven(Number(this.totalMicros()) / other)));
      }
    }
    return NOT_IMPLEMENTED;
  }
}

function bigFloorDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b !== 0n && a < 0n !== b < 0n ? q - 1n : q;
}

function cmpTypeError(a: Value, b: Value): never {
  return raise('TypeError', `'<' not supported between instances of '${typeName(a)}' and '${typeName(b)}'`);
}

// ---- tzinfo ---------------------------------------------------------------------------------

/** A tzinfo: fixed offsets (`datetime.timezone`) and IANA zones. Offsets are in milliseconds. */
export abstract class TzInfo implements PyObject {
  abstract readonly pyType: string;
  /** Offset east of UTC for a UTC instant (ms since epoch). */
  abstract offsetAt(utcMs: number): number;
  /** Offset east of UTC for a local wall time given as ms since epoch read as if UTC. */
  abstract utcoffsetLocal(localMs: number): number;
  abstract tznameAt(utcMs: number): string | null;
  /** The tzinfo a UTC instant converts to (IANA zones remember the offset, as Grist's moment does). */
  fromutc(_utcMs: number): TzInfo {
    return this;
  }
  abstract repr(): string;
  getattr(name: string): Value {
    if (name === 'utcoffset') {
      return fn('utcoffset', (args) => {
        const dt = args[0];
        return dt instanceof PyDateTime ? new PyTimedelta(0, 0, this.utcoffsetLocal(dt.localMs()) * 1000) : null;
      });
    }
    if (name === 'tzname') {
      return fn('tzname', (args) => {
        const dt = args[0];
        if (!(dt instanceof PyDateTime)) return null;
        const l = dt.localMs();
        return this.tznameAt(l - this.utcoffsetLocal(l));
      });
    }
    if (name === 'zone' && this instanceof IanaTz) return this.name;
    return attributeError(this, name);
  }
}

export class FixedTz extends TzInfo {
  readonly pyType = 'timezone';
  constructor(
    readonly offsetMs: number,
    readonly name: string | null = null,
  ) {
    super();
  }
  offsetAt(): number {
    return this.offsetMs;
  }
  utcoffsetLocal(): number {
    return this.offsetMs;
  }
  tznameAt(): string {
    if (this.name !== null) return this.name;
    return this.offsetMs === 0 ? 'UTC' : `UTC${formatOffset(this.offsetMs, ':')}`;
  }
  repr(): string {
    if (this.offsetMs === 0 && this.name === null) return 'datetime.timezone.utc';
    const td = new PyTimedelta(0, 0, this.offsetMs * 1000).repr();
    return this.name !== null ? `datetime.timezone(${td}, '${this.name}')` : `datetime.timezone(${td})`;
  }
  str(): string {
    return this.tznameAt();
  }
  eq(o: Value): boolean {
    return o instanceof FixedTz && o.offsetMs === this.offsetMs;
  }
  hashKey(): string {
    return `tz:${this.offsetMs}`;
  }
}

export const UTC = new FixedTz(0);

/** An IANA zone; one instance per (zone, favored offset) as Grist's moment.tzinfo keeps them. */
export class IanaTz extends TzInfo {
  readonly pyType = 'TzInfo';
  private readonly offsets = new Map<number, number>();
  private constructor(
    readonly name: string,
    readonly favorOffset: number | null,
  ) {
    super();
  }

  private static readonly cache = new Map<string, IanaTz>();
  /** The variants of this zone by favored offset (for fromutc, called per DateTime cell read). */
  private readonly variants = new Map<number, IanaTz>();
  /** The zone by IANA name (cached), favoring `favorOffset` for ambiguous local times. */
  static get(name: string, favorOffset: number | null = null): IanaTz {
    const key = `${name}|${favorOffset}`;
    let z = IanaTz.cache.get(key);
    if (!z) {
      if (favorOffset === null) {
        if (!zoneFormatter(name)) return raise('KeyError', `'${name}'`);
        // Share the offset cache between the variants of one zone.
        z = new IanaTz(name, null);
      } else {
        const base = IanaTz.get(name);
        z = new IanaTz(name, favorOffset);
        (z as unknown as {offsets: Map<number, number>}).offsets = base.offsets;
      }
      IanaTz.cache.set(key, z);
    }
    return z;
  }

  /**
   * Offset at an instant. Cached per UTC day when the offset is the same at both ends of the day
   * (zones change offset at most a few times a year), else per 15-minute bucket within the day.
   */
  offsetAt(utcMs: number): number {
    const day = Math.floor(utcMs / DAY_MS);
    const hit = this.offsets.get(day);
    if (hit !== undefined && !Number.isNaN(hit)) return hit;
    if (hit === undefined) {
      if (this.offsets.size > 50000) this.offsets.clear();
      const a = this.rawOffset(day * DAY_MS),
        b = this.rawOffset(day * DAY_MS + DAY_MS - 1000);
      this.offsets.set(day, a === b ? a : NaN);
      if (a === b) return a;
    }
    // A day with a transition: 15-minute buckets (keys offset by 1e9 days to stay apart).
    const bucket = 1e9 + Math.floor(utcMs / 900_000);
    const b = this.offsets.get(bucket);
    if (b !== undefined) return b;
    const off = this.rawOffset(utcMs);
    // Transitions fall on bucket edges except historical LMT ones, which are not cached.
    if (off % 60_000 === 0 && this.rawOffset(Math.floor(utcMs / 900_000) * 900_000) === off)
      this.offsets.set(bucket, off);
    return off;
  }

  /** Offset at an instant from Intl (to the second). */
  private rawOffset(utcMs: number): number {
    return zoneOffsetMs(this.name, utcMs);
  }

  /**
   * Grist's rule: a local time before the transition (in the old offset) takes the old offset,
   * at or after it the new one; so a skipped time takes the new offset and an ambiguous time the
   * earlier one, unless this tzinfo favors the later offset (as those made by astimezone do).
   */
  utcoffsetLocal(localMs: number): number {
    const before = this.offsetAt(localMs - 14 * 3_600_000 - DAY_MS / 2);
    const after = this.offsetAt(localMs + 14 * 3_600_000 + DAY_MS / 2);
    if (before === after) {
      const o = this.offsetAt(localMs - before);
      if (o === before) return o;
      // Two transitions close together: fall back to the offset in effect at that instant.
      return this.offsetAt(localMs - o) === o ? o : before;
    }
    if (this.offsetAt(localMs - before) === before) {
      if (this.favorOffset === after && this.offsetAt(localMs - after) === after) return after;
      return before;
    }
    return after;
  }

  /** The zone's abbreviation at an instant (`EST`, `EDT`). */
  tznameAt(utcMs: number): string {
    try {
      const f = new Intl.DateTimeFormat('en-US', {timeZone: this.name, timeZoneName: 'short'});
      const n = f.formatToParts(new Date(utcMs)).find((p) => p.type === 'timeZoneName')?.value ?? '';
      if (/^GMT[+-]/.test(n) || (n === 'GMT' && this.name !== 'UTC' && !this.name.startsWith('Etc/'))) {
        // No abbreviation known to ICU: show the offset as moment-timezone's data often does.
        const o = this.offsetAt(utcMs);
        return formatOffset(o, '').replace(/^([+-]\d\d)00$/, '$1');
      }
      return n === 'GMT' && this.name === 'UTC' ? 'UTC' : n;
    } catch {
      return '';
    }
  }

  override fromutc(utcMs: number): TzInfo {
    const off = this.offsetAt(utcMs);
    let z = this.variants.get(off);
    if (!z) {
      z = IanaTz.get(this.name, off);
      this.variants.set(off, z);
    }
    return z;
  }
  /** Python's repr of the zone. */
  repr(): string {
    return `moment.tzinfo('${this.name}')`;
  }
  /** Python `==`. */
  eq(o: Value): boolean {
    return o === this;
  }
  /** The key of the zone in dicts and sets. */
  hashKey(): string {
    return `iana:${this.name}:${this.favorOffset}`;
  }
}

/** A tzinfo for a zone name as Grist accepts it: IANA names; raises KeyError for unknown ones. */
export function tzinfoFor(name: string): TzInfo {
  if (name === 'UTC') return IanaTz.get('UTC');
  return IanaTz.get(name);
}

function formatOffset(ms: number, sep: string, withSeconds = true): string {
  const sign = ms < 0 ? '-' : '+';
  let us = Math.abs(ms) * 1000;
  const h = Math.floor(us / 3.6e9);
  us -= h * 3.6e9;
  const m = Math.floor(us / 6e7);
  us -= m * 6e7;
  const s = Math.floor(us / 1e6);
  us -= s * 1e6;
  let out = `${sign}${pad(h)}${sep}${pad(m)}`;
  if (withSeconds && (s || us)) out += `${sep}${pad(s)}`;
  if (withSeconds && us) out += `.${pad(us, 6)}`;
  return out;
}

// ---- date -----------------------------------------------------------------------------------

const DAY_NAMES = WEEKDAY_NAMES;

export class PyDate implements PyObject {
  readonly pyType: string = 'date';
  constructor(
    readonly year: number,
    readonly month: number,
    readonly day: number,
  ) {}

  static create(y: number, m: number, d: number): PyDate {
    checkDate(y, m, d);
    return new PyDate(y, m, d);
  }
  /** Days since 1970-01-01. */
  epochDays(): number {
    return daysFromCivil(this.year, this.month, this.day);
  }
  static fromEpochDays(days: number): PyDate {
    const [y, m, d] = civilFromDays(days);
    if (y < MINYEAR || y > MAXYEAR) raise('OverflowError', 'date value out of range');
    return new PyDate(y, m, d);
  }
  toordinal(): number {
    return this.epochDays() + EPOCH_ORD;
  }
  /** Monday is 0. */
  weekday(): number {
    return mod(this.epochDays() + 3, 7);
  }
  isocalendar(): [number, number, number] {
    const wd = this.weekday();
    const thursday = this.epochDays() - wd + 3;
    const [ty] = civilFromDays(thursday);
    const week = Math.floor((thursday - daysFromCivil(ty, 1, 1)) / 7) + 1;
    return [ty, week, wd + 1];
  }
  isoformat(): string {
    return `${pad(this.year, 4)}-${pad(this.month)}-${pad(this.day)}`;
  }
  dateOnly(): PyDate {
    return new PyDate(this.year, this.month, this.day);
  }

  getattr(name: string): Value {
    switch (name) {
      case 'year':
        return BigInt(this.year);
      case 'month':
        return BigInt(this.month);
      case 'day':
        return BigInt(this.day);
      case 'weekday':
        return fn('weekday', () => BigInt(this.weekday()));
      case 'isoweekday':
        return fn('isoweekday', () => BigInt(this.weekday() + 1));
      case 'toordinal':
        return fn('toordinal', () => BigInt(this.toordinal()));
      case 'isocalendar':
        return fn('isocalendar', () => new PyTuple(this.isocalendar().map(BigInt)));
      case 'isoformat':
        return fn('isoformat', () => this.isoformat());
      case 'ctime':
        return fn('ctime', () => strftime(this, '%a %b %e %H:%M:%S %Y'));
      case 'strftime':
        return fn('strftime', (a, k) => strftime(this, String(bindArgs('strftime', ['format'], a, k).format)));
      case '__format__':
        return fn('__format__', (a) => (a[0] ? strftime(this, String(a[0])) : this.str()));
      case 'replace':
        return fn('replace', (a, k) => {
          const b = bindArgs('replace', ['year', 'month', 'day'], a, k, {
            year: BigInt(this.year),
            month: BigInt(this.month),
            day: BigInt(this.day),
          });
          return PyDate.create(intArg(b.year as Value), intArg(b.month as Value), intArg(b.day as Value));
        });
      case 'timetuple':
        return fn('timetuple', () => timetuple(this));
    }
    return attributeError(this, name);
  }
  repr(): string {
    return `datetime.date(${this.year}, ${this.month}, ${this.day})`;
  }
  str(): string {
    return this.isoformat();
  }
  /** Python's date.__format__: a non-empty spec is a strftime format (`f"{d:+}"` is "+"). */
  format(spec: string): string {
    return spec ? strftime(this, spec) : this.str();
  }
  eq(o: Value): boolean {
    return o instanceof PyDate && !(o instanceof PyDateTime) && this.epochDays() === o.epochDays();
  }
  compare(o: Value): number {
    if (o instanceof PyDateTime) return raise('TypeError', "can't compare datetime.datetime to datetime.date");
    if (!(o instanceof PyDate)) return cmpTypeError(this, o);
    return this.epochDays() - o.epochDays();
  }
  hashKey(): string {
    return `date:${this.epochDays()}`;
  }
  binop(op: string, other: Value, reflected: boolean): Value | typeof NOT_IMPLEMENTED {
    if (other instanceof PyTimedelta) {
      if (op === '+' || (op === '-' && !reflected)) {
        const sign = op === '+' ? 1 : -1;
        return PyDate.fromEpochDays(this.epochDays() + sign * other.days);
      }
      return NOT_IMPLEMENTED;
    }
    if (op === '-' && other instanceof PyDate && !(other instanceof PyDateTime)) {
      const diff = this.epochDays() - other.epochDays();
      return new PyTimedelta(reflected ? -diff : diff);
    }
    return NOT_IMPLEMENTED;
  }
}

function timetuple(d: PyDate): PyTuple {
  const dt = d instanceof PyDateTime ? d : null;
  const yday = d.epochDays() - daysFromCivil(d.year, 1, 1) + 1;
  return new PyTuple(
    [d.year, d.month, d.day, dt?.hour ?? 0, dt?.minute ?? 0, dt?.second ?? 0, d.weekday(), yday, -1].map(BigInt),
  );
}

// ---- time -----------------------------------------------------------------------------------

/** The time-of-day fields `time` and `datetime` share. */
interface WallTime {
  readonly hour: number;
  readonly minute: number;
  readonly second: number;
  readonly microsecond: number;
  readonly tzinfo: TzInfo | null;
}

/** The attribute `name` of the time fields (`hour` ... `tzinfo`), or undefined for any other name. */
function wallTimeAttr(t: WallTime, name: string): Value | undefined {
  switch (name) {
    case 'hour':
      return BigInt(t.hour);
    case 'minute':
      return BigInt(t.minute);
    case 'second':
      return BigInt(t.second);
    case 'microsecond':
      return BigInt(t.microsecond);
    case 'tzinfo':
      return t.tzinfo;
  }
  return undefined;
}

/** The time fields as `replace()` defaults them (its keyword arguments). */
function wallTimeDefaults(t: WallTime): Record<string, Value> {
  return {
    hour: BigInt(t.hour),
    minute: BigInt(t.minute),
    second: BigInt(t.second),
    microsecond: BigInt(t.microsecond),
    tzinfo: t.tzinfo,
  };
}

/** The repr of a time or datetime: seconds and microseconds only when set, then the tzinfo. */
function wallTimeRepr(kind: string, head: number[], t: WallTime): string {
  const parts = [...head, t.hour, t.minute];
  if (t.second || t.microsecond) parts.push(t.second);
  if (t.microsecond) parts.push(t.microsecond);
  const tz = t.tzinfo ? `, tzinfo=${t.tzinfo.repr()}` : '';
  return `datetime.${kind}(${parts.join(', ')}${tz})`;
}

export class PyTime implements PyObject {
  readonly pyType = 'time';
  constructor(
    readonly hour: number,
    readonly minute: number,
    readonly second: number,
    readonly microsecond: number,
    readonly tzinfo: TzInfo | null = null,
  ) {}
  static construct(args: Value[], kwargs: Kwargs | null): PyTime {
    const b = bindArgs('time', ['hour', 'minute', 'second', 'microsecond', 'tzinfo'], args, kwargs, {
      hour: 0n,
      minute: 0n,
      second: 0n,
      microsecond: 0n,
      tzinfo: null,
    });
    const [h, mi, s, us] = ['hour', 'minute', 'second', 'microsecond'].map((k) => intArg(b[k] as Value));
    checkTime(h, mi, s, us);
    return new PyTime(h, mi, s, us, tzArg(b.tzinfo as Value));
  }
  micros(): number {
    return ((this.hour * 60 + this.minute) * 60 + this.second) * 1e6 + this.microsecond;
  }
  isoformat(spec = 'auto'): string {
    return timeIso(this.hour, this.minute, this.second, this.microsecond, spec);
  }
  getattr(name: string): Value {
    const field = wallTimeAttr(this, name);
    if (field !== undefined) return field;
    switch (name) {
      case 'isoformat':
        return fn('isoformat', () => this.str());
      case 'strftime':
        return fn('strftime', (a) =>
          strftime(
            new PyDateTime(1900, 1, 1, this.hour, this.minute, this.second, this.microsecond, this.tzinfo),
            String(a[0]),
          ),
        );
      case 'replace':
        return fn('replace', (a, k) => {
          const b = bindArgs(
            'replace',
            ['hour', 'minute', 'second', 'microsecond', 'tzinfo'],
            a,
            k,
            wallTimeDefaults(this),
          );
          return PyTime.construct([b.hour, b.minute, b.second, b.microsecond, b.tzinfo] as Value[], null);
        });
    }
    return attributeError(this, name);
  }
  repr(): string {
    return wallTimeRepr('time', [], this);
  }
  str(): string {
    const tz = this.tzinfo ? formatOffset(this.tzinfo.utcoffsetLocal(0), ':') : '';
    return this.isoformat() + tz;
  }
  /** Python's time.__format__: strftime of a non-empty spec, on 1900-01-01. */
  format(spec: string): string {
    return spec
      ? strftime(new PyDateTime(1900, 1, 1, this.hour, this.minute, this.second, this.microsecond, this.tzinfo), spec)
      : this.str();
  }
  eq(o: Value): boolean {
    return o instanceof PyTime && o.micros() === this.micros() && o.tzinfo === this.tzinfo;
  }
  compare(o: Value): number {
    if (!(o instanceof PyTime)) return cmpTypeError(this, o);
    return this.micros() - o.micros();
  }
  hashKey(): string {
    return `time:${this.micros()}`;
  }
  truthy(): boolean {
    return true;
  }
}

function timeIso(h: number, mi: number, s: number, us: number, spec: string): string {
  switch (spec) {
    case 'hours':
      return pad(h);
    case 'minutes':
      return `${pad(h)}:${pad(mi)}`;
    case 'seconds':
      return `${pad(h)}:${pad(mi)}:${pad(s)}`;
    case 'milliseconds':
      return `${pad(h)}:${pad(mi)}:${pad(s)}.${pad(Math.floor(us / 1000), 3)}`;
    case 'microseconds':
      return `${pad(h)}:${pad(mi)}:${pad(s)}.${pad(us, 6)}`;
    case 'auto':
      return us ? timeIso(h, mi, s, us, 'microseconds') : timeIso(h, mi, s, us, 'seconds');
  }
  return raise('ValueError', `Unknown timespec value`);
}

function tzArg(v: Value): TzInfo | null {
  if (v === null) return null;
  if (v instanceof TzInfo) return v;
  return raise('TypeError', `tzinfo argument must be None or of a tzinfo subclass, not type '${typeName(v)}'`);
}

// ---- datetime -------------------------------------------------------------------------------

export class PyDateTime extends PyDate {
  override readonly pyType = 'datetime';
  constructor(
    year: number,
    month: number,
    day: number,
    readonly hour = 0,
    readonly minute = 0,
    readonly second = 0,
    readonly microsecond = 0,
    readonly tzinfo: TzInfo | null = null,
  ) {
    super(year, month, day);
  }

  static construct(args: Value[], kwargs: Kwargs | null): PyDateTime {
    const b = bindArgs(
      'datetime',
      ['year', 'month', 'day', 'hour', 'minute', 'second', 'microsecond', 'tzinfo'],
      args,
      kwargs,
      {hour: 0n, minute: 0n, second: 0n, microsecond: 0n, tzinfo: null},
    );
    const [y, m, d, h, mi, s, us] = ['year', 'month', 'day', 'hour', 'minute', 'second', 'microsecond'].map((k) =>
      intArg(b[k] as Value),
    );
    checkDate(y, m, d);
    checkTime(h, mi, s, us);
    return new PyDateTime(y, m, d, h, mi, s, us, tzArg(b.tzinfo as Value));
  }

  /** Wall-clock ms since epoch read as UTC (microseconds beyond ms dropped). */
  localMs(): number {
    return (
      this.epochDays() * DAY_MS +
      ((this.hour * 60 + this.minute) * 60 + this.second) * 1000 +
      Math.floor(this.microsecond / 1000)
    );
  }
  /** Wall-clock microseconds since epoch (exact: below 2^53 for years 1..9999? no: ~2.5e17; use pairs). */
  private dayMicros(): number {
    return ((this.hour * 60 + this.minute) * 60 + this.second) * 1e6 + this.microsecond;
  }
  /** Offset in ms of an aware datetime, null for naive. */
  utcoffsetMs(): number | null {
    return this.tzinfo ? this.tzinfo.utcoffsetLocal(this.localMs()) : null;
  }
  /** [days, microseconds of day] of the UTC instant (of the wall time for naive datetimes). */
  utcPair(): [number, number] {
    const off = this.utcoffsetMs() ?? 0;
    return normPair(this.epochDays(), this.dayMicros() - off * 1000);
  }
  /** Seconds since epoch as a float (naive datetimes read as `naiveAs`, UTC by default). */
  epochSeconds(naiveAs: TzInfo | null = null): number {
    let off = this.utcoffsetMs();
    if (off === null) off = naiveAs ? naiveAs.utcoffsetLocal(this.localMs()) : 0;
    return this.epochDays() * 86400 + (this.dayMicros() - off * 1000) / 1e6;
  }

  static fromPair(days: number, us: number, tz: TzInfo | null): PyDateTime {
    [days, us] = normPair(days, us);
    const [y, m, d] = civilFromDays(days);
    if (y < MINYEAR || y > MAXYEAR) raise('OverflowError', 'date value out of range');
    const s = Math.floor(us / 1e6);
    return new PyDateTime(y, m, d, Math.floor(s / 3600), Math.floor(s / 60) % 60, s % 60, us % 1e6, tz);
  }
  /** The datetime in `tz` of a UTC instant given as [days, microseconds]. */
  static fromUtc(days: number, us: number, tz: TzInfo): PyDateTime {
    const utcMs = days * DAY_MS + Math.floor(us / 1000);
    const z = tz.fromutc(utcMs);
    const off = z.offsetAt(utcMs);
    return PyDateTime.fromPair(days, us + off * 1000, z);
  }
  static fromTimestamp(ts: number, tz: TzInfo | null): PyDateTime {
    const days = Math.floor(ts / 86400);
    const us = roundHalfEven((ts - days * 86400) * 1e6);
    if (tz) return PyDateTime.fromUtc(days, us, tz);
    return PyDateTime.fromUtc(days, us, localZone());
  }

  date(): PyDate {
    return new PyDate(this.year, this.month, this.day);
  }
  time(): PyTime {
    return new PyTime(this.hour, this.minute, this.second, this.microsecond);
  }
  withTz(tz: TzInfo | null): PyDateTime {
    return new PyDateTime(this.year, this.month, this.day, this.hour, this.minute, this.second, this.microsecond, tz);
  }
  astimezone(tz: TzInfo | null): PyDateTime {
    const [d, us] = this.tzinfo ? this.utcPair() : localToUtcPair(this);
    return PyDateTime.fromUtc(d, us, tz ?? localZone());
  }
  override isoformat(sep = 'T', spec = 'auto'): string {
    const off = this.utcoffsetMs();
    return (
      `${super.isoformat()}${sep}${timeIso(this.hour, this.minute, this.second, this.microsecond, spec)}` +
      (off === null ? '' : formatOffset(off, ':'))
    );
  }

  override getattr(name: string): Value {
    const field = wallTimeAttr(this, name);
    if (field !== undefined) return field;
    switch (name) {
      case 'fold':
        return 0n;
      case 'date':
        return fn('date', () => this.date());
      case 'time':
        return fn('time', () => this.time());
      case 'timetz':
        return fn('timetz', () => new PyTime(this.hour, this.minute, this.second, this.microsecond, this.tzinfo));
      case 'isoformat':
        return fn('isoformat', (a, k) => {
          const b = bindArgs('isoformat', ['sep', 'timespec'], a, k, {sep: 'T', timespec: 'auto'});
          return this.isoformat(String(b.sep), String(b.timespec));
        });
      case 'timestamp':
        return fn('timestamp', () => this.epochSeconds(this.tzinfo ? null : localZone()));
      case 'utcoffset':
        return fn('utcoffset', () => {
          const o = this.utcoffsetMs();
          return o === null ? null : new PyTimedelta(0, 0, o * 1000);
        });
      case 'tzname':
        return fn('tzname', () => {
          if (!this.tzinfo) return null;
          const [d, us] = this.utcPair();
          return this.tzinfo.tznameAt(d * DAY_MS + us / 1000);
        });
      case 'astimezone':
        return fn('astimezone', (a, k) => {
          const b = bindArgs('astimezone', ['tz'], a, k, {tz: null});
          return this.astimezone(tzArg(b.tz as Value));
        });
      case 'replace':
        return fn('replace', (a, k) => {
          const names = ['year', 'month', 'day', 'hour', 'minute', 'second', 'microsecond', 'tzinfo'];
          const b = bindArgs('replace', names, a, k, {
            year: BigInt(this.year),
            month: BigInt(this.month),
            day: BigInt(this.day),
            ...wallTimeDefaults(this),
          });
          return PyDateTime.construct(
            names.map((n) => b[n] as Value),
            null,
          );
        });
      case 'timetuple':
        return fn('timetuple', () => timetuple(this));
      case 'ctime':
        return fn('ctime', () => strftime(this, '%a %b %e %H:%M:%S %Y'));
    }
    return super.getattr(name);
  }

  override repr(): string {
    return wallTimeRepr('datetime', [this.year, this.month, this.day], this);
  }
  override str(): string {
    return this.isoformat(' ');
  }

  /** Python compares aware datetimes by instant, but by wall time when both share one tzinfo. */
  private key(o: PyDateTime): [[number, number], [number, number]] | null {
    if ((this.tzinfo === null) !== (o.tzinfo === null)) return null;
    if (this.tzinfo === o.tzinfo) {
      return [
        [this.epochDays(), this.dayMicros()],
        [o.epochDays(), o.dayMicros()],
      ];
    }
    return [this.utcPair(), o.utcPair()];
  }
  override eq(o: Value): boolean {
    if (!(o instanceof PyDateTime)) return false;
    const k = this.key(o);
    return k !== null && k[0][0] === k[1][0] && k[0][1] === k[1][1];
  }
  override compare(o: Value): number {
    if (!(o instanceof PyDateTime)) {
      if (o instanceof PyDate) return raise('TypeError', "can't compare datetime.datetime to datetime.date");
      return cmpTypeError(this, o);
    }
    const k = this.key(o);
    if (!k) return raise('TypeError', "can't compare offset-naive and offset-aware datetimes");
    return k[0][0] - k[1][0] || k[0][1] - k[1][1];
  }
  override hashKey(): string {
    const [d, us] = this.utcPair();
    return `dt:${d}:${us}`;
  }
  override binop(op: string, other: Value, reflected: boolean): Value | typeof NOT_IMPLEMENTED {
    if (other instanceof PyTimedelta) {
      if (op === '+' || (op === '-' && !reflected)) {
        const sign = op === '+' ? 1 : -1;
        return PyDateTime.fromPair(
          this.epochDays() + sign * other.days,
          this.dayMicros() + sign * (other.seconds * 1e6 + other.microseconds),
          this.tzinfo,
        );
      }
      return NOT_IMPLEMENTED;
    }
    if (op === '-' && other instanceof PyDateTime) {
      const k = this.key(other);
      if (!k) return raise('TypeError', "can't subtract offset-naive and offset-aware datetimes");
      const [a, b] = reflected ? [k[1], k[0]] : k;
      return new PyTimedelta(a[0] - b[0], 0, a[1] - b[1]);
    }
    return NOT_IMPLEMENTED;
  }
}

function normPair(days: number, us: number): [number, number] {
  const carry = Math.floor(us / DAY_US);
  return [days + carry, us - carry * DAY_US];
}

/** The zone for naive `fromtimestamp`/`now()`/`astimezone()`: the process's zone is UTC for formulas. */
function localZone(): TzInfo {
  return UTC;
}

function localToUtcPair(dt: PyDateTime): [number, number] {
  return normPair(
    dt.epochDays(),
    dt.hour * 3.6e9 +
      dt.minute * 6e7 +
      dt.second * 1e6 +
      dt.microsecond -
      localZone().utcoffsetLocal(dt.localMs()) * 1000,
  );
}

// ---- strftime / strptime ----------------------------------------------------------------------

/** Python's strftime (glibc's directives, including `%-d`-style unpadded forms). */
export function strftime(d: PyDate | PyTime, fmt: string): string {
  if (d instanceof PyTime) d = new PyDateTime(1900, 1, 1, d.hour, d.minute, d.second, d.microsecond, d.tzinfo);
  const dt = d instanceof PyDateTime ? d : null;
  const H = dt?.hour ?? 0,
    M = dt?.minute ?? 0,
    S = dt?.second ?? 0,
    US = dt?.microsecond ?? 0;
  const wd = d.weekday();
  const yday = d.epochDays() - daysFromCivil(d.year, 1, 1) + 1;
  const date = d;
  const directive = (c: string, noPad: boolean): string | null => {
    const p = (n: number, w = 2) => (noPad ? String(n) : pad(n, w));
    switch (c) {
      case 'a':
        return DAY_NAMES[wd].slice(0, 3);
      case 'A':
        return DAY_NAMES[wd];
      case 'w':
        return String((wd + 1) % 7);
      case 'u':
        return String(wd + 1);
      case 'd':
        return p(date.day);
      case 'e':
        return noPad ? String(date.day) : String(date.day).padStart(2, ' ');
      case 'b':
      case 'h':
        return MONTH_NAMES[date.month - 1].slice(0, 3);
      case 'B':
        return MONTH_NAMES[date.month - 1];
      case 'm':
        return p(date.month);
      case 'y':
        return p(date.year % 100);
      case 'Y':
        return noPad ? String(date.year) : String(date.year);
      case 'C':
        return p(Math.floor(date.year / 100));
      case 'H':
        return p(H);
      case 'k':
        return String(H).padStart(2, ' ');
      case 'I':
        return p(H % 12 === 0 ? 12 : H % 12);
      case 'l':
        return String(H % 12 === 0 ? 12 : H % 12).padStart(2, ' ');
      case 'p':
        return H < 12 ? 'AM' : 'PM';
      case 'P':
        return H < 12 ? 'am' : 'pm';
      case 'M':
        return p(M);
      case 'S':
        return p(S);
      case 'f':
        return pad(US, 6);
      case 'j':
        return p(yday, 3);
      case 'U':
        return p(Math.floor((yday + 6 - ((wd + 1) % 7)) / 7));
      case 'W':
        return p(Math.floor((yday + 6 - wd) / 7));
      case 'G':
        return String(date.isocalendar()[0]);
      case 'g':
        return p(date.isocalendar()[0] % 100);
      case 'V':
        return p(date.isocalendar()[1]);
      case 'z': {
        const off = dt?.utcoffsetMs() ?? null;
        return off === null ? '' : formatOffset(off, '');
      }
      case 'Z': {
        if (!dt?.tzinfo) return '';
        const [dd, us] = dt.utcPair();
        return dt.tzinfo.tznameAt(dd * DAY_MS + us / 1000) ?? '';
      }
      case 'c':
        return strftime(date, '%a %b %e %H:%M:%S %Y');
      case 'x':
        return strftime(date, '%m/%d/%y');
      case 'X':
        return strftime(date, '%H:%M:%S');
      case 'D':
        return strftime(date, '%m/%d/%y');
      case 'F':
        return strftime(date, '%Y-%m-%d');
      case 'T':
        return strftime(date, '%H:%M:%S');
      case 'R':
        return strftime(date, '%H:%M');
      case 'r':
        return strftime(date, '%I:%M:%S %p');
      case 's':
        return String(Math.floor(dt ? dt.epochSeconds() : d.epochDays() * 86400));
      case 'n':
        return '\n';
      case 't':
        return '\t';
      case '%':
        return '%';
    }
    return null;
  };
  let out = '';
  for (let i = 0; i < fmt.length; i++) {
    const ch = fmt[i];
    if (ch !== '%' || i === fmt.length - 1) {
      out += ch;
      continue;
    }
    let j = i + 1;
    const noPad = fmt[j] === '-';
    if (noPad) j++;
    const r = directive(fmt[j] ?? '', noPad);
    if (r === null) {
      out += fmt.slice(i, j + 1);
      i = j;
      continue;
    }
    out += r;
    i = j;
  }
  return out;
}

const STRPTIME_RE: Record<string, string> = {
  d: '(?<d>3[01]|[12]\\d|0?[1-9]| [1-9])',
  f: '(?<f>\\d{1,6})',
  H: '(?<H>2[0-3]|[0-1]\\d|\\d)',
  I: '(?<I>1[0-2]|0?[1-9])',
  G: '(?<G>\\d\\d\\d\\d)',
  j: '(?<j>36[0-6]|3[0-5]\\d|[12]\\d\\d|0?[1-9]\\d|00?[1-9])',
  m: '(?<m>1[0-2]|0?[1-9])',
  M: '(?<M>[0-5]\\d|\\d)',
  S: '(?<S>6[0-1]|[0-5]\\d|\\d)',
  U: '(?<U>5[0-3]|[0-4]\\d|\\d)',
  w: '(?<w>[0-6])',
  u: '(?<u>[1-7])',
  V: '(?<V>5[0-3]|0[1-9]|[1-4]\\d|\\d)',
  y: '(?<y>\\d\\d)',
  Y: '(?<Y>\\d\\d\\d\\d)',
  z: '(?<z>[+-]\\d\\d:?[0-5]\\d(:?[0-5]\\d(\\.\\d{1,6})?)?|Z)?',
  A: `(?<A>${DAY_NAMES.join('|')})`,
  a: `(?<a>${DAY_NAMES.map((n) => n.slice(0, 3)).join('|')})`,
  B: `(?<B>${MONTH_NAMES.join('|')})`,
  b: `(?<b>${MONTH_NAMES.map((n) => n.slice(0, 3)).join('|')})`,
  p: '(?<p>am|pm)',
  Z: '(?<Z>utc|gmt|z)',
  '%': '%',
};
STRPTIME_RE.W = STRPTIME_RE.U.replace('<U>', '<W>');
STRPTIME_RE.h = STRPTIME_RE.b.replace('<b>', '<h>');

/** Python's `datetime.strptime` (the common directives; `%Z` accepts UTC/GMT only). */
export function strptime(text: string, fmt: string): PyDateTime {
  let src = '';
  const seen = new Set<string>();
  for (let i = 0; i < fmt.length; i++) {
    const ch = fmt[i];
    if (ch === '%' && i + 1 < fmt.length) {
      const c = fmt[++i];
      const re = STRPTIME_RE[c];
      if (re === undefined) raise('ValueError', `'${c}' is a bad directive in format '${fmt}'`);
      if (seen.has(c) && c !== '%') {
        src += `\\k<${c}>`;
      } else {
        src += re;
        seen.add(c);
      }
    } else if (/\s/.test(ch)) {
      src += '\\s+';
      while (i + 1 < fmt.length && /\s/.test(fmt[i + 1])) i++;
    } else {
      src += ch.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    }
  }
  const m = new RegExp(`^${src}`, 'i').exec(text);
  if (!m)
    return raise(
      'ValueError',
      `time data ${JSON.stringify(text).replace(/^"|"$/g, "'")} does not match format '${fmt}'`,
    );
  if (m[0].length !== text.length) raise('ValueError', `unconverted data remains: ${text.slice(m[0].length)}`);
  const g = m.groups ?? {};
  let year = 1900,
    month = 1,
    day = 1,
    hour = 0,
    minute = 0,
    second = 0,
    us = 0;
  let tz: TzInfo | null = null;
  if (g.Y) year = Number(g.Y);
  else if (g.y) {
    const y = Number(g.y);
    year = y <= 68 ? 2000 + y : 1900 + y;
  }
  if (g.m) month = Number(g.m);
  const monName = g.B ?? g.b ?? g.h;
  if (monName) month = MONTH_NAMES.findIndex((n) => n.toLowerCase().startsWith(monName.toLowerCase())) + 1;
  if (g.d) day = Number(g.d);
  if (g.H) hour = Number(g.H);
  if (g.I) {
    hour = Number(g.I) % 12;
    if (g.p?.toLowerCase() === 'pm') hour += 12;
  }
  if (g.M) minute = Number(g.M);
  if (g.S) second = Number(g.S);
  if (g.f) us = Number(g.f.padEnd(6, '0'));
  if (g.z) {
    if (g.z.toUpperCase() === 'Z') tz = UTC;
    else {
      const zm = /^([+-])(\d\d):?(\d\d)(?::?(\d\d)(?:\.(\d+))?)?$/.exec(g.z)!;
      const ms = ((Number(zm[2]) * 60 + Number(zm[3])) * 60 + Number(zm[4] ?? 0)) * 1000;
      tz = new FixedTz(zm[1] === '-' ? -ms : ms);
    }
  } else if (g.Z && /^(utc|gmt|z)$/i.test(g.Z)) {
    tz = null;
  }
  if (g.j && !g.m && !g.d) {
    const dd = daysFromCivil(year, 1, 1) + Number(g.j) - 1;
    [year, month, day] = civilFromDays(dd);
  }
  checkDate(year, month, day);
  if (second > 59) second = 59;
  return new PyDateTime(year, month, day, hour, minute, second, us, tz);
}

/** `date.fromisoformat` / `datetime.fromisoformat` as Python 3.11 accepts them (common forms). */
export function fromIsoFormat(text: string, kind: 'date' | 'datetime'): PyDate {
  const m =
    /^(\d{4})-?(\d\d)-?(\d\d)(?:[T ](\d\d)(?::?(\d\d)(?::?(\d\d)(?:[.,](\d{1,6}))?)?)?)?(Z|[+-]\d\d(?::?\d\d(?::?\d\d(?:\.\d{1,6})?)?)?)?$/.exec(
      text,
    );
  if (!m || (kind === 'date' && m[4] !== undefined)) {
    return raise('ValueError', `Invalid isoformat string: '${text}'`);
  }
  const [y, mo, d] = [1, 2, 3].map((i) => Number(m[i]));
  checkDate(y, mo, d);
  if (kind === 'date') return new PyDate(y, mo, d);
  const h = Number(m[4] ?? 0),
    mi = Number(m[5] ?? 0),
    s = Number(m[6] ?? 0);
  const us = m[7] ? Number(m[7].padEnd(6, '0')) : 0;
  checkTime(h, mi, s, us);
  let tz: TzInfo | null = null;
  if (m[8]) {
    if (m[8] === 'Z') tz = UTC;
    else {
      const zm = /^([+-])(\d\d):?(\d\d)?(?::?(\d\d))?/.exec(m[8])!;
      const ms = ((Number(zm[2]) * 60 + Number(zm[3] ?? 0)) * 60 + Number(zm[4] ?? 0)) * 1000;
      tz = ms === 0 ? UTC : new FixedTz(zm[1] === '-' ? -ms : ms);
    }
  }
  return new PyDateTime(y, mo, d, h, mi, s, us, tz);
}

// ---- clock ----------------------------------------------------------------------------------

/** The current time in ms since epoch; replaceable so that tests and the engine's clock node agree. */
let clock: () => number = () => Date.now();
/** Sets the clock formulas read; returns the one it replaces. */
export function setClock(f: () => number): () => number {
  const previous = clock;
  clock = f;
  return previous;
}
export function nowMs(): number {
  return clock();
}

export function now(tz: TzInfo | null): PyDateTime {
  const ms = nowMs();
  const days = Math.floor(ms / DAY_MS);
  const us = (ms - days * DAY_MS) * 1000;
  if (tz) return PyDateTime.fromUtc(days, us, tz);
  return PyDateTime.fromPair(days, us, null);
}

// ---- Grist cell encoding --------------------------------------------------------------------

/** A Date cell (seconds since epoch at UTC midnight) as a `date`; fractions of a day are dropped. */
export function dateFromCell(n: number | bigint): PyDate {
  const s = Number(n);
  return PyDate.fromEpochDays(Math.floor(s / 86400));
}

/** A DateTime cell (seconds since epoch) as an aware `datetime` in the column's zone (UTC if none). */
export function datetimeFromCell(n: number | bigint, tz: string | TzInfo | null): PyDateTime {
  const zone = typeof tz === 'string' ? safeZone(tz) : (tz ?? IanaTz.get('UTC'));
  return PyDateTime.fromTimestamp(Number(n), zone);
}

/** A `date` (or the date of a `datetime`) as a Date cell: seconds since epoch at UTC midnight. */
export function dateToCell(v: PyDate): number {
  return v.epochDays() * 86400;
}

/**
 * A `datetime` as a DateTime cell. A naive datetime is read in `defaultTz` (the column's zone: Grist
 * gives a DateTime column without one America/New_York, see usertypes.DateTime); a `date` is
 * midnight in that zone, as Grist's moment.date_to_ts does.
 */
export function datetimeToCell(v: PyDate, defaultTz: string | TzInfo | null = 'America/New_York'): number {
  const zone = typeof defaultTz === 'string' ? safeZone(defaultTz) : defaultTz;
  if (v instanceof PyDateTime) return v.epochSeconds(zone);
  const ts = v.epochDays() * 86400;
  return zone ? ts - zone.offsetAt(ts * 1000) / 1000 : ts;
}

/** A zone by name; unknown names give UTC, as Grist's DateTime type does. */
export function safeZone(name: string): TzInfo {
  try {
    return tzinfoFor(name);
  } catch {
    return IanaTz.get('UTC');
  }
}

// ---- the classes as Python objects ------------------------------------------------------------

export function fn(name: string, impl: (args: Value[], kwargs: Kwargs | null) => Value): PyObject {
  return {pyType: 'builtin_function_or_method', call: impl, repr: () => `<built-in method ${name}>`};
}

/**
 * A Python class object: callable, with class attributes, and `test` for isinstance. It is the
 * interpreter's PyType (so that `isinstance(x, datetime.date)` works), with attributes built on
 * first use and Python's qualified name in its repr.
 */
export class PyClass extends PyType {
  constructor(
    name: string,
    ctor: (args: Value[], kwargs: Kwargs | null) => Value,
    test: (v: Value) => boolean,
    private readonly lazyAttrs: () => Record<string, Value>,
    private readonly qualname = name,
  ) {
    super(name, ctor, test);
  }
  private attrCache: Record<string, Value> | null = null;
  override getattr(name: string): Value {
    if (name === '__name__') return this.name;
    const a = (this.attrCache ??= this.lazyAttrs());
    if (Object.hasOwn(a, name)) return a[name];
    return raise('AttributeError', `type object '${this.qualname}' has no attribute '${name}'`);
  }
  override repr(): string {
    return `<class '${this.qualname}'>`;
  }
  override hashKey(): string {
    return `class:${this.qualname}`;
  }
  override eq(o: Value): boolean {
    return o === this;
  }
}

function numArg(v: Value, what: string): number {
  if (!isNumeric(v)) raise('TypeError', `'${typeName(v)}' object cannot be interpreted as ${what}`);
  return toFloat(v);
}

function strArg(v: Value, fname: string): string {
  if (typeof v !== 'string') raise('TypeError', `${fname}() argument 1 must be str, not ${typeName(v)}`);
  return v as string;
}

export const timedeltaClass: PyClass = new PyClass(
  'timedelta',
  (a, k) => PyTimedelta.construct(a, k),
  (v) => v instanceof PyTimedelta,
  () => ({
    min: new PyTimedelta(-999999999),
    max: new PyTimedelta(999999999, 86399, 999999),
    resolution: new PyTimedelta(0, 0, 1),
  }),
  'datetime.timedelta',
);

export const dateClass: PyClass = new PyClass(
  'date',
  (a, k) => {
    const b = bindArgs('date', ['year', 'month', 'day'], a, k);
    return PyDate.create(intArg(b.year as Value), intArg(b.month as Value), intArg(b.day as Value));
  },
  (v) => v instanceof PyDate,
  () => ({
    today: fn('today', () => now(null).date()),
    fromtimestamp: fn('fromtimestamp', (a) => PyDateTime.fromTimestamp(numArg(a[0], 'a timestamp'), null).date()),
    fromordinal: fn('fromordinal', (a) => PyDate.fromEpochDays(intArg(a[0]) - EPOCH_ORD)),
    fromisoformat: fn('fromisoformat', (a) => fromIsoFormat(strArg(a[0], 'fromisoformat'), 'date')),
    fromisocalendar: fn('fromisocalendar', (a) => fromIsoCalendar(intArg(a[0]), intArg(a[1]), intArg(a[2]))),
    min: new PyDate(1, 1, 1),
    max: new PyDate(9999, 12, 31),
    resolution: new PyTimedelta(1),
  }),
  'datetime.date',
);

function fromIsoCalendar(y: number, w: number, d: number): PyDate {
  if (w < 1 || w > 53) raise('ValueError', `Invalid week: ${w}`);
  if (d < 1 || d > 7) raise('ValueError', `Invalid weekday: ${d} (range is [1, 7])`);
  const jan4 = daysFromCivil(y, 1, 4);
  const week1Monday = jan4 - mod(jan4 + 3, 7);
  return PyDate.fromEpochDays(week1Monday + (w - 1) * 7 + d - 1);
}

export const timeClass: PyClass = new PyClass(
  'time',
  (a, k) => PyTime.construct(a, k),
  (v) => v instanceof PyTime,
  () => ({
    min: new PyTime(0, 0, 0, 0),
    max: new PyTime(23, 59, 59, 999999),
    resolution: new PyTimedelta(0, 0, 1),
  }),
  'datetime.time',
);

export const datetimeClass: PyClass = new PyClass(
  'datetime',
  (a, k) => PyDateTime.construct(a, k),
  (v) => v instanceof PyDateTime,
  () => ({
    now: fn('now', (a, k) => now(tzArg(bindArgs('now', ['tz'], a, k, {tz: null}).tz as Value))),
    today: fn('today', () => now(null)),
    utcnow: fn('utcnow', () => now(null)),
    fromtimestamp: fn('fromtimestamp', (a, k) => {
      const b = bindArgs('fromtimestamp', ['timestamp', 'tz'], a, k, {tz: null});
      return PyDateTime.fromTimestamp(numArg(b.timestamp as Value, 'a timestamp'), tzArg(b.tz as Value));
    }),
    utcfromtimestamp: fn('utcfromtimestamp', (a) =>
      PyDateTime.fromTimestamp(numArg(a[0], 'a timestamp'), UTC).withTz(null),
    ),
    strptime: fn('strptime', (a) => strptime(strArg(a[0], 'strptime'), strArg(a[1], 'strptime'))),
    fromisoformat: fn('fromisoformat', (a) => fromIsoFormat(strArg(a[0], 'fromisoformat'), 'datetime')),
    fromordinal: fn('fromordinal', (a) => {
      const d = PyDate.fromEpochDays(intArg(a[0]) - EPOCH_ORD);
      return new PyDateTime(d.year, d.month, d.day);
    }),
    combine: fn('combine', (a, k) => {
      const b = bindArgs('combine', ['date', 'time', 'tzinfo'], a, k, {tzinfo: undefined as unknown as Value});
      const d = b.date,
        t = b.time;
      if (!(d instanceof PyDate))
        return raise('TypeError', `combine() argument 1 must be datetime.date, not ${typeName(d as Value)}`);
      if (!(t instanceof PyTime))
        return raise('TypeError', `combine() argument 2 must be datetime.time, not ${typeName(t as Value)}`);
      const tz = b.tzinfo === undefined ? t.tzinfo : tzArg(b.tzinfo as Value);
      return new PyDateTime(d.year, d.month, d.day, t.hour, t.minute, t.second, t.microsecond, tz);
    }),
    min: new PyDateTime(1, 1, 1),
    max: new PyDateTime(9999, 12, 31, 23, 59, 59, 999999),
    resolution: new PyTimedelta(0, 0, 1),
  }),
  'datetime.datetime',
);

export const timezoneClass: PyClass = new PyClass(
  'timezone',
  (a, k) => {
    const b = bindArgs('timezone', ['offset', 'name'], a, k, {name: null});
    const off = b.offset;
    if (!(off instanceof PyTimedelta))
      return raise('TypeError', `timezone() argument 1 must be datetime.timedelta, not ${typeName(off as Value)}`);
    const ms = Number(off.totalMicros()) / 1000;
    if (Math.abs(ms) >= DAY_MS)
      raise('ValueError', 'offset must be a timedelta strictly between -timedelta(hours=24) and timedelta(hours=24).');
    return ms === 0 && b.name === null ? UTC : new FixedTz(ms, b.name === null ? null : String(b.name));
  },
  (v) => v instanceof FixedTz,
  () => ({utc: UTC}),
  'datetime.timezone',
);

export const tzinfoClass: PyClass = new PyClass(
  'tzinfo',
  () => raise('TypeError', 'tzinfo is abstract here'),
  (v) => v instanceof TzInfo,
  () => ({}),
  'datetime.tzinfo',
);

// ---- helpers for the function library ---------------------------------------------------------

export const isDate = (v: Value): v is PyDate => v instanceof PyDate;
export const isDateTime = (v: Value): v is PyDateTime => v instanceof PyDateTime;
export {isObj as isPyObject};
