/**
 * Importing a file into an existing table (issue 42 §3): `POST /api/docs/{doc}/tables/{t}/import`.
 *
 * Two phases (decision D108). First the file is read as a stream, a batch of rows at a time:
 * each mapped value is converted to its target column's type as a write with parsing on converts
 * it (text parsed by the column's parser, references looked up, what does not convert kept as
 * alt-text and counted as a problem), and the converted rows are staged in a private SQLite file
 * beside the engine's other temporary files. Between batches the event loop is free, so a large
 * file never holds it while it is read; memory holds one batch. Then the staged rows are written
 * in ONE write transaction of the document (append, add-or-update on key columns, or replace),
 * read back from the staging file a batch at a time; access rules check that write as they check
 * the same record writes (`POST /records`, `PUT /records`, `POST /records/delete`). A dry run
 * makes the same write and rolls it back, so its counts are exactly those of the real import.
 */
import {mkdirSync, rmSync} from 'node:fs';
import {join} from 'node:path';
import Database from 'better-sqlite3';
import type {AccessContext} from '../access/rules/context.js';
import {ConversionError, columnType} from '@gristlite/formula';
import type {GristDoc} from '../doc/gristdoc.js';
import {pickColIdent, quoteIdent} from '../doc/identifiers.js';
import {type CellValue, makeDecoder} from '../doc/types.js';
import {BadRequest} from '../base/index.js';
import {makeId} from '../base/index.js';
import type {ImportSettings} from './settings.js';
import {type ImportFormat, type ParseOptions, readOneTable, type SourceCell} from './sources.js';

/** How the file's rows meet the table's. */
export type ImportMode = 'append' | 'upsert' | 'replace';
/** The modes of an import into a table. */
export const IMPORT_MODES: readonly ImportMode[] = ['append', 'upsert', 'replace'];

/** What an import into a table is asked to do. */
export interface TableImportOptions {
  /** append (default): add every row; upsert: add-or-update on `keys`; replace: remove every row first. */
  mode?: ImportMode;
  /** upsert: the target columns whose values find a row (as `require` in `PUT /records`). */
  keys?: string[];
  /**
   * Source column (header, or letter where the file has none) -> target column id, or null to
   * skip it. When given it is the whole mapping; otherwise columns are matched by id or label.
   */
  mapping?: Record<string, string | null> | null;
  parseOptions?: ParseOptions;
  /** Answer what would happen, and write nothing. */
  dryRun?: boolean;
}

/** A column's values that did not convert to its type (kept as alt-text, as Grist keeps them). */
export interface ColumnProblems {
  count: number;
  /** The first few: the data row (1 = the first row after the header) and the value kept. */
  examples: Array<{row: number; value: CellValue}>;
}

/** What an import into a table did (or, for a dry run, would do). */
export interface TableImportResult {
  tableId: string;
  dryRun: boolean;
  mode: ImportMode;
  /** Data rows read from the file. */
  rows: number;
  added: number;
  updated: number;
  /** upsert: rows whose key found a row that already held every value. */
  unchanged: number;
  /** replace: rows the table held before. */
  removed: number;
  /** Source column -> target column, as imported. */
  columns: Array<{source: string; target: string}>;
  /** Source columns not imported. */
  skipped: string[];
  /** By target column: values that did not convert to its type. */
  problems: Record<string, ColumnProblems>;
}

/** The uploaded file of an import. */
export interface ImportFile {
  path: string;
  fileName: string;
  format: ImportFormat;
}

const EXAMPLES = 3;

class DryRunDone extends Error {}

interface Target {
  source: string;
  index: number;
  colId: string;
  type: string;
  isText: boolean;
}

/** What a file's cell is before the column converts it: text stays text, dates become numbers. */
function prepare(v: SourceCell, t: Target): CellValue {
  if (v === null || v === '' || v === undefined) return t.isText ? '' : null;
  if (v instanceof Date) {
    const base = t.type.split(':')[0];
    const seconds = v.getTime() / 1000;
    if (base === 'Date') return Math.floor(seconds / 86400) * 86400;
    if (base === 'DateTime') return seconds;
    const iso = v.toISOString();
    return seconds % 86400 === 0 ? iso.slice(0, 10) : `${iso.slice(0, 10)} ${iso.slice(11, 19)}`;
  }
  if (typeof v === 'object') return JSON.stringify(v);
  return v;
}

