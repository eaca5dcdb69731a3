/** Home API routes: orgs, workspaces, document metadata, access, profile and users (SPEC §3-5, §15). */
import * as v from 'valibot';
import {ApiError, BadRequest, type ResourceKind} from '@gristlite/core/internal';
import {flag, intParam, type Route} from '../route.js';
import {validate} from '../validate.js';
import {RawResponse, type RequestContext} from '../types.js';

const AnyObject = v.record(v.string(), v.unknown());
const Delta = v.looseObject({
  delta: v.optional(v.unknown()),
});
const NameBody = v.looseObject({name: v.optional(v.unknown())});

/** Reads the JSON body and checks it is an object (Grist bodies are objects here). */
async function objectBody(ctx: RequestContext): Promise<Record<string, unknown>> {
  return validate(AnyObject, await ctx.json()) as Record<string, unknown>;
}

function text(body: string): RawResponse {
  return new RawResponse(200, body, {'Content-Type': 'text/plain; charset=utf-8'});
}

/** `GET` and `PATCH <base>/access`: the access list of an org, workspace or document, and changes to it. */
function accessRoutes(
  kind: ResourceKind,
  base: string,
  tag: string,
  what: string,
  how: {
    read: Route['handler'];
    target: (ctx: RequestContext) => {org?: string; wid?: number; doc?: string};
  },
): Route[] {
  return [
    {method: 'GET', path: `${base}/access`, tag, summary: `List who has access to ${what}`, handler: how.read},
    {
      method: 'PATCH',
      path: `${base}/access`,
      tag,
      summary: `Change access to ${what}`,
      body: Delta,
      handler: async (ctx) =>
        ctx.engine.home.updateAccess(kind, how.target(ctx), ctx.principal, ctx.org, await objectBody(ctx)),
    },
  ];
}

