import type Database from 'better-sqlite3';
import {type CellValue, type GristDoc, makeDecoder, quoteIdent} from '../doc/index.js';

import type {Target, TableImportResult} from './into-table-types.js';

/**
 * A staged row as JSON, which is fast; a row holding NaN or an infinity (which JSON would turn
 * into null) is marked and carries them as `{"$n": "NaN"}`.
 */
export function encodeRow(row: CellValue[]): string {
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
export function removeAll(grist: GristDoc, tableId: string, batchRows: number): number {
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

export function appendStaged(
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
export function upsertStaged(
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
export function keyFunction(keyIdx: number[]): (vals: CellValue[]) => string {
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
export async function planUpsert(
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
export function followPlan(
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
