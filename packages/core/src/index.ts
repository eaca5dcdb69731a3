/**
 * The supported API of `@gristlite/core` for apps that embed the engine (docs/embedding.md): the
 * engine and its sessions, typed rows and transactions, change subscriptions, the values and
 * answers they use, and the errors they throw. What gristlite's own packages need beyond this is
 * in `@gristlite/core/internal`, which makes no promises.
 * @module
 */
export {
  ApiError,
  BadRequest,
  EngineClosed,
  Forbidden,
  NotFound,
  PayloadTooLarge,
  ServiceUnavailable,
  TooManyRequests,
  Unauthorized,
  isApiError,
} from './base/index.js';
export {Engine, type EngineOptions, type OrgUsageSummary} from './engine/index.js';
export type {BudgetSettings} from '@gristlite/formula';
export type {HistorySettings} from './doc/history/index.js';
export {Session, SessionDoc, type Fields, type NewDocBody, type SqlOptions} from './engine/index.js';
export type {
  AccessList,
  AttachmentList,
  DocUpdateBody,
  GristDownloadOptions,
  NewAttachment,
  NewOrgBody,
  NewWebhook,
  RemoveOptions,
  SessionDownload,
  TableExportOptions,
  TableSchemaExportOptions,
  WebhookPatch,
  WorkspaceBody,
  XlsxExportOptions,
} from './engine/index.js';
export {
  DocTransaction,
  type DocTable,
  type RowShape,
  type TxTable,
  type TypedRecord,
  type TypedUpsert,
} from './engine/index.js';
export {
  Subscription,
  type ChangedRow,
  type ChangesOptions,
  type DocChange,
  type SubscribeOptions,
  type TableChanges,
} from './feed/index.js';
export type {
  ActionBulkColValues,
  ActionColInfo,
  ActionColValues,
  ActionRowId,
  ActionUpsertOptions,
  AggregateQuery,
  AggregateRecord,
  ApiRecord,
  ApplyResult,
  CellValue,
  ColumnInfo,
  ColumnSpec,
  RecordQuery,
  TableInfo,
  TableSpec,
  UpsertOptions,
  UpsertRecord,
  UpsertResult,
  UserAction,
  WriteActor,
} from './doc/index.js';
export type {BasicRole, Doc, Org, Role, User, Workspace} from './home/types.js';
export type {Principal, OrgContext} from './home/principal.js';
export type {AccessDelta, OrgSettings} from './home/service.js';
export type {SqlResult} from './sql/index.js';
export type {
  ColumnProblems,
  ImportMode,
  TableImportOptions,
  TableImportResult,
} from './import/into-table.js';
export type {ParseOptions} from './import/sources.js';
