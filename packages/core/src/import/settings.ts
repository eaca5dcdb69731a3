/** Bounds of imports into existing tables and of XLSX/JSON files (docs/imports.md lists them). */
import {intFromEnv} from '../base/index.js';

/** Bounds of imports into tables and of XLSX/JSON files. */
export interface ImportSettings {
  /** Data rows one import into a table may write (GRISTLITE_IMPORT_MAX_ROWS). */
  maxRows: number;
  /** Bytes an XLSX file may unpack to, all entries together (GRISTLITE_IMPORT_MAX_UNZIPPED_BYTES). */
  maxUnzippedBytes: number;
  /** Entries an XLSX file may hold. */
  maxEntries: number;
  /** Bytes of a JSON file, parsed whole (GRISTLITE_IMPORT_MAX_JSON_BYTES). */
  maxJsonBytes: number;
  /** Rows converted, staged and written at a time (GRISTLITE_IMPORT_BATCH_ROWS). */
  batchRows: number;
}

/** The bounds used when no GRISTLITE_IMPORT_* setting says otherwise. */
export const DEFAULT_IMPORT_SETTINGS: ImportSettings = {
  maxRows: 2_000_000,
  maxUnzippedBytes: 1024 * 1024 * 1024,
  maxEntries: 10_000,
  maxJsonBytes: 64 * 1024 * 1024,
  batchRows: 5000,
};

/** Import bounds from GRISTLITE_IMPORT_* settings (docs/operations.md). */
export function importSettingsFromEnv(env: Record<string, string | undefined>): ImportSettings {
  const d = DEFAULT_IMPORT_SETTINGS;
  return {
    maxRows: intFromEnv(env, 'GRISTLITE_IMPORT_MAX_ROWS', d.maxRows, 1),
    maxUnzippedBytes: intFromEnv(env, 'GRISTLITE_IMPORT_MAX_UNZIPPED_BYTES', d.maxUnzippedBytes, 1),
    maxEntries: d.maxEntries,
    maxJsonBytes: intFromEnv(env, 'GRISTLITE_IMPORT_MAX_JSON_BYTES', d.maxJsonBytes, 1),
    batchRows: intFromEnv(env, 'GRISTLITE_IMPORT_BATCH_ROWS', d.batchRows, 1),
  };
}
