/**
 * Grist's trigger API (`/api/docs/{doc}/triggers`, grist-core 1.7.17 `DocApiTriggers`): the
 * `_grist_Triggers` records behind webhooks, as records. A webhook action's secrets (url,
 * authorization, unsubscribe key) live in `_gristlite_webhook_secrets` as for `/webhooks`, so a
 * trigger made here with a webhook action is listed by `GET /webhooks` and the reverse. Bodies
 * arrive shape-checked from http; everything else is checked before the one write transaction
 * (Grist applies record by record, so a failure part-way leaves earlier records written).
 */
import {randomUUID} from 'node:crypto';
import type Database from 'better-sqlite3';
import {BadRequest, NotFound} from '../base/index.js';
import {makeDecoder, type CellValue} from '../doc/types.js';
import {maskSecret} from './api.js';
import {forgetWebhook, webhookUsage, type WebhookDelivery} from './delivery.js';
import {getSecret, tableIdOf, triggerColumns} from './meta.js';
import {OUTBOX_TABLE, SECRETS_TABLE, ensureWebhookTables, hasTable} from './schema.js';
import {checkWebhookUrl, type WebhookUrlPolicy} from './urls.js';

/** The writable fields of a trigger (Grist's `TriggerFields` / `TriggerPatchFields`). */
export interface TriggerInputFields {
  tableRef?: number;
  label?: string;
  memo?: string;
  enabled?: boolean;
  /** JSON text of the actions array. */
  actions?: string;
  condition?: string;
  options?: string;
}

/** A trigger as `GET /triggers` lists it (Grist's field set, cells in Grist's encoding). */
export interface TriggerRecord {
  id: number;
  fields: {
    tableRef: number;
    label: string;
    memo: string;
    enabled: boolean;
    actions: string;
    condition: string;
    eventTypes: CellValue;
    watchedColRefList: CellValue;
    isReadyColRef: number;
  };
}

type Action = Record<string, unknown> & {type: string; id?: string};

const SECRET_FIELDS = ['url', 'authorization', 'unsubscribeKey'] as const;

const decodeChoiceList = makeDecoder('ChoiceList');
const decodeRefList = makeDecoder('RefList:_grist_Tables_column');
const decodeBool = makeDecoder('Bool');

/** Grist's `parseActions`: the stored JSON, or [] when it is not an array. */
function parseStoredActions(text: unknown): Action[] {
  if (typeof text !== 'string' || !text) return [];
  try {
    const parsed: unknown = JSON.parse(text);
    return Array.isArray(parsed) ? (parsed.filter((a) => a && typeof a === 'object') as Action[]) : [];
  } catch {
    return [];
  }
}

/**
 * The actions a client sent, checked as Grist's `TriggerAction` union (a webhook `{type, id}`, or
 * an email `{type, to, subject, body, dynamicTo?}`); `id` may be missing (assigned here).
 */
function parseInputActions(text: string): Action[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return []; // Grist's safeJsonParse: text that is not JSON counts as no actions.
  }
  if (!Array.isArray(parsed)) return [];
  for (const a of parsed) {
    const o = (a && typeof a === 'object' ? a : {}) as Record<string, unknown>;
    const id = o.id ?? '';
    const str = (k: string) => typeof o[k] === 'string';
    const webhook = o.type === 'webhook' && typeof id === 'string';
    const email =
      o.type === 'email' &&
      typeof id === 'string' &&
      str('to') &&
      str('subject') &&
      str('body') &&
      (o.dynamicTo === undefined || str('dynamicTo'));
    if (!webhook && !email) {
      throw new BadRequest('Invalid trigger action: Error: value is none of WebhookAction, EmailAction');
    }
  }
  return parsed as Action[];
}

function split(action: Action): {
  doc: Action;
  secret: Partial<Record<(typeof SECRET_FIELDS)[number], string>>;
} {
  const doc: Action = {type: action.type};
  const secret: Partial<Record<(typeof SECRET_FIELDS)[number], string>> = {};
  for (const [k, v] of Object.entries(action)) {
    if ((SECRET_FIELDS as readonly string[]).includes(k)) {
      if (v !== undefined && v !== null) secret[k as (typeof SECRET_FIELDS)[number]] = String(v);
    } else doc[k] = v;
  }
  return {doc, secret};
}

