export {createDocFile} from './create.js';
export type {CreateDocOptions} from './create.js';
export {GristDoc, type DocUrl} from './gristdoc.js';
export {STREAM_DEFAULTS, StreamSlots, type StreamOptions} from './stream.js';
export {RowScope, type SqlCondition, type TableAccess} from './rowscope.js';
export type {DocGuard, RowReader, RowValues, TableReadFilter} from './guard.js';
export type {
  ApiRecord,
  ApplyResult,
  ChangeListener,
  ColumnInfo,
  ColumnSpec,
  OpenOptions,
  PageEnd,
  RecordQuery,
  TableInfo,
  TableSpec,
  UpsertOptions,
  UpsertRecord,
  UpsertResult,
} from './api-types.js';
export type {TableChange, WriteActor} from './storage.js';
export type {AggregateQuery, AggregateRecord} from './aggregate/index.js';
export type {CellValue, SqlValue} from './types.js';
export {makeDecoder} from './types.js';
export {SCHEMA_VERSION, STORAGE_VERSION, META_DDL, META_TYPES} from './schema.js';
export {dumps as marshalDumps, loads as marshalLoads} from '@gristlite/formula';
export {pickColIdent, pickColIdentList, pickTableIdent, quoteIdent} from './identifiers.js';
export {CursorCodec} from './cursor.js';
export {FORMULAS_TABLE, formulasComputed, markFormulasComputed} from './formulas.js';
export {columnType, type ColumnType} from '@gristlite/formula';
export type {
  Converter,
  Decoder,
  Encoder,
  ParseContext,
  SchemaType,
  TextParser,
  TypedForm,
  WidgetOptions,
} from '@gristlite/formula';
export type {ColumnMeta, DocMeta, TableMeta} from './meta.js';
export type {DocSettings} from '@gristlite/formula';
export type {WriterRole} from './metarules.js';
export type {BeforeRowsListener, WriteAs, WriteListener, WriteSummary} from './api-types.js';
export {
  cellValueFailure,
  checkRecords,
  invalidPayload,
  isCellValue,
  recordsBody,
  renderFailure,
  requireSameFields,
  type Failure,
  type RecordKind,
} from './bodies.js';
export type {
  ActionBulkColValues,
  ActionColInfo,
  ActionColValues,
  ActionRowId,
  ActionUpsertOptions,
  UserAction,
} from './action-types.js';
