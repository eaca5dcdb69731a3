/**
 * What every column type module implements (`ColumnType`), the defaults they share (`BaseType`:
 * an Any-like column), and the helpers for storage, conversion and display text that several
 * types use. One module per type family (text.ts, numeric.ts, ...) subclasses `BaseType`;
 * index.ts maps a type string to its module.
 */
import {dumps, loads} from '../marshal.js';
import {formatMoment} from '../moment-format.js';
import type {DocSettings} from '../cell-value.js';
import type {CellValue, SqlValue} from '../cell-value.js';

/** Turns an API value into what SQLite stores. */
export type Encoder = (v: CellValue) => SqlValue;
/** Turns a stored SQLite value into the value the API returns. */
export type Decoder = (raw: unknown) => CellValue;
/** A conversion to the type; throws `ConversionError` for a value that does not convert. */
export type Converter = (v: CellValue) => CellValue;
/** Display text of a cell value. */
export type CellFormatter = (v: CellValue) => string;
/** Parses the text of a cell written with parsing on; gives the text back when it does not parse. */
export type TextParser = (text: string) => CellValue;
/** A column's parsed `widgetOptions`. */
export type WidgetOptions = Record<string, unknown>;

/** A failed conversion: the engine keeps `str(value)` as alt-text. */
export class ConversionError extends Error {}

/** What a parser needs besides the text: the document's settings and reference lookups. */
export interface ParseContext {
  settings: DocSettings;
  /**
   * Grist's ReferenceParser: the `["l", value, {column, raw}]` lookup of display texts in the
   * referenced table's visible column (resolved to row ids later), or `raw` as alt-text.
   */
  refLookup(texts: string[], raw: string, list: boolean): CellValue;
}

/**
 * The `cellFormat=typed` form of a type's cells (SPEC 7.3), declared rather than coded so that
 * both the JS path and the SQL-written JSON of records (recordsjson.ts) derive from it.
 */
export interface TypedForm {
  /** A number n is written `[...before, n, ...after]`. */
  number?: {before: CellValue[]; after: CellValue[]};
  /** What a null is written as (a new value each time: callers may keep or change it). */
  ofNull?: () => CellValue;
  /** What a list `['L', ...items]` is written as. */
  list?: (items: CellValue[]) => CellValue;
}

/** The frictionless table-schema description of a column's type (SPEC 6.3). */
export interface SchemaType {
  type: string;
  [key: string]: unknown;
}

/** One Grist column type: storage, conversion, parsing and display, for one type string. */
export interface ColumnType {
  /** The type string, e.g. `Ref:People`, `DateTime:Europe/Paris`. */
  readonly type: string;
  /** The type without its argument: `Ref`, `DateTime`. */
  readonly base: string;
  /** Referenced table: `Ref:T`/`RefList:T` give T, Attachments `_grist_Attachments`; else null. */
  readonly target: string | null;
  /** The zone of a DateTime type (`America/New_York` for a bare DateTime, as the engine), else null. */
  readonly tz: string | null;
  /** The table whose visible column displays the cells (Ref and RefList; not Attachments). */
  readonly displayTarget: string | null;
  /** Whether cells are lists stored as JSON text (ChoiceList, RefList:T, Attachments). */
  readonly isList: boolean;
  /** Declared SQL type (DocStorage._getSqlType). */
  readonly sqlType: string;
  /** SQL DEFAULT (gristTypes.getDefaultForType, SQL-formatted). */
  readonly sqlDefault: string;
  /** What the data engine gives for a cell of a missing or new record. */
  readonly defaultValue: CellValue;
  /**
   * How the engine holds numbers of this column, which decides their str() when converted to text:
   * true floats, false Python ints (Int, Ref ids), undefined as Grist's marshalling hands them over
   * (32-bit integers as ints, other numbers as floats: Any, and numbers that are alt-text elsewhere).
   */
  readonly holdsFloats: boolean | undefined;
  /** The `cellFormat=typed` form, or null when cells are written as they are. */
  readonly typed: TypedForm | null;
  /**
   * DocStorage._encodeValue. `declType` is the column's declared SQL type, which may differ from
   * `sqlType` in documents Grist created earlier.
   */
  encoder(declType: string): Encoder;
  /** DocStorage._decodeValue. */
  decoder(): Decoder;
  /**
   * The data engine's conversion (usertypes.py `convert`); see index.ts `converterFor`
   * (`sourceIsFloat` left out: values as they come over the API).
   */
  converter(sourceIsFloat: boolean | undefined): Converter;
  /** Grist's ValueParser for the column, or null when text is kept as it is. */
  parser(options: WidgetOptions, ctx: ParseContext): TextParser | null;
  /**
   * Grist's createFormatter (CSV/XLSX exports, display text). `visible`: for references, the
   * formatter of the values shown in place of row ids.
   */
  formatter(options: WidgetOptions, settings: DocSettings, visible?: CellFormatter): CellFormatter;
  /** The column's type in a table-schema download. */
  schemaType(options: WidgetOptions, locale: string): SchemaType;
}