export const homeRoutes: Route[] = [
  // ----- orgs
  {
    method: 'GET',
    path: '/api/orgs',
    tag: 'orgs',
    summary: 'List orgs the caller can see',
    query: ['merged'],
    handler: (ctx) => ctx.engine.home.listOrgs(ctx.principal, ctx.org, flag(ctx.query, 'merged')),
  },
  {
    method: 'POST',
    path: '/api/orgs',
    tag: 'orgs',
    summary: 'Create a team site',
    body: AnyObject,
    handler: async (ctx) => ctx.engine.home.createOrg(ctx.principal, await objectBody(ctx)),
  },
  {
    method: 'GET',
    path: '/api/orgs/:oid',
    tag: 'orgs',
    summary: 'Describe an org',
    handler: (ctx) => ctx.engine.home.getOrg(ctx.params.oid, ctx.principal, ctx.org),
  },
  {
    method: 'PATCH',
    path: '/api/orgs/:oid',
    tag: 'orgs',
    summary: 'Rename an org or change its domain or prefs',
    body: AnyObject,
    handler: async (ctx) => ctx.engine.home.updateOrg(ctx.params.oid, ctx.principal, ctx.org, await objectBody(ctx)),
  },
  {
    method: 'DELETE',
    path: '/api/orgs/:oid',
    tag: 'orgs',
    summary: 'Deprecated bare delete (410)',
    handler: async () => {
      throw new ApiError(410, 'This endpoint is no longer supported. Use DELETE /api/orgs/:oid/:name instead.');
    },
  },
  {
    method: 'DELETE',
    path: '/api/orgs/:oid/:name',
    tag: 'orgs',
    summary: 'Delete an org, confirming its name or domain',
    handler: (ctx) => ctx.engine.deleteOrg(ctx.params.oid, ctx.params.name, ctx.principal, ctx.org),
  },
  {
    method: 'GET',
    path: '/api/orgs/:oid/usage',
    tag: 'orgs',
    summary: "Usage of an org's live documents (owners only)",
    handler: (ctx) => ctx.engine.orgUsage(ctx.params.oid, ctx.principal, ctx.org),
  },
  ...accessRoutes('org', '/api/orgs/:oid', 'orgs', 'an org', {
    read: (ctx) => ctx.engine.home.getOrgAccess(ctx.params.oid, ctx.principal, ctx.org),
    target: (ctx) => ({org: ctx.params.oid}),
  }),
  {
    method: 'GET',
    path: '/api/orgs/:oid/workspaces',
    tag: 'workspaces',
    summary: 'List workspaces and docs of an org',
    query: ['showRemoved'],
    handler: (ctx) =>
      ctx.engine.home.listWorkspaces(ctx.params.oid, ctx.principal, ctx.org, flag(ctx.query, 'showRemoved')),
  },
  {
    method: 'POST',
    path: '/api/orgs/:oid/workspaces',
    tag: 'workspaces',
    summary: 'Create a workspace',
    body: NameBody,
    handler: async (ctx) =>
      ctx.engine.home.createWorkspace(ctx.params.oid, ctx.principal, ctx.org, await objectBody(ctx)),
  },
  // ----- workspaces
  {
    method: 'GET',
    path: '/api/workspaces/:wid',
    tag: 'workspaces',
    summary: 'Describe a workspace and its docs',
    query: ['showRemoved'],
    handler: (ctx) =>
      ctx.engine.home.getWorkspace(intParam('wid', ctx.params.wid), ctx.principal, flag(ctx.query, 'showRemoved')),
  },
  {
    method: 'PATCH',
    path: '/api/workspaces/:wid',
    tag: 'workspaces',
    summary: 'Rename a workspace',
    body: NameBody,
    handler: async (ctx) =>
      ctx.engine.home.updateWorkspace(intParam('wid', ctx.params.wid), ctx.principal, await objectBody(ctx)),
  },
  {
    method: 'DELETE',
    path: '/api/workspaces/:wid',
    tag: 'workspaces',
    summary: 'Delete a workspace and its docs',
    handler: (ctx) => ctx.engine.deleteWorkspace(intParam('wid', ctx.params.wid), ctx.principal),
  },
  {
    method: 'POST',
    path: '/api/workspaces/:wid/remove',
    tag: 'workspaces',
    summary: 'Soft-delete a workspace',
    query: ['permanent'],
    handler: (ctx) => {
      const wid = intParam('wid', ctx.params.wid);
      return flag(ctx.query, 'permanent')
        ? ctx.engine.deleteWorkspace(wid, ctx.principal).then(() => null)
        : ctx.engine.home.setWorkspaceRemoved(wid, ctx.principal, true);
    },
  },
  {
    method: 'POST',
    path: '/api/workspaces/:wid/unremove',
    tag: 'workspaces',
    summary: 'Restore a soft-deleted workspace',
    handler: (ctx) => ctx.engine.home.setWorkspaceRemoved(intParam('wid', ctx.params.wid), ctx.principal, false),
  },
  ...accessRoutes('ws', '/api/workspaces/:wid', 'workspaces', 'a workspace', {
    read: (ctx) => ctx.engine.home.getWorkspaceAccess(intParam('wid', ctx.params.wid), ctx.principal),
    target: (ctx) => ({wid: intParam('wid', ctx.params.wid)}),
  }),
  {
    method: 'POST',
    path: '/api/workspaces/:wid/docs',
    tag: 'docs',
    summary: 'Create a document in a workspace',
    body: NameBody,
    handler: async (ctx) => ctx.engine.createDoc(intParam('wid', ctx.params.wid), ctx.principal, await objectBody(ctx)),
  },
  // ----- docs (metadata)
  {
    method: 'GET',
    path: '/api/docs/:docId',
    tag: 'docs',
    summary: 'Describe a document',
    query: ['showRemoved'],
    handler: (ctx) => ctx.engine.home.getDoc(ctx.params.docId, ctx.principal, ctx.org, flag(ctx.query, 'showRemoved')),
  },
  {
    method: 'PATCH',
    path: '/api/docs/:docId',
    tag: 'docs',
    summary: 'Rename a document or change its urlId, options, type',
    body: AnyObject,
    handler: async (ctx) => ctx.engine.home.updateDoc(ctx.params.docId, ctx.principal, ctx.org, await objectBody(ctx)),
  },
  {
    method: 'DELETE',
    path: '/api/docs/:docId',
    tag: 'docs',
    summary: 'Delete a document and its file',
    handler: (ctx) => ctx.engine.deleteDoc(ctx.params.docId, ctx.principal, ctx.org),
  },
  {
    method: 'POST',
    path: '/api/docs/:docId/remove',
    tag: 'docs',
    summary: 'Soft-delete a document',
    query: ['permanent'],
    handler: (ctx) =>
      flag(ctx.query, 'permanent')
        ? ctx.engine.deleteDoc(ctx.params.docId, ctx.principal, ctx.org).then(() => null)
        : ctx.engine.home.setDocRemoved(ctx.params.docId, ctx.principal, ctx.org, true),
  },
  {
    method: 'POST',
    path: '/api/docs/:docId/unremove',
    tag: 'docs',
    summary: 'Restore a soft-deleted document',
    handler: (ctx) => ctx.engine.home.setDocRemoved(ctx.params.docId, ctx.principal, ctx.org, false),
  },
  {
    method: 'PATCH',
    path: '/api/docs/:docId/pin',
    tag: 'docs',
    summary: 'Pin a document',
    handler: (ctx) => ctx.engine.home.setDocPinned(ctx.params.docId, ctx.principal, ctx.org, true),
  },
  {
    method: 'PATCH',
    path: '/api/docs/:docId/unpin',
    tag: 'docs',
    summary: 'Unpin a document',
    handler: (ctx) => ctx.engine.home.setDocPinned(ctx.params.docId, ctx.principal, ctx.org, false),
  },
  {
    method: 'PATCH',
    path: '/api/docs/:docId/move',
    tag: 'docs',
    summary: 'Move a document to another workspace',
    body: v.looseObject({workspace: v.optional(v.unknown())}),
    handler: async (ctx) =>
      ctx.engine.home.moveDoc(ctx.params.docId, ctx.principal, ctx.org, (await objectBody(ctx)).workspace),
  },
  ...accessRoutes('doc', '/api/docs/:docId', 'docs', 'a document', {
    read: (ctx) => ctx.engine.home.getDocAccess(ctx.params.docId, ctx.principal, ctx.org),
    target: (ctx) => ({doc: ctx.params.docId}),
  }),
  // ----- users
  {
    method: 'GET',
    path: '/api/profile/user',
    tag: 'users',
    summary: 'The calling user',
    handler: async (ctx) => ctx.engine.home.profile(ctx.principal),
  },
  {
    method: 'GET',
    path: '/api/session/access/all',
    tag: 'users',
    summary: "The caller's profile and every org they belong to, with their access",
    handler: (ctx) => ctx.engine.home.sessionAccessAll(ctx.principal, ctx.org),
  },
  {
    method: 'POST',
    path: '/api/profile/user/name',
    tag: 'users',
    summary: "Change the caller's name",
    body: NameBody,
    handler: async (ctx) => {
      await ctx.engine.home.updateName(ctx.principal, (await objectBody(ctx)).name);
      return text('OK');
    },
  },
  {
    method: 'GET',
    path: '/api/profile/apikey',
    tag: 'users',
    summary: "The caller's API key, masked (shown in full only once)",
    handler: async (ctx) => text(await ctx.engine.home.getApiKey(ctx.principal)),
  },
  {
    method: 'POST',
    path: '/api/profile/apikey',
    tag: 'users',
    summary: "Create (or with force, replace) the caller's API key",
    body: v.looseObject({force: v.optional(v.boolean())}),
    handler: async (ctx) => {
      const body = ctx.principal.anonymous ? {} : await objectBody(ctx);
      return text(await ctx.engine.home.createApiKey(ctx.principal, body.force === true));
    },
  },
  {
    method: 'DELETE',
    path: '/api/profile/apikey',
    tag: 'users',
    summary: "Remove the caller's API key",
    handler: async (ctx) => {
      await ctx.engine.home.deleteApiKey(ctx.principal);
      return text('OK');
    },
  },
  {
    method: 'DELETE',
    path: '/api/users/:userId',
    tag: 'users',
    summary: 'Delete the calling user, their personal org and docs',
    body: NameBody,
    handler: async (ctx) => {
      // Grist parses the id with parseInt and refuses any id but the caller's (403), so a
      // non-numeric one (NaN) is no 400 here.
      const id = Number.parseInt(ctx.params.userId, 10);
      const body = await ctx.json();
      if (typeof body !== 'object' || body === null || Array.isArray(body))
        throw new BadRequest('to confirm deletion of a user, provide their name');
      return ctx.engine.deleteUser(id, ctx.principal, body);
    },
  },
];