/** Source columns matched to the table's columns (see `TableImportOptions.mapping`). */
function resolveMapping(
  sourceCols: string[],
  columns: Map<string, {type: string; isFormula: boolean; formula: string; label: string}>,
  mapping: Record<string, string | null> | null | undefined,
  tableId: string,
): {targets: Target[]; skipped: string[]} {
  const pairs: Array<[number, string]> = [];
  const skipped: string[] = [];
  if (mapping) {
    for (const source of Object.keys(mapping)) {
      if (!sourceCols.includes(source)) {
        throw new BadRequest(
          `mapping names "${source}", which is not a column of the file (its columns: ${sourceCols.map((c) => `"${c}"`).join(', ')})`,
        );
      }
    }
    sourceCols.forEach((source, i) => {
      const target = mapping[source];
      if (target === undefined || target === null) skipped.push(source);
      else if (typeof target !== 'string') throw new BadRequest(`mapping of "${source}" must be a column id or null`);
      else pairs.push([i, target]);
    });
  } else {
    const lower = (s: string) => s.toLowerCase();
    const find = (source: string): string | undefined => {
      const ids = [...columns.keys()];
      return (
        ids.find((id) => id === source) ??
        ids.find((id) => columns.get(id)!.label === source) ??
        ids.find((id) => id === pickColIdent(source, [])) ??
        ids.find((id) => lower(id) === lower(source) || lower(columns.get(id)!.label) === lower(source))
      );
    };
    const used = new Set<string>();
    sourceCols.forEach((source, i) => {
      const target = find(source);
      if (target === undefined || used.has(target) || columns.get(target)!.formula) skipped.push(source);
      else {
        used.add(target);
        pairs.push([i, target]);
      }
    });
    if (!pairs.length) {
      throw new BadRequest(
        `No column of the file matches a column of ${tableId} (the file's columns: ${sourceCols
          .map((c) => `"${c}"`)
          .join(', ')}): give a mapping`,
      );
    }
  }
  const seen = new Set<string>();
  const targets = pairs.map(([index, colId]) => {
    const col = columns.get(colId);
    if (!col) throw new BadRequest(`mapping targets "${colId}", which is not a column of ${tableId}`);
    if (col.isFormula && col.formula) {
      throw new BadRequest(`mapping targets "${colId}", a formula column of ${tableId}: it cannot take values`);
    }
    if (seen.has(colId)) throw new BadRequest(`mapping sends two columns of the file to "${colId}"`);
    seen.add(colId);
    const base = col.type.split(':')[0];
    return {source: sourceCols[index], index, colId, type: col.type, isText: base === 'Text' || base === 'Choice'};
  });
  if (!targets.length) throw new BadRequest('mapping imports no column');
  return {targets, skipped};
}

/** The arguments of `importIntoTable`. */
export interface TableImportArgs {
  /** The document as the caller sees it (access rules check the write). */
  grist: GristDoc;
  /** The caller's access rules context, or null without rules. */
  access: AccessContext | null;
  /** The caller's role (metadata rules of the write). */
  role: 'owners' | 'editors';
  tableId: string;
  file: ImportFile;
  options: TableImportOptions;
  settings: ImportSettings;
  /** A private directory for the staging file. */
  tmpDir: string;
}

