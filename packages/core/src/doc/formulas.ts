/**
 * The document side of the formula engine (@gristlite/formula's FormulaEngine): loading a document's user tables
 * into it, the column specs it needs (recalcDeps as colIds), and writing what `recalc()` changed
 * back to SQLite, inside the write's transaction, with each column's encoder.
 */
import type Database from 'better-sqlite3';
import {
  FormulaEngine,
  type ColumnChanges,
  type ColumnSource,
  type ColumnSpec,
  type LazyRows,
  type RecalcResult,
  type TableSpec,
} from '@gristlite/formula';
import type {BudgetSettings} from '@gristlite/formula';
import {setDocTimezone, setDocUrl} from '@gristlite/formula';
import type {SchemaTable} from '@gristlite/formula';
import type {BeforeRowsHook, CellsHook, ChangeSet} from './changes.js';
import {type ColumnClasses, StoredValues} from './colstats.js';
import type {ColumnMeta, DocMeta, TableMeta} from './meta.js';
import {quoteIdent} from './query.js';
import type {CellValue, SqlValue} from './types.js';

/** Budgets per document engine: a recalc that runs longer gives TimeoutError cells. */
const ENGINE_BUDGET: Partial<BudgetSettings> = {maxRecalcMs: 30_000};

/** Above this many changed cells in a column, one UPDATE reads them through a SQL function. */
const BULK_CELLS = 200;
/** The SQL function that hands a bulk UPDATE its values (registered per connection). */
export const CELL_FN = 'gristlite_recalc_cell';
const HAS_FN = 'gristlite_recalc_has';

/** Whether a column is computed by the engine: a formula column, or a trigger formula. */
export function isComputed(col: ColumnMeta): boolean {
  return col.isFormula ? true : Boolean(col.formula?.trim());
}

/**
 * Formulas run in the document's time zone (`_grist_DocInfo.timezone`), which NOW(), TODAY(),
 * DTIME and DATEVALUE use, as in Grist: `NOW()` in an Any column is `["D", ts, zone]` with that
 * zone. The library holds one zone for the process; evaluation is synchronous inside a write, so
 * each write sets its own document's before formulas run. Returns what restores the previous zone.
 */
export function useDocTimezone(meta: DocMeta): () => void {
  const previous = setDocTimezone(meta.timezone);
  return () => {
    setDocTimezone(previous);
  };
}

/**
 * Formulas see the document's URL as the request that makes the write reached it (SELF_HYPERLINK;
 * Grist's `DOC_URL`), set like the zone around each write. Returns what restores the previous one.
 */
export function useDocUrl(url: string | null): () => void {
  const previous = setDocUrl(url);
  return () => {
    setDocUrl(previous);
  };
}

/** Whether the document has any formula (or trigger formula) column. */
export function hasFormulas(meta: DocMeta): boolean {
  return meta.userTables.some((t) => t.columns.some((c) => isComputed(c) && c.formula.trim() !== ''));
}

/** `recalcDeps` (a RefList of `_grist_Tables_column` rows) as the colIds the engine takes. */
function recalcDeps(meta: DocMeta, value: CellValue): string[] | null {
  if (!Array.isArray(value) || value[0] !== 'L') {
    return null;
  }
  const out: string[] = [];
  for (const ref of value.slice(1)) {
    const c = typeof ref === 'number' ? meta.colsByRef.get(ref) : undefined;
    if (c) {
      out.push(c.col.colId);
    }
  }
  return out;
}

export function columnSpec(meta: DocMeta, col: ColumnMeta): ColumnSpec {
  return {
    colId: col.colId,
    type: col.type,
    isFormula: col.isFormula,
    formula: col.formula,
    recalcWhen: Number(col.fields.recalcWhen) || 0,
    recalcDeps: recalcDeps(meta, col.fields.recalcDeps),
  };
}

export function tableSpec(meta: DocMeta, table: TableMeta): TableSpec {
  const src = Number(table.fields.summarySourceTable);
  return {
    tableId: table.tableId,
    columns: table.columns.map((c) => columnSpec(meta, c)),
    summarySourceTable: src ? (meta.byRef.get(src)?.tableId ?? null) : null,
    summaryGroupBy: src ? table.columns.filter((c) => Number(c.fields.summarySourceCol)).map((c) => c.colId) : [],
  };
}

/** The schema `formulaRenames` reads. */
export function renameSchema(meta: DocMeta): SchemaTable[] {
  return meta.userTables.map((t) => ({
    tableId: t.tableId,
    columns: t.columns.map((c) => ({colId: c.colId, type: c.type, formula: c.formula})),
  }));
}

/**
 * Whether formulas may read metadata tables: one names them (`_grist_Tables_column.all` occurs in
 * real documents), or an Attachments column leads to `_grist_Attachments` (`$Files.fileName`).
 */
