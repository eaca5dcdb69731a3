// The oracle: a real Grist document's formula cells recomputed by the engine, compared with what
// Grist stored. Engine-only: the schema and cells are read with better-sqlite3 and decoded as the
// doc layer decodes them; the engine's results are encoded as the doc layer would write them and
// stored through SQLite (same declared column type, so the same affinity) before comparing.
import Database from 'better-sqlite3';
import {copyFileSync, mkdtempSync, readdirSync, rmSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {basename, join} from 'node:path';
import {loads} from '@gristlite/formula';
import {META_TYPES} from '../src/doc/schema.js';
import {type CellValue, makeDecoder, makeEncoder} from '@gristlite/formula';
import {type ColumnSpec, FormulaEngine, type TableSpec} from '@gristlite/formula';
import {defaultCell} from '@gristlite/formula';
import {setClock} from '@gristlite/formula';
import {setDocTimezone} from '@gristlite/formula';
import {findFixtures, missingFixtures} from '../src/testing/fixtures.js';

/** Formulas whose value depends on the moment or on the server: not compared. */
export const VOLATILE = /\b(NOW|TODAY|SELF_HYPERLINK|UUID)\b|\brandom\b/;

export interface ColumnResult {
  tableId: string;
  colId: string;
  formula: string;
  cells: number;
  matched: number;
  /** A few mismatches: row id, what Grist stored, what the engine would store. */
  samples: Array<{row: number; grist: string; ours: string}>;
}

export interface DocResult {
  doc: string;
  cells: number;
  matched: number;
  columns: number;
  columnsMatched: number;
  skippedVolatile: number;
  mismatches: ColumnResult[];
  /**
   * Volatile formulas (NOW, TODAY), computed with the clock at the document's last action: cells
   * equal to what Grist stored, and cells of the same shape (storage class; for marshalled values
   * the type tag and, for datetimes, the zone). NOW() is stored to the microsecond, so it matches
   * by shape only.
   */
  volatile: {cells: number; matched: number; sameShape: number; mismatches: ColumnResult[]};
  ms: number;
}

type Raw = null | number | bigint | string | Buffer;

/** A stored SQLite value as a short readable string (storage class and value). */
export function showRaw(v: Raw): string {
  if (v === null) {
    return 'NULL';
  }
  if (typeof v === 'bigint') {
    return `INTEGER ${v}`;
  }
  if (typeof v === 'number') {
    return `REAL ${v}`;
  }
  if (typeof v === 'string') {
    return `TEXT ${JSON.stringify(v.length > 80 ? v.slice(0, 80) + '...' : v)}`;
  }
  let text: string;
  try {
    text = JSON.stringify(loads(v));
  } catch {
    text = v.toString('hex');
  }
  return `BLOB ${text.length > 400 ? text.slice(0, 400) + '...' : text}`;
}

/** Same storage class; for marshalled values the same type tag and, for `["D", ts, zone]`, zone. */
function sameShape(a: Raw, b: Raw): boolean {
  if (a === null || b === null) {
    return a === b;
  }
  if (typeof a !== typeof b) {
    return false;
  }
  if (!Buffer.isBuffer(a) || !Buffer.isBuffer(b)) {
    return true;
  }
  try {
    const x = loads(a) as unknown;
    const y = loads(b) as unknown;
    if (!Array.isArray(x) || !Array.isArray(y)) {
      return typeof x === typeof y;
    }
    return x[0] === y[0] && (x[0] !== 'D' || x[2] === y[2]);
  } catch {
    return false;
  }
}

/**
 * When Grist last touched the document: the time of its last action in `_gristsys_ActionHistory`
 * (ms), which is when its volatile cells were last computed at the latest. Null when unknown.
 */
export function lastActionTime(db: Database.Database): number | null {
  try {
    const row = db.prepare('SELECT body FROM _gristsys_ActionHistory ORDER BY id DESC LIMIT 1').get() as
      | {body: Buffer}
      | undefined;
    const info = row ? (loads(row.body) as {info?: [number, {time?: number | bigint}]}).info : undefined;
    const time = info?.[1]?.time;
    return time === undefined ? null : Number(time);
  } catch {
    return null;
  }
}

function sameRaw(a: Raw, b: Raw): boolean {
  if (a === null || b === null) {
    return a === b;
  }
  if (typeof a !== typeof b) {
    return false;
  }
  if (Buffer.isBuffer(a)) {
    return Buffer.isBuffer(b) && a.equals(b);
  }
  if (typeof a === 'number') {
    return a === b || (Number.isNaN(a) && Number.isNaN(b as number));
  }
  return a === b;
}

/** better-sqlite3 value (safe integers) -> what the doc layer's decoder receives. */
function plain(v: Raw): unknown {
  return typeof v === 'bigint' ? Number(v) : v;
}

function columnNames(db: Database.Database, table: string): Map<string, string> {
  const rows = db.prepare('SELECT name, type FROM pragma_table_info(?)').all(table) as Array<{
    name: string;
    type: string;
  }>;
  return new Map(rows.map((r) => [r.name, r.type]));
}

export interface MetaCol {
  id: number;
  tableRef: number;
  colId: string;
  type: string;
  isFormula: boolean;
  formula: string;
  recalcWhen: number;
  recalcDeps: number[];
  summarySourceCol: number;
  declType: string;
}

/**
 * How formula cells are blanked before recomputing: to NULL (documents from other writers hold
 * NULL formula cells) or to the column type's default (0, '', false). Either way, what would be
 * stored (the blank, overwritten by the cells the recalculation reports changed) must be Grist's.
 */
export type Blank = 'null' | 'default';

/** Runs the oracle over one document (copied to a temporary directory first). */
export function oracleDoc(original: string, blank: Blank = 'null'): DocResult {
  const start = performance.now();
  const dir = mkdtempSync(join(tmpdir(), 'gl-oracle-'));
  const path = join(dir, basename(original));
  copyFileSync(original, path);
  const db = new Database(path, {readonly: true});
  db.defaultSafeIntegers(true);
  const scratch = new Database(':memory:');
  scratch.defaultSafeIntegers(true);
  try {
    return run(db, scratch, basename(original), start, blank);
  } finally {
    db.close();
    scratch.close();
    rmSync(dir, {recursive: true, force: true});
  }
}

/** A table as loaded into the engine: its spec, its columns' metadata, its data. */
export interface LoadedTable {
  tableId: string;
  spec: TableSpec;
  cols: MetaCol[];
  rowIds: number[];
  /** Data columns' decoded cells (formula columns are loaded blank). */
  values: {[colId: string]: CellValue[]};
  meta: boolean;
}

/** Reads a document's schema and tables (safe-integer connection) as the doc layer would hand them to the engine. */
export function readDoc(db: Database.Database): LoadedTable[] {
  const tcols = columnNames(db, '_grist_Tables');
  const ccols = columnNames(db, '_grist_Tables_column');
  const tables = db
    .prepare(`SELECT id, tableId${tcols.has('summarySourceTable') ? ', summarySourceTable' : ''}
    FROM _grist_Tables`)
    .all() as Array<{id: bigint; tableId: string; summarySourceTable?: bigint}>;
  const field = (name: string, dflt: string) => (ccols.has(name) ? name : `${dflt} AS ${name}`);
  const colRows = db
    .prepare(`SELECT id, parentId, colId, type, isFormula, formula,
      ${field('recalcWhen', '0')}, ${field('recalcDeps', 'NULL')}, ${field('summarySourceCol', '0')}
    FROM _grist_Tables_column ORDER BY parentPos, id`)
    .all() as Array<{[k: string]: Raw}>;
  const depsDecoder = makeDecoder('RefList:_grist_Tables_column');
  const byTable = new Map<number, MetaCol[]>();
  const colIdOf = new Map<number, string>();
  for (const r of colRows) {
    const deps = depsDecoder(plain(r.recalcDeps));
    const c: MetaCol = {
      id: Number(r.id),
      tableRef: Number(r.parentId),
      colId: String(r.colId),
      type: String(r.type || 'Any'),
      isFormula: Boolean(Number(r.isFormula ?? 0)),
      formula: String(r.formula ?? ''),
      recalcWhen: Number(r.recalcWhen ?? 0),
      recalcDeps: Array.isArray(deps) ? (deps.slice(1) as number[]) : [],
      summarySourceCol: Number(r.summarySourceCol ?? 0),
      declType: '',
    };
    colIdOf.set(c.id, c.colId);
    let list = byTable.get(c.tableRef);
    if (!list) {
      list = [];
      byTable.set(c.tableRef, list);
    }
    list.push(c);
  }
  const tableIdOf = new Map(tables.map((t) => [Number(t.id), t.tableId]));

  const loaded: LoadedTable[] = [];
  for (const t of tables) {
    const sqlCols = columnNames(db, t.tableId);
    if (!sqlCols.size) {
      continue;
    }
    const cols = (byTable.get(Number(t.id)) ?? []).filter((c) => sqlCols.has(c.colId));
    for (const c of cols) {
      c.declType = sqlCols.get(c.colId)!;
    }
    const src = Number(t.summarySourceTable ?? 0);
    const spec: TableSpec = {
      tableId: t.tableId,
      columns: cols.map(
        (c): ColumnSpec => ({
          colId: c.colId,
          type: c.type,
          isFormula: c.isFormula,
          formula: c.formula,
          recalcWhen: c.recalcWhen,
          recalcDeps: c.recalcDeps.map((d) => colIdOf.get(d)).filter((x): x is string => x !== undefined),
        }),
      ),
      summarySourceTable: src ? (tableIdOf.get(src) ?? null) : null,
      summaryGroupBy: src ? cols.filter((c) => c.summarySourceCol).map((c) => c.colId) : undefined,
    };
    const rows = db.prepare(`SELECT * FROM "${t.tableId.replace(/"/g, '""')}" ORDER BY id`).all() as Array<{
      [k: string]: Raw;
    }>;
    const rowIds = rows.map((r) => Number(r.id));
    const values: {[colId: string]: CellValue[]} = {};
    for (const c of cols) {
      if (c.isFormula) {
        continue;
      } // blanked: the engine computes them
      const decode = makeDecoder(c.type);
      values[c.colId] = rows.map((r) => decode(plain(r[c.colId])));
    }
    loaded.push({tableId: t.tableId, spec, cols, rowIds, values, meta: false});
  }
  // Metadata tables, as formulas may read them (`_grist_Tables_column.all.colId`).
  const sqlTables = db
    .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE '\\_grist\\_%' ESCAPE '\\'")
    .all() as Array<{name: string}>;
  for (const {name} of sqlTables) {
    const types = (META_TYPES as {[t: string]: {[c: string]: string}})[name];
    if (!types) {
      continue;
    }
    const sqlCols = columnNames(db, name);
    const cols = Object.entries(types).filter(([colId]) => sqlCols.has(colId));
    const rows = db.prepare(`SELECT * FROM "${name}" ORDER BY id`).all() as Array<{[k: string]: Raw}>;
    const values: {[colId: string]: CellValue[]} = {};
    for (const [colId, type] of cols) {
      const decode = makeDecoder(type);
      values[colId] = rows.map((r) => decode(plain(r[colId])));
    }
    loaded.push({
      tableId: name,
      spec: {tableId: name, columns: cols.map(([colId, type]) => ({colId, type, isFormula: false, formula: ''}))},
      cols: [],
      rowIds: rows.map((r) => Number(r.id)),
      values,
      meta: true,
    });
  }
  return loaded;
}

/** A new engine with the tables loaded (formula columns blank) and everything recomputed. */
export function loadEngine(tables: LoadedTable[]): FormulaEngine {
  const engine = new FormulaEngine();
  for (const t of tables) {
    engine.loadTable(t.spec, t.rowIds, t.values);
  }
  engine.recomputeAll();
  engine.recalc();
  return engine;
}

/**
 * A new engine loaded as the document layer loads one (doc/formulas.ts): user tables lazy, their
 * cells read from a source when needed (one by one, then whole), formula cells blanked `blank`;
 * metadata tables loaded whole. Everything is then recomputed; returns the engine, and what would
 * be stored in each formula column: the blank, overwritten by the cells the recalculation changed.
 */
export function loadBlanked(
  tables: LoadedTable[],
  blank: Blank,
): {engine: FormulaEngine; stored: Map<string, CellValue[]>} {
  const engine = new FormulaEngine();
  const stored = new Map<string, CellValue[]>();
  for (const t of tables) {
    if (t.meta) {
      engine.loadTable(t.spec, t.rowIds, t.values);
      continue;
    }
    const slotOf = new Map(t.rowIds.map((r, i) => [r, i]));
    const cellsOf = new Map<string, CellValue[]>();
    for (const c of t.cols) {
      let cells = t.values[c.colId];
      if (c.isFormula) {
        const b = blank === 'null' ? null : defaultCell(c.type);
        cells = t.rowIds.map(() => b);
        stored.set(`${t.tableId}\0${c.colId}`, cells.slice());
      }
      if (cells) cellsOf.set(c.colId, cells);
    }
    const max = t.rowIds.length ? Math.max(...t.rowIds) : 0;
    engine.loadLazyTable(t.spec, {max, exists: (r) => slotOf.has(r), ids: () => t.rowIds.slice()}, (colId) => {
      const cells = cellsOf.get(colId);
      if (!cells) return null;
      return {
        all: (withIds) => ({cells: cells.slice(), ids: withIds ? t.rowIds.slice() : null}),
        one: (rowId) => {
          const slot = slotOf.get(rowId);
          return slot === undefined ? undefined : cells[slot];
        },
      };
    });
  }
  engine.recomputeAll();
  const result = engine.recalc();
  for (const [tableId, cols] of Object.entries(result.changes)) {
    const t = tables.find((x) => x.tableId === tableId && !x.meta);
    if (!t) continue;
    const slotOf = new Map(t.rowIds.map((r, i) => [r, i]));
    for (const [colId, {rowIds, values}] of Object.entries(cols)) {
      const cells = stored.get(`${tableId}\0${colId}`);
      if (!cells) continue;
      rowIds.forEach((r, i) => {
        const slot = slotOf.get(r);
        if (slot !== undefined) cells[slot] = values[i];
      });
    }
  }
  return {engine, stored};
}

/** Opens a copy of a document read-only with safe integers; `fn` gets the connection. */
export function withDocCopy<T>(original: string, fn: (db: Database.Database) => T): T {
  const dir = mkdtempSync(join(tmpdir(), 'gl-oracle-'));
  const path = join(dir, basename(original));
  copyFileSync(original, path);
  const db = new Database(path, {readonly: true});
  db.defaultSafeIntegers(true);
  try {
    return fn(db);
  } finally {
    db.close();
    rmSync(dir, {recursive: true, force: true});
  }
}

/** The document's time zone, as the doc layer gives it to formulas (`_grist_DocInfo.timezone`). */
function docTimezone(db: Database.Database): string {
  try {
    const row = db.prepare('SELECT timezone FROM _grist_DocInfo').get() as {timezone?: string} | undefined;
    return row?.timezone || 'UTC';
  } catch {
    return 'UTC';
  }
}

function run(db: Database.Database, scratch: Database.Database, doc: string, start: number, blank: Blank): DocResult {
  const all = readDoc(db);
  const loaded = all.filter((t) => !t.meta);
  const at = lastActionTime(db);
  const zone = setDocTimezone(docTimezone(db));
  const clock = at === null ? null : setClock(() => at);
  let stored: Map<string, CellValue[]>;
  try {
    ({stored} = loadBlanked(all, blank));
  } finally {
    if (clock) {
      setClock(clock);
    }
    setDocTimezone(zone);
  }

  const result: DocResult = {
    doc,
    cells: 0,
    matched: 0,
    columns: 0,
    columnsMatched: 0,
    skippedVolatile: 0,
    mismatches: [],
    volatile: {cells: 0, matched: 0, sameShape: 0, mismatches: []},
    ms: 0,
  };
  for (const {tableId, cols} of loaded) {
    const q = `"${tableId.replace(/"/g, '""')}"`;
    for (const c of cols) {
      if (!c.isFormula) {
        continue;
      }
      const grist = db
        .prepare(`SELECT id, "${c.colId.replace(/"/g, '""')}" AS v FROM ${q} ORDER BY id`)
        .all() as Array<{id: bigint; v: Raw}>;
      const cells = stored.get(`${tableId}\0${c.colId}`)!;
      const volatile = VOLATILE.test(c.formula);
      if (
        volatile &&
        (at === null || !/\b(NOW|TODAY)\b/.test(c.formula) || /\b(SELF_HYPERLINK|UUID)\b|\brandom\b/.test(c.formula))
      ) {
        result.skippedVolatile += grist.length;
        continue;
      }
      // What the doc layer would store for the engine's values, through a column of the same declared type.
      const encode = makeEncoder(c.type, c.declType);
      scratch.exec(`DROP TABLE IF EXISTS o; CREATE TABLE o (id INTEGER PRIMARY KEY, v ${c.declType || 'BLOB'})`);
      const ins = scratch.prepare('INSERT INTO o (id, v) VALUES (?, ?)');
      scratch.transaction(() => {
        // Rows in id order, as the table was read.
        grist.forEach((s, i) => ins.run(s.id, encode(cells[i]) as Raw));
      })();
      const ours = scratch.prepare('SELECT id, v FROM o ORDER BY id').all() as Array<{id: bigint; v: Raw}>;
      const col: ColumnResult = {
        tableId,
        colId: c.colId,
        formula: c.formula,
        cells: grist.length,
        matched: 0,
        samples: [],
      };
      let shaped = 0;
      for (let i = 0; i < grist.length; i++) {
        if (sameShape(grist[i].v, ours[i].v)) {
          shaped++;
        }
        if (sameRaw(grist[i].v, ours[i].v)) {
          col.matched++;
          continue;
        }
        if (col.samples.length < 3) {
          col.samples.push({row: Number(grist[i].id), grist: showRaw(grist[i].v), ours: showRaw(ours[i].v)});
        }
      }
      if (volatile) {
        const v = result.volatile;
        v.cells += col.cells;
        v.matched += col.matched;
        v.sameShape += shaped;
        if (col.matched < col.cells) {
          v.mismatches.push(col);
        }
        continue;
      }
      result.cells += col.cells;
      result.matched += col.matched;
      result.columns++;
      if (col.matched === col.cells) {
        result.columnsMatched++;
      } else {
        result.mismatches.push(col);
      }
    }
  }
  result.ms = performance.now() - start;
  return result;
}

/** The oracle needs at least this many documents (the six fixtures and the corpus: 101). */
export const ORACLE_MIN_DOCS = 100;

/**
 * The oracle's documents (the six fixtures and the corpus, full paths), or why they are missing:
 * the oracle tests then fail under CI (saying which set) and print SKIPPED elsewhere.
 */
export function oracleDocs(): {docs: string[]} | {missing: string} {
  const missing = missingFixtures(['grist', 'corpus']);
  if (missing) {
    return {missing};
  }
  const {grist, corpus} = findFixtures()!;
  return {
    docs: [grist, corpus!].flatMap((d) =>
      readdirSync(d)
        .filter((f) => f.endsWith('.grist'))
        .sort()
        .map((f) => join(d, f)),
    ),
  };
}
