/**
 * Grist column types: defaults, SQLite storage (encode/decode, as Grist's DocStorage does it), and
 * the data engine's conversion of incoming values to a column's type (usertypes.py), which applies
 * whether or not string parsing is on.
 */
import {dateTimeZone, parseIsoDate, parseIsoDateTime} from './datetime.js';
import {dumps, loads} from './marshal.js';
import {formatG15, pyNumberStr, pyStr} from './pyformat.js';

/** A cell value in Grist's API encoding: primitives, or `[code, ...args]` arrays. */
export type CellValue = null | boolean | number | string | CellValue[] | {[key: string]: CellValue};
export type SqlValue = null | number | bigint | string | Buffer;

export function baseType(type: string): string {
  const i = type.indexOf(':');
  return i < 0 ? type : type.slice(0, i);
}

/** Target table of `Ref:T` / `RefList:T` (and `_grist_Attachments` for Attachments), else null. */
export function refTarget(type: string): string | null {
  if (type === 'Attachments') { return '_grist_Attachments'; }
  if (type.startsWith('Ref:')) { return type.slice(4); }
  if (type.startsWith('RefList:')) { return type.slice(8); }
  return null;
}

export function isRefListType(type: string): boolean {
  return type === 'Attachments' || type.startsWith('RefList:');
}

export function isListType(type: string): boolean {
  return type === 'ChoiceList' || isRefListType(type);
}

/** DocStorage._getSqlType: the declared SQL type Grist uses for a Grist type. */
export function sqlTypeFor(type: string): string {
  switch (type) {
    case 'Bool': return 'BOOLEAN';
    case 'Choice': case 'Text': case 'ChoiceList': case 'RefList': case 'ReferenceList':
    case 'Attachments': return 'TEXT';
    case 'Date': return 'DATE';
    case 'DateTime': return 'DATETIME';   // Not 'DateTime:<tz>', which falls through to BLOB.
    case 'Int': case 'Id': case 'Ref': case 'Reference': return 'INTEGER';
    case 'Numeric': case 'ManualSortPos': case 'PositionNumber': return 'NUMERIC';
  }
  if (type.startsWith('Ref:')) { return 'INTEGER'; }
  if (type.startsWith('RefList:')) { return 'TEXT'; }
  return 'BLOB';
}

/** SQL DEFAULT of each Grist type (gristTypes.getDefaultForType with sqlFormatted). */
const SQL_DEFAULTS: Record<string, string> = {
  Any: 'NULL', Attachments: 'NULL', Blob: 'NULL', Bool: '0', Choice: "''", ChoiceList: 'NULL',
  Date: 'NULL', DateTime: 'NULL', Id: '0', Int: '0', ManualSortPos: '1e999', Numeric: '0',
  PositionNumber: '1e999', Ref: '0', RefList: 'NULL', Text: "''",
};

export function sqlDefaultFor(type: string): string {
  return SQL_DEFAULTS[baseType(type)] ?? 'NULL';
}

/** SQLite's affinity rules for a declared column type. */
export function affinityOf(declType: string): 'INTEGER' | 'TEXT' | 'BLOB' | 'REAL' | 'NUMERIC' {
  const t = declType.toUpperCase();
  if (t.includes('INT')) { return 'INTEGER'; }
  if (t.includes('CHAR') || t.includes('CLOB') || t.includes('TEXT')) { return 'TEXT'; }
  if (t.includes('BLOB') || t === '') { return 'BLOB'; }
  if (t.includes('REAL') || t.includes('FLOA') || t.includes('DOUB')) { return 'REAL'; }
  return 'NUMERIC';
}

/** DocStorage._getAffinity, applied to the SQL type Grist derives from the Grist type. */
function gristAffinity(sqlType: string): 'TEXT' | 'INTEGER' | 'NUMERIC' | 'BLOB' {
  switch (sqlType) {
    case 'TEXT': return 'TEXT';
    case 'INTEGER': return 'INTEGER';
    case 'BOOLEAN': case 'DATE': case 'DATETIME': case 'NUMERIC': return 'NUMERIC';
  }
  return 'BLOB';
}

/** What SQLite may read as the start of a number (its isspace includes form feed). */
const NUMBER_START = /[-+ \t\n\r\v\f0-9.]/;

export type Encoder = (v: CellValue) => SqlValue;
export type Decoder = (raw: unknown) => CellValue;