export function readsMetadata(meta: DocMeta): boolean {
  return meta.userTables.some((t) =>
    t.columns.some((c) => c.formula.includes('_grist_') || c.ct.base === 'Attachments'),
  );
}

/**
 * A formula engine holding every user table of the document, as stored (nothing dirty), and the
 * `_grist_*` metadata tables (as data) when a formula reads them. User tables are lazy: the engine
 * reads a column's cells from SQLite when something first needs them, one by one or whole
 * (`ColumnSource`), so opening a large document reads little more than its row ids.
 */
export function loadFormulaEngine(
  db: Database.Database,
  meta: DocMeta,
  budget: Partial<BudgetSettings> = {},
): FormulaEngine {
  const engine = new FormulaEngine({budget: {...ENGINE_BUDGET, ...budget}});
  const metaTables = readsMetadata(meta)
    ? [...meta.tables.values()].filter((t) => t.isMeta && t.tableId.startsWith('_grist_'))
    : [];
  for (const table of meta.userTables) {
    const from = quoteIdent(table.tableId);
    const byId = new Map(table.columns.map((c) => [c.colId, c]));
    engine.loadLazyTable(tableSpec(meta, table), lazyRows(db, from), (colId) => {
      const col = byId.get(colId);
      return col ? columnSource(db, from, quoteIdent(col.colId), col.decode) : null;
    });
  }
  for (const table of metaTables) {
    const cols = table.columns;
    const select = `SELECT "id"${cols.map((c) => ', ' + quoteIdent(c.colId)).join('')} FROM ${quoteIdent(table.tableId)} ORDER BY id`;
    const rows = db.prepare(select).raw(true).all() as unknown[][];
    const values: Record<string, CellValue[]> = {};
    cols.forEach((c, j) => (values[c.colId] = rows.map((row) => c.decode(row[j + 1]))));
    engine.loadTable(
      {
        tableId: table.tableId,
        columns: cols.map((c) => ({colId: c.colId, type: c.type, isFormula: false, formula: ''})),
      },
      rows.map((row) => Number(row[0])),
      values,
    );
  }
  return engine;
}

/**
 * A table's rows for the engine, read when needed: its largest id now (one B-tree descent),
 * whether a row exists (a point read), and every id only when something needs them all (reading
 * 1M ids takes 100 ms and more).
 */
function lazyRows(db: Database.Database, from: string): LazyRows {
  const max = Number(db.prepare(`SELECT max(id) FROM ${from}`).pluck().get() ?? 0);
  let exists: Database.Statement | null = null;
  return {
    max,
    exists(rowId) {
      exists ??= db.prepare(`SELECT 1 FROM ${from} WHERE id = ?`).pluck();
      return exists.get(rowId) !== undefined;
    },
    ids: () => numbers(db.prepare(`SELECT id FROM ${from} ORDER BY id`).pluck().all() as Array<number | bigint>),
  };
}

/** Row ids as numbers (a connection with safe integers gives bigints), copied only then. */
function numbers(ids: Array<number | bigint>): number[] {
  for (const id of ids) if (typeof id !== 'number') return ids.map(Number);
  return ids as number[];
}

/**
 * A column's cells in SQLite, for the engine to read when needed. Valid while the table keeps its
 * shape: the document reads every lazy column before it alters a table (`DocStorage.settleFormulaData`).
 */
function columnSource(
  db: Database.Database,
  from: string,
  col: string,
  decode: (v: unknown) => CellValue,
): ColumnSource {
  let one: Database.Statement | null = null;
  let referring: Database.Statement | null = null;
  return {
    all(withIds) {
      const cells = (db.prepare(`SELECT ${col} FROM ${from} ORDER BY id`).pluck().all() as unknown[]).map(decode);
      const ids = withIds
        ? numbers(db.prepare(`SELECT id FROM ${from} ORDER BY id`).pluck().all() as Array<number | bigint>)
        : null;
      return {cells, ids};
    },
    one(rowId) {
      one ??= db.prepare(`SELECT ${col} FROM ${from} WHERE id = ?`).pluck();
      const row = one.all(rowId) as unknown[];
      return row.length ? decode(row[0]) : undefined;
    },
    rowsReferring(rowId) {
      referring ??= db.prepare(`SELECT id FROM ${from} WHERE ${col} = ? ORDER BY id`).pluck();
      return numbers(referring.all(rowId) as Array<number | bigint>);
    },
  };
}

/** Values handed to a connection's bulk UPDATE, for its SQL function: encoded values by row id - base. */
export interface BulkCells {
  values: Array<SqlValue | undefined> | null;
  base: number;
}