/** `Ref:T` -> `Ref`. */
export function baseOf(type: string): string {
  const i = type.indexOf(':');
  return i < 0 ? type : type.slice(0, i);
}

/** `Ref:T` -> `T`, `DateTime` -> '' (the text after the first colon). */
export function argOf(type: string): string {
  const i = type.indexOf(':');
  return i < 0 ? '' : type.slice(i + 1);
}

/**
 * The defaults: a column of no particular type (Any), stored as BLOB, converted as it is,
 * displayed as Grist displays decoded values. Type modules override what differs.
 */
export class BaseType implements ColumnType {
  readonly base: string;
  readonly target: string | null = null;
  readonly displayTarget: string | null = null;
  readonly tz: string | null = null;
  readonly sqlType: string = 'BLOB';
  readonly sqlDefault: string = 'NULL';
  readonly defaultValue: CellValue = null;
  readonly holdsFloats: boolean | undefined = undefined;
  readonly typed: TypedForm | null = null;
  /** The items of list cells stored as JSON, or null for a type without list cells. */
  protected readonly listItem: 'string' | 'number' | null = null;

  constructor(readonly type: string) {
    this.base = baseOf(type);
  }

  get isList(): boolean {
    return this.listItem !== null;
  }

  encoder(declType: string): Encoder {
    return storageEncoder(this.sqlType, declType, this.listItem);
  }

  decoder(): Decoder {
    const item = this.listItem;
    if (!item) {
      return plainDecoder;
    }
    // Only what the encoder writes as JSON reads back as a list: strings for ChoiceList, numbers
    // for RefList/Attachments. Other text (alt-text that happens to look like JSON) stays text.
    return (raw) => {
      const v = plainDecoder(raw);
      if (typeof v === 'string' && v.startsWith('[')) {
        try {
          const items = JSON.parse(v);
          if (Array.isArray(items) && items.every((x) => typeof x === item)) {
            return ['L', ...items];
          }
        } catch {
          // Not JSON: alt-text.
        }
      }
      return v;
    };
  }

  converter(_sourceIsFloat: boolean | undefined): Converter {
    return (v) => v;
  }

  parser(_options: WidgetOptions, _ctx: ParseContext): TextParser | null {
    return null;
  }

  formatter(_options: WidgetOptions, _settings: DocSettings, _visible?: CellFormatter): CellFormatter {
    return (v) => formatUnknown(v);
  }

  schemaType(_options: WidgetOptions, _locale: string): SchemaType {
    return {type: 'string'};
  }
}

// ---------------------------------------------------------------------------------------------
// Storage

/** DocStorage._getAffinity, applied to the SQL type Grist derives from the Grist type. */
function gristAffinity(sqlType: string): 'TEXT' | 'INTEGER' | 'NUMERIC' | 'BLOB' {
  switch (sqlType) {
    case 'TEXT':
      return 'TEXT';
    case 'INTEGER':
      return 'INTEGER';
    case 'BOOLEAN':
    case 'DATE':
    case 'DATETIME':
    case 'NUMERIC':
      return 'NUMERIC';
  }
  return 'BLOB';
}

