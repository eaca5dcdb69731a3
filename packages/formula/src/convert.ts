/**
 * Between the engine's Python values and Grist's cell encoding (cells/types.ts `CellValue`):
 * decoding a stored cell for a formula to read (per column type), and converting a formula's
 * result to its column type as Grist's usertypes do (never throwing: what does not convert is kept
 * as alt text, which raises InvalidTypedValue when another formula reads it).
 */
import {type CellValue, baseType, columnType, converterFor, setOwnKey} from './cells/types.js';
import {PyDict, PyException, type PyObject, PySet, PyTuple, type Value, repr, str, strRepr} from './values.js';
import {ExcObject} from './ops.js';
import {Record, type RecordHost, RecordSet, type Via} from './records.js';
import {IanaTz, PyDate, PyDateTime, dateToCell, datetimeToCell} from './datetime.js';
import {BoundedMap} from './memo.js';
import {currentBudget} from './budget.js';

/** Hooks for date values (provided by the function library's datetime classes). */
export interface DateHooks {
  /** A `datetime.date` for a Date cell (seconds since epoch, midnight UTC). */
  date?(ts: number): Value;
  /** A tz-aware `datetime.datetime` for a DateTime cell. */
  datetime?(ts: number, tz: string): Value;
}

/**
 * Objects that know their own cell encoding implement this (dates, datetimes: ['d', ts],
 * ['D', ts, tz]). `colType` is the target column type (e.g. naive datetimes take its zone).
 */
export interface CellEncodable {
  toCellValue(colType: string): CellValue;
}

const INT32_MIN = -(2n ** 31n),
  INT32_MAX = 2n ** 31n - 1n;

/** Deepest nesting a stored value may have (Python's marshal allows 2000): RecursionError beyond. */
const MAX_ENCODE_DEPTH = 1000;

/**
 * What encoding `v` would write, in items and characters, counted before anything is built: a list
 * holding one list 10^4 times is small in memory but 10^8 items once encoded (shared parts count
 * each time they are written). MemoryError past `max`, RecursionError past MAX_ENCODE_DEPTH.
 */
function checkEncodedSize(v: Value, max: number): void {
  let size = 0;
  const visit = (x: Value, depth: number): void => {
    if (typeof x === 'string') size += x.length;
    else if (x === null || typeof x !== 'object') size += 1;
    else {
      if (depth >= MAX_ENCODE_DEPTH) {
        throw new PyException('RecursionError', 'maximum recursion depth exceeded while encoding a value');
      }
      const items = Array.isArray(x)
        ? x
        : x instanceof PyTuple
          ? x.items
          : x instanceof PyDict
            ? x.values()
            : x instanceof RecordSet
              ? x.rowIds
              : null;
      size += 1;
      if (items) {
        size += items.length;
        if (size > max) throw tooLarge(max);
        for (const item of items)
          if (item !== null && typeof item === 'object') visit(item as Value, depth + 1);
          else if (typeof item === 'string') size += item.length;
      }
    }
    if (size > max) throw tooLarge(max);
  };
  visit(v, 0);
}

function tooLarge(max: number): PyException {
  return new PyException('MemoryError', `result too large (more than ${max} items)`);
}

/** Grist's encode_object: a Python value in the cell encoding (Any columns, lists' items). */
export function encodeObject(v: Value, colType = 'Any'): CellValue {
  if (v !== null && typeof v === 'object') checkEncodedSize(v, currentBudget.settings.maxSize);
  return encodeChecked(v, colType);
}

