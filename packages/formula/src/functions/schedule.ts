/**
 * Grist's SCHEDULE (grist-core sandbox/grist/functions/schedule.py): "INTERVAL: SLOTS, ..." specs
 * such as "monthly: /1 2pm, /15 5pm". Grist returns a generator; we return the list it would yield.
 */
import {type PyCallable, type Value, raise, truthy} from '../values.js';
import {PyDate, PyDateTime, PyTimedelta} from '../datetime.js';
import {DATE, dtime} from './date.js';
import {def, index, v} from './util.js';
import {now} from '../datetime.js';
import {MONTH_NAMES_LOWER, WEEKDAY_NAMES_FROM_SUNDAY} from '../pyvalues/calendar.js';
import {docTimezone} from './date.js';

type Unit = 'years' | 'months' | 'weeks' | 'days' | 'hours' | 'minutes' | 'seconds';
const UNITS: Unit[] = ['years', 'months', 'weeks', 'days', 'hours', 'minutes', 'seconds'];
const SINGULAR: Record<string, Unit> = {
  year: 'years',
  month: 'months',
  week: 'weeks',
  day: 'days',
  hour: 'hours',
  minute: 'minutes',
  second: 'seconds',
};
const SHORT: Record<string, Unit> = {
  y: 'years',
  m: 'months',
  w: 'weeks',
  d: 'days',
  H: 'hours',
  M: 'minutes',
  S: 'seconds',
};
const ALIASES: Record<string, [number, Unit]> = {
  annual: [1, 'years'],
  monthly: [1, 'months'],
  weekly: [1, 'weeks'],
  daily: [1, 'days'],
  hourly: [1, 'hours'],
};
const MONTHS = MONTH_NAMES_LOWER;
const DAYS = WEEKDAY_NAMES_FROM_SUNDAY.map((d) => d.toLowerCase());
const MONTH_OFFSETS: ReadonlyMap<string, number> = new Map(
  MONTHS.flatMap((n, i) => [
    [n, i],
    [n.slice(0, 3), i],
  ]),
);
const WEEKDAY_OFFSETS: ReadonlyMap<string, number> = new Map(
  DAYS.flatMap((n, i) => [
    [n, i],
    [n.slice(0, 3), i],
    [n.slice(0, 2), i],
  ]),
);

type SlotType = 'date' | 'mday' | 'wday' | 'time' | 'mins' | 'delta';
const ALLOWED: Partial<Record<Unit, SlotType[]>> = {
  years: ['date', 'time', 'delta'],
  months: ['mday', 'time', 'delta'],
  weeks: ['wday', 'time', 'delta'],
  days: ['time', 'delta'],
  hours: ['mins', 'delta'],
};
// One pattern per slot type, tried in this order (as one alternation would).
const SLOT_RES: Array<[SlotType, RegExp]> = [
  ['date', /^(?:([a-z]+)-|(\d+)\/)(\d+)$/i],
  ['mday', /^\/(\d+)$/i],
  ['wday', /^([a-z]+)$/i],
  ['time', /^(\d+)(?::(\d{2})(am|pm)?|(am|pm))$/i],
  ['mins', /^:(\d{2})$/i],
  ['delta', /^\+(\d+)([a-z]+)$/i],
];

/** Months plus a time span: months and years cannot be a timedelta. */
class Delta {
  months = 0;
  td = new PyTimedelta(0);
  add(n: number, unit: Unit): this {
    if (unit === 'months') this.months += n;
    else if (unit === 'years') this.months += n * 12;
    else this.td = this.td.binop('+', PyTimedelta.construct([], {[unit]: BigInt(n)}), false) as PyTimedelta;
    return this;
  }
  /** DATEADD by the months, keeping the time of day and zone, then the timedelta. */
  addTo(dt: PyDateTime): PyDateTime {
    const d = DATE(BigInt(dt.year), BigInt(dt.month + this.months), BigInt(dt.day));
    const moved = new PyDateTime(d.year, d.month, d.day, dt.hour, dt.minute, dt.second, dt.microsecond, dt.tzinfo);
    return moved.binop('+', this.td, false) as PyDateTime;
  }
}

function parseInterval(text: string): [number, Unit] {
  const s = text.toLowerCase();
  if (ALIASES[s]) return ALIASES[s];
  const m = /^(\d+)[-\s]+([a-z]+)$/i.exec(s);
  if (!m) return raise('ValueError', `Not a valid interval '${s}'`);
  const unit = (SINGULAR[m[2]] ?? m[2]) as Unit;
  if (!UNITS.includes(unit)) raise('ValueError', `Unknown unit '${unit}' in interval '${s}'`);
  return [Number(m[1]), unit];
}