/** SQLite's affinity rules for a declared column type. */
export function affinityOf(declType: string): 'INTEGER' | 'TEXT' | 'BLOB' | 'REAL' | 'NUMERIC' {
  const t = declType.toUpperCase();
  if (t.includes('INT')) {
    return 'INTEGER';
  }
  if (t.includes('CHAR') || t.includes('CLOB') || t.includes('TEXT')) {
    return 'TEXT';
  }
  if (t.includes('BLOB') || t === '') {
    return 'BLOB';
  }
  if (t.includes('REAL') || t.includes('FLOA') || t.includes('DOUB')) {
    return 'REAL';
  }
  return 'NUMERIC';
}

/** What SQLite may read as the start of a number (its isspace includes form feed). */
const NUMBER_START = /[-+ \t\n\r\v\f0-9.]/;

/**
 * DocStorage._encodeValue for a column of SQL type `sqlType` declared `declType`: where the
 * declared affinity is BLOB, SQLite stores what it gets, so 32-bit integers are bound as BigInt
 * to land as INTEGER (better-sqlite3 binds every JS number as REAL), as Grist's node-sqlite3 does.
 */
function storageEncoder(sqlType: string, declType: string, listItem: 'string' | 'number' | null): Encoder {
  const affinity = gristAffinity(sqlType);
  const blobStorage = affinityOf(declType) === 'BLOB';
  const isBoolean = sqlType === 'BOOLEAN';
  return (v: CellValue): SqlValue => {
    if (v === null || v === undefined) {
      return null;
    }
    switch (typeof v) {
      case 'string':
        if (affinity === 'TEXT' || affinity === 'BLOB' || !NUMBER_START.test(v.charAt(0))) {
          return v;
        }
        return dumps(v);
      case 'number':
        if (affinity === 'TEXT' || Number.isNaN(v) || Object.is(v, -0) || (isBoolean && (v === 0 || v === 1))) {
          return dumps(v);
        }
        // node-sqlite3 binds a 32-bit integer as INTEGER and any other number as REAL.
        return blobStorage && Number.isInteger(v) && v >= -0x80000000 && v <= 0x7fffffff ? BigInt(v) : v;
      case 'boolean':
        if (!isBoolean) {
          return dumps(v);
        }
        return blobStorage ? (v ? 1n : 0n) : v ? 1 : 0;
    }
    if (listItem && Array.isArray(v) && v[0] === 'L' && v.slice(1).every((tok) => typeof tok === listItem)) {
      return JSON.stringify(v.slice(1));
    }
    return dumps(v);
  };
}

/** A stored value as it is, marshalled blobs unmarshalled. */
export function plainDecoder(raw: unknown): CellValue {
  return raw instanceof Uint8Array ? (loads(raw) as CellValue) : (raw as CellValue);
}

// ---------------------------------------------------------------------------------------------
// Conversion helpers (Python semantics of the data engine)

export const INT32_MIN = -0x80000000;
export const INT32_MAX = 0x7fffffff;

/** Python `float(x)` of a string (whitespace, underscores between digits, inf/nan allowed). */
export function pyFloatOfString(s: string): number | null {
  const t = s.trim();
  if (/^[-+]?(\d(_?\d)*)?(\.(\d(_?\d)*)?)?([eE][-+]?\d(_?\d)*)?$/.test(t) && /\d/.test(t.replace(/[eE].*$/, ''))) {
    return Number(t.replace(/_/g, ''));
  }
  const special = /^([-+]?)(inf|infinity|nan)$/i.exec(t);
  if (special) {
    if (special[2].toLowerCase() === 'nan') {
      return NaN;
    }
    return special[1] === '-' ? -Infinity : Infinity;
  }
  return null;
}

/** Python `float(x)`. */
export function pyFloat(v: CellValue): number {
  if (typeof v === 'number') {
    return v;
  }
  if (typeof v === 'boolean') {
    return v ? 1 : 0;
  }
  if (typeof v === 'string') {
    const n = pyFloatOfString(v);
    if (n !== null) {
      return n;
    }
  }
  throw new ConversionError();
}

/** Python truthiness of a decoded value. */
export function pyTruthy(v: CellValue): boolean {
  if (v === null || v === false || v === 0 || v === '') {
    return false;
  }
  if (Array.isArray(v) && v[0] === 'L') {
    return v.length > 1;
  }
  if (Array.isArray(v) && v[0] === 'O') {
    return Object.keys((v[1] ?? {}) as object).length > 0;
  }
  return true;
}

