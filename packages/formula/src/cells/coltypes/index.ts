/**
 * The registry of column types: `columnType("Ref:People")` gives the module that stores,
 * converts, parses and formats cells of that type (one file per type family, all implementing
 * `ColumnType` from base.ts), and the helpers every caller shares on top of it.
 */
import {BadRequest} from '../../errors.js';
import {pyStr} from '../pyformat.js';
import type {CellValue} from '../cell-value.js';
import {AnyType, BlobType} from './any.js';
import {AttachmentsType} from './attachments.js';
import {baseOf, type ColumnType, ConversionError, type Converter} from './base.js';
import {BoolType} from './bool.js';
import {ChoiceListType, ChoiceType} from './choice.js';
import {DateType} from './date.js';
import {DateTimeType} from './datetime.js';
import {IntType, NumericType, PositionType} from './numeric.js';
import {IdType, RefListType, RefType} from './ref.js';
import {TextType} from './text.js';

export {
  affinityOf,
  baseOf,
  type CellFormatter,
  type ColumnType,
  type Converter,
  csvEncodeRow,
  type Decoder,
  type Encoder,
  formatUnknown,
  type ParseContext,
  pyFloatOfString,
  type SchemaType,
  type TextParser,
  type TypedForm,
  type WidgetOptions,
} from './base.js';

/** Each base type name's module; names not listed (and Any) keep values as they are. */
const FAMILIES = new Map<string, new (type: string) => ColumnType>([
  ['Any', AnyType],
  ['Blob', BlobType],
  ['Text', TextType],
  ['Numeric', NumericType],
  ['Int', IntType],
  ['ManualSortPos', PositionType],
  ['PositionNumber', PositionType],
  ['Bool', BoolType],
  ['Date', DateType],
  ['DateTime', DateTimeType],
  ['Choice', ChoiceType],
  ['ChoiceList', ChoiceListType],
  ['Ref', RefType],
  ['RefList', RefListType],
  ['Id', IdType],
  ['Attachments', AttachmentsType],
]);

/**
 * Type names Grist's data engine knows (its `usertypes` classes; `Reference`/`ReferenceList` are the
 * old spellings of Ref/RefList). Grist turns a column's type into Python code naming one of them,
 * so any other name fails the whole action there.
 */
const GRIST_TYPE_NAMES = new Set([...FAMILIES.keys(), 'Reference', 'ReferenceList']);

/**
 * Refuses a type a write would give a column when Grist could not run it (decision D42): an
 * unknown name, or Ref/RefList without a table. Types already in a document are never checked.
 */
export function checkColumnType(type: string): void {
  const base = baseOf(type);
  if (!GRIST_TYPE_NAMES.has(base)) {
    throw new BadRequest(`Invalid column type "${type}": not a Grist type`);
  }
  if ((base === 'Ref' || base === 'RefList') && !type.slice(base.length + 1).trim()) {
    throw new BadRequest(`Invalid column type "${type}": ${base} needs a table (${base}:TableId)`);
  }
}

/**
 * Column types by type string. They are immutable, so one object serves every caller (the formula
 * engine asks per cell for defaults); a document has a few dozen types, the bound is for safety.
 */
const TYPE_CACHE_LIMIT = 1000;
const typeCache = new Map<string, ColumnType>();

/** The column type of a type string (`Text`, `Ref:People`, `DateTime:Europe/Paris`), parsed once. */
export function columnType(type: string): ColumnType {
  let ct = typeCache.get(type);
  if (!ct) {
    const Family = FAMILIES.get(baseOf(type)) ?? AnyType;
    ct = new Family(type);
    if (typeCache.size >= TYPE_CACHE_LIMIT) {
      typeCache.clear();
    }
    typeCache.set(type, ct);
  }
  return ct;
}

/** The `cellFormat=typed` form of a value, or null for a type whose cells are written as they are. */
export function typedFormatter(ct: ColumnType): ((v: CellValue) => CellValue) | null {
  const form = ct.typed;
  if (!form) {
    return null;
  }
  const {number, ofNull, list} = form;
  return (v) => {
    if (typeof v === 'number' && number) {
      return [...number.before, v, ...number.after];
    }
    if (v === null && ofNull) {
      return ofNull();
    }
    if (list && Array.isArray(v) && v[0] === 'L') {
      return list(v.slice(1));
    }
    return v;
  };
}

// ---------------------------------------------------------------------------------------------
// Conversion as the data engine does it: a right-typed value, or alt-text.

/** How `convertValue` and `converterFor` treat a value. */
export interface ConvertOptions {
  /**
   * Values held as floats by the engine (from Numeric/Date/DateTime columns), or as Python ints
   * when integral (false): affects str(). Left out for values as they come over the API, which
   * Grist's engine receives as ints within 32 bits and as floats otherwise.
   */
  sourceIsFloat?: boolean;
  /** Values that are tuples in the engine (ChoiceList cells): affects str(). */
  sourceIsTuple?: boolean;
}

/** Converters by type string (and source), bounded as the types. */
const converterCache = new Map<string, Converter>();

/**
 * The converter of a column type, as the data engine converts values: a right-typed value, or
 * the alt-text `str(value)` when conversion fails. Errors (`["E", ...]`) are kept as they are.
 */
export function converterFor(type: string, opts: ConvertOptions = {}): (v: CellValue) => CellValue {
  const key = `${type}|${opts.sourceIsFloat}`;
  let conv = converterCache.get(key);
  if (!conv) {
    conv = columnType(type).converter(opts.sourceIsFloat);
    if (converterCache.size >= TYPE_CACHE_LIMIT) {
      converterCache.clear();
    }
    converterCache.set(key, conv);
  }
  const strOpts = {isFloat: opts.sourceIsFloat, tuples: opts.sourceIsTuple};
  const c = conv;
  return (v) => {
    if (Array.isArray(v) && v[0] === 'E') {
      return v;
    }
    try {
      return c(v);
    } catch (e) {
      if (!(e instanceof ConversionError)) {
        throw e;
      }
      return pyStr(v, strOpts);
    }
  };
}

/** A value converted to a column type as Grist's data engine converts it (a right-typed value, or the value kept as alt-text). */
export function convertValue(type: string, v: CellValue, opts: ConvertOptions = {}): CellValue {
  return converterFor(type, opts)(v);
}

/** The engine's `Numeric.is_right_type(Numeric.convert(v))`, used to guess column types. */
export function convertsToNumeric(v: CellValue): boolean {
  const c = convertValue('Numeric', v);
  return c === null || typeof c === 'number';
}
