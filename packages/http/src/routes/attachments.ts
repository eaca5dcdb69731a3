/** Attachments (SPEC §12): upload, list, metadata, download. Storage is in core (attachments/). */
import {
  BadRequest, addAttachments, getAttachmentDownload, getAttachmentMetadata, listAttachments, parseAttId,
  type TableQuery,
} from '@gristlite/core';
import { readFile } from 'node:fs/promises';
import { flag, type Route } from '../route.js';
import { RawResponse, type RequestContext } from '../types.js';
import { openDocFor } from './doc-common.js';

/**
 * `filter`, `sort`, `limit` (or the `X-Sort` / `X-Limit` headers; the query wins) as GET /records
 * reads them. Decision 1: malformed input is a 400 naming the problem, never a 500.
 */
export function tableQueryFrom(ctx: RequestContext): TableQuery {
  const q: TableQuery = {};
  const filter = ctx.query.get('filter');
  if (filter) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(filter);
    } catch (e) {
      throw new BadRequest(`Invalid filter parameter: ${(e as Error).message}`);
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
      throw new BadRequest('Invalid filter parameter: it must be a JSON object');
    }
    q.filter = parsed as Record<string, unknown>;
  }
  const sort = ctx.query.get('sort') ?? ctx.headers['x-sort'];
  if (sort) q.sort = sort.split(',');
  const limit = ctx.query.get('limit') ?? ctx.headers['x-limit'];
  if (limit !== undefined && limit !== null && limit !== '') {
    const n = Number(limit);
    if (!Number.isFinite(n)) throw new BadRequest('limit is not a number');
    q.limit = Math.trunc(n);
  }
  return q;
}

export const attachmentRoutes: Route[] = [
  {
    method: 'POST', path: '/api/docs/:docId/attachments', tag: 'attachments', upload: true,
    summary: 'Upload attachments (multipart field "upload", one or more files); returns the new ids',
    handler: async (ctx) => {
      // Access first: a caller who may not edit is answered before any byte of the upload is read.
      const doc = await openDocFor(ctx, 'editors');
      const form = await ctx.form();
      const files = form.files.get('upload');
      if (!files?.length) throw new BadRequest('missing payload');
      // The bytes go into the document as blobs (one transaction), so they are read back here;
      // their sum is bounded by maxUploadBytes.
      const uploaded = [];
      for (const f of files) uploaded.push({ fileName: f.fileName, mimeType: f.mimeType, data: await readFile(f.path) });
      return addAttachments(doc.db, uploaded, { maxBytes: ctx.options.maxUploadBytes });
    },
  },
  {
    method: 'GET', path: '/api/docs/:docId/attachments', tag: 'attachments',
    summary: 'List attachments (fileName, fileSize, timeUploaded), with filter, sort and limit',
    query: ['filter', 'sort', 'limit'],
    handler: async (ctx) => {
      const doc = await openDocFor(ctx, 'viewers');
      return listAttachments(doc.db, tableQueryFrom(ctx));
    },
  },
  {
    method: 'GET', path: '/api/docs/:docId/attachments/store', tag: 'attachments',
    summary: 'Where attachments are stored (always "internal": inside the document)',
    handler: async (ctx) => {
      await openDocFor(ctx, 'viewers');
      return { type: 'internal' };
    },
  },
  {
    method: 'GET', path: '/api/docs/:docId/attachments/:attId', tag: 'attachments',
    summary: 'Metadata of one attachment', query: ['tableId', 'colId', 'rowId', 'maybeNew'],
    handler: async (ctx) => {
      const doc = await openDocFor(ctx, 'viewers');
      const attId = parseAttId(ctx.params.attId);
      const cell = ['tableId', 'colId', 'rowId'].map((k) => ctx.query.get(k));
      if (cell.some(Boolean) && !cell.every(Boolean)) throw new BadRequest('define all of tableId, colId and rowId, or none.');
      return getAttachmentMetadata(doc.db, attId);
    },
  },
  {
    method: 'GET', path: '/api/docs/:docId/attachments/:attId/download', tag: 'attachments',
    summary: 'Download an attachment\'s bytes', query: ['inline', 'name', 'tableId', 'colId', 'rowId'],
    handler: async (ctx) => {
      const doc = await openDocFor(ctx, 'viewers');
      const attId = parseAttId(ctx.params.attId);
      const cell = ['tableId', 'colId', 'rowId'].map((k) => ctx.query.get(k));
      if (cell.some(Boolean) && !cell.every(Boolean)) throw new BadRequest('define all of tableId, colId and rowId, or none.');
      const { data, headers } = getAttachmentDownload(doc.db, attId, {
        inline: flag(ctx.query, 'inline'),
        name: ctx.query.get('name') || undefined,
      });
      return new RawResponse(200, data, headers);
    },
  },
];
