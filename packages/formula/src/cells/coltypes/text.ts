/** Text: stored as TEXT, numbers and booleans converted to their Python str(), shown as they are. */
import {formatG15, pyNumberStr} from '../../pyvalues/numbers.js';
import type {CellValue} from '../cell-value.js';
import {
  BaseType,
  type CellFormatter,
  ConversionError,
  type Converter,
  formatUnknown,
  type SchemaType,
  type WidgetOptions,
} from './base.js';

/**
 * Python's str() of numbers and booleans; other values fail. `sourceIsFloat` as `pyNumberStr`
 * takes it: API values (left out) are ints only within 32 bits, which print the same either way.
 */
function textConverter(sourceIsFloat: boolean | undefined): Converter {
  // Python ints print in full; floats as integers when they are exactly so below 2**53, else
  // with "%.15g" (Grist's Text.do_convert): 1e20 -> "1e+20", 1e-7 -> "1e-07".
  const limit = sourceIsFloat === false ? 1e21 : 2 ** 53;
  return (v) => {
    if (v === null || typeof v === 'string') {
      return v;
    }
    if (typeof v === 'number') {
      if (Number.isInteger(v) && Math.abs(v) < limit) {
        return pyNumberStr(v, false);
      }
      return formatG15(v);
    }
    if (typeof v === 'boolean') {
      return v ? 'True' : 'False';
    }
    throw new ConversionError();
  };
}

/** Strings as they are, anything else as Grist shows decoded values. */
export function textFormatter(v: CellValue): string {
  return typeof v === 'string' ? v : formatUnknown(v);
}

export class TextType extends BaseType {
  override readonly sqlType = 'TEXT';
  override readonly sqlDefault = "''";
  override readonly defaultValue = '';

  override converter(sourceIsFloat: boolean | undefined): Converter {
    return textConverter(sourceIsFloat);
  }

  override formatter(): CellFormatter {
    return textFormatter;
  }

  override schemaType(options: WidgetOptions): SchemaType {
    return {type: 'string', format: options.widget === 'HyperLink' ? 'uri' : 'default'};
  }
}
