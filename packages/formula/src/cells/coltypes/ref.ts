/**
 * References: Ref:T (a row id of T, 0 for none), RefList:T (a list of row ids, stored as a JSON
 * array) and Id (a table's own row ids). Text is parsed by looking it up in the referenced
 * table's visible column; cells display through that column's formatter.
 */
import type {DocSettings} from '../cell-value.js';
import type {CellValue} from '../cell-value.js';
import {
  argOf,
  BaseType,
  type CellFormatter,
  ConversionError,
  type Converter,
  csvEncodeRow,
  formatUnknown,
  INT32_MAX,
  INT32_MIN,
  isNestedObject,
  listItems,
  type ParseContext,
  pyTruthy,
  type SchemaType,
  type TextParser,
  type TypedForm,
  type WidgetOptions,
} from './base.js';
import {parseCsvLine} from './choice.js';

/** Python `int(x)` for an Id/Ref (no conversion through float: only ints and records). */
export function toId(v: CellValue): number {
  if (!pyTruthy(v)) {
    return 0;
  }
  if (typeof v === 'boolean') {
    return 1;
  }
  if (typeof v === 'number' && Number.isInteger(v)) {
    if (v < INT32_MIN || v > INT32_MAX) {
      throw new ConversionError();
    }
    return v;
  }
  if (Array.isArray(v) && v[0] === 'R' && typeof v[2] === 'number') {
    return v[2];
  }
  throw new ConversionError();
}

/** Shows a row id as `Table[3]` (references whose visible column is the row id). */
export function rowIdFormatter(tableId: string): CellFormatter {
  return (v) => {
    if (typeof v === 'number' || typeof v === 'boolean') {
      return Number(v) > 0 ? `${tableId}[${Number(v)}]` : '';
    }
    return formatUnknown(v);
  };
}

/** An error cell of a reference display: alt-text in a Ref column shows as its text. */
function invalidRefText(v: CellValue): string | null {
  if (
    Array.isArray(v) &&
    v[0] === 'E' &&
    v[1] === 'InvalidTypedValue' &&
    typeof v[2] === 'string' &&
    v[2].startsWith('Ref')
  ) {
    return String(v[3]);
  }
  return null;
}

export class RefType extends BaseType {
  override readonly holdsFloats = false;
  override readonly target: string | null;
  override readonly displayTarget: string | null;
  override readonly sqlType = 'INTEGER';
  override readonly sqlDefault = '0';
  override readonly defaultValue = 0;
  override readonly typed: TypedForm;

  constructor(type: string) {
    super(type);
    this.target = type.startsWith('Ref:') ? argOf(type) : null;
    this.displayTarget = this.target;
    this.typed = {number: {before: ['R', this.target], after: []}};
  }

  override converter(): Converter {
    // A list stands for its first element (verified against the data engine, SPEC 7.4).
    return (v) => {
      const items = listItems(v);
      return toId(items ? (items[0] ?? null) : v);
    };
  }

  override parser(_options: WidgetOptions, ctx: ParseContext): TextParser {
    return (text) => (text === '' ? 0 : ctx.refLookup([text], text, false));
  }

  override formatter(_options: WidgetOptions, _settings: DocSettings, visible?: CellFormatter): CellFormatter {
    const show = visible ?? rowIdFormatter(argOf(this.type));
    return (v) => invalidRefText(v) ?? show(v);
  }

  override schemaType(): SchemaType {
    return {type: 'integer'};
  }
}

export class RefListType extends BaseType {
  override readonly holdsFloats = false;
  override readonly target: string | null;
  override readonly displayTarget: string | null;
  override readonly sqlType = 'TEXT';
  override readonly typed: TypedForm | null;
  protected override readonly listItem: 'number' | null;

  /** `target`: the referenced table; a bare `RefList` has none, and stores lists marshalled. */
  constructor(type: string, target: string | null = type.startsWith('RefList:') ? argOf(type) : null) {
    super(type);
    this.target = target;
    this.displayTarget = target;
    this.listItem = target === null ? null : 'number';
    this.typed = target === null ? null : {ofNull: () => ['r', target, []], list: (items) => ['r', target, items]};
  }

  /** Lists of ids (JSON text of an array read as one); empty lists are null. */
  override converter(): Converter {
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
      if (!pyTruthy(value)) {
        return null;
      }
      const items = listItems(value);
      if (!items) {
        throw new ConversionError();
      }
      return items.length ? ['L', ...items.map(toId)] : null;
    };
  }

  /** JSON or CSV of display values, each looked up (ReferenceListParser). */
  override parser(_options: WidgetOptions, ctx: ParseContext): TextParser {
    return (text) => {
      const s = text.trim();
      if (!s) {
        return null;
      }
      let items: string[] | null = null;
      if (s.startsWith('[')) {
        try {
          const parsed = JSON.parse(s);
          if (Array.isArray(parsed)) {
            items = parsed.map((x) => (typeof x === 'string' ? x : JSON.stringify(x)));
          }
        } catch {
          // Read as CSV below.
        }
      }
      items ??= parseCsvLine(s)
        .map((x) => x.trim())
        .filter((x) => x !== '');
      return items.length ? ctx.refLookup(items, text, true) : null;
    };
  }

  override formatter(_options: WidgetOptions, _settings: DocSettings, visible?: CellFormatter): CellFormatter {
    const show = visible ?? rowIdFormatter(argOf(this.type));
    return (v) => {
      const invalid = invalidRefText(v);
      if (invalid !== null) {
        return invalid;
      }
      if (!Array.isArray(v) || v[0] !== 'L' || v.slice(1).some(isNestedObject)) {
        return formatUnknown(v);
      }
      return csvEncodeRow(v.slice(1).map((item) => show(item)));
    };
  }

  override schemaType(): SchemaType {
    return {type: 'array'};
  }
}

/** The row id column of a table. */
export class IdType extends BaseType {
  override readonly holdsFloats = false;
  override readonly sqlType = 'INTEGER';
  override readonly sqlDefault = '0';
  override readonly defaultValue = 0;

  override converter(): Converter {
    return toId;
  }

  override formatter(options: WidgetOptions): CellFormatter {
    return rowIdFormatter(String(options.tableId ?? ''));
  }
}
