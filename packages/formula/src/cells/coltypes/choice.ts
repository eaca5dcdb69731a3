/**
 * Choice (text from a list of choices) and ChoiceList (a list of them, stored as a JSON array
 * of strings; parsed from JSON or CSV text).
 */
import {pyStr} from '../pyformat.js';
import type {CellValue} from '../cell-value.js';
import {
  BaseType,
  type Converter,
  ConversionError,
  listItems,
  pyTruthy,
  type SchemaType,
  type TextParser,
  type TypedForm,
  type WidgetOptions,
} from './base.js';
import {TextType} from './text.js';

/** Splits one line of CSV (double quotes quote, "" escapes a quote). */
export function parseCsvLine(line: string): string[] {
  const out: string[] = [];
  let cur = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i];
    if (quoted) {
      if (ch === '"' && line[i + 1] === '"') {
        cur += '"';
        i++;
      } else if (ch === '"') {
        quoted = false;
      } else {
        cur += ch;
      }
    } else if (ch === '"' && cur.trim() === '') {
      quoted = true;
      cur = '';
    } else if (ch === ',') {
      out.push(cur);
      cur = '';
    } else {
      cur += ch;
    }
  }
  out.push(cur);
  return out;
}

/** ChoiceListParser: JSON array or CSV (newlines also split); blanks dropped; null if empty. */
export function parseChoiceList(text: string): CellValue {
  const s = text.trim();
  let items: string[] = [];
  if (s.startsWith('[')) {
    try {
      const parsed = JSON.parse(s);
      if (Array.isArray(parsed)) {
        items = parsed
          .filter((v) => v !== null && v !== '')
          .map((v) => (typeof v === 'string' ? v : JSON.stringify(v)));
        return items.length ? ['L', ...items] : null;
      }
    } catch {
      // Not JSON: read as CSV below.
    }
  }
  items = parseCsvLine(s.replace(/\r?\n/g, ','))
    .map((v) => v.trim())
    .filter((v) => v !== '');
  return items.length ? ['L', ...items] : null;
}

/** Stored, converted and shown as Text; only its table-schema type differs. */
export class ChoiceType extends TextType {
  override schemaType(options: WidgetOptions): SchemaType {
    return {type: 'string', constraints: {enum: options.choices}};
  }
}

export class ChoiceListType extends BaseType {
  override readonly sqlType = 'TEXT';
  override readonly typed: TypedForm = {ofNull: () => ['L']};
  protected override readonly listItem = 'string';

  /** Lists of str() of their items; JSON text of an array read as one; other text kept. */
  override converter(): Converter {
    return (v) => {
      if (!pyTruthy(v)) {
        return null;
      }
      if (typeof v === 'string') {
        if (v.startsWith('[')) {
          try {
            const parsed = JSON.parse(v);
            if (Array.isArray(parsed)) {
              return ['L', ...parsed.map((item: CellValue) => pyStr(item))];
            }
          } catch {
            // Not JSON: kept as the string itself.
          }
        }
        return v;
      }
      const items = listItems(v);
      if (items) {
        return ['L', ...items.map((item) => pyStr(item))];
      }
      throw new ConversionError();
    };
  }

  override parser(): TextParser {
    return parseChoiceList;
  }

  override schemaType(options: WidgetOptions): SchemaType {
    return {type: 'array', constraints: {enum: options.choices}};
  }
}
