// Shared helpers of the migrations*.test.ts suites: where the fixtures are, and the stored data
// of a document read with plain SQL (tables and columns keyed by their metadata row ids, so that
// renames made by migrations do not hide what a table or column held).
import Database from 'better-sqlite3';
import {copyFileSync, mkdtempSync, readdirSync, rmSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {type CellValue, marshalLoads} from '../src/doc/index.js';
import {type FixtureSet, findFixtures, missingFixtures, skipOrFail} from '../src/testing/fixtures.js';

/**
 * The fixture directories a suite names ([grist] or [grist, grist-corpus]), or why one is missing:
 * the suite then registers `placeholder(name, missing)`, a failure under CI and a SKIPPED line elsewhere.
 */
export function findFixtureDirs(sets: readonly FixtureSet[]): {dirs: string[]} | {missing: string} {
  const missing = missingFixtures(sets);
  if (missing) {
    return {missing};
  }
  const found = findFixtures()!;
  return {dirs: sets.includes('corpus') ? [found.grist, found.corpus!] : [found.grist]};
}

/** The one test of a suite whose fixtures are missing: fails under CI (saying which), SKIPPED elsewhere. */
export function placeholder(test: (name: string, fn: () => void) => void, name: string, missing: string): void {
  test(name, () => skipOrFail(name, missing));
}

export function listFixtures(dirs: string[]): Array<{name: string; path: string}> {
  return dirs.flatMap((d) =>
    readdirSync(d)
      .filter((f) => f.endsWith('.grist'))
      .sort()
      .map((name) => ({name, path: join(d, name)})),
  );
}

/** Temporary directories of this process's copies, removed when it exits. */
const made: string[] = [];
process.on('exit', () => {
  for (const d of made) {
    rmSync(d, {recursive: true, force: true});
  }
});

export function copyTo(path: string, name: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'gl-mig-'));
  made.push(dir);
  const dest = join(dir, name);
  copyFileSync(path, dest);
  return dest;
}

export function decodeStored(raw: unknown, type: string): CellValue {
  let v =
    raw instanceof Uint8Array
      ? (marshalLoads(raw) as CellValue)
      : typeof raw === 'bigint'
        ? Number(raw)
        : (raw as CellValue);
  if (type === 'Bool' && (v === 0 || v === 1)) {
    v = v === 1;
  }
  const isList = type === 'ChoiceList' || type === 'Attachments' || type.startsWith('RefList:');
  if (isList && typeof v === 'string' && v.startsWith('[')) {
    try {
      v = ['L', ...JSON.parse(v)];
    } catch {
      /* text */
    }
  }
  return v;
}

export interface StoredColumn {
  tableRef: number;
  tableId: string;
  colRef: number;
  colId: string;
  type: string;
  values: Map<number, CellValue>;
}

/** Every stored user column: `tableRef:colRef` -> its id, type and values by row id. */
export function storedData(path: string): Map<string, StoredColumn> {
  const db = new Database(path, {readonly: true});
  try {
    const out = new Map<string, StoredColumn>();
    const cols = db
      .prepare(`SELECT t.id AS tableRef, t.tableId, c.id AS colRef, c.colId, c.type
      FROM _grist_Tables_column c JOIN _grist_Tables t ON c.parentId = t.id ORDER BY c.id`)
      .all() as Array<{tableRef: number; tableId: string; colRef: number; colId: string; type: string}>;
    const tableRows = new Map<string, Array<Record<string, unknown>>>();
    const sqlCols = new Map<string, Set<string>>();
    for (const c of cols) {
      if (!tableRows.has(c.tableId)) {
        const names = db.prepare(`SELECT name FROM pragma_table_info(?)`).pluck().all(c.tableId) as string[];
        sqlCols.set(c.tableId, new Set(names));
        tableRows.set(
          c.tableId,
          names.length
            ? (db.prepare(`SELECT * FROM "${c.tableId.replace(/"/g, '""')}"`).all() as Array<Record<string, unknown>>)
            : [],
        );
      }
      const rows = tableRows.get(c.tableId)!;
      if (!sqlCols.get(c.tableId)!.has(c.colId)) {
        continue;
      }
      out.set(`${c.tableRef}:${c.colRef}`, {
        ...c,
        values: new Map(rows.map((r) => [Number(r.id), decodeStored(r[c.colId], c.type)])),
      });
    }
    return out;
  } finally {
    db.close();
  }
}

export function readPragma(path: string, sql: string): unknown {
  const db = new Database(path, {readonly: true});
  try {
    return db.prepare(sql).pluck().get();
  } catch {
    return null;
  } finally {
    db.close();
  }
}
