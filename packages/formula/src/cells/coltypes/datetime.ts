/**
 * DateTime and DateTime:<zone>: seconds since the epoch. The zone reads text without an offset
 * (conversion, parsing) and is part of the typed form; display uses it too.
 */
import {localToEpoch, parseIsoDateTime} from '../datetime.js';
import type {DocSettings} from '../cell-value.js';
import {
  argOf,
  BaseType,
  type CellFormatter,
  type Converter,
  type SchemaType,
  type TextParser,
  type TypedForm,
  type WidgetOptions,
} from './base.js';
import {dateConverter, dateFormatOf, dateFormatter, parseDateStrict} from './date.js';

const TIME_REGEX = /(?:^|\s+|T)(?:(\d\d?)(?::(\d\d?)(?::(\d\d?))?)?|(\d\d?)(\d\d))\s*([ap]m?)?$/i;
const UTC_REGEX = /[^a-zA-Z](UTC?|GMT|Z)$/i;
const NUMERIC_TZ_REGEX = /([+-]\d\d?)(?::?(\d\d))?$/i;

/** parseDateTime: a date (column format) followed by a flexible time and optional zone. */
export function parseDateTime(text: string, dateFormat: string | undefined, tz: string): number | null {
  let s = text.trim();
  if (!s) {
    return null;
  }
  const dateOnly = parseDateStrict(s, dateFormat, tz);
  if (dateOnly) {
    return dateOnly;
  }
  let offsetMin: number | undefined;
  const utc = UTC_REGEX.exec(s);
  if (utc) {
    offsetMin = 0;
    s = s.slice(0, utc.index + 1).trim();
  } else {
    const num = NUMERIC_TZ_REGEX.exec(s);
    if (num) {
      offsetMin = (num[1][0] === '-' ? -1 : 1) * (Number(num[1].slice(1)) * 60 + Number(num[2] ?? 0));
      s = s.slice(0, num.index).trim();
    }
  }
  const tm = TIME_REGEX.exec(s);
  if (!tm) {
    return null;
  }
  let hours = parseInt(tm[1] || tm[4], 10);
  const minutes = Number(tm[2] || tm[5] || 0);
  const seconds = Number(tm[3] || 0);
  const ampm = (tm[6] || '').toLowerCase();
  if (hours < 12 && hours > 0 && ampm.startsWith('p')) {
    hours += 12;
  } else if (hours === 12 && ampm.startsWith('a')) {
    hours = 0;
  }
  if (hours > 23 || minutes > 59 || seconds > 59) {
    return null;
  }
  const date = parseDateStrict(s.slice(0, tm.index).trim(), dateFormat);
  if (!date) {
    return null;
  }
  const wall = date + hours * 3600 + minutes * 60 + seconds;
  return offsetMin !== undefined ? wall - offsetMin * 60 : localToEpoch(wall, tz);
}

export class DateTimeType extends BaseType {
  /** The zone of a `DateTime:<tz>` type; the data engine reads a bare DateTime in New York time. */
  override readonly tz: string;
  // DocStorage gives DATETIME to the bare type only; 'DateTime:<tz>' falls through to BLOB.
  override readonly sqlType: string;
  override readonly holdsFloats = true;
  override readonly typed: TypedForm;

  constructor(type: string) {
    super(type);
    this.tz = argOf(type) || 'America/New_York';
    this.sqlType = type === 'DateTime' ? 'DATETIME' : 'BLOB';
    this.typed = {number: {before: ['D'], after: [this.tz]}};
  }

  override converter(): Converter {
    const tz = this.tz;
    return dateConverter((text) => parseIsoDateTime(text, tz));
  }

  override parser(options: WidgetOptions): TextParser {
    const format = options.dateFormat as string | undefined;
    const tz = this.tz;
    return (text) => parseDateTime(text, format, tz) ?? text;
  }

  /** Grist's client formats a bare DateTime (no zone of its own) in UTC. */
  override formatter(options: WidgetOptions, _settings: DocSettings): CellFormatter {
    const timeFormat = options.timeFormat === undefined ? 'h:mma' : String(options.timeFormat);
    return dateFormatter(`${dateFormatOf(options)} ${timeFormat}`, argOf(this.type) || 'UTC');
  }

  override schemaType(options: WidgetOptions): SchemaType {
    // Grist prints "undefined" for a missing part; kept as it is.
    return {
      type: 'datetime',
      format: 'any',
      gristFormat: `${options.dateFormat as string} ${options.timeFormat as string}`,
    };
  }
}
