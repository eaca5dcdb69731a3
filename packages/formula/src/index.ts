/**
 * `@gristlite/formula`: Grist's formula language (the subset of Python 3.11 its formulas use,
 * Grist's function library, the incremental engine) and Grist's value model (cell values, column
 * types with their conversion, parsing and formatting, Python's text of values). No documents,
 * SQLite or HTTP: a host gives the engine tables, columns and rows (`FormulaEngine.loadTable`, or
 * lazily through `LazyRows` and `ColumnSource`) and reads back the cells a recalculation changed.
 * This is the package's one entry; see README.md.
 * @module
 */

// The engine and the host interface.
export {FormulaEngine, RecalcWhen, Contains} from './engine.js';
export type {ColumnChanges, ColumnSpec, ColValues, EngineOptions, RecalcResult, TableSpec} from './engine.js';
export type {ColumnSource, LazyRows} from './tables.js';
export type {AheadRows} from './records.js';
export {type BudgetSettings, DEFAULT_BUDGET} from './budget.js';
export {formulaRenames, type FormulaEdit, type Rename, type SchemaColumn, type SchemaTable} from './rename.js';
export {defaultCell} from './convert.js';
export {gristFunctions, setDocTimezone, setDocUrl} from './functions/index.js';
export {setClock, IanaTz} from './datetime.js';

// Python values.
export {PyException, repr, type Kwargs, type Value} from './values.js';
export {evaluateFormula, type EvaluateOptions} from './standalone.js';

// The Python front end (tokenizer, parser, syntax tree, CPython's syntax errors).
export {type Expr, KEYWORDS, PySyntaxError, parseWithNames, type Token, Tokenizer} from './syntax/index.js';

// Grist's value model: cells, column types, type guessing, marshal, Python's text of values.
export {
  type CellValue,
  type SqlValue,
  affinityOf,
  baseType,
  converterFor,
  convertsToNumeric,
  convertValue,
  type ConvertOptions,
  isRefListType,
  makeDecoder,
  makeEncoder,
  makeTypedFormatter,
  pyFloatOfString,
  refTarget,
  setOwnKey,
  sqlDefaultFor,
  sqlTypeFor,
} from './cells/types.js';
export {
  type CellFormatter,
  checkColumnType,
  columnType,
  type ColumnType,
  formatUnknown,
  typedFormatter,
} from './cells/coltypes/index.js';
export type {
  Converter,
  Decoder,
  Encoder,
  ParseContext,
  SchemaType,
  TextParser,
  TypedForm,
  WidgetOptions,
} from './cells/coltypes/base.js';
export {ConversionError} from './cells/coltypes/base.js';
export {rowIdFormatter} from './cells/coltypes/ref.js';
export {type DocSettings, guessColumn, guessColumnWithParser} from './cells/parse.js';
export {dumps, loads} from './cells/marshal.js';
export type {DumpOptions, LoadOptions} from './cells/marshal.js';
export {formatMoment} from './cells/moment-format.js';
export {zoneOffsetSeconds} from './cells/datetime.js';
export {pyStr} from './cells/pyformat.js';
export {floatRepr, formatG15, pyNumberStr} from './pyvalues/numbers.js';
export {strRepr} from './pyvalues/strings.js';
export {zoneOffsetMs} from './pyvalues/zones.js';
export {ApiError, BadRequest} from './errors.js';
export {BoundedMap} from './memo.js';