/**
 * DocStorage._encodeValue for one column. `declType` is the column's declared SQL type: where its
 * affinity is BLOB, SQLite stores what it gets, so 32-bit integers are bound as BigInt to land as
 * INTEGER (better-sqlite3 binds every JS number as REAL), as Grist's node-sqlite3 does.
 */
export function makeEncoder(type: string, declType: string): Encoder {
  const sqlType = sqlTypeFor(type);
  const affinity = gristAffinity(sqlType);
  const blobStorage = affinityOf(declType) === 'BLOB';
  const isChoiceList = type === 'ChoiceList';
  const isRefList = isRefListType(type);
  const isBoolean = sqlType === 'BOOLEAN';
  return (v: CellValue): SqlValue => {
    if (v === null || v === undefined) { return null; }
    switch (typeof v) {
      case 'string':
        if (affinity === 'TEXT' || affinity === 'BLOB' || !NUMBER_START.test(v.charAt(0))) { return v; }
        return dumps(v);
      case 'number':
        if (affinity === 'TEXT' || Number.isNaN(v) || Object.is(v, -0) || (isBoolean && (v === 0 || v === 1))) {
          return dumps(v);
        }
        // node-sqlite3 binds a 32-bit integer as INTEGER and any other number as REAL.
        return blobStorage && Number.isInteger(v) && v >= -0x80000000 && v <= 0x7fffffff ? BigInt(v) : v;
      case 'boolean':
        if (!isBoolean) { return dumps(v); }
        return blobStorage ? (v ? 1n : 0n) : (v ? 1 : 0);
    }
    if (Array.isArray(v) && v[0] === 'L') {
      if (isChoiceList && v.every((tok) => typeof tok === 'string')) { return JSON.stringify(v.slice(1)); }
      if (isRefList && v.slice(1).every((tok) => typeof tok === 'number')) { return JSON.stringify(v.slice(1)); }
    }
    return dumps(v);
  };
}

function unmarshal(raw: Uint8Array): CellValue {
  return loads(raw) as CellValue;
}

/** DocStorage._decodeValue for one column. */
export function makeDecoder(type: string): Decoder {
  if (type === 'Bool') {
    return (raw) => {
      const v = raw instanceof Uint8Array ? unmarshal(raw) : raw as CellValue;
      return v === 0 ? false : v === 1 ? true : v;
    };
  }
  if (isListType(type)) {
    // Only what the encoder writes as JSON reads back as a list: strings for ChoiceList, numbers
    // for RefList/Attachments. Other text (alt-text that happens to look like JSON) stays text.
    const itemType = type === 'ChoiceList' ? 'string' : 'number';
    return (raw) => {
      const v = raw instanceof Uint8Array ? unmarshal(raw) : raw as CellValue;
      if (typeof v === 'string' && v.startsWith('[')) {
        try {
          const items = JSON.parse(v);
          if (Array.isArray(items) && items.every((x) => typeof x === itemType)) { return ['L', ...items]; }
        } catch {
          // Not JSON: alt-text.
        }
      }
      return v;
    };
  }
  return (raw) => (raw instanceof Uint8Array ? unmarshal(raw) : raw as CellValue);
}

/** An error cell, `["E", "ExcName", ...]`. */
function isErrorValue(v: CellValue): v is CellValue[] {
  return Array.isArray(v) && v[0] === 'E';
}

/**
 * The `cellFormat=typed` form of a value: self-describing for the column's type.
 */
export function makeTypedFormatter(type: string): ((v: CellValue) => CellValue) | null {
  const base = baseType(type);
  if (base === 'Date') { return (v) => (typeof v === 'number' ? ['d', v] : v); }
  if (base === 'DateTime') {
    const tz = dateTimeZone(type);
    return (v) => (typeof v === 'number' ? ['D', v, tz] : v);
  }
  if (base === 'Ref') {
    const table = refTarget(type)!;
    return (v) => (typeof v === 'number' ? ['R', table, v] : v);
  }
  if (isRefListType(type)) {
    const table = refTarget(type)!;
    return (v) => {
      if (v === null) { return ['r', table, []]; }
      if (Array.isArray(v) && v[0] === 'L') { return ['r', table, v.slice(1)]; }
      return v;
    };
  }
  if (type === 'ChoiceList') { return (v) => (v === null ? ['L'] : v); }
  return null;
}

