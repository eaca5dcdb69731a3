/**
 * Webhook events (SPEC §13.7, decision 6), written to the outbox in the same SQLite transaction as
 * the change that causes them: an event can neither be lost by a crash nor sent for a change that
 * rolled back.
 *
 * The document engine calls, inside its write transaction:
 *   const before = captureBefore(db, tableId, updatedIds, removedIds);   // before writing
 *   ...apply the change...
 *   recordEvents(db, {tableId, added, updated, removed, before});        // after writing
 * `captureBefore` returns undefined (and costs one indexed query) when no enabled webhook watches
 * the table. Without `before`, ready-column and watched-column logic cannot see old values: an
 * updated ready row then counts as "ready before" (an `update`, never an `add`), and `remove`
 * events carry only the row id.
 */
import type Database from 'better-sqlite3';
import {makeDecoder, type CellValue} from '../doc/types.js';
import {columnTypes, decodeTrigger, type EventType, type TriggerRow} from './meta.js';
import {OUTBOX_TABLE, SECRETS_TABLE, hasTable, upgradeOutbox, upgradeSecrets} from './schema.js';
import type {RowValues} from '../doc/guard.js';

/** A row's values by column id, `id` included (the same shape access rules read). */
export type {RowValues};
/** Values of rows before a change, by row id: the full row (`id` and every column). */
export type BeforeRows = ReadonlyMap<number, Readonly<RowValues>>;

/** What one write did to one table. */
export interface RowChange {
  tableId: string;
  added?: readonly number[];
  updated?: readonly number[];
  removed?: readonly number[];
  /** Rows as they were before the write (from `captureBefore`), for updated and removed rows. */
  before?: BeforeRows;
  /** Who made the write: deliveries name the document API key behind it (issue 30). */
  actor?: {apiKeyId?: number} | null;
}

/** One event waiting for delivery: the webhook, the event type and the row. */
export interface OutboxEvent {
  webhookId: string;
  eventType: EventType;
  row: RowValues;
}

interface Statements {
  triggers: Database.Statement;
}
const statements = new WeakMap<Database.Database, Statements>();

function stmts(db: Database.Database): Statements | null {
  let s = statements.get(db);
  if (!s) {
    try {
      s = {
        triggers: db.prepare(
          `SELECT t.* FROM _grist_Triggers t JOIN _grist_Tables tb ON tb.id = t.tableRef WHERE tb.tableId = ? ORDER BY t.id`,
        ),
      };
    } catch {
      return null; // No trigger metadata in this document (yet).
    }
    statements.set(db, s);
  }
  return s;
}

interface ActiveTrigger extends TriggerRow {
  readyColId: string | null;
  watchedColIds: string[];
  /** Webhooks whose `update` rows carry `_previous` (D105). */
  withPrevious: Set<string>;
}

/**
 * The key of an `update` row's previous values (D105). Grist strips leading underscores from
 * column ids, so no column can be named so.
 */
export const PREVIOUS_KEY = '_previous';

/** Enabled triggers of a table whose webhooks have a secret (a URL to deliver to). */
function activeTriggers(db: Database.Database, tableId: string): {tableRef: number; triggers: ActiveTrigger[]} | null {
  const s = stmts(db);
  if (!s) return null;
  const raw = s.triggers.all(tableId) as Record<string, unknown>[];
  if (!raw.length) return null;
  const triggers = raw.map(decodeTrigger).filter((t) => t.enabled && t.webhookIds.length);
  if (!triggers.length || !hasTable(db, SECRETS_TABLE)) return null;
  upgradeSecrets(db);
  const secrets = db.prepare(`SELECT webhookId, includePrevious FROM ${SECRETS_TABLE}`).all() as {
    webhookId: string;
    includePrevious: number;
  }[];
  const known = new Set(secrets.map((r) => r.webhookId));
  const withPrevious = new Set(secrets.filter((r) => r.includePrevious).map((r) => r.webhookId));
  const colIds = new Map(
    (
      db.prepare('SELECT c.id, c.colId FROM _grist_Tables_column c WHERE c.parentId = ?').all(triggers[0].tableRef) as {
        id: number;
        colId: unknown;
      }[]
    ).map((r) => [r.id, String(r.colId)]),
  );
  const active: ActiveTrigger[] = [];
  for (const t of triggers) {
    const webhookIds = t.webhookIds.filter((id) => known.has(id));
    if (!webhookIds.length) continue;
    // Grist ignores a trigger whose ready or watched columns are not (any more) in its table.
    if (t.isReadyColRef && !colIds.has(t.isReadyColRef)) continue;
    if (t.watchedColRefs.some((ref) => !colIds.has(ref))) continue;
    active.push({
      ...t,
      webhookIds,
      readyColId: t.isReadyColRef ? colIds.get(t.isReadyColRef)! : null,
      watchedColIds: t.watchedColRefs.map((ref) => colIds.get(ref)!),
      withPrevious,
    });
  }
  return active.length ? {tableRef: triggers[0].tableRef, triggers: active} : null;
}