/** Registers the SQL functions bulk writes use (once per connection); returns what they read. */
export function registerCellFunction(db: Database.Database): BulkCells {
  const bulk: BulkCells = {values: null, base: 0};
  db.function(CELL_FN, {deterministic: false, varargs: false}, (id: unknown) => {
    const v = bulk.values?.[Number(id) - bulk.base];
    return v === undefined ? null : v;
  });
  db.function(HAS_FN, {deterministic: false, varargs: false}, (id: unknown) =>
    bulk.values?.[Number(id) - bulk.base] !== undefined ? 1 : 0,
  );
  return bulk;
}

/**
 * What `writeRecalc` needs of a document's storage. `DocStorage` is one; naming it here keeps this
 * file below storage.ts, which reads the column specs above.
 */
export interface RecalcTarget {
  readonly meta: DocMeta;
  readonly beforeRows: BeforeRowsHook | null;
  readonly afterCells: CellsHook | null;
  readonly classes: ColumnClasses;
  readonly bulkCells: BulkCells;
  stmt(sql: string): Database.Statement;
}

/**
 * Writes the cells `recalc()` changed: only those, with their columns' encoders, reported as
 * updates of their rows (Grist reports formula changes as BulkUpdateRecord actions).
 */
export function writeRecalc(doc: RecalcTarget, changes: ChangeSet, result: RecalcResult): void {
  for (const [tableId, cols] of Object.entries(result.changes)) {
    const table = doc.meta.tables.get(tableId);
    const rows = result.rowsChanged[tableId];
    if (!table || table.isMeta || !rows?.length) {
      continue;
    }
    const colIds = Object.keys(cols);
    doc.beforeRows?.(tableId, rows, colIds, previousCells(cols, result.previous[tableId], rows));
    const tracked = doc.classes.track(tableId);
    const written = new Map<string, StoredValues>();
    let count = 0;
    // Rows with a written cell, when some cells turned out unchanged (else every row of `rows`).
    let reported: Set<number> | null = null;
    const writtenIds: Array<number[]> = [];
    const writtenCols: string[] = [];
    for (const [colId, {rowIds, values}] of Object.entries(cols)) {
      const col = table.byId.get(colId);
      if (!col || !rowIds.length) {
        continue;
      }
      const t = quoteIdent(tableId);
      const c = quoteIdent(colId);
      const stored = new StoredValues(col.declType);
      written.set(colId, stored);
      let encoded = new Array<SqlValue>(values.length);
      let skip: Set<number> | null = null;
      for (let i = 0; i < values.length; i++) {
        let v = values[i];
        if (Array.isArray(v) && v[0] === 'E') {
          v = storedError(v);
          encoded[i] = col.encode(v);
          // The engine holds errors with their message: one loaded from the file reads as changed
          // when recomputed, though what is stored stays the same.
          const old = doc.stmt(`SELECT ${c} FROM ${t} WHERE id = ?`).pluck().get(rowIds[i]);
          if (Buffer.isBuffer(old) && Buffer.isBuffer(encoded[i]) && old.equals(encoded[i] as Buffer)) {
            (skip ??= new Set()).add(i);
          }
        } else {
          encoded[i] = col.encode(v);
        }
      }
      stored.addAll(encoded);
      let ids = rowIds;
      if (skip) {
        reported ??= new Set();
        ids = rowIds.filter((_, i) => !skip!.has(i));
        encoded = encoded.filter((_, i) => !skip!.has(i));
        if (!ids.length) {
          continue;
        }
      }
      const lo = ids[0];
      const hi = ids[ids.length - 1];
      // Dense changes (most rows of their id range): one statement; SQLite asks for each row's
      // value (2-3x faster than a statement per row). Sparse ones: a statement per row.
      if (ids.length > BULK_CELLS && ids.length * 2 >= hi - lo + 1) {
        const bulk = doc.bulkCells;
        bulk.base = lo;
        if (ids.length === hi - lo + 1) {
          // Every id of the range (ascending, no gap): value i is already at id - lo.
          bulk.values = encoded;
        } else {
          bulk.values = new Array<SqlValue | undefined>(hi - lo + 1);
          for (let i = 0; i < ids.length; i++) {
            bulk.values[ids[i] - lo] = encoded[i];
          }
        }
        try {
          // Ids lo..hi without a gap are every row in the range; else count the table's rows there.
          const inRange =
            ids.length === hi - lo + 1
              ? ids.length
              : (doc.stmt(`SELECT count(*) FROM ${t} WHERE id BETWEEN ? AND ?`).pluck().get(lo, hi) as number);
          const every = inRange === ids.length ? '' : ` AND ${HAS_FN}(id)`;
          doc.stmt(`UPDATE ${t} SET ${c} = ${CELL_FN}(id) WHERE id BETWEEN ? AND ?${every}`).run(lo, hi);
        } finally {
          bulk.values = null;
        }
      } else {
        const stmt = doc.stmt(`UPDATE ${t} SET ${c} = ? WHERE id = ?`);
        for (let i = 0; i < ids.length; i++) {
          stmt.run(encoded[i], ids[i]);
        }
      }
      count += ids.length;
      // The action history takes the cells written rather than reading them back (D146).
      if (doc.afterCells && ids.length > doc.afterCells.minRows) doc.afterCells.written(tableId, colId, ids, encoded);
      writtenIds.push(ids);
      writtenCols.push(colId);
    }
    tracked.done(written, count);
    if (reported) {
      for (const ids of writtenIds) {
        for (const r of ids) {
          reported.add(r);
        }
      }
      if (reported.size) {
        changes.update(
          tableId,
          rows.filter((r) => reported!.has(r)),
          writtenCols,
        );
      }
    } else if (writtenIds.length) {
      changes.update(tableId, rows, writtenCols);
    }
  }
}

