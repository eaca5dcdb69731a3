/** Limits of imports that make new documents (index.ts, sheets.ts). */
/**
 * Limits of a CSV import. Types are guessed from the first IMPORT_GUESS_ROWS rows (fewer when
 * they would hold more than IMPORT_GUESS_CELLS cells); rows are written IMPORT_BATCH_CELLS cells
 * at a time, all in one transaction. Measured: a 1,000,000-row, 10-column file imports through
 * `gristlite import` in ~10 s at a peak RSS of ~245 MB, the same as for 200,000 rows (docs/operations.md).
 */
export const IMPORT_GUESS_ROWS = 10_000;
/** At most this many cells are read before column types are guessed. */
export const IMPORT_GUESS_CELLS = 500_000;
/** Cells written per batch of a CSV import (all in one transaction). */
export const IMPORT_BATCH_CELLS = 50_000;
/** SQLite's default limit of 2000 columns a table, less `id` and `manualSort`. */
export const MAX_IMPORT_COLUMNS = 1998;