function encodeChecked(v: Value, colType: string): CellValue {
  if (v === null || typeof v === 'boolean' || typeof v === 'string' || typeof v === 'number') return v;
  if (typeof v === 'bigint') return v >= INT32_MIN && v <= INT32_MAX ? Number(v) : ['U', v.toString()];
  if (Array.isArray(v)) return encodeItems(v);
  if (v instanceof PyTuple) return encodeItems(v.items);
  if (v instanceof Record) return ['R', v.tableId, v.rowId];
  if (v instanceof RecordSet) return ['r', v.tableId, v.rowIds.slice()];
  if (v instanceof PyDict) {
    const entries = [...v.entries()];
    if (!entries.every(([k]) => typeof k === 'string')) return ['U', repr(v)];
    // Grist stores dicts with their keys sorted (as RECORD(rec) cells in real documents show).
    entries.sort(([a], [b]) => ((a as string) < (b as string) ? -1 : (a as string) > (b as string) ? 1 : 0));
    const o: {[k: string]: CellValue} = {};
    for (const [k, x] of entries) setOwnKey(o, k as string, encodeChecked(x, 'Any'));
    return ['O', o];
  }
  if (v instanceof AltText) return v.text;
  if (v instanceof PySet || v instanceof ExcObject) return ['U', repr(v)];
  if (v instanceof PyDate) {
    // Grist: a date/datetime in a DateTime column is read in the column's zone (naive ones too);
    // in Any columns an aware datetime keeps its zone, a naive one is UTC.
    const ct = columnType(colType);
    if (ct.base === 'DateTime') return datetimeToCell(v, ct.tz!);
    if (ct.base === 'Date') return dateToCell(v);
    if (v instanceof PyDateTime) {
      const tz = v.tzinfo;
      return ['D', datetimeToCell(v, 'UTC'), tz instanceof IanaTz ? tz.name : 'UTC'];
    }
    return ['d', dateToCell(v)];
  }
  const enc = v as PyObject & Partial<CellEncodable>;
  if (typeof enc.toCellValue === 'function') return enc.toCellValue(colType);
  return ['U', repr(v)];
}

function encodeItems(list: readonly Value[]): CellValue {
  const out: CellValue[] = new Array(list.length + 1);
  out[0] = 'L';
  for (let i = 0; i < list.length; i++) out[i + 1] = encodeChecked(list[i], 'Any');
  return out;
}

const converters = new BoundedMap<string, (v: CellValue) => CellValue>(1000);
const floatConverters = new BoundedMap<string, (v: CellValue) => CellValue>(1000);

/**
 * Converts a formula result to its column's type, as Grist stores it: through the type module's
 * conversion (cells/coltypes/), after the Python-specific steps (ints beyond 32 bits, str() of
 * objects for Text, dates in the column's zone).
 */
export function convertResult(v: Value, colType: string): CellValue {
  const cell = convertUncounted(v, colType);
  // Every result stays in memory until the write ends: the update's total is bounded too.
  currentBudget.chargeStored(storedSize(cell));
  return cell;
}

/** Characters and items of a cell, as `maxRecalcSize` counts them. */
function storedSize(cell: CellValue): number {
  if (typeof cell === 'string') return cell.length;
  if (!Array.isArray(cell)) return 1;
  let n = cell.length;
  for (const x of cell) if (typeof x === 'string' || Array.isArray(x)) n += storedSize(x as CellValue);
  return n;
}

function convertUncounted(v: Value, colType: string): CellValue {
  // Fast paths for right-typed results.
  if (typeof v === 'number' && colType === 'Numeric') return v;
  if (typeof v === 'string' && (colType === 'Text' || colType === 'Any')) return v;
  const base = baseType(colType);
  if (base === 'Any') return encodeObject(v, colType);
  let cell: CellValue;
  if (typeof v === 'bigint') {
    if (base === 'Text' || base === 'Choice') return v.toString();
    cell = Number(v);
  } else {
    cell = encodeObject(v, colType);
  }
  const isFloat = typeof v === 'number';
  const cache = isFloat ? floatConverters : converters;
  let conv = cache.get(colType);
  if (!conv) {
    conv = converterFor(colType, {sourceIsFloat: isFloat, sourceIsTuple: false});
    cache.set(colType, conv);
  }
  if (
    (base === 'Text' || base === 'Choice') &&
    !(typeof cell === 'string' || typeof cell === 'number' || typeof cell === 'boolean' || cell === null)
  ) {
    // Grist's Text keeps str(value) of anything else.
    return str(v);
  }
  if (Array.isArray(cell) && cell[0] === 'U') return str(v);
  const out = conv(cell);
  if (Array.isArray(cell) && out === cell) return str(v);
  return out;
}

/**
 * Default CellValue of a column type (what an empty formula gives): the type module's default,
 * except that the position types give 0 here where the data engine's default is infinity.
 */
