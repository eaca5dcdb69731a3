/**
 * Webhooks CRUD (SPEC §13.2-13.6): `_grist_Triggers` rows in the document, secrets (url,
 * authorization, unsubscribe key, signing secret) in the private table `_gristlite_webhook_secrets`
 * (docs/decisions-webhooks.md). Request bodies arrive validated (shape) from the http layer.
 */
import {randomUUID} from 'node:crypto';
import type Database from 'better-sqlite3';
import {BadRequest, NotFound, Unauthorized} from '../base/index.js';
import {clearWebhookQueue, forgetWebhook, webhookUsage, type WebhookDelivery, type WebhookUsage} from './delivery.js';
import {
  allTriggers,
  colIdOf,
  getSecret,
  resolveColumn,
  resolveTable,
  tableIdOf,
  triggerColumns,
  triggerForWebhook,
} from './meta.js';
import {SECRETS_TABLE, ensureWebhookTables} from './schema.js';
import {checkWebhookUrl, type WebhookUrlPolicy} from './urls.js';

/** The `fields` of a webhook in POST (all but `url`, `eventTypes`, `tableId` optional) and PATCH. */
export interface WebhookFieldsInput {
  url?: string;
  authorization?: string;
  eventTypes?: string[];
  tableId?: string | number;
  watchedColIds?: string[];
  enabled?: boolean;
  isReadyColumn?: string | null;
  name?: string;
  memo?: string;
  /** Stored as-is in `_grist_Triggers.condition` (not evaluated: formulas are not, decision 8). */
  condition?: unknown;
  /** Beyond Grist: a secret to sign deliveries with (HMAC-SHA256); null or "" removes it. */
  secret?: string | null;
  /**
   * Beyond Grist (issue 42, D105): each `update` row delivered carries `_previous`, the values the
   * columns that changed held before the write. Off unless set.
   */
  includePrevious?: boolean;
}

/** A webhook as `GET /webhooks` lists it: fields and usage. */
export interface WebhookSummary {
  id: string;
  fields: {
    url: string;
    authorization: string;
    unsubscribeKey: string;
    /** null for a webhook whose trigger has no event types (made through `/triggers`). */
    eventTypes: string[] | null;
    isReadyColumn: string | null;
    watchedColIds: string[];
    tableId: string | null;
    enabled: boolean;
    name: string;
    memo: string;
    secret?: string;
    /** Listed only when on, so that a webhook made as in Grist lists as in Grist. */
    includePrevious?: true;
  };
  usage: WebhookUsage;
}

/** Decision 2: credentials are never echoed back in clear. `Bearer abcdef` shows as `Bearer abcd...`. */
export function maskSecret(value: string | null | undefined): string {
  if (!value) return '';
  const m = /^(\S+)\s+(\S.*)$/.exec(value);
  return m ? `${m[1]} ${m[2].slice(0, 4)}...` : `${value.slice(0, 4)}...`;
}

interface TriggerFields {
  tableRef?: number;
  eventTypes?: string[];
  watchedColRefList?: number[];
  isReadyColRef?: number;
  enabled?: boolean;
  memo?: string;
  label?: string;
  condition?: string;
}

/** Grist's `getWebhookSettings`: checks the fields (in Grist's order) and maps them to trigger columns. */
async function webhookSettings(
  db: Database.Database,
  webhookId: string | null,
  webhook: WebhookFieldsInput,
  policy: WebhookUrlPolicy,
): Promise<TriggerFields> {
  const trigger = webhookId ? triggerForWebhook(db, webhookId) : undefined;
  let current: {tableId: string; tableRef: number} | undefined;
  if (trigger) {
    const tableId = tableIdOf(db, trigger.tableRef);
    if (tableId !== null) current = {tableId, tableRef: trigger.tableRef};
  }
  const {url, eventTypes, watchedColIds, isReadyColumn, name} = webhook;
  const table = webhook.tableId !== undefined && webhook.tableId !== '' ? resolveTable(db, webhook.tableId) : undefined;
  const fields: TriggerFields = {};
  if (url) await checkWebhookUrl(url, policy);
  if (eventTypes) {
    if (!eventTypes.length) throw new BadRequest('eventTypes must be a non-empty array');
    fields.eventTypes = [...eventTypes];
  }
  if (table) {
    if (watchedColIds) {
      if (current && table.tableId !== current.tableId) {
        fields.watchedColRefList = []; // The table changed: watched columns are reset.
      } else {
        fields.watchedColRefList = watchedColIds
          .filter((c) => c.trim() !== '')
          .map((c) => resolveColumn(db, table.tableRef, c.trim().replace(/^\$/, '')));
      }
    } else {
      fields.watchedColRefList = [];
    }
    fields.tableRef = table.tableRef;
    current = table;
  }
  if (isReadyColumn !== undefined) {
    if (isReadyColumn !== null && isReadyColumn !== '') {
      if (!current) throw new NotFound(`Cannot find column "${isReadyColumn}" because table is not known`);
      fields.isReadyColRef = resolveColumn(db, current.tableRef, isReadyColumn);
    } else {
      fields.isReadyColRef = 0;
    }
  } else if (table) {
    fields.isReadyColRef = 0; // The table was given: the ready column resets unless given too.
  }
  if (webhook.enabled !== undefined) fields.enabled = webhook.enabled;
  if (webhook.memo !== undefined) fields.memo = webhook.memo;
  if (name) fields.label = name;
  if (webhook.condition !== undefined && webhook.condition !== null) {
    fields.condition = typeof webhook.condition === 'string' ? webhook.condition : JSON.stringify(webhook.condition);
  }
  return fields;
}

