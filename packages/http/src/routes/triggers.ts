/**
 * Grist's trigger API (1.7.17, `DocApiTriggers`): `_grist_Triggers` records behind webhooks.
 * Owners only; serialised with the webhook endpoints by the document's webhook lock. Bodies are
 * checked as Grist's ts-interface-checker does (paths from `value`).
 */
import * as v from 'valibot';
import type {TriggerInputFields} from '@gristlite/core/internal';
import type {Route} from '../route.js';
import {docRoute} from './doc-common.js';

const str = () => v.optional(v.string('is not a string'));
const num = (msg = 'is not a number') => v.number(msg);

const fieldsOf = (required: boolean) =>
  v.looseObject(
    {
      tableRef: required ? num() : v.optional(num()),
      label: str(),
      memo: str(),
      enabled: v.optional(v.boolean('is not a boolean')),
      actions: str(),
      condition: str(),
      options: str(),
    },
    'is not an object',
  );

const TriggerAddRequest = v.looseObject(
  {
    records: v.array(v.looseObject({fields: fieldsOf(true)}, 'is not an object'), 'is not an array'),
  },
  'is not an object',
);
const TriggerUpdateRequest = v.looseObject(
  {
    records: v.array(
      v.looseObject(
        {
          id: v.pipe(num(), v.integer('is not a number')),
          fields: fieldsOf(false),
        },
        'is not an object',
      ),
      'is not an array',
    ),
  },
  'is not an object',
);
const TriggerDeletionRequest = v.looseObject(
  {
    ids: v.array(v.pipe(num(), v.integer('is not a number')), 'is not an array'),
  },
  'is not an object',
);

export const triggerRoutes: Route[] = [
  docRoute({
    method: 'GET',
    path: '/api/docs/:docId/triggers',
    tag: 'webhooks',
    summary: 'List triggers (_grist_Triggers records; webhook actions with url, authorization masked)',
    need: 'owners',
    handler: async (_ctx, {doc}) => doc.listTriggers(),
  }),
  docRoute({
    method: 'GET',
    path: '/api/docs/:docId/triggers/monitor',
    tag: 'webhooks',
    summary: 'Webhook events waiting for delivery (`pending`); `delivered` is always empty (decision D51)',
    need: 'owners',
    handler: async (_ctx, {doc}) => doc.triggerMonitor(),
  }),
  docRoute({
    method: 'POST',
    path: '/api/docs/:docId/triggers',
    tag: 'webhooks',
    summary: 'Add triggers; returns their row ids',
    need: 'owners',
    body: {
      schema: TriggerAddRequest,
      prefix: 'value',
      names: [['records[].fields', 'TriggerFields']],
    },
    handler: async (_ctx, {doc}, body) =>
      doc.addTriggers(body.records.map((r) => ({fields: r.fields as TriggerInputFields}))),
  }),
  docRoute({
    method: 'PATCH',
    path: '/api/docs/:docId/triggers',
    tag: 'webhooks',
    summary: "Change triggers' fields (actions dropped from a trigger lose their webhook)",
    need: 'owners',
    body: {
      schema: TriggerUpdateRequest,
      prefix: 'value',
      names: [['records[].fields', 'TriggerPatchFields']],
    },
    handler: async (_ctx, {doc}, body) =>
      doc.updateTriggers(
        body.records.map((r) => ({
          id: r.id,
          fields: r.fields as TriggerInputFields,
        })),
      ),
  }),
  docRoute({
    method: 'POST',
    path: '/api/docs/:docId/triggers/delete',
    tag: 'webhooks',
    summary: 'Remove triggers, their webhooks and waiting events',
    need: 'owners',
    body: {schema: TriggerDeletionRequest, prefix: 'value'},
    handler: async (_ctx, {doc}, body) => doc.removeTriggers(body.ids),
  }),
];