/** Imports a file into an existing table (see the module comment). */
export async function importIntoTable(args: TableImportArgs): Promise<TableImportResult> {
  const {grist, access, tableId, file, options, settings, role} = args;
  const mode = options.mode ?? 'append';
  if (!IMPORT_MODES.includes(mode)) throw new BadRequest(`mode must be one of ${IMPORT_MODES.join(', ')}`);
  const keys = options.keys ?? [];
  if (mode === 'upsert' && !keys.length) throw new BadRequest('mode upsert needs keys: the columns that find a row');
  if (mode !== 'upsert' && keys.length) throw new BadRequest('keys are for mode upsert only');
  if (tableId.startsWith('_grist')) throw new BadRequest(`Cannot import into ${tableId}: it is a metadata table`);
  // The table and its columns as the caller sees them (404 for a table they cannot see).
  const columns = new Map(
    grist
      .listColumns(tableId)
      .filter((c) => c.id !== 'manualSort' && !c.id.startsWith('gristHelper_'))
      .map((c) => [
        c.id,
        {
          type: String(c.fields.type ?? 'Any'),
          isFormula: Boolean(c.fields.isFormula),
          formula: String(c.fields.formula ?? ''),
          label: String(c.fields.label ?? c.id),
        },
      ]),
  );
  // Matching keys reads the whole table: under rules, as for PUT /records, only for those who read all of it.
  if (mode === 'upsert') access?.requireWholeRead(tableId);

  const table = await readOneTable(file.path, file.fileName, file.format, options.parseOptions ?? {}, {
    maxUnzippedBytes: settings.maxUnzippedBytes,
    maxEntries: settings.maxEntries,
    maxJsonBytes: settings.maxJsonBytes,
  });
  mkdirSync(args.tmpDir, {recursive: true});
  const stagingPath = join(args.tmpDir, `${makeId()}.import-staging`);
  let staging: Database.Database | null = null;
  try {
    if (!table.columns.length) throw new BadRequest('The file holds no columns to import');
    const {targets, skipped} = resolveMapping(table.columns, columns, options.mapping, tableId);
    for (const k of keys) {
      if (!targets.some((t) => t.colId === k)) {
        throw new BadRequest(`key column "${k}" is not imported from the file (map a column of the file to it)`);
      }
    }
    staging = new Database(stagingPath);
    staging.pragma('journal_mode = OFF');
    staging.pragma('synchronous = OFF');
    // v: the row's values; k: its key (upsert); a: what the plan does with it (planUpsert).
    staging.exec('CREATE TABLE staged (v TEXT NOT NULL, k TEXT, a INTEGER)');
    // upsert: each key once, to tell a file that repeats keys (its plan cannot be made ahead).
    staging.exec('CREATE TABLE keys (k TEXT PRIMARY KEY) WITHOUT ROWID');
    const insert = staging.prepare('INSERT INTO staged (v, k) VALUES (?, ?)');
    const insertKey = staging.prepare('INSERT INTO keys (k) VALUES (?) ON CONFLICT DO NOTHING');
    let repeatedKeys = false;
    const keyIdx = keys.map((k) => targets.findIndex((t) => t.colId === k));
    const keyOf = keyFunction(keyIdx);
    const problems: Record<string, ColumnProblems> = {};
    const checks = targets.map((t) => {
      const convert = columnType(t.type).converter(undefined);
      return (v: CellValue): boolean => {
        if (v === null || v === '') return true;
        try {
          convert(v);
          return true;
        } catch (e) {
          if (e instanceof ConversionError) return false;
          throw e;
        }
      };
    });

    // Phase 1: read, convert and stage, a batch at a time.
    let rows = 0;
    let batch: SourceCell[][] = [];
    const stage = () => {
      if (!batch.length) return;
      const converted = targets.map((t) =>
        grist.convertForColumn(
          tableId,
          t.colId,
          batch.map((r) => prepare(r[t.index], t)),
        ),
      );
      const first = rows - batch.length + 1;
      targets.forEach((t, k) => {
        const values = converted[k];
        for (let i = 0; i < values.length; i++) {
          if (checks[k](values[i])) continue;
          const p = (problems[t.colId] ??= {count: 0, examples: []});
          p.count++;
          if (p.examples.length < EXAMPLES) p.examples.push({row: first + i, value: values[i]});
        }
      });
      staging!.transaction(() => {
        for (let i = 0; i < batch.length; i++) {
          const vals = converted.map((col) => col[i]);
          if (mode === 'upsert') {
            const key = keyOf(vals);
            insert.run(encodeRow(vals), key);
            if (!repeatedKeys && insertKey.run(key).changes === 0) repeatedKeys = true;
          } else insert.run(encodeRow(vals), null);
        }
      })();
      batch = [];
    };
    for await (const row of table.rows) {
      if (++rows > settings.maxRows) {
        throw new BadRequest(
          `The file has more than ${settings.maxRows} rows; at most that many are imported at once (GRISTLITE_IMPORT_MAX_ROWS)`,
        );
      }
      batch.push(row);
      if (batch.length >= settings.batchRows) {
        stage();
        // Other requests run between batches.
        await new Promise((r) => setImmediate(r));
      }
    }
    stage();

    // Phase 2: one write transaction from the staged rows.
    const result: TableImportResult = {
      tableId,
      dryRun: Boolean(options.dryRun),
      mode,
      rows,
      added: 0,
      updated: 0,
      unchanged: 0,
      removed: 0,
      columns: targets.map((t) => ({source: t.source, target: t.colId})),
      skipped,
      problems,
    };
    const staged = staging.prepare('SELECT v FROM staged ORDER BY rowid').pluck();
    // Upsert: matching and comparing are planned before the transaction, a batch at a time; the
    // plan is followed only if nothing wrote to the document meanwhile (D108).
    const plan =
      mode === 'upsert' && !repeatedKeys
        ? await planUpsert(grist, tableId, targets, keyIdx, staging, settings.batchRows)
        : null;
    try {
      grist.transaction(
        () => {
          if (mode === 'replace') result.removed = removeAll(grist, tableId, settings.batchRows);
          if (mode === 'upsert') {
            if (plan !== null && grist.dataVersion() === plan)
              followPlan(grist, tableId, targets, staging!, settings.batchRows, result);
            else upsertStaged(grist, tableId, targets, keys, staged, settings.batchRows, result);
          } else appendStaged(grist, tableId, targets, staged, settings.batchRows, result);
          if (options.dryRun) throw new DryRunDone();
        },
        {role},
      );
    } catch (e) {
      if (!(e instanceof DryRunDone)) throw e;
    }
    return result;
  } finally {
    staging?.close();
    rmSync(stagingPath, {force: true});
    await table.close?.().catch(() => undefined);
  }
}