/** Trigger fields as stored: ChoiceList and RefList as JSON arrays, Bool as 0/1. */
function encodeFields(fields: TriggerFields & {actions?: string}, existing: Set<string>): [string, unknown][] {
  const out: [string, unknown][] = [];
  for (const [key, value] of Object.entries(fields)) {
    if (value === undefined || !existing.has(key)) continue;
    if (key === 'eventTypes' || key === 'watchedColRefList') out.push([key, JSON.stringify(value)]);
    else if (typeof value === 'boolean') out.push([key, value ? 1 : 0]);
    else out.push([key, value]);
  }
  return out;
}

/** A webhook just created: its id, unsubscribe key and trigger row. */
export interface CreatedWebhook {
  webhookId: string;
  unsubscribeKey: string;
  triggerId: number;
}

/** Creates one webhook (Grist's `registerWebhook`): the secret and the trigger, in one transaction. */
export async function addWebhook(
  db: Database.Database,
  webhook: WebhookFieldsInput,
  policy: WebhookUrlPolicy,
): Promise<CreatedWebhook> {
  const fields = await webhookSettings(db, null, webhook, policy);
  if (!fields.eventTypes?.length) throw new BadRequest('eventTypes must be a non-empty array');
  await checkWebhookUrl(webhook.url ?? '', policy);
  if (!fields.tableRef) throw new BadRequest('tableId is required');
  const webhookId = randomUUID();
  const unsubscribeKey = randomUUID();
  ensureWebhookTables(db);
  const cols = encodeFields(
    {enabled: true, ...fields, actions: JSON.stringify([{type: 'webhook', id: webhookId}])},
    triggerColumns(db),
  );
  const triggerId = db.transaction(() => {
    db.prepare(
      `INSERT INTO ${SECRETS_TABLE} (webhookId, url, authorization, unsubscribeKey, signingSecret, includePrevious) VALUES (?, ?, ?, ?, ?, ?)`,
    ).run(
      webhookId,
      webhook.url ?? '',
      webhook.authorization ?? '',
      unsubscribeKey,
      webhook.secret || null,
      webhook.includePrevious ? 1 : 0,
    );
    const info = db
      .prepare(
        `INSERT INTO _grist_Triggers (${cols.map(([c]) => `"${c}"`).join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`,
      )
      .run(...cols.map(([, v]) => v));
    return Number(info.lastInsertRowid);
  })();
  return {webhookId, unsubscribeKey, triggerId};
}

/**
 * POST /webhooks: creates the webhooks one after another (a failure part-way leaves the earlier
 * ones created, as in Grist) and returns `{webhooks: [{id}]}` in request order.
 */
export async function addWebhooks(
  db: Database.Database,
  webhooks: readonly WebhookFieldsInput[],
  policy: WebhookUrlPolicy,
): Promise<{webhooks: {id: string}[]}> {
  const out: {id: string}[] = [];
  for (const w of webhooks) out.push({id: (await addWebhook(db, w, policy)).webhookId});
  return {webhooks: out};
}

/**
 * GET /webhooks: every webhook in `_grist_Triggers` row order, skipping those without a secret
 * (URL and unsubscribe key). `authorization` and the signing secret are masked (decision 2).
 */
export function listWebhooks(db: Database.Database): {webhooks: WebhookSummary[]} {
  const out: WebhookSummary[] = [];
  for (const t of allTriggers(db)) {
    for (const id of t.webhookIds) {
      const secret = getSecret(db, id);
      if (!secret?.url || !secret.unsubscribeKey) continue;
      const summary: WebhookSummary = {
        id,
        fields: {
          url: secret.url,
          authorization: maskSecret(secret.authorization),
          unsubscribeKey: secret.unsubscribeKey,
          eventTypes: t.eventTypesUnset ? null : t.eventTypes,
          isReadyColumn: colIdOf(db, t.isReadyColRef),
          watchedColIds: t.watchedColRefs.map((ref) => colIdOf(db, ref) ?? ''),
          tableId: tableIdOf(db, t.tableRef),
          enabled: t.enabled,
          name: t.label,
          memo: t.memo,
        },
        usage: webhookUsage(db, id),
      };
      if (secret.signingSecret) summary.fields.secret = maskSecret(secret.signingSecret);
      if (secret.includePrevious) summary.fields.includePrevious = true;
      out.push(summary);
    }
  }
  return {webhooks: out};
}