/**
 * The cells of `rows` before the recalc, per column of `changes`, from the engine (`previous`):
 * when every column changed exactly these rows (a column's changed cells, the common case); else
 * undefined.
 */
function previousCells(
  changes: {[colId: string]: ColumnChanges},
  previous: {[colId: string]: CellValue[]} | undefined,
  rows: readonly number[],
): CellValue[][] | undefined {
  const out: CellValue[][] = [];
  for (const [colId, {rowIds}] of Object.entries(changes)) {
    const olds = previous?.[colId];
    if (!olds || rowIds.length !== rows.length) return undefined;
    if (rowIds !== rows) for (let i = 0; i < rows.length; i++) if (rowIds[i] !== rows[i]) return undefined;
    out.push(olds);
  }
  return out;
}

/**
 * The private table recording that gristlite computed this document's formulas. Like every
 * `_gristlite_*` table it is dropped from downloads and imports, so a file that comes in again is
 * recomputed once (docs/decisions.md).
 */
export const FORMULAS_TABLE = '_gristlite_formulas';

/** Whether gristlite has computed this document's formulas (its `_gristlite_formulas` marker). */
export function formulasComputed(db: Database.Database): boolean {
  return Boolean(db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?`).get(FORMULAS_TABLE));
}

/**
 * The formula engine's results version, stored with the marker: a document computed by an engine
 * of another version is recomputed in full when its engine is next loaded (bump it whenever a
 * formula may compute differently).
 */
// 2: empty cells read as None, not the type's default (issue 37 §3): version-1 values may hold 0 or "" there.
export const FORMULA_RESULTS_VERSION = 2;

/**
 * Whether the stored formula values can be trusted as they are: computed and kept current by this
 * version of the engine. The engine then opens without evaluating formulas whose dependencies follow
 * from their text (docs/decisions.md).
 */
export function formulasTrusted(db: Database.Database): boolean {
  if (!formulasComputed(db)) return false;
  const cols = db.prepare(`SELECT name FROM pragma_table_info(?)`).pluck().all(FORMULAS_TABLE) as string[];
  if (!cols.includes('engineVersion')) return false;
  const v = db.prepare(`SELECT engineVersion FROM ${FORMULAS_TABLE} WHERE id = 1`).pluck().get();
  return Number(v) === FORMULA_RESULTS_VERSION;
}

/** Marks a document's formulas as computed by gristlite, by this version of its engine. */
export function markFormulasComputed(db: Database.Database): void {
  db.exec(
    `CREATE TABLE IF NOT EXISTS ${FORMULAS_TABLE} (id INTEGER PRIMARY KEY, computedAt TEXT, engineVersion INTEGER)`,
  );
  const cols = db.prepare(`SELECT name FROM pragma_table_info(?)`).pluck().all(FORMULAS_TABLE) as string[];
  if (!cols.includes('engineVersion')) db.exec(`ALTER TABLE ${FORMULAS_TABLE} ADD COLUMN engineVersion INTEGER`);
  db.prepare(`INSERT OR REPLACE INTO ${FORMULAS_TABLE} (id, computedAt, engineVersion) VALUES (1, ?, ?)`).run(
    new Date().toISOString(),
    FORMULA_RESULTS_VERSION,
  );
}

/**
 * An error cell as Grist stores a formula's error: `["E", name]`, the message kept only with a
 * trigger formula's previous value, and `["E", "InvalidTypedValue", type, value]` (objtypes.py
 * RaisedException). The engine's cells also carry the message.
 */
export function storedError(v: CellValue[]): CellValue {
  if (v.length !== 3) {
    return v;
  }
  if (v[1] === 'InvalidTypedValue' && typeof v[2] === 'string') {
    const m = /^Invalid ([\w:]+): ([\s\S]*)$/.exec(v[2]);
    if (m) {
      return ['E', 'InvalidTypedValue', m[1], m[2]];
    }
  }
  return ['E', v[1]];
}