/**
 * A staged row as JSON, which is fast; a row holding NaN or an infinity (which JSON would turn
 * into null) is marked and carries them as `{"$n": "NaN"}`.
 */
function encodeRow(row: CellValue[]): string {
  if (!row.some((v) => typeof v === 'number' && !Number.isFinite(v))) return JSON.stringify(row);
  return `!${JSON.stringify(row, (_k, v) => (typeof v === 'number' && !Number.isFinite(v) ? {$n: String(v)} : v))}`;
}

function decodeRow(text: string): CellValue[] {
  if (!text.startsWith('!')) return JSON.parse(text);
  return JSON.parse(text.slice(1), (_k, v) =>
    v && typeof v === 'object' && typeof v.$n === 'string' ? Number(v.$n) : v,
  );
}

/** Removes every row of the table (replace), through the document so that rules check it. */
function removeAll(grist: GristDoc, tableId: string, batchRows: number): number {
  const ids = grist.db
    .prepare(`SELECT id FROM ${quoteIdent(tableId)} ORDER BY id`)
    .pluck()
    .all() as number[];
  for (let i = 0; i < ids.length; i += batchRows)
    grist.removeRecords(tableId, ids.slice(i, i + batchRows), {parse: false});
  return ids.length;
}

function columnsOf(targets: Target[], rows: CellValue[][]): Record<string, CellValue[]> {
  const data: Record<string, CellValue[]> = {};
  targets.forEach((t, k) => {
    data[t.colId] = rows.map((r) => r[k]);
  });
  return data;
}

function appendStaged(
  grist: GristDoc,
  tableId: string,
  targets: Target[],
  staged: Database.Statement,
  batchRows: number,
  result: TableImportResult,
): void {
  let rows: CellValue[][] = [];
  const flush = () => {
    if (!rows.length) return;
    grist.addColumnar(tableId, columnsOf(targets, rows), {parse: false});
    result.added += rows.length;
    rows = [];
  };
  for (const v of staged.iterate() as IterableIterator<string>) {
    rows.push(decodeRow(v));
    if (rows.length >= batchRows) flush();
  }
  flush();
}

/** Equal cell values (lists and other objects compared by their JSON). */
const same = (a: CellValue | undefined, b: CellValue | undefined) =>
  a === b ||
  (typeof a === 'object' &&
    a !== null &&
    typeof b === 'object' &&
    b !== null &&
    JSON.stringify(a) === JSON.stringify(b));

/** A Map key for a cell value: its text for strings, its JSON otherwise (so 1 and "1" differ). */
const cellKey = (v: CellValue | undefined) => (typeof v === 'string' ? `s${v}` : `j${JSON.stringify(v ?? null)}`);

