/**
 * Webhooks (SPEC §13): CRUD on `_grist_Triggers`, the queue endpoints and the deprecated
 * `_subscribe` / `_unsubscribe`. Owners only, except `_unsubscribe` (editors with the key). The
 * endpoints are serialised per document, as Grist does (a lock released after 15 s in any case).
 */
import * as v from 'valibot';
import type {WebhookFieldsInput} from '@gristlite/core/internal';
import type {Route} from '../route.js';
import {docRoute} from './doc-common.js';

const EVENT_TYPES_MESSAGE = 'is none of "add", "update", "remove"';
const str = () => v.string('is not a string');
const EventTypes = v.array(v.picklist(['add', 'update', 'remove'], EVENT_TYPES_MESSAGE), 'is not an array');
const ColIds = v.array(str(), 'is not an array');

// Grist checks these bodies with ts-interface-checker, whose paths start at `value`.
const optionalFields = {
  authorization: v.optional(str()),
  watchedColIds: v.optional(ColIds),
  enabled: v.optional(v.boolean('is not a boolean')),
  isReadyColumn: v.optional(v.nullable(str())),
  name: v.optional(str()),
  memo: v.optional(str()),
  condition: v.optional(v.unknown()),
  secret: v.optional(v.nullable(str())),
  // Beyond Grist (D105): `update` rows carry `_previous`.
  includePrevious: v.optional(
    v.pipe(
      v.boolean('is not a boolean'),
      v.description(
        'Beyond Grist (D105): each `update` row delivered carries `_previous`, the values before the write of the columns it changed. Default false.',
      ),
    ),
  ),
};

const WebhookFields = v.looseObject(
  {url: str(), eventTypes: EventTypes, tableId: str(), ...optionalFields},
  'is not an object',
);
const WebhookSubscribeCollection = v.looseObject(
  {webhooks: v.array(v.looseObject({fields: WebhookFields}, 'is not an object'), 'is not an array')},
  'is not an object',
);
const WebhookSubscribe = v.looseObject({url: str(), eventTypes: EventTypes, ...optionalFields}, 'is not an object');
const WebhookPatch = v.looseObject(
  {url: v.optional(str()), eventTypes: v.optional(EventTypes), tableId: v.optional(str()), ...optionalFields},
  'is not an object',
);
const Unsubscribe = v.looseObject({webhookId: v.optional(v.unknown()), unsubscribeKey: v.optional(v.unknown())});

export const webhookRoutes: Route[] = [
  docRoute({
    method: 'GET',
    path: '/api/docs/:docId/webhooks',
    tag: 'webhooks',
    summary: 'List webhooks with their usage (authorization masked)',
    need: 'owners',
    handler: async (_ctx, {doc}) => doc.listWebhooks(),
  }),
  docRoute({
    method: 'POST',
    path: '/api/docs/:docId/webhooks',
    tag: 'webhooks',
    summary: 'Create webhooks; returns their ids',
    need: 'owners',
    body: {
      schema: WebhookSubscribeCollection,
      prefix: 'value',
      names: [
        ['webhooks[]', 'Webhook'],
        ['webhooks[].fields', 'WebhookFields'],
      ],
    },
    handler: async (_ctx, {doc}, body) => doc.addWebhooks(body.webhooks.map((w) => w.fields as WebhookFieldsInput)),
  }),
  docRoute({
    method: 'DELETE',
    path: '/api/docs/:docId/webhooks/queue',
    tag: 'webhooks',
    summary: 'Empty the outgoing queue of every webhook and reset their usage',
    need: 'owners',
    handler: async (_ctx, {doc}) => {
      await doc.clearWebhookQueue();
      return {success: true};
    },
  }),
  docRoute({
    method: 'DELETE',
    path: '/api/docs/:docId/webhooks/queue/:webhookId',
    tag: 'webhooks',
    summary: "Empty one webhook's outgoing queue",
    need: 'owners',
    handler: async (ctx, {doc}) => {
      await doc.clearWebhookQueue(ctx.params.webhookId);
      return {success: true};
    },
  }),
  docRoute({
    method: 'PATCH',
    path: '/api/docs/:docId/webhooks/:webhookId',
    tag: 'webhooks',
    summary: 'Change a webhook',
    need: 'owners',
    body: {schema: WebhookPatch, prefix: 'value'},
    handler: async (ctx, {doc}, body) => doc.updateWebhook(ctx.params.webhookId, body as WebhookFieldsInput),
  }),
  docRoute({
    method: 'DELETE',
    path: '/api/docs/:docId/webhooks/:webhookId',
    tag: 'webhooks',
    summary: 'Delete a webhook and its waiting events',
    need: 'owners',
    handler: async (ctx, {doc}) => doc.removeWebhook(ctx.params.webhookId),
  }),
  docRoute({
    method: 'POST',
    path: '/api/docs/:docId/tables/:tableId/_subscribe',
    tag: 'webhooks',
    summary: 'Deprecated: create one webhook on a table',
    need: 'owners',
    body: {schema: WebhookSubscribe, prefix: 'value'},
    handler: async (ctx, {doc}, body) => doc.subscribeWebhook(ctx.params.tableId, body as WebhookFieldsInput),
  }),
  docRoute({
    method: 'POST',
    path: '/api/docs/:docId/tables/:tableId/_unsubscribe',
    tag: 'webhooks',
    summary: 'Deprecated: delete a webhook (editors need its unsubscribeKey)',
    need: 'editors',
    body: {schema: Unsubscribe, prefix: 'value'},
    handler: async (ctx, {doc, role}, body) => {
      const webhookId = typeof body.webhookId === 'string' ? body.webhookId : '';
      const key = typeof body.unsubscribeKey === 'string' ? body.unsubscribeKey : undefined;
      return doc.unsubscribeWebhook(webhookId, key, role === 'owners', ctx.params.tableId);
    },
  }),
];