export function defaultCell(colType: string): CellValue {
  const ct = columnType(colType);
  return ct.base === 'ManualSortPos' || ct.base === 'PositionNumber' ? 0 : ct.defaultValue;
}

/** Grist's InvalidTypedValue: alt text used where a typed value was needed ("Invalid Ref: hello"). */
export class InvalidTypedValue extends PyException {
  constructor(
    readonly typename: string,
    readonly value: string,
  ) {
    super('InvalidTypedValue', `Invalid ${typename}: ${value}`);
  }
}

/**
 * Grist's AltText: a stored value of the wrong type for its column (text in a Numeric column, an
 * unknown reference "hello"). Formulas may pass it on or print it; attributes raise
 * InvalidTypedValue, arithmetic raises TypeError; it is stored back as its text.
 */
export class AltText implements PyObject {
  readonly pyType = 'AltText';
  constructor(
    readonly text: string,
    readonly typename: string,
  ) {}
  str(): string {
    return this.text;
  }
  repr(): string {
    return `AltText(${strRepr(this.text)})`;
  }
  eq(o: Value): boolean {
    return o instanceof AltText && o.text === this.text;
  }
  hashKey(): string {
    return `A:${this.text}`;
  }
  getattr(_name: string): Value {
    throw new InvalidTypedValue(this.typename, this.text);
  }
  toFloat(): number {
    const f = Number(this.text.trim());
    if (this.text.trim() === '' || Number.isNaN(f))
      throw new PyException('ValueError', `could not convert string to float: ${strRepr(this.text)}`);
    return f;
  }
  toInt(): bigint {
    return BigInt(Math.trunc(this.toFloat()));
  }
  toCellValue(): CellValue {
    return this.text;
  }
}

/** The error a stored error cell re-raises (`message` when the engine knows it). */
export function raiseStoredError(v: CellValue[], message?: string): never {
  const type = typeof v[1] === 'string' ? v[1] : 'Exception';
  if (type === 'InvalidTypedValue' && typeof v[2] === 'string' && v.length >= 4)
    throw new InvalidTypedValue(v[2], str(v[3] as Value));
  throw new PyException(type, message ?? (typeof v[2] === 'string' ? v[2] : ''));
}

/** Python's str() of a stored value of the wrong type, for AltText. */
function altTextOf(v: CellValue): string {
  if (typeof v === 'string') return v;
  try {
    return str(decodeObject(v, NO_HOST, {}));
  } catch {
    return JSON.stringify(v);
  }
}

const NO_HOST = {
  readCell: () => null,
  hasColumn: () => false,
  lookup: () => ({rows: []}),
  allRows: () => ({rows: []}),
  summaryGroup: () => null,
  rowExists: () => false,
} as RecordHost;

/** `via`: for Ref/RefList cells, the route the records were reached by (see engine.ts RefVia). */
export type CellDecoder = (v: CellValue, via?: Via) => Value;

/**
 * How a column's stored cells read in formulas. Formula-specific (Python values: records, tuples,
 * dates, AltText), so it stays here rather than in the type modules (cells/coltypes/); the type
 * string is parsed by them (zone, target table).
 */