/** PATCH /webhooks/{id}: Grist's semantics (SPEC §13.4). `enabled: false` also clears its queue. */
export async function updateWebhook(
  db: Database.Database,
  webhookId: string,
  patch: WebhookFieldsInput,
  policy: WebhookUrlPolicy,
  delivery?: WebhookDelivery,
): Promise<{success: true}> {
  const fields = await webhookSettings(db, webhookId, patch, policy);
  if (fields.enabled === false) clearWebhookQueue(db, webhookId, delivery);
  const triggerId = triggerForWebhook(db, webhookId).id;
  const cols = encodeFields(fields, triggerColumns(db));
  const secretUpdates: [string, unknown][] = [];
  if (patch.url) secretUpdates.push(['url', patch.url]);
  if (patch.authorization !== undefined) secretUpdates.push(['authorization', patch.authorization ?? '']);
  if (patch.secret !== undefined) secretUpdates.push(['signingSecret', patch.secret || null]);
  if (patch.includePrevious !== undefined) secretUpdates.push(['includePrevious', patch.includePrevious ? 1 : 0]);
  db.transaction(() => {
    if (secretUpdates.length) {
      ensureWebhookTables(db);
      db.prepare(
        `UPDATE ${SECRETS_TABLE} SET ${secretUpdates.map(([c]) => `${c} = ?`).join(', ')} WHERE webhookId = ?`,
      ).run(...secretUpdates.map(([, v]) => v), webhookId);
    }
    if (cols.length) {
      db.prepare(`UPDATE _grist_Triggers SET ${cols.map(([c]) => `"${c}" = ?`).join(', ')} WHERE id = ?`).run(
        ...cols.map(([, v]) => v),
        triggerId,
      );
    }
  })();
  return {success: true};
}

function deleteWebhook(db: Database.Database, webhookId: string, triggerId: number, delivery?: WebhookDelivery): void {
  db.transaction(() => {
    const t = allTriggers(db).find((tr) => tr.id === triggerId);
    if (t && t.webhookIds.length > 1) {
      // A trigger naming several webhooks (never made by the API) keeps the others.
      const actions = t.webhookIds.filter((id) => id !== webhookId).map((id) => ({type: 'webhook', id}));
      db.prepare('UPDATE _grist_Triggers SET actions = ? WHERE id = ?').run(JSON.stringify(actions), triggerId);
    } else {
      db.prepare('DELETE FROM _grist_Triggers WHERE id = ?').run(triggerId);
    }
    if (getSecret(db, webhookId)) db.prepare(`DELETE FROM ${SECRETS_TABLE} WHERE webhookId = ?`).run(webhookId);
    forgetWebhook(db, webhookId, delivery);
  })();
}

/** DELETE /webhooks/{id} (owners): removes the trigger, the secret, and its waiting events. */
export function removeWebhook(db: Database.Database, webhookId: string, delivery?: WebhookDelivery): {success: true} {
  const trigger = triggerForWebhook(db, webhookId);
  deleteWebhook(db, webhookId, trigger.id, delivery);
  return {success: true};
}

/**
 * The deprecated `_unsubscribe`: owners need no key; others (editors) must give the right one.
 * 404 `Webhook not found "<id>"`, 400 `Bad request: unsubscribeKey required`, 401 `Wrong unsubscribeKey`.
 */
export function unsubscribeWebhook(
  db: Database.Database,
  webhookId: string,
  unsubscribeKey: string | undefined,
  isOwner: boolean,
  tableId?: string,
  delivery?: WebhookDelivery,
): {success: true} {
  const trigger = triggerForWebhook(db, webhookId ?? '');
  // The route names a table: a webhook of another table is not found there (Grist does not check;
  // issue 11 asks that it does).
  if (tableId !== undefined && tableIdOf(db, trigger.tableRef) !== tableId && String(trigger.tableRef) !== tableId) {
    throw new NotFound(`Webhook not found "${webhookId}"`);
  }
  if (!isOwner) {
    if (!unsubscribeKey) throw new BadRequest('Bad request: unsubscribeKey required');
    const secret = getSecret(db, webhookId);
    if (!secret) throw new NotFound('Webhook with given id not found');
    if (secret.unsubscribeKey !== unsubscribeKey) throw new Unauthorized('Wrong unsubscribeKey');
  }
  deleteWebhook(db, webhookId, trigger.id, delivery);
  return {success: true};
}

/** The deprecated `POST /tables/{tableId}/_subscribe`: `{unsubscribeKey, triggerId, webhookId}`. */
export async function subscribeWebhook(
  db: Database.Database,
  tableId: string,
  webhook: WebhookFieldsInput,
  policy: WebhookUrlPolicy,
): Promise<{unsubscribeKey: string; triggerId: number; webhookId: string}> {
  const created = await addWebhook(db, {...webhook, tableId}, policy);
  return {unsubscribeKey: created.unsubscribeKey, triggerId: created.triggerId, webhookId: created.webhookId};
}