/**
 * Add-or-update as `PUT /records` does it (the first row whose key columns hold the values is
 * updated, else a row is added with them), with what `PUT` lacks for a file: a row whose values
 * are all there already is left alone (counted unchanged, written nowhere, so no webhook or
 * change event tells of it), and a key repeated in the file updates the row its first occurrence
 * found or added (the last occurrence wins).
 */
function upsertStaged(
  grist: GristDoc,
  tableId: string,
  targets: Target[],
  keys: string[],
  staged: Database.Statement,
  batchRows: number,
  result: TableImportResult,
): void {
  const keyIdx = keys.map((k) => targets.findIndex((t) => t.colId === k));
  const keyOf = keyFunction(keyIdx);
  // The table's keys, once (the first row of each key, as PUT /records matches).
  const keyMap = new Map<string, number>();
  const decoders = targets.map((t) => makeDecoder(t.type));
  const tableKeys = keyReader(grist, tableId, targets, keyIdx);
  for (let after = 0; after >= 0; ) after = tableKeys.chunk(after, keyMap);
  const read = rowReader(grist, tableId, targets);
  let adds: Array<{key: string; vals: CellValue[]}> = [];
  const addKeys = new Set<string>();
  let updates: Array<{id: number; vals: CellValue[]}> = [];
  const updateIds = new Set<number>();
  const flush = () => {
    if (updates.length) {
      const current = new Map<number, unknown[]>();
      for (const raw of read.raw().all(JSON.stringify(updates.map((u) => u.id))) as unknown[][]) {
        current.set(Number(raw[0]), raw.slice(1));
      }
      const changed = updates.filter((u) => {
        const now = current.get(u.id);
        return !now || targets.some((_, k) => !same(decoders[k](now[k]), u.vals[k]));
      });
      result.unchanged += updates.length - changed.length;
      if (changed.length) {
        grist.updateRecords(
          tableId,
          changed.map((u) => ({id: u.id, fields: Object.fromEntries(targets.map((t, k) => [t.colId, u.vals[k]]))})),
          {parse: false},
        );
      }
      result.updated += changed.length;
      updates = [];
      updateIds.clear();
    }
    if (adds.length) {
      const ids = grist.addColumnar(
        tableId,
        columnsOf(
          targets,
          adds.map((a) => a.vals),
        ),
        {parse: false},
      );
      adds.forEach((a, i) => {
        if (!keyMap.has(a.key)) keyMap.set(a.key, ids[i]);
      });
      result.added += adds.length;
      adds = [];
      addKeys.clear();
    }
  };
  for (const v of staged.iterate() as IterableIterator<string>) {
    const vals = decodeRow(v);
    const key = keyOf(vals);
    if (addKeys.has(key)) flush();
    const id = keyMap.get(key);
    if (id === undefined) {
      adds.push({key, vals});
      addKeys.add(key);
    } else {
      if (updateIds.has(id)) flush();
      updates.push({id, vals});
      updateIds.add(id);
    }
    if (adds.length + updates.length >= batchRows) flush();
  }
  flush();
}

/** The key of a row's values (its key columns' values, in the order of `keys`). */
function keyFunction(keyIdx: number[]): (vals: CellValue[]) => string {
  return keyIdx.length === 1
    ? (vals) => cellKey(vals[keyIdx[0]])
    : (vals) => keyIdx.map((i) => cellKey(vals[i])).join('\u0000');
}

/** Reads the table's keys a chunk at a time into a map (the first row of each key wins). */
function keyReader(grist: GristDoc, tableId: string, targets: Target[], keyIdx: number[]) {
  const CHUNK = 50_000;
  const keyOf = keyFunction(keyIdx);
  const decoders = targets.map((t) => makeDecoder(t.type));
  const stmt = grist.db
    .prepare(
      `SELECT id, ${keyIdx.map((i) => quoteIdent(targets[i].colId)).join(', ')} FROM ${quoteIdent(tableId)} WHERE id > ? ORDER BY id LIMIT ${CHUNK}`,
    )
    .raw();
  return {
    /** Adds the keys of the rows after id `after`; the last id read, or -1 at the end. */
    chunk(after: number, keyMap: Map<string, number>): number {
      const rows = stmt.all(after) as unknown[][];
      for (const raw of rows) {
        const vals: CellValue[] = [];
        keyIdx.forEach((i, j) => {
          vals[i] = decoders[i](raw[j + 1]);
        });
        const key = keyOf(vals);
        if (!keyMap.has(key)) keyMap.set(key, Number(raw[0]));
      }
      return rows.length < CHUNK ? -1 : Number(rows[rows.length - 1][0]);
    },
  };
}

