/**
 * Any (a formula column's results of any kind), Blob, and type names gristlite does not know:
 * stored as BLOB, kept as they are, shown as Grist shows decoded values.
 */
import {BaseType, type CellFormatter} from './base.js';
import {textFormatter} from './text.js';

/** DocStorage's SQL types of the legacy names Reference and ReferenceList. */
const LEGACY_SQL_TYPES = new Map([
  ['Reference', 'INTEGER'],
  ['ReferenceList', 'TEXT'],
]);

export class AnyType extends BaseType {
  override readonly sqlType: string;

  constructor(type: string) {
    super(type);
    this.sqlType = LEGACY_SQL_TYPES.get(type) ?? 'BLOB';
  }
}

export class BlobType extends BaseType {
  /** Grist formats Blob cells as text. */
  override formatter(): CellFormatter {
    return textFormatter;
  }
}