// ---------------------------------------------------------------------------------------------
// The data engine's conversion of values to a column type (usertypes.py `convert`).

/** A value that failed conversion: the engine keeps `str(value)` as alt-text. */
class ConversionError extends Error {}

export interface ConvertOptions {
  /** Values held as floats by the engine (from Numeric/Date/DateTime columns): affects str(). */
  sourceIsFloat?: boolean;
  /** Values that are tuples in the engine (ChoiceList cells): affects str(). */
  sourceIsTuple?: boolean;
}

type Converter = (v: CellValue) => CellValue;

const INT32_MIN = -0x80000000;
const INT32_MAX = 0x7fffffff;

/** Python `float(x)` of a string (whitespace, underscores between digits, inf/nan allowed). */
export function pyFloatOfString(s: string): number | null {
  const t = s.trim();
  if (/^[-+]?(\d(_?\d)*)?(\.(\d(_?\d)*)?)?([eE][-+]?\d(_?\d)*)?$/.test(t) && /\d/.test(t.replace(/[eE].*$/, ''))) {
    return Number(t.replace(/_/g, ''));
  }
  const special = /^([-+]?)(inf|infinity|nan)$/i.exec(t);
  if (special) {
    if (special[2].toLowerCase() === 'nan') { return NaN; }
    return special[1] === '-' ? -Infinity : Infinity;
  }
  return null;
}

function pyFloat(v: CellValue): number {
  if (typeof v === 'number') { return v; }
  if (typeof v === 'boolean') { return v ? 1 : 0; }
  if (typeof v === 'string') {
    const n = pyFloatOfString(v);
    if (n !== null) { return n; }
  }
  throw new ConversionError();
}

/** Python truthiness of a decoded value. */
function pyTruthy(v: CellValue): boolean {
  if (v === null || v === false || v === 0 || v === '') { return false; }
  if (Array.isArray(v) && v[0] === 'L') { return v.length > 1; }
  if (Array.isArray(v) && v[0] === 'O') { return Object.keys((v[1] ?? {}) as object).length > 0; }
  return true;
}

/** Python `int(x)` for an Id/Ref (no conversion through float: only ints and records). */
function toId(v: CellValue): number {
  if (!pyTruthy(v)) { return 0; }
  if (typeof v === 'boolean') { return 1; }
  if (typeof v === 'number' && Number.isInteger(v)) {
    if (v < INT32_MIN || v > INT32_MAX) { throw new ConversionError(); }
    return v;
  }
  if (Array.isArray(v) && v[0] === 'R' && typeof v[2] === 'number') { return v[2]; }
  throw new ConversionError();
}

function listItems(v: CellValue): CellValue[] | null {
  if (Array.isArray(v) && v[0] === 'L') { return v.slice(1); }
  if (Array.isArray(v) && v[0] === 'r' && Array.isArray(v[2])) { return v[2] as CellValue[]; }
  return null;
}

