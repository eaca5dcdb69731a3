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
import {pickColIdent} from '../doc/identifiers.js';
import type {CellValue} from '../doc/types.js';
import {BadRequest} from '../base/index.js';
import {makeId} from '../base/index.js';
import type {ImportSettings} from './settings.js';
import {readOneTable, type SourceCell} from './sources.js';

import type {Target} from './into-table-types.js';
import {
  appendStaged,
  encodeRow,
  followPlan,
  keyFunction,
  planUpsert,
  removeAll,
  upsertStaged,
} from './into-table-write.js';
import {IMPORT_MODES} from './into-table-types.js';
import type {ColumnProblems, ImportFile, TableImportOptions, TableImportResult} from './into-table-types.js';

export {
  type ColumnProblems,
  IMPORT_MODES,
  type ImportFile,
  type ImportMode,
  type TableImportOptions,
  type TableImportResult,
} from './into-table-types.js';

const EXAMPLES = 3;

class DryRunDone extends Error {}

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
