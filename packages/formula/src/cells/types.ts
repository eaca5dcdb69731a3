/**
 * Cell values and the column-type helpers callers use by type string. Everything a type does
 * (SQL type, storage, conversion, parsing, display) is in its module under coltypes/, found with
 * `columnType()`; these are shorthands over it.
 */
import {
  affinityOf,
  baseOf,
  columnType,
  type ConvertOptions,
  converterFor,
  convertsToNumeric,
  convertValue,
  type Decoder,
  type Encoder,
  pyFloatOfString,
  typedFormatter,
} from './coltypes/index.js';

import type {CellValue} from './cell-value.js';

export {type CellValue, type DocSettings, setOwnKey, type SqlValue} from './cell-value.js';

export {
  affinityOf,
  columnType,
  type ConvertOptions,
  converterFor,
  convertsToNumeric,
  convertValue,
  type Decoder,
  type Encoder,
  pyFloatOfString,
};

/** `Ref:T` -> `Ref`. */
export const baseType = baseOf;

/** Target table of `Ref:T` / `RefList:T` (and `_grist_Attachments` for Attachments), else null. */
export function refTarget(type: string): string | null {
  return columnType(type).target;
}

/** RefList:T and Attachments. */
export function isRefListType(type: string): boolean {
  const ct = columnType(type);
  return ct.isList && ct.target !== null;
}

/** DocStorage._getSqlType: the declared SQL type Grist uses for a Grist type. */
export function sqlTypeFor(type: string): string {
  return columnType(type).sqlType;
}

/** SQL DEFAULT of each Grist type (gristTypes.getDefaultForType with sqlFormatted). */
export function sqlDefaultFor(type: string): string {
  return columnType(type).sqlDefault;
}

/** DocStorage._encodeValue for one column declared `declType`. */
export function makeEncoder(type: string, declType: string): Encoder {
  return columnType(type).encoder(declType);
}

/** DocStorage._decodeValue for one column. */
export function makeDecoder(type: string): Decoder {
  return columnType(type).decoder();
}

/** The `cellFormat=typed` form of a value: self-describing for the column's type. */
export function makeTypedFormatter(type: string): ((v: CellValue) => CellValue) | null {
  return typedFormatter(columnType(type));
}