/** Reads the imported columns of rows by id. */
function rowReader(grist: GristDoc, tableId: string, targets: Target[]): Database.Statement {
  return grist.db.prepare(
    `SELECT id, ${targets.map((t) => quoteIdent(t.colId)).join(', ')} FROM ${quoteIdent(tableId)} WHERE id IN (SELECT value FROM json_each(?))`,
  );
}

/** Whether a row holding `now` (stored values) already holds every value of `vals`. */
function holds(now: unknown[] | undefined, vals: CellValue[], decoders: Array<(raw: unknown) => CellValue>): boolean {
  return now !== undefined && decoders.every((d, k) => same(d(now[k]), vals[k]));
}

/**
 * Plans an upsert before its transaction (D108): the table's keys read a chunk at a time, then
 * each staged row marked add (0), unchanged (-1) or update (the row id), comparing it with the row
 * its key finds, a batch at a time, with the event loop free in between. Returns the document's
 * data version the plan was made against, or null when a write meanwhile leaves no plan to follow.
 * The transaction follows the plan only if the version is still the same. (A file that repeats a
 * key is not planned: its later occurrences depend on the earlier ones.)
 */
async function planUpsert(
  grist: GristDoc,
  tableId: string,
  targets: Target[],
  keyIdx: number[],
  staging: Database.Database,
  batchRows: number,
): Promise<string | null> {
  const version = grist.dataVersion();
  const keyMap = new Map<string, number>();
  const reader = keyReader(grist, tableId, targets, keyIdx);
  for (let after = 0; after >= 0; ) {
    after = reader.chunk(after, keyMap);
    await new Promise((r) => setImmediate(r));
    if (grist.dataVersion() !== version) return null;
  }
  const decoders = targets.map((t) => makeDecoder(t.type));
  const read = rowReader(grist, tableId, targets).raw();
  const select = staging.prepare('SELECT rowid, k, v FROM staged WHERE rowid > ? ORDER BY rowid LIMIT ?');
  const mark = staging.prepare('UPDATE staged SET a = ? WHERE rowid = ?');
  for (let last = 0; ; ) {
    const rows = select.all(last, batchRows) as Array<{rowid: number; k: string; v: string}>;
    if (!rows.length) break;
    last = rows[rows.length - 1].rowid;
    const ids = rows.map((r) => keyMap.get(r.k)).filter((id): id is number => id !== undefined);
    const current = new Map<number, unknown[]>();
    for (const raw of read.all(JSON.stringify(ids)) as unknown[][]) current.set(Number(raw[0]), raw.slice(1));
    staging.transaction(() => {
      for (const r of rows) {
        const id = keyMap.get(r.k);
        mark.run(id === undefined ? 0 : holds(current.get(id), decodeRow(r.v), decoders) ? -1 : id, r.rowid);
      }
    })();
    await new Promise((r) => setImmediate(r));
    if (grist.dataVersion() !== version) return null;
  }
  return version;
}

/** Inside the transaction: the plan's adds and updates, a batch at a time. */
function followPlan(
  grist: GristDoc,
  tableId: string,
  targets: Target[],
  staging: Database.Database,
  batchRows: number,
  result: TableImportResult,
): void {
  let adds: CellValue[][] = [];
  let updates: Array<{id: number; fields: Record<string, CellValue>}> = [];
  const flush = () => {
    if (updates.length) grist.updateRecords(tableId, updates, {parse: false});
    if (adds.length) grist.addColumnar(tableId, columnsOf(targets, adds), {parse: false});
    result.updated += updates.length;
    result.added += adds.length;
    adds = [];
    updates = [];
  };
  for (const {a, v} of staging.prepare('SELECT a, v FROM staged ORDER BY rowid').iterate() as IterableIterator<{
    a: number;
    v: string;
  }>) {
    if (a === -1) {
      result.unchanged++;
      continue;
    }
    const vals = decodeRow(v);
    if (a === 0) adds.push(vals);
    else updates.push({id: a, fields: Object.fromEntries(targets.map((t, k) => [t.colId, vals[k]]))});
    if (adds.length + updates.length >= batchRows) flush();
  }
  flush();
}