export function makeCellDecoder(colType: string, host: RecordHost, hooks: DateHooks): CellDecoder {
  const ct = columnType(colType);
  const base = ct.base;
  const generic = (v: CellValue): Value => decodeObject(v, host, hooks);
  const special = (v: CellValue): Value => {
    if (Array.isArray(v) && v[0] === 'E') raiseStoredError(v);
    return new AltText(altTextOf(v), base);
  };
  switch (base) {
    case 'Int':
    case 'Id':
      return (v) => {
        if (typeof v === 'number' && Number.isInteger(v)) return BigInt(v);
        if (v === null) return null;
        if (typeof v === 'boolean') return v;
        return special(v);
      };
    case 'Numeric':
    case 'ManualSortPos':
    case 'PositionNumber':
      return (v) => (typeof v === 'number' ? v : v === null ? null : special(v));
    case 'Text':
    case 'Choice':
      return (v) =>
        typeof v === 'string' || v === null
          ? v
          : Array.isArray(v)
            ? v[0] === 'E'
              ? special(v)
              : generic(v)
            : (v as Value);
    case 'Bool':
      return (v) =>
        typeof v === 'boolean' || v === null ? v : typeof v === 'number' && (v === 0 || v === 1) ? v === 1 : special(v);
    case 'Date':
      return (v) => (typeof v === 'number' ? (hooks.date ? hooks.date(v) : v) : v === null ? null : special(v));
    case 'DateTime': {
      const tz = ct.tz!;
      return (v) =>
        typeof v === 'number' ? (hooks.datetime ? hooks.datetime(v, tz) : v) : v === null ? null : special(v);
    }
    case 'Ref': {
      const target = ct.target!;
      return (v, via) =>
        typeof v === 'number'
          ? new Record(host, target, v, undefined, via)
          : v === null
            ? new Record(host, target, 0, undefined, via)
            : special(v);
    }
    case 'RefList':
    case 'Attachments': {
      const target = ct.target!;
      return (v, via) => {
        if (v === null) return new RecordSet(host, target, [], undefined, undefined, via);
        if (Array.isArray(v) && v[0] === 'L' && v.slice(1).every((x) => typeof x === 'number')) {
          return new RecordSet(host, target, v.slice(1) as number[], undefined, undefined, via);
        }
        return special(v);
      };
    }
    case 'ChoiceList':
      return (v) => {
        // Grist's ChoiceListColumn presents an empty cell (None) to formulas as the empty tuple.
        if (v === null) return new PyTuple([]);
        if (Array.isArray(v) && v[0] === 'L') return new PyTuple(v.slice(1).map(generic));
        return special(v);
      };
    default:
      return generic;
  }
}

/**
 * Grist's decode_object for Any cells. A number is an int only within 32 bits: Grist hands cells
 * to Python through its JS marshaller, which writes an int for a 32-bit integer and a float for
 * every other number, whatever SQLite's storage class was (REAL 5.0 reads as 5, 2**40 as 1099511627776.0).
 */
export function decodeObject(v: CellValue, host: RecordHost, hooks: DateHooks): Value {
  if (v === null || typeof v !== 'object') {
    if (typeof v === 'number' && (v | 0) === v && !Object.is(v, -0)) return BigInt(v);
    return v as Value;
  }
  if (!Array.isArray(v)) return null;
  switch (v[0]) {
    case 'L':
      return v.slice(1).map((x) => decodeObject(x, host, hooks));
    case 'O': {
      const d = new PyDict();
      for (const [k, x] of Object.entries((v[1] ?? {}) as {[k: string]: CellValue}))
        d.set(k, decodeObject(x, host, hooks));
      return d;
    }
    case 'R':
      return new Record(host, String(v[1]), Number(v[2]));
    case 'r':
      return new RecordSet(host, String(v[1]), (v[2] as number[]) ?? []);
    case 'd':
      return hooks.date ? hooks.date(Number(v[1])) : Number(v[1]);
    case 'D':
      return hooks.datetime ? hooks.datetime(Number(v[1]), String(v[2] ?? 'UTC')) : Number(v[1]);
    case 'E':
      return raiseStoredError(v);
    case 'U':
      return String(v[1]);
    case 'P':
      throw new PyException('InvalidTypedValue', 'Pending value');
  }
  return null;
}

/**
 * Error cell for an exception, as Grist stores it (RaisedException.encode_args): ['E', type];
 * InvalidTypedValue keeps its type name and text: ['E', 'InvalidTypedValue', 'Ref', 'hello'];
 * a trigger formula's error keeps the message and the previous value: ['E', type, message, null, {u: previous}].
 */
export function errorCell(e: PyException, previous?: CellValue): CellValue {
  const out: CellValue[] = ['E', e.type];
  if (e instanceof InvalidTypedValue) out.push(e.typename, e.value);
  else if (previous !== undefined) out.push(e.message, null);
  if (previous !== undefined) out.push({u: previous});
  return out;
}

/** Whether two cells are the same stored value (int 1 and float 1.0 count as equal, as Grist's encoding does). */
export function sameCell(a: CellValue, b: CellValue): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) {
    return typeof a === 'number' && typeof b === 'number' && Number.isNaN(a) && Number.isNaN(b);
  }
  return JSON.stringify(a) === JSON.stringify(b);
}

export {str};