function parseSlot(slot: string, parent: Unit): Delta {
  const parts = slot.split(/\s+/).filter(Boolean);
  if (!parts.length) raise('ValueError', 'At least one slot must be specified');
  const delta = new Delta();
  const seen = new Set<Unit>();
  const allowed = ALLOWED[parent] ?? ['delta'];
  for (const part of parts) {
    const found = SLOT_RES.map(([t, re]) => [t, re.exec(part)] as const).find(([, m]) => m);
    if (!found) raise('ValueError', `Invalid slot '${part}'`);
    const [type, m] = found!;
    if (!allowed.includes(type)) raise('ValueError', `Invalid slot '${part}' for unit '${parent}'`);
    const offsets: Array<[number, Unit]> = [];
    switch (type) {
      case 'date': {
        let month: number;
        if (m![1]) {
          const mo = MONTH_OFFSETS.get(m![1].toLowerCase());
          if (mo === undefined) raise('ValueError', `Unknown month '${m![1]}'`);
          month = mo!;
        } else {
          month = Number(m![2]) - 1;
        }
        offsets.push([month, 'months'], [Number(m![3]) - 1, 'days']);
        break;
      }
      case 'mday':
        offsets.push([Number(m![1]) - 1, 'days']);
        break;
      case 'wday': {
        const wd = WEEKDAY_OFFSETS.get(m![1].toLowerCase());
        if (wd === undefined) raise('ValueError', `Unknown day of the week '${m![1].toLowerCase()}'`);
        offsets.push([wd!, 'days']);
        break;
      }
      case 'time': {
        let hours = Number(m![1]);
        const ampm = (m![3] ?? m![4])?.toLowerCase();
        if (ampm) hours = (hours % 12) + (ampm === 'pm' ? 12 : 0);
        offsets.push([hours, 'hours'], [Number(m![2] ?? 0), 'minutes']);
        break;
      }
      case 'mins':
        offsets.push([Number(m![1]), 'minutes']);
        break;
      case 'delta': {
        const unit = SHORT[m![2]];
        if (!unit) raise('ValueError', `Unknown unit '${m![2]}' in interval '${m![0]}'`);
        offsets.push([Number(m![1]), unit]);
        break;
      }
    }
    for (const [n, unit] of offsets) {
      delta.add(n, unit);
      if (seen.has(unit)) raise('ValueError', `Duplicate unit ${unit} in '${slot}'`);
      seen.add(unit);
    }
  }
  return delta;
}

function roundDown(dt: PyDateTime, unit: Unit): PyDateTime {
  const tz = dt.tzinfo;
  switch (unit) {
    case 'years':
      return new PyDateTime(dt.year, 1, 1, 0, 0, 0, 0, tz);
    case 'months':
      return new PyDateTime(dt.year, dt.month, 1, 0, 0, 0, 0, tz);
    case 'weeks': {
      // Weeks start on Sunday.
      const d = PyDate.fromEpochDays(dt.epochDays() - ((dt.weekday() + 1) % 7));
      return new PyDateTime(d.year, d.month, d.day, 0, 0, 0, 0, tz);
    }
    case 'days':
      return new PyDateTime(dt.year, dt.month, dt.day, 0, 0, 0, 0, tz);
    case 'hours':
      return new PyDateTime(dt.year, dt.month, dt.day, dt.hour, 0, 0, 0, tz);
    case 'minutes':
      return new PyDateTime(dt.year, dt.month, dt.day, dt.hour, dt.minute, 0, 0, tz);
    case 'seconds':
      return new PyDateTime(dt.year, dt.month, dt.day, dt.hour, dt.minute, dt.second, 0, tz);
  }
}

export function schedule(spec: string, startIn: Value, countIn: number, endIn: Value): PyDateTime[] {
  const colon = spec.indexOf(':');
  if (colon < 0) raise('ValueError', 'schedule must have the form INTERVAL: SLOTS, ...');
  const [n, unit] = parseInterval(spec.slice(0, colon).trim());
  const interval = new Delta().add(n, unit);
  const slots = spec
    .slice(colon + 1)
    .split(',')
    .map((s) => parseSlot(s, unit));
  const start = dtime(truthy(startIn) ? startIn : now(docTimezone()), null);
  const end = truthy(endIn) ? dtime(endIn, null) : null;
  const out: PyDateTime[] = [];
  let count = countIn;
  let cur = roundDown(start, unit);
  for (;;) {
    for (const slot of slots) {
      if (count <= 0) return out;
      const t = slot.addTo(cur);
      if (t.compare(start) < 0) continue;
      if (end && t.compare(end) > 0) return out;
      out.push(t);
      count--;
    }
    cur = interval.addTo(cur);
  }
}

export const scheduleFunctions: Record<string, PyCallable> = {
  SCHEDULE: def('SCHEDULE', ['schedule', 'start', 'count', 'end'], {start: null, count: 10n, end: null}, (a) => {
    const spec = v(a, 'schedule');
    if (typeof spec !== 'string')
      raise('AttributeError', `'${spec === null ? 'NoneType' : typeof spec}' object has no attribute 'split'`);
    return schedule(spec as string, v(a, 'start'), index(v(a, 'count')), v(a, 'end'));
  }),
};