function triggerRow(db: Database.Database, id: number): Record<string, unknown> | undefined {
  return db.prepare('SELECT * FROM _grist_Triggers WHERE id = ?').get(id) as Record<string, unknown> | undefined;
}

function listOf(v: CellValue): CellValue {
  return Array.isArray(v) && v[0] === 'L' ? v : null;
}

/** GET /triggers: every trigger, its webhook actions with their secrets merged in (authorization masked). */
export function listTriggers(db: Database.Database): {
  records: TriggerRecord[];
} {
  if (!hasTable(db, '_grist_Triggers')) return {records: []};
  const rows = db.prepare('SELECT * FROM _grist_Triggers ORDER BY id').all() as Record<string, unknown>[];
  const records = rows.map((raw): TriggerRecord => {
    const actions = parseStoredActions(raw.actions).map((a) => {
      if (a.type !== 'webhook' || typeof a.id !== 'string') return a;
      const s = getSecret(db, a.id);
      if (!s) return a; // Orphaned (a copy, a file from Grist): shown without url, as Grist does.
      const out: Action = {
        ...a,
        url: s.url,
        unsubscribeKey: s.unsubscribeKey,
      };
      // Decision 2 (as GET /webhooks): credentials never come back in clear.
      if (s.authorization) out.authorization = maskSecret(s.authorization);
      return out;
    });
    return {
      id: Number(raw.id),
      fields: {
        tableRef: Number(raw.tableRef ?? 0),
        label: String(raw.label ?? ''),
        memo: String(raw.memo ?? ''),
        enabled: raw.enabled === undefined ? true : decodeBool(raw.enabled) === true,
        actions: JSON.stringify(actions),
        condition: String(raw.condition ?? ''),
        eventTypes: listOf(decodeChoiceList(raw.eventTypes ?? null)),
        watchedColRefList: listOf(decodeRefList(raw.watchedColRefList ?? null)),
        isReadyColRef: Number(raw.isReadyColRef ?? 0) || 0,
      },
    };
  });
  return {records};
}

/** A secret write planned before the transaction. */
type SecretOp =
  | {
      op: 'insert';
      webhookId: string;
      url: string;
      authorization: string;
      unsubscribeKey: string;
    }
  | {op: 'update'; webhookId: string; values: [string, string][]}
  | {op: 'delete'; webhookId: string};

async function checkUrl(secret: {url?: string}, policy: WebhookUrlPolicy): Promise<void> {
  if (secret.url) await checkWebhookUrl(secret.url, policy);
}

/** A new action: a server-made id (a client's id is ignored, as in Grist) and its secret, if any. */
async function newAction(action: Action, policy: WebhookUrlPolicy, ops: SecretOp[]): Promise<Action> {
  if (action.type !== 'webhook') return {...action, id: randomUUID()};
  const {doc, secret} = split(action);
  await checkUrl(secret, policy);
  const id = randomUUID();
  if (Object.keys(secret).length) {
    ops.push({
      op: 'insert',
      webhookId: id,
      url: secret.url ?? '',
      authorization: secret.authorization ?? '',
      unsubscribeKey: secret.unsubscribeKey || randomUUID(),
    });
  }
  return {...doc, id};
}

/** An action that names an id: its secret updated, or made afresh when it has none (a copied document). */
async function keptAction(action: Action, db: Database.Database, policy: WebhookUrlPolicy, ops: SecretOp[]) {
  if (action.type !== 'webhook') return action;
  const {doc, secret} = split(action);
  if (!Object.keys(secret).length) return doc;
  const existing = getSecret(db, String(action.id));
  if (!existing) return newAction({...action, id: undefined}, policy, ops);
  await checkUrl(secret, policy);
  // A listing shows authorization masked: sending that back unchanged keeps the real one.
  if (secret.authorization !== undefined && secret.authorization === maskSecret(existing.authorization)) {
    delete secret.authorization;
  }
  const values = Object.entries(secret) as [string, string][];
  if (values.length) ops.push({op: 'update', webhookId: existing.webhookId, values});
  return doc;
}

function checkTable(db: Database.Database, tableRef: number): void {
  if (tableIdOf(db, tableRef) === null) {
    throw new NotFound(`Table not found: ${tableRef}`);
  }
}

const COLUMNS = ['tableRef', 'label', 'memo', 'enabled', 'actions', 'condition', 'options'] as const;

