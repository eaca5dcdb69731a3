/**
 * Beyond Grist (issue 30 §2): document API keys, kept in the home database (core home/dockeys.ts).
 * A request with such a key reaches only its document's `/api/docs/{doc}/...` routes (server.ts).
 */
import * as v from 'valibot';
import {BadRequest} from '@gristlite/core/internal';
import type {Route} from '../route.js';

const NewKey = v.looseObject({
  name: v.string(),
  access: v.picklist(['viewers', 'editors', 'owners']),
  expiresAt: v.optional(v.nullable(v.string())),
});

export const apiKeyRoutes: Route[] = [
  {
    method: 'POST',
    path: '/api/docs/:docId/apikeys',
    tag: 'apikeys',
    summary: 'Create an API key that opens this document only (owners, editors); answers {id, key}, the key shown once',
    body: NewKey,
    handler: async (ctx) => ctx.engine.home.createDocApiKey(ctx.params.docId, ctx.principal, ctx.org, await ctx.json()),
  },
  {
    method: 'GET',
    path: '/api/docs/:docId/apikeys',
    tag: 'apikeys',
    summary: "List the document's API keys, never their secrets (owners)",
    handler: (ctx) => ctx.engine.home.listDocApiKeys(ctx.params.docId, ctx.principal, ctx.org),
  },
  {
    method: 'DELETE',
    path: '/api/docs/:docId/apikeys/:keyId',
    tag: 'apikeys',
    summary: "Revoke one of the document's API keys at once (owners, or the key's creator)",
    handler: async (ctx) => {
      const id = Number(ctx.params.keyId);
      if (!Number.isSafeInteger(id) || id <= 0) throw new BadRequest('Invalid API key id');
      await ctx.engine.home.deleteDocApiKey(ctx.params.docId, ctx.principal, ctx.org, id);
      return null;
    },
  },
];
