/**
 * Creating documents (SPEC §5.8): `POST /api/docs` (an uploaded `.grist`/CSV file, a copy of
 * another document, or an empty document), `POST /api/workspaces/:wid/import` and
 * `POST /api/docs/:docId/copy`.
 */
import * as v from 'valibot';
import {
  BadRequest,
  Unauthorized,
  copyDoc,
  createEmptyDoc,
  importUpload,
  type ImportResult,
  shownValue,
} from '@gristlite/core/internal';
import {isMultipart, type FormFile} from '../multipart.js';
import {intParam, type Route} from '../route.js';
import type {RequestContext} from '../types.js';
import {validate} from '../validate.js';
import {requestOrigin} from './doc-common.js';

const DocsPost = v.looseObject({
  workspaceId: v.optional(v.unknown()),
  documentName: v.optional(v.unknown()),
  sourceDocumentId: v.optional(v.unknown()),
  asTemplate: v.optional(v.unknown()),
  timezone: v.optional(v.unknown()),
});
const CopyPost = v.looseObject({
  workspaceId: v.optional(v.unknown()),
  documentName: v.optional(v.unknown()),
  asTemplate: v.optional(v.unknown()),
});

interface CreateParams {
  fields: Record<string, unknown>;
  upload: FormFile | null;
}

/**
 * Form fields and the `upload` file of a multipart request, or the fields of a JSON one. A
 * `workspaceId` field that arrives before the file is checked at once (no access: the rest of the
 * upload is never read).
 */
async function createParams(ctx: RequestContext): Promise<CreateParams> {
  if (isMultipart(ctx.headers['content-type'])) {
    const form = await ctx.form({
      onField: async (name, value) => {
        if (name === 'workspaceId' && value !== '')
          await ctx.engine.home.workspaceFor(intParam('workspaceId', value), ctx.principal, 'add');
      },
    });
    const files = form.files.get('upload') ?? [];
    if (files.length > 1) throw new BadRequest('Upload one file at a time');
    return {fields: Object.fromEntries(form.fields), upload: files[0] ?? null};
  }
  const body = await ctx.json();
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new BadRequest('Invalid payload: expected an object');
  return {fields: validate(DocsPost, body) as Record<string, unknown>, upload: null};
}

function optString(fields: Record<string, unknown>, name: string): string | null {
  const value = fields[name];
  if (value === undefined || value === null || value === '') return null;
  if (typeof value !== 'string') throw new BadRequest(`${name} parameter should be a string: ${shownValue(value)}`);
  return value;
}

function workspaceParam(fields: Record<string, unknown>): number | null {
  const value = fields.workspaceId;
  if (value === undefined || value === null || value === '') return null;
  return intParam('workspaceId', shownValue(value));
}

/** Grist's `optBooleanParam`: a boolean, an affirmative (1, on, true, yes) or "false"; else 400. */
function booleanParam(fields: Record<string, unknown>, name: string): boolean {
  const value = fields[name];
  if (value === undefined) return false;
  if (typeof value === 'boolean') return value;
  if (['1', 'on', 'true', 'yes'].includes(String(value).toLowerCase())) return true;
  if (String(value) === 'false') return false;
  throw new BadRequest(`${name} parameter should be a boolean: ${shownValue(value)}`);
}

async function importFile(
  ctx: RequestContext,
  wid: number,
  upload: FormFile,
  fields: Record<string, unknown>,
): Promise<ImportResult> {
  return importUpload(
    ctx.engine,
    wid,
    ctx.principal,
    {fileName: upload.fileName, path: upload.path},
    {
      documentName: optString(fields, 'documentName'),
      timezone: optString(fields, 'timezone'),
      requestBase: requestOrigin(ctx),
    },
  );
}

export const importRoutes: Route[] = [
  {
    method: 'POST',
    path: '/api/docs',
    tag: 'docs',
    body: DocsPost,
    upload: true,
    summary:
      'Create a document: import a multipart "upload" (.grist or CSV), copy sourceDocumentId, or an empty one; returns its id',
    handler: async (ctx) => {
      // The workspace may be named after the file: an anonymous upload is refused unread.
      if (ctx.principal.anonymous && isMultipart(ctx.headers['content-type']))
        throw new Unauthorized('user not authorized');
      const {fields, upload} = await createParams(ctx);
      const wid = workspaceParam(fields);
      if (upload) {
        if (wid === null) throw new BadRequest('workspaceId parameter is required');
        return (await importFile(ctx, wid, upload, fields)).id;
      }
      const source = optString(fields, 'sourceDocumentId');
      if (source !== null) {
        // Grist's words (its integer parser reading a missing parameter).
        if (wid === null) throw new BadRequest('workspaceId parameter cannot be understood as an integer: undefined');
        const copy = await copyDoc(ctx.engine, source, ctx.principal, ctx.org, wid, {
          name: optString(fields, 'documentName'),
          asTemplate: booleanParam(fields, 'asTemplate'),
        });
        return copy.id;
      }
      if (wid === null) throw new BadRequest('workspaceId parameter is required (gristlite has no unsaved documents)');
      const doc = await createEmptyDoc(ctx.engine, wid, ctx.principal, {
        name: optString(fields, 'documentName'),
        timezone: optString(fields, 'timezone'),
      });
      return doc.id;
    },
  },
  {
    method: 'POST',
    path: '/api/workspaces/:wid/import',
    tag: 'docs',
    upload: true,
    summary: 'Import a multipart "upload" (.grist or CSV) as a new document in the workspace; returns {id, title}',
    handler: async (ctx) => {
      const wid = intParam('wid', ctx.params.wid);
      if (!isMultipart(ctx.headers['content-type'])) {
        throw new BadRequest('Send the file as a multipart "upload" (imports by uploadId are not supported)');
      }
      // Access first: no byte of the upload is read for a caller who may not add documents here.
      await ctx.engine.home.workspaceFor(wid, ctx.principal, 'add');
      const {fields, upload} = await createParams(ctx);
      if (!upload) throw new BadRequest('missing payload');
      return importFile(ctx, wid, upload, fields);
    },
  },
  {
    method: 'POST',
    path: '/api/docs/:docId/copy',
    tag: 'docs',
    body: CopyPost,
    summary: 'Copy a document into a workspace (asTemplate: structure only); returns the new id',
    handler: async (ctx) => {
      // Grist checks the caller's access to the source before reading the parameters.
      await ctx.engine.docAccess(ctx.params.docId, ctx.principal, ctx.org, 'viewers');
      const body = validate(CopyPost, await ctx.json()) as Record<string, unknown>;
      const wid = workspaceParam(body);
      if (wid === null) throw new BadRequest('workspaceId parameter is required');
      const copy = await copyDoc(ctx.engine, ctx.params.docId, ctx.principal, ctx.org, wid, {
        name: optString(body, 'documentName'),
        asTemplate: booleanParam(body, 'asTemplate'),
      });
      return copy.id;
    },
  },
];
