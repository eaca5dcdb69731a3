/**
 * Reading `_grist_Triggers`, `_grist_Tables` and `_grist_Tables_column` for webhooks, tolerant of
 * older documents whose `_grist_Triggers` lacks the newer columns.
 */
import type Database from 'better-sqlite3';
import {NotFound} from '../base/index.js';
import {makeDecoder, type CellValue} from '../doc/types.js';
import {SECRETS_TABLE, hasTable} from './schema.js';

/** A record event: add, update or remove. */
export type EventType = 'add' | 'update' | 'remove';
/** The record events a webhook can watch. */
export const EVENT_TYPES: readonly EventType[] = ['add', 'update', 'remove'];

export interface TriggerRow {
  id: number;
  tableRef: number;
  eventTypes: string[];
  /** The cell holds no list at all (a trigger made without event types): listed as null, as Grist does. */
  eventTypesUnset: boolean;
  isReadyColRef: number;
  watchedColRefs: number[];
  /** Webhook ids named by the trigger's actions. */
  webhookIds: string[];
  memo: string;
  label: string;
  enabled: boolean;
  condition: string;
}

export interface WebhookSecret {
  webhookId: string;
  url: string;
  authorization: string;
  unsubscribeKey: string;
  signingSecret: string | null;
  /** Beyond Grist (D105): `update` rows carry `_previous` (absent in tables made before it: off). */
  includePrevious?: number;
}

const decodeChoiceList = makeDecoder('ChoiceList');
const decodeRefList = makeDecoder('RefList:_grist_Tables_column');
const decodeBool = makeDecoder('Bool');

function listOf(v: CellValue): CellValue[] {
  return Array.isArray(v) && v[0] === 'L' ? v.slice(1) : [];
}

export function parseActions(actions: unknown): string[] {
  if (typeof actions !== 'string' || !actions) return [];
  try {
    const parsed: unknown = JSON.parse(actions);
    if (!Array.isArray(parsed)) return [];
    return parsed
      .filter(
        (a): a is {type: string; id: string} =>
          !!a && typeof a === 'object' && (a as {type?: unknown}).type === 'webhook',
      )
      .map((a) => String(a.id));
  } catch {
    return [];
  }
}

export function decodeTrigger(raw: Record<string, unknown>): TriggerRow {
  return {
    id: Number(raw.id),
    tableRef: Number(raw.tableRef ?? 0),
    eventTypes: listOf(decodeChoiceList(raw.eventTypes)).map(String),
    eventTypesUnset: raw.eventTypes === null || raw.eventTypes === undefined || raw.eventTypes === '',
    isReadyColRef: Number(raw.isReadyColRef ?? 0) || 0,
    watchedColRefs: listOf(decodeRefList(raw.watchedColRefList ?? null)).map(Number),
    webhookIds: parseActions(raw.actions),
    memo: String(raw.memo ?? ''),
    label: String(raw.label ?? ''),
    // Documents older than the `enabled` column had every trigger enabled.
    enabled: raw.enabled === undefined ? true : decodeBool(raw.enabled) === true,
    condition: String(raw.condition ?? ''),
  };
}

export function allTriggers(db: Database.Database): TriggerRow[] {
  if (!hasTable(db, '_grist_Triggers')) return [];
  return (db.prepare('SELECT * FROM _grist_Triggers ORDER BY id').all() as Record<string, unknown>[]).map(
    decodeTrigger,
  );
}

/** Grist's `getWebhookTriggerRecord`: the trigger whose actions name the webhook, or 404. */
export function triggerForWebhook(db: Database.Database, webhookId: string): TriggerRow {
  const t = allTriggers(db).find((tr) => tr.webhookIds.includes(webhookId));
  if (!t) throw new NotFound(`Webhook not found "${webhookId ?? ''}"`);
  return t;
}

export function getSecret(db: Database.Database, webhookId: string): WebhookSecret | undefined {
  if (!hasTable(db, SECRETS_TABLE)) return undefined;
  return db.prepare(`SELECT * FROM ${SECRETS_TABLE} WHERE webhookId = ?`).get(webhookId) as WebhookSecret | undefined;
}

/** The columns `_grist_Triggers` has in this document (older schemas lack some). */
export function triggerColumns(db: Database.Database): Set<string> {
  return new Set((db.prepare('PRAGMA table_info(_grist_Triggers)').all() as {name: string}[]).map((c) => c.name));
}

export function tableIdOf(db: Database.Database, tableRef: number): string | null {
  const row = db.prepare('SELECT tableId FROM _grist_Tables WHERE id = ?').get(tableRef) as
    | {tableId: unknown}
    | undefined;
  return row ? String(row.tableId) : null;
}

export function colIdOf(db: Database.Database, colRef: number): string | null {
  if (!colRef) return null;
  const row = db.prepare('SELECT colId FROM _grist_Tables_column WHERE id = ?').get(colRef) as
    | {colId: unknown}
    | undefined;
  return row ? String(row.colId) : null;
}

/**
 * Grist's `getRealTableId` + `tableIdToRef`: a table id, or a table's row id (number or numeric
 * string), to `{tableId, tableRef}`; 404 `Table not found "X"` otherwise.
 */
export function resolveTable(
  db: Database.Database,
  tableIdOrRef: string | number,
): {tableId: string; tableRef: number} {
  const text = String(tableIdOrRef);
  if (parseInt(text, 10)) {
    const row = db.prepare('SELECT id, tableId FROM _grist_Tables WHERE id = ?').get(parseInt(text, 10)) as
      | {id: number; tableId: unknown}
      | undefined;
    if (row) return {tableId: String(row.tableId), tableRef: row.id};
    throw new NotFound(`Table not found "${text}"`);
  }
  const row = db.prepare('SELECT id FROM _grist_Tables WHERE tableId = ?').get(text) as {id: number} | undefined;
  if (!row) throw new NotFound(`Table not found "${text}"`);
  return {tableId: text, tableRef: row.id};
}

/** Grist's `colIdToRef`: 404 `Column not found "X"` for a column not in the table. */
export function resolveColumn(db: Database.Database, tableRef: number, colId: string): number {
  const row = db.prepare('SELECT id FROM _grist_Tables_column WHERE parentId = ? AND colId = ?').get(tableRef, colId) as
    | {id: number}
    | undefined;
  if (!row) throw new NotFound(`Column not found "${colId}"`);
  return row.id;
}

/** Column types of a user table by colId (for decoding rows). */
export function columnTypes(db: Database.Database, tableRef: number): Map<string, string> {
  const rows = db.prepare('SELECT colId, type FROM _grist_Tables_column WHERE parentId = ?').all(tableRef) as {
    colId: unknown;
    type: unknown;
  }[];
  return new Map(rows.map((r) => [String(r.colId), String(r.type)]));
}
