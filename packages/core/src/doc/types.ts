/**
 * Cell values and the column-type helpers, under the name core's modules have always imported
 * them by: Grist's value model is `@gristlite/formula`'s (D91), re-exported here.
 */
export {
  affinityOf,
  baseType,
  type CellValue,
  columnType,
  type ConvertOptions,
  converterFor,
  convertsToNumeric,
  convertValue,
  type Decoder,
  type Encoder,
  isRefListType,
  makeDecoder,
  makeEncoder,
  makeTypedFormatter,
  pyFloatOfString,
  refTarget,
  setOwnKey,
  type SqlValue,
  sqlDefaultFor,
  sqlTypeFor,
} from '@gristlite/formula';