function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** Full rows (`id` first, then every column in table order), decoded as Grist serves raw values. */
export function readRows(
  db: Database.Database,
  tableId: string,
  tableRef: number,
  ids: Iterable<number>,
): Map<number, RowValues> {
  const list = [...new Set(ids)];
  const out = new Map<number, RowValues>();
  if (!list.length) return out;
  const types = columnTypes(db, tableRef);
  const decoders = new Map<string, (raw: unknown) => CellValue>();
  const anyDecoder = makeDecoder('Any');
  const rows = db
    .prepare(`SELECT * FROM ${quoteIdent(tableId)} WHERE id IN (SELECT value FROM json_each(?)) ORDER BY id`)
    .all(JSON.stringify(list)) as Record<string, unknown>[];
  for (const raw of rows) {
    const row: RowValues = {};
    for (const [col, value] of Object.entries(raw)) {
      if (col === 'id') {
        row.id = Number(value);
        continue;
      }
      let dec = decoders.get(col);
      if (!dec) {
        const type = types.get(col);
        dec = type ? makeDecoder(type) : anyDecoder;
        decoders.set(col, dec);
      }
      row[col] = dec(value);
    }
    out.set(Number(raw.id), row);
  }
  return out;
}

/**
 * Reads the rows a write is about to update or remove, when an enabled webhook watches the table
 * (undefined otherwise). Call it inside the write transaction, before the write; pass the result
 * as `before` to `recordEvents`.
 */
export function captureBefore(
  db: Database.Database,
  tableId: string,
  updated: readonly number[] = [],
  removed: readonly number[] = [],
): BeforeRows | undefined {
  if (!updated.length && !removed.length) return undefined;
  const active = activeTriggers(db, tableId);
  if (!active) return undefined;
  return readRows(db, tableId, active.tableRef, [...updated, ...removed]);
}

/**
 * Collects `before` rows over one write transaction that updates or removes rows in several steps:
 * call `capture(tableId, ids)` before each UPDATE or DELETE (the first capture of a row wins, so
 * it holds the row as it was when the transaction began), and pass `get(tableId)` as `before` to
 * `recordEvents`. Tables no enabled webhook watches cost one indexed query per write, then nothing.
 */
export class BeforeCapture {
  private readonly rows = new Map<string, Map<number, RowValues>>();
  private readonly unwatched = new Set<string>();

  constructor(private readonly db: Database.Database) {}

  /** Keeps the current values of rows about to change. */
  capture(tableId: string, rowIds: readonly number[]): void {
    if (!rowIds.length || this.unwatched.has(tableId)) return;
    let table = this.rows.get(tableId);
    const wanted = table ? rowIds.filter((id) => !table!.has(id)) : rowIds;
    if (!wanted.length) return;
    const active = activeTriggers(this.db, tableId);
    if (!active) {
      this.unwatched.add(tableId);
      return;
    }
    if (!table) this.rows.set(tableId, (table = new Map()));
    for (const [id, row] of readRows(this.db, tableId, active.tableRef, wanted)) table.set(id, row);
  }

  /** The values captured for a table. */
  get(tableId: string): BeforeRows | undefined {
    return this.rows.get(tableId);
  }
}

const sameValue = (a: CellValue | undefined, b: CellValue | undefined) => JSON.stringify(a) === JSON.stringify(b);

/** The values `before` held in the columns whose value the write changed (`id` never). */
function changedValues(before: Readonly<RowValues>, row: RowValues): RowValues {
  const out: RowValues = {};
  for (const [col, value] of Object.entries(row)) {
    if (col !== 'id' && col in before && !sameValue(before[col], value)) out[col] = before[col];
  }
  return out;
}

