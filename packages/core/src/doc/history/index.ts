/** Grist's action history: the bundle format and hash chain, its checker, and the recorder of writes (D120). */
export {
  ALL_RECIPIENTS,
  BundleFormatError,
  computeActionHash,
  decodeBundle,
  encodeBundle,
  type ActionBundle,
  type ActionInfo,
  type DocActionTuple,
  type Envelope,
} from './format.js';
export {COLUMNAR_ROWS as HISTORY_COLUMNAR_ROWS} from './rows.js';
export {HandedOver, type HandedCells} from './updates.js';
export {checkActionHistory, type ChainProblem, type ChainReport} from './chain.js';
export {
  HISTORY_DEFAULTS,
  HistoryRecorder,
  historySettingsFromEnv,
  type HistorySettings,
  type RecordedAction,
} from './recorder.js';
export {
  composeSummaries,
  DEFAULT_INLINE_ROWS,
  emptySummary,
  summarizeBundle,
  type ActionSummary,
  type CellDelta,
  type CellSide,
  type LabelDelta,
  type TableDelta,
} from './summary.js';
export {
  DEFAULT_HISTORY_LIMIT,
  MAX_HISTORY_LIMIT,
  tableHistory,
  type HistoryEntry,
  type HistoryPosition,
  type HistoryQuery,
} from './changes.js';