function makeConverter(type: string, sourceIsFloat: boolean): Converter {
  const base = baseType(type);
  switch (base) {
    case 'Text': case 'Choice':
      return (v) => {
        if (v === null || typeof v === 'string') { return v; }
        if (typeof v === 'number') {
          // Python ints (integral JSON numbers) print in full; floats as integers when they are
          // exactly so below 2**53, else with "%.15g".
          const limit = sourceIsFloat ? 2 ** 53 : 1e21;
          if (Number.isInteger(v) && Math.abs(v) < limit) { return pyNumberStr(v); }
          return formatG15(v);
        }
        if (typeof v === 'boolean') { return v ? 'True' : 'False'; }
        throw new ConversionError();
      };
    case 'Numeric':
      return (v) => (v === '' || v === null ? null : pyFloat(v));
    case 'Int':
      return (v) => {
        if (v === '' || v === null) { return null; }
        const f = pyFloat(v);
        if (!Number.isFinite(f)) { throw new ConversionError(); }
        const i = Math.trunc(f);
        if (i < INT32_MIN || i > INT32_MAX) { throw new ConversionError(); }
        return i === 0 ? 0 : i;   // no -0
      };
    case 'Bool':
      return (v) => {
        if (!pyTruthy(v)) { return false; }
        if (typeof v === 'number' || typeof v === 'boolean') { return true; }
        if (typeof v === 'string') {
          const lower = v.toLowerCase();
          if (lower === 'false' || lower === 'no' || lower === '0') { return false; }
          if (lower === 'true' || lower === 'yes' || lower === '1') { return true; }
        }
        throw new ConversionError();
      };
    case 'Date':
      return dateConverter(parseIsoDate);
    case 'DateTime': {
      const tz = dateTimeZone(type);
      return dateConverter((text) => parseIsoDateTime(text, tz));
    }
    case 'ChoiceList':
      return (v) => {
        if (!pyTruthy(v)) { return null; }
        if (typeof v === 'string') {
          if (v.startsWith('[')) {
            try {
              const parsed = JSON.parse(v);
              if (Array.isArray(parsed)) { return ['L', ...parsed.map((item: CellValue) => pyStr(item))]; }
            } catch {
              // Not JSON: kept as the string itself.
            }
          }
          return v;
        }
        const items = listItems(v);
        if (items) { return ['L', ...items.map((item) => pyStr(item))]; }
        throw new ConversionError();
      };
    case 'Ref':
      return (v) => {
        // A list stands for its first element (verified against the data engine, SPEC 7.4).
        const items = listItems(v);
        return toId(items ? (items[0] ?? null) : v);
      };
    case 'RefList': case 'Attachments':
      return (v) => {
        let value = v;
        if (typeof value === 'string' && value.startsWith('[')) {
          try {
            const parsed = JSON.parse(value);
            value = Array.isArray(parsed) ? ['L', ...parsed] : parsed;
          } catch {
            // Falls through to a failed conversion below.
          }
        }
        if (!pyTruthy(value)) { return null; }
        const items = listItems(value);
        if (!items) { throw new ConversionError(); }
        return items.length ? ['L', ...items.map(toId)] : null;
      };
    case 'ManualSortPos': case 'PositionNumber':
      return (v) => (v === '' || v === null ? Infinity : pyFloat(v));
    case 'Id':
      return toId;
    default:   // Any, Blob and unknown types keep values as they are.
      return (v) => v;
  }
}

const converterCache = new Map<string, Converter>();

/** Date and DateTime: numbers and encoded dates as they are, ISO text parsed, "" and null empty. */
function dateConverter(parseText: (text: string) => number | null): (v: CellValue) => CellValue {
  return (v) => {
    if (v === '' || v === null) { return null; }
    if (typeof v === 'number') { return v; }
    if (typeof v === 'boolean') { return v ? 1 : 0; }
    if (Array.isArray(v) && (v[0] === 'd' || v[0] === 'D') && typeof v[1] === 'number') { return v[1]; }
    if (typeof v === 'string') {
      const ts = parseText(v);
      if (ts !== null) { return ts; }
    }
    throw new ConversionError();
  };
}

/**
 * The converter of a column type, as the data engine converts values: a right-typed value, or
 * the alt-text `str(value)` when conversion fails. Errors (`["E", ...]`) are kept as they are.
 */
export function converterFor(type: string, opts: ConvertOptions = {}): (v: CellValue) => CellValue {
  const key = opts.sourceIsFloat ? `${type}|float` : type;
  let conv = converterCache.get(key);
  if (!conv) {
    conv = makeConverter(type, Boolean(opts.sourceIsFloat));
    converterCache.set(key, conv);
  }
  const strOpts = {isFloat: opts.sourceIsFloat, tuples: opts.sourceIsTuple};
  const c = conv;
  return (v) => {
    if (isErrorValue(v)) { return v; }
    try {
      return c(v);
    } catch (e) {
      if (!(e instanceof ConversionError)) { throw e; }
      return pyStr(v, strOpts);
    }
  };
}

export function convertValue(type: string, v: CellValue, opts: ConvertOptions = {}): CellValue {
  return converterFor(type, opts)(v);
}

/** Whether the engine holds this type's values as floats (affects str() of alt-text). */
export function holdsFloats(type: string): boolean {
  return ['Numeric', 'Date', 'DateTime', 'ManualSortPos', 'PositionNumber'].includes(baseType(type));
}

/** The engine's `Numeric.is_right_type(Numeric.convert(v))`, used to guess column types. */
export function convertsToNumeric(v: CellValue): boolean {
  const c = convertValue('Numeric', v);
  return c === null || typeof c === 'number';
}