function encode(fields: TriggerInputFields, existing: Set<string>): [string, unknown][] {
  const out: [string, unknown][] = [];
  for (const c of COLUMNS) {
    const v = fields[c];
    if (v === undefined || !existing.has(c)) continue;
    out.push([c, typeof v === 'boolean' ? (v ? 1 : 0) : v]);
  }
  return out;
}

function applySecrets(db: Database.Database, ops: SecretOp[], delivery?: WebhookDelivery): void {
  if (!ops.length) return;
  ensureWebhookTables(db);
  for (const o of ops) {
    if (o.op === 'insert') {
      db.prepare(
        `INSERT INTO ${SECRETS_TABLE} (webhookId, url, authorization, unsubscribeKey) VALUES (?, ?, ?, ?)`,
      ).run(o.webhookId, o.url, o.authorization, o.unsubscribeKey);
    } else if (o.op === 'update') {
      db.prepare(`UPDATE ${SECRETS_TABLE} SET ${o.values.map(([c]) => `${c} = ?`).join(', ')} WHERE webhookId = ?`).run(
        ...o.values.map(([, v]) => v),
        o.webhookId,
      );
    } else {
      db.prepare(`DELETE FROM ${SECRETS_TABLE} WHERE webhookId = ?`).run(o.webhookId);
      forgetWebhook(db, o.webhookId, delivery);
    }
  }
}

/** POST /triggers: adds the triggers (enabled unless said otherwise); returns their row ids. */
export async function addTriggers(
  db: Database.Database,
  records: readonly {fields: TriggerInputFields}[],
  policy: WebhookUrlPolicy,
): Promise<{records: {id: number}[]}> {
  const ops: SecretOp[] = [];
  const planned: TriggerInputFields[] = [];
  for (const {fields} of records) {
    checkTable(db, fields.tableRef ?? 0);
    const f = {enabled: true, ...fields};
    if (fields.actions !== undefined) {
      const actions: Action[] = [];
      for (const a of parseInputActions(fields.actions)) actions.push(await newAction(a, policy, ops));
      f.actions = JSON.stringify(actions);
    }
    planned.push(f);
  }
  const existing = triggerColumns(db);
  const ids = db.transaction(() => {
    applySecrets(db, ops);
    return planned.map((f) => {
      const cols = encode(f, existing);
      const info = db
        .prepare(
          `INSERT INTO _grist_Triggers (${cols
            .map(([c]) => `"${c}"`)
            .join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`,
        )
        .run(...cols.map(([, v]) => v));
      return {id: Number(info.lastInsertRowid)};
    });
  })();
  return {records: ids};
}

/** PATCH /triggers: changes the given fields; actions dropped from a trigger lose their secrets. */
export async function updateTriggers(
  db: Database.Database,
  records: readonly {id: number; fields: TriggerInputFields}[],
  policy: WebhookUrlPolicy,
  delivery?: WebhookDelivery,
): Promise<{success: true}> {
  const ops: SecretOp[] = [];
  const planned: {id: number; fields: TriggerInputFields}[] = [];
  const seen = new Set<number>();
  for (const {id, fields} of records) {
    // Each record is planned from the stored row: a second one for the same id would plan secrets
    // against what the first replaces.
    if (seen.has(id)) throw new BadRequest(`Duplicate row id ${id}`);
    seen.add(id);
    const row = triggerRow(db, id);
    if (!row) throw new BadRequest(`Invalid row id ${id}`);
    if (fields.tableRef !== undefined) checkTable(db, fields.tableRef);
    const f = {...fields};
    if (fields.actions !== undefined) {
      const stored = parseStoredActions(row.actions);
      // Only this trigger's own webhooks are kept by id; another trigger's id is a new webhook
      // (sharing one secret would let either trigger change or delete the other's).
      const own = new Set(stored.map((a) => a.id));
      const actions: Action[] = [];
      for (const a of parseInputActions(fields.actions)) {
        actions.push(
          a.id && (a.type !== 'webhook' || own.has(a.id))
            ? await keptAction(a, db, policy, ops)
            : await newAction({...a, id: undefined}, policy, ops),
        );
      }
      const kept = new Set(actions.map((a) => a.id));
      for (const old of stored) {
        if (old.type === 'webhook' && typeof old.id === 'string' && !kept.has(old.id) && getSecret(db, old.id)) {
          ops.push({op: 'delete', webhookId: old.id});
        }
      }
      f.actions = JSON.stringify(actions);
    }
    planned.push({id, fields: f});
  }
  const existing = triggerColumns(db);
  db.transaction(() => {
    applySecrets(db, ops, delivery);
    for (const {id, fields} of planned) {
      const cols = encode(fields, existing);
      if (!cols.length) continue;
      db.prepare(`UPDATE _grist_Triggers SET ${cols.map(([c]) => `"${c}" = ?`).join(', ')} WHERE id = ?`).run(
        ...cols.map(([, v]) => v),
        id,
      );
    }
  })();
  return {success: true};
}