/** The events a change produces for one trigger, in row-id order: adds and updates, then removals. */
function eventsFor(
  t: ActiveTrigger,
  change: RowChange,
  current: Map<number, RowValues>,
): {type: EventType; row: RowValues; previous?: RowValues}[] {
  const removed = new Set(change.removed ?? []);
  const added = new Set(change.added ?? []);
  const out: {type: EventType; row: RowValues; previous?: RowValues}[] = [];
  const touched = [...new Set([...(change.added ?? []), ...(change.updated ?? [])])].sort((a, b) => a - b);
  for (const rowId of touched) {
    if (removed.has(rowId)) continue; // Added (or updated) then removed in the same write.
    const row = current.get(rowId);
    if (!row) continue;
    const existedBefore = !added.has(rowId);
    const before = existedBefore ? change.before?.get(rowId) : undefined;
    let readyBefore: boolean;
    if (!t.readyColId) {
      readyBefore = existedBefore;
    } else {
      if (row[t.readyColId] !== true) continue; // Must be exactly the boolean true.
      readyBefore = !existedBefore ? false : before ? before[t.readyColId] === true : true;
    }
    let type: EventType;
    if (readyBefore) {
      const changed = !t.watchedColIds.length || !before || t.watchedColIds.some((c) => !sameValue(before[c], row[c]));
      if (!changed) continue;
      type = 'update';
    } else {
      type = 'add';
    }
    if (!t.eventTypes.includes(type)) continue;
    out.push(type === 'update' && before ? {type, row, previous: changedValues(before, row)} : {type, row});
  }
  if (t.eventTypes.includes('remove')) {
    for (const rowId of [...removed].sort((a, b) => a - b)) {
      if (added.has(rowId)) continue; // Never existed outside this write.
      const before = change.before?.get(rowId);
      // With a ready column, only rows the receiver was told about (ready ones) are announced.
      if (t.readyColId && before && before[t.readyColId] !== true) continue;
      out.push({type: 'remove', row: before ? {...before} : {id: rowId}});
    }
  }
  return out;
}

/** Per open document: the newest outbox id handed out (kept by whoever records its events). */
export interface OutboxIds {
  last: number;
}

/**
 * Computes the webhook events of a change and appends them to the outbox. Call it inside the
 * write transaction, after the write (so the rows read are the new ones). Returns the events
 * recorded (empty, after one indexed query, when no enabled webhook watches the table).
 */
export function recordEvents(db: Database.Database, change: RowChange, ids: OutboxIds = {last: 0}): OutboxEvent[] {
  if (!change.added?.length && !change.updated?.length && !change.removed?.length) return [];
  const active = activeTriggers(db, change.tableId);
  if (!active) return [];
  const removed = new Set(change.removed ?? []);
  const wanted = [...(change.added ?? []), ...(change.updated ?? [])].filter((id) => !removed.has(id));
  const current = readRows(db, change.tableId, active.tableRef, wanted);
  const events: OutboxEvent[] = [];
  for (const t of active.triggers) {
    const rows = eventsFor(t, change, current);
    for (const webhookId of t.webhookIds) {
      const withPrevious = t.withPrevious.has(webhookId);
      for (const {type, row, previous} of rows) {
        events.push({
          webhookId,
          eventType: type,
          row: withPrevious && previous ? {...row, [PREVIOUS_KEY]: previous} : row,
        });
      }
    }
  }
  if (!events.length) return events;
  upgradeOutbox(db);
  const insert = db.prepare(
    `INSERT INTO ${OUTBOX_TABLE} (id, webhookId, eventType, payload, createdAt, apiKeyId) VALUES (?, ?, ?, ?, ?, ?)`,
  );
  const now = Date.now();
  // Ids only grow while the document is open (SQLite would reuse the id of a newest row already
  // delivered and deleted): delivery batches a webhook's events only while their ids are
  // consecutive, i.e. while no other webhook's event was recorded between them, as Grist does.
  const max = db.prepare(`SELECT max(id) FROM ${OUTBOX_TABLE}`).pluck().get() as number | null;
  let id = Math.max(max ?? 0, ids.last);
  const apiKeyId = change.actor?.apiKeyId ?? null;
  for (const e of events) insert.run(++id, e.webhookId, e.eventType, JSON.stringify(e.row), now, apiKeyId);
  ids.last = id;
  return events;
}