/** The items of a list (`['L', ...]`) or record set (`['r', table, ids]`), else null. */
export function listItems(v: CellValue): CellValue[] | null {
  if (Array.isArray(v) && v[0] === 'L') {
    return v.slice(1);
  }
  if (Array.isArray(v) && v[0] === 'r' && Array.isArray(v[2])) {
    return v[2] as CellValue[];
  }
  return null;
}

// ---------------------------------------------------------------------------------------------
// Display text of values of no particular type (formatUnknown / formatDecoded in Grist).

/** Grist's csvEncodeCell: quoted when holding a separator, a quote, or edge whitespace. */
function csvEncodeCell(value: string): string {
  return /[,\r\n"]|^\s|\s$/.test(value) ? '"' + value.replace(/"/g, '""') + '"' : value;
}

/** Grist's csvEncodeRow with `{prettier: true}`. */
export function csvEncodeRow(values: string[]): string {
  return values.map(csvEncodeCell).join(', ');
}

export function isNestedObject(v: CellValue): boolean {
  return Array.isArray(v) && (v[0] === 'L' || v[0] === 'O');
}

function isoDate(epochSec: number): string {
  const d = new Date(epochSec * 1000);
  return Number.isNaN(d.getTime()) ? 'Invalid Date' : d.toISOString().slice(0, 10);
}

function isoDateTime(epochSec: number): string {
  const d = new Date(epochSec * 1000);
  return Number.isNaN(d.getTime()) ? 'Invalid Date' : d.toISOString();
}

/** RaisedException.toString(): Excel-like for division by zero, else `#ExcName`. */
function formatError(args: CellValue[]): string {
  const [name, message, details] = args;
  switch (name) {
    case 'ZeroDivisionError':
      return '#DIV/0!';
    case 'UnmarshallableError':
      return details ? String(details) : '#' + String(name);
    case 'InvalidTypedValue':
      return `#Invalid ${String(message)}: ${String(details)}`;
  }
  return '#' + String(name);
}

/** The text of a Grist-encoded value as Grist shows it (formatDecoded of decodeObject). */
export function formatUnknown(value: CellValue, isTopLevel = true): string {
  if (value === null || value === undefined) {
    return isTopLevel ? '' : 'null';
  }
  if (!Array.isArray(value)) {
    if (typeof value === 'object') {
      return isTopLevel ? '[object Object]' : JSON.stringify(value);
    }
    return isTopLevel ? String(value) : (JSON.stringify(value) ?? 'null');
  }
  const [code, ...args] = value;
  switch (code) {
    case 'L':
      if (!isTopLevel || args.some(isNestedObject)) {
        return '[' + args.map((v) => formatUnknown(v, false)).join(', ') + ']';
      }
      return csvEncodeRow(args.map((v) => formatUnknown(v, true)));
    case 'O': {
      const obj = (args[0] && typeof args[0] === 'object' && !Array.isArray(args[0]) ? args[0] : {}) as Record<
        string,
        CellValue
      >;
      const items = Object.keys(obj)
        .sort()
        .map((k) => `${JSON.stringify(k)}: ${formatUnknown(obj[k], false)}`);
      return '{' + items.join(', ') + '}';
    }
    case 'D':
      return isTopLevel
        ? formatMoment(Number(args[0]) * 1000, String(args[1]), 'YYYY-MM-DD HH:mm:ssZ')
        : isoDateTime(Number(args[0]));
    case 'd':
      return isoDate(Number(args[0]));
    case 'E':
      return args.length ? formatError(args) : 'E()';
    case 'R':
      return `${String(args[0])}[${String(args[1])}]`;
    case 'r':
      return `${String(args[0])}[[${Array.isArray(args[1]) ? args[1].join(',') : String(args[1])}]]`;
    case 'P':
      return 'Loading...';
    case 'S':
      return '...';
    case 'C':
      return 'CENSORED';
    case 'U':
      return String(args[0]);
  }
  return `${String(code)}(${JSON.stringify(args).slice(1, -1)})`;
}