/** POST /triggers/delete: removes the triggers, their webhooks' secrets and waiting events. */
export function removeTriggers(
  db: Database.Database,
  ids: readonly number[],
  delivery?: WebhookDelivery,
): {success: true} {
  const ops: SecretOp[] = [];
  for (const id of ids) {
    const row = triggerRow(db, id);
    if (!row) throw new BadRequest(`Invalid row id ${id}`);
    for (const a of parseStoredActions(row.actions)) {
      if (a.type === 'webhook' && typeof a.id === 'string') ops.push({op: 'delete', webhookId: a.id});
    }
  }
  db.transaction(() => {
    applySecrets(db, ops, delivery);
    const del = db.prepare('DELETE FROM _grist_Triggers WHERE id = ?');
    for (const id of ids) del.run(id);
  })();
  return {success: true};
}

/** One event waiting for delivery, as Grist's trigger monitor lists it. */
export interface TriggerPendingRecord {
  id: number;
  fields: {
    actionId: string;
    actionType: string;
    triggerName: string;
    tableName: string;
    rowId: number;
    destination: string;
    status: string;
    lastResult: string;
  };
}

/**
 * GET /triggers/monitor: the events waiting in the outbox, oldest first. `delivered` is empty:
 * gristlite keeps no delivery log (decision D51); each webhook's last outcome is in GET /webhooks.
 */
export function triggerMonitor(db: Database.Database): {
  delivered: never[];
  pending: TriggerPendingRecord[];
} {
  if (!hasTable(db, OUTBOX_TABLE)) return {delivered: [], pending: []};
  const meta = new Map<string, {triggerName: string; tableName: string}>();
  if (hasTable(db, '_grist_Triggers')) {
    for (const raw of db.prepare('SELECT * FROM _grist_Triggers ORDER BY id').all() as Record<string, unknown>[]) {
      for (const a of parseStoredActions(raw.actions)) {
        if (typeof a.id === 'string' && !meta.has(a.id)) {
          meta.set(a.id, {
            triggerName: String(raw.label ?? ''),
            tableName: tableIdOf(db, Number(raw.tableRef)) ?? '',
          });
        }
      }
    }
  }
  const hosts = new Map<string, string>();
  const usage = new Map<string, ReturnType<typeof webhookUsage>>();
  const rows = db.prepare(`SELECT webhookId, payload FROM ${OUTBOX_TABLE} ORDER BY id`).all() as {
    webhookId: string;
    payload: string;
  }[];
  const pending = rows.map((r, i): TriggerPendingRecord => {
    if (!hosts.has(r.webhookId)) {
      let host = '';
      try {
        host = new URL(getSecret(db, r.webhookId)?.url ?? '').host;
      } catch {
        host = '';
      }
      hosts.set(r.webhookId, host);
      usage.set(r.webhookId, webhookUsage(db, r.webhookId));
    }
    const u = usage.get(r.webhookId)!;
    let rowId = 0;
    try {
      rowId = Number((JSON.parse(r.payload) as {id?: unknown}).id) || 0;
    } catch {
      rowId = 0;
    }
    const m = meta.get(r.webhookId) ?? {triggerName: '', tableName: ''};
    return {
      id: i + 1,
      fields: {
        actionId: r.webhookId,
        actionType: 'webhook',
        ...m,
        rowId,
        destination: hosts.get(r.webhookId)!,
        status: u.status === 'idle' ? 'queued' : u.status,
        lastResult: u.lastErrorMessage ? `${u.lastHttpStatus ?? ''} ${u.lastErrorMessage}`.trim() : '',
      },
    };
  });
  return {delivered: [], pending};
}
