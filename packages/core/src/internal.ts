/**
 * Everything `@gristlite/core` is made of, for gristlite's own packages (the HTTP layer, the CLI,
 * the stores, the benchmarks and tests): storage, clusters, access-rule evaluation, SQL workers,
 * webhooks internals. Not a supported API for embedders; it changes without notice. Embedders
 * import `@gristlite/core`, the supported surface (index.ts).
 * @module internal
 */
export * from './base/index.js';
export {intFromEnv, intSetting} from './base/index.js';
export {
  DESCRIPTOR_RESERVE,
  DESCRIPTORS_PER_DOC,
  DEFAULT_MAX_OPEN_DOCS,
  descriptorLimit,
  maxOpenDocsFor,
} from './host/index.js';
export * from './base/index.js';
export * from './access/index.js';
export * from './home/types.js';
export * from './home/principal.js';
export {
  HomeService,
  hashApiKey,
  isValidEmail,
  checkDomain,
  orgSettingsFromEnv,
  type AccessDelta,
  type OrgSettings,
} from './home/service.js';
export {SqliteHomeStore} from './home/sqlite.js';
export {docPageUrl, docSlug, orgUrlName, publicUrlFromEnv} from './home/urls.js';
export {rowCodec, type HomeRow, type RowCodec, type RowDialect} from './home/rows.js';
export {Engine, type EngineOptions, type Closeable, type OpenDoc} from './engine/index.js';
export {CursorCodec, cursorBinding, MAX_CURSOR_CHARS} from './doc/cursor.js';
export {
  IDEMPOTENCY_TABLE,
  IDEMPOTENCY_TTL_MS,
  Idempotency,
  Replay,
  checkIdempotencyKey,
  requestFingerprint,
  type IdempotencySettings,
  type KeptAnswer,
} from './doc/idempotency.js';
export {
  compareStates,
  contentDigest,
  docStates,
  historyChanges,
  removeStates,
  stateOffset,
  replaceContent,
  type DocState,
  type DocStateComparison,
} from './engine/index.js';
export {
  compareDocs,
  docSnapshots,
  forceReloadDoc,
  integerParam,
  maxRowsParam,
  replaceDoc,
  versionChanges,
  type CompareOptions,
  type DocSnapshot,
  type ReplaceSource,
} from './engine/index.js';
export {checkPublishedForm, formOf, type FormAnswer, type FormField} from './engine/index.js';
export {OpenDocument, type DocAttachmentOptions, type DocWebhooks} from './engine/index.js';
export {Session, SessionDoc, type Fields, type NewDocBody, type SqlOptions} from './engine/index.js';
export {
  DocTransaction,
  type DocTable,
  type RowShape,
  type TxTable,
  type TypedRecord,
  type TypedUpsert,
} from './engine/index.js';
export type {
  AccessList,
  AttachmentList,
  CopyDocOptions,
  DocUpdateBody,
  GristDownloadOptions,
  NewAttachment,
  NewOrgBody,
  NewTrigger,
  NewWebhook,
  RemoveOptions,
  SessionDownload,
  TableExportOptions,
  TableSchemaExportOptions,
  TriggerPatch,
  WebhookPatch,
  WorkspaceBody,
  XlsxExportOptions,
} from './engine/index.js';
export * from './sql/index.js';
export * from './export/index.js';
export * from './import/index.js';
// Imports into tables and XLSX/JSON readers (issue 42): not needed by the public surface's modules.
export {
  IMPORT_MODES,
  importIntoTable,
  type ColumnProblems,
  type ImportFile,
  type ImportMode,
  type TableImportArgs,
  type TableImportOptions,
  type TableImportResult,
} from './import/into-table.js';
export {DEFAULT_IMPORT_SETTINGS, importSettingsFromEnv, type ImportSettings} from './import/settings.js';
export {
  importFormat,
  readTables,
  type ImportFormat,
  type ParseOptions,
  type SourceCell,
  type SourceLimits,
  type SourceTable,
} from './import/sources.js';
export {checkZipFile, type ZipEntry, type ZipLimits} from './import/zipcheck.js';
export type {SheetCell} from './import/xlsx.js';
export * from './doc/index.js';
export * from './doc/history/index.js';
export {historyPage} from './engine/index.js';
export * from './attachments/index.js';
export * from './webhooks/index.js';
export {
  ChangeFeeds,
  DEFAULT_FEED_SETTINGS,
  Subscription,
  feedSettingsFromEnv,
  type ChangedRow,
  type DocChange,
  type FeedSettings,
  type SubscribeOptions,
  type SubscriberAccess,
  type TableChanges,
} from './feed/index.js';
export type {FeedSource, FeedSubscriber} from './feed/docfeed.js';
export type {ConditionMatches, FeedCondition, FeedSelection, StoredChange} from './feed/index.js';
export type {DocLeases} from './cluster/leases.js';
export {backupSqliteFile} from './host/index.js';
export {
  Cluster,
  DirObjectStore,
  Fenced,
  Unrecorded,
  RecordUnknown,
  MemoryPlacement,
  MemoryPlacementHub,
  Replica,
  restoreDoc,
  WalTail,
  WalGap,
  type Claim,
  type ClusterOptions,
  type LogEntry,
  type ObjectStore,
  type PlacementRow,
  type ReplicaOptions,
  type Restored,
  type WalSegment,
  type Placement,
  type SnapshotRef,
  type Takeover,
} from './cluster/index.js';
export {AccessContext, type AttributeLookup, type RuleUser} from './access/rules/context.js';
export {BrokenRules, RuleSet, type Rule, type RuleList, type UserAttribute} from './access/rules/ruleset.js';
export {readShareRows, readShareRules, type ShareRow, type ShareRules} from './access/rules/shares.js';
export type {Answer, Bit, RulePermissions} from './access/rules/permissions.js';
export type {PredicateInput, RowView} from './access/rules/evaluate.js';
export type {DocGuard, RowReader, TableReadFilter, WriteRows} from './doc/guard.js';
export type {ExportRestriction} from './export/plan.js';
