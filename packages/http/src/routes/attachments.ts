/** Attachments (SPEC §12): upload, list, metadata, download. Storage is in core (attachments/). */
import {checkShareUpload, shareUploadLimit} from './shares.js';
import {BadRequest, Forbidden, type PageEnd, parseAttId, type TableQuery} from '@gristlite/core/internal';
import {cursorParam, nextLink, type PageQuery} from '../paging.js';
import {createReadStream} from 'node:fs';
import {readFile} from 'node:fs/promises';
import {flag, oneOf, type Route} from '../route.js';
import {RawResponse, type RequestContext} from '../types.js';
import * as v from 'valibot';
import {docRoute} from './doc-common.js';
import {contentDisposition} from './download.js';

const SetAttachmentStorePost = v.looseObject(
  {
    type: v.picklist(['internal', 'external'], 'is none of "internal", "external"'),
  },
  'is not an object',
);

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
  docRoute({
    method: 'POST',
    path: '/api/docs/:docId/attachments',
    tag: 'attachments',
    upload: true,
    summary: 'Upload attachments (multipart field "upload", one or more files); returns the new ids',
    // Access first: a caller who may not edit is answered before any byte of the upload is read.
    need: 'editors',
    handler: async (ctx, {doc, share}) => {
      // Through a share (issue 41): a form that asks for files, within the share's upload limit.
      if (share) checkShareUpload(doc, share.linkId);
      const maxBytes = share ? shareUploadLimit(ctx.options) : ctx.options.maxUploadBytes;
      const form = await ctx.form();
      const files = form.files.get('upload');
      if (!files?.length) throw new BadRequest('missing payload');
      // The bytes go into the document as blobs (one transaction), so they are read back here;
      // their sum is bounded by maxUploadBytes.
      const uploaded = [];
      for (const f of files) uploaded.push({fileName: f.fileName, mimeType: f.mimeType, data: await readFile(f.path)});
      return doc.addAttachments(uploaded, {maxBytes});
    },
  }),
  docRoute({
    method: 'GET',
    path: '/api/docs/:docId/attachments',
    tag: 'attachments',
    summary: 'List attachments (fileName, fileSize, timeUploaded), with filter, sort and limit',
    query: ['filter', 'sort', 'limit', 'cursor'],
    need: 'viewers',
    revalidate: true,
    handler: async (ctx, {doc, access, meta}) => {
      const query = tableQueryFrom(ctx);
      // Beyond Grist: cursor pagination, as for records (paging.ts), on the _grist_Attachments table.
      const where: PageQuery = {docId: meta.id, tableId: '_grist_Attachments', filter: query.filter, sort: query.sort};
      const page: PageEnd = {next: null};
      const listed = doc.listAttachments(query, {
        after: cursorParam(ctx, where),
        page,
        readable: doc.listableAttachments(access),
      });
      return new RawResponse(200, JSON.stringify(listed), {
        'Content-Type': 'application/json; charset=utf-8',
        ...nextLink(ctx, where, page),
      });
    },
  }),
  docRoute({
    method: 'GET',
    path: '/api/docs/:docId/attachments/store',
    tag: 'attachments',
    summary: 'Where new attachments go: "internal" (inside the document) or "external" (the server\'s store)',
    need: 'viewers',
    handler: async (_ctx, {doc}) => {
      return {type: doc.attachmentStoreId() ? 'external' : 'internal'};
    },
  }),
  docRoute({
    method: 'POST',
    path: '/api/docs/:docId/attachments/store',
    tag: 'attachments',
    summary:
      'Choose where new attachments go: "internal" or "external" (400 when the server has no external store); answers the store id',
    body: {schema: SetAttachmentStorePost},
    need: 'owners',
    handler: async (_ctx, {doc}, body) => {
      // Grist answers `{store: id}`, `{}` for the internal store (its id is undefined).
      const id = doc.setAttachmentStore(body.type);
      return id ? {store: id} : {};
    },
  }),
  docRoute({
    method: 'GET',
    path: '/api/docs/:docId/attachments/stores',
    tag: 'attachments',
    summary: 'External attachment stores configured on the server (their labels)',
    need: 'owners',
    handler: async (_ctx, {doc}) => {
      return {stores: doc.attachmentStores.labels()};
    },
  }),
  docRoute({
    method: 'POST',
    path: '/api/docs/:docId/attachments/transferAll',
    tag: 'attachments',
    summary:
      "Start moving every attachment file to the document's chosen store, one at a time in the background; answers the transfer status",
    need: 'owners',
    handler: async (_ctx, {doc}) => {
      return doc.transferAllAttachments();
    },
  }),
  docRoute({
    method: 'GET',
    path: '/api/docs/:docId/attachments/transferStatus',
    tag: 'attachments',
    summary: 'Status of attachment transfers between stores, and where the files are (none, internal, external, mixed)',
    need: 'viewers',
    handler: async (_ctx, {doc}) => {
      return doc.attachmentStoreStatus();
    },
  }),
  docRoute({
    method: 'GET',
    path: '/api/docs/:docId/attachments/archive',
    tag: 'attachments',
    summary: 'Download every attachment as one zip (default) or tar file',
    query: ['format', 'title'],
    need: 'viewers',
    handler: async (ctx, {doc, meta, access}) => {
      const format = oneOf('format', ctx.query.get('format'), ['zip', 'tar'] as const, 'zip');
      // The archive holds every attachment: only for those who may read everything.
      if (doc.readableAttachments(access)) throw new Forbidden('Cannot access attachment');
      // Grist names it like a table export: `<doc>-Attachments`, or ?title.
      const title = ctx.query.get('title') || `${meta.name}-Attachments`;
      return new RawResponse(200, doc.attachmentsArchive(format), {
        'Content-Type': format === 'zip' ? 'application/zip' : 'application/x-tar',
        'Content-Disposition': contentDisposition(`${title}.${format}`),
        'Cache-Control': 'no-store',
      });
    },
  }),
  docRoute({
    method: 'POST',
    path: '/api/docs/:docId/attachments/archive',
    tag: 'attachments',
    upload: true,
    summary:
      'Restore attachment files the document names but lacks from a .tar of GET /attachments/archive (multipart, application/x-tar)',
    need: 'owners',
    handler: async (ctx, {doc}) => {
      const form = await ctx.form();
      // Grist takes the first file part named *.tar and sent as application/x-tar.
      const tarFile = [...form.files.values()]
        .flat()
        .find((f) => f.fileName.endsWith('.tar') && f.mimeType === 'application/x-tar');
      if (!tarFile) throw new BadRequest('No .tar file found in request');
      return doc.restoreAttachments(createReadStream(tarFile.path));
    },
  }),
  docRoute({
    method: 'POST',
    path: '/api/docs/:docId/attachments/updateUsed',
    tag: 'attachments',
    summary: 'Mark attachments no cell references as deleted (timeDeleted), and referenced ones as not',
    need: 'editors',
    handler: async (_ctx, {doc}) => {
      doc.updateUsedAttachments();
      return null;
    },
  }),
  docRoute({
    method: 'POST',
    path: '/api/docs/:docId/attachments/removeUnused',
    tag: 'attachments',
    summary:
      'Remove unused attachments and their files (expiredonly: only those unused for 7 days; verifyfiles: check the files afterwards)',
    query: ['expiredonly', 'verifyfiles'],
    need: 'owners',
    handler: async (ctx, {doc}) => {
      await doc.removeUnusedAttachments({expiredOnly: flag(ctx.query, 'expiredonly')});
      if (flag(ctx.query, 'verifyfiles') && !doc.verifyAttachmentFiles()) {
        throw new Error('attachment files do not match the attachment rows'); // Grist: a failed assertion (500)
      }
      return null;
    },
  }),
  docRoute({
    method: 'POST',
    path: '/api/docs/:docId/attachments/verifyFiles',
    tag: 'attachments',
    summary: 'Check that the stored files are exactly those the attachment rows name',
    need: 'owners',
    handler: async (_ctx, {doc}) => {
      if (!doc.verifyAttachmentFiles()) throw new Error('attachment files do not match the attachment rows');
      return null;
    },
  }),
  docRoute({
    method: 'GET',
    path: '/api/docs/:docId/attachments/:attId',
    tag: 'attachments',
    summary: 'Metadata of one attachment',
    query: ['tableId', 'colId', 'rowId', 'maybeNew'],
    need: 'viewers',
    revalidate: true,
    handler: async (ctx, {doc, access}) => {
      const attId = parseAttId(ctx.params.attId);
      const cell = ['tableId', 'colId', 'rowId'].map((k) => ctx.query.get(k));
      if (cell.some(Boolean) && !cell.every(Boolean))
        throw new BadRequest('define all of tableId, colId and rowId, or none.');
      doc.checkAttachment(access, attId);
      return doc.attachmentMetadata(attId);
    },
  }),
  docRoute({
    method: 'GET',
    path: '/api/docs/:docId/attachments/:attId/download',
    tag: 'attachments',
    summary: "Download an attachment's bytes",
    query: ['inline', 'name', 'tableId', 'colId', 'rowId'],
    need: 'viewers',
    handler: async (ctx, {doc, access}) => {
      const attId = parseAttId(ctx.params.attId);
      const cell = ['tableId', 'colId', 'rowId'].map((k) => ctx.query.get(k));
      if (cell.some(Boolean) && !cell.every(Boolean))
        throw new BadRequest('define all of tableId, colId and rowId, or none.');
      doc.checkAttachment(access, attId);
      const {data, headers} = await doc.attachmentDownload(attId, {
        inline: flag(ctx.query, 'inline'),
        name: ctx.query.get('name') || undefined,
      });
      return new RawResponse(200, data, headers);
    },
  }),
];
