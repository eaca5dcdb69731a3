/** Bool: stored as 0/1 in a BOOLEAN column, converted by Python truthiness and yes/no words. */
import {
  BaseType,
  type CellFormatter,
  ConversionError,
  type Converter,
  type Decoder,
  formatUnknown,
  plainDecoder,
  pyTruthy,
  type SchemaType,
} from './base.js';

export class BoolType extends BaseType {
  override readonly sqlType = 'BOOLEAN';
  override readonly sqlDefault = '0';
  override readonly defaultValue = false;

  override decoder(): Decoder {
    return (raw) => {
      const v = plainDecoder(raw);
      return v === 0 ? false : v === 1 ? true : v;
    };
  }

  override converter(): Converter {
    return (v) => {
      if (!pyTruthy(v)) {
        return false;
      }
      if (typeof v === 'number' || typeof v === 'boolean') {
        return true;
      }
      if (typeof v === 'string') {
        const lower = v.toLowerCase();
        if (lower === 'false' || lower === 'no' || lower === '0') {
          return false;
        }
        if (lower === 'true' || lower === 'yes' || lower === '1') {
          return true;
        }
      }
      throw new ConversionError();
    };
  }

  override formatter(): CellFormatter {
    return (v) => (typeof v === 'boolean' || v === 0 || v === 1 ? String(v) : formatUnknown(v));
  }

  override schemaType(): SchemaType {
    return {type: 'boolean', trueValue: ['TRUE'], falseValue: ['FALSE']};
  }
}
