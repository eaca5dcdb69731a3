import {join} from 'node:path';
import {attachmentContentDisposition, Forbidden} from '@gristlite/core/internal';
import {flag, type Route} from '../route.js';
import {RawResponse} from '../types.js';
import {docRoute} from './doc-common.js';

/** Content-Disposition as Grist's `content-disposition` package writes it (`filename*` only when needed). */
export function contentDisposition(filename: string, disposition: 'attachment' | 'inline' = 'attachment'): string {
  return attachmentContentDisposition(filename, disposition);
}

export const downloadRoutes: Route[] = [
  docRoute({
    method: 'GET',
    path: '/api/docs/:docId/download',
    tag: 'downloads',
    summary: 'Download the document as a .grist file',
    query: ['nohistory', 'template', 'title', 'dryrun'],
    need: 'viewers',
    // Owners download a document whose rules are broken, to repair them (Grist's recovery).
    ownersDespiteBrokenRules: true,
    handler: async (ctx, {doc, meta, role, access}) => {
      // The file is not filtered: only owners and those who may copy everything get it (Grist).
      if (access && role !== 'owners' && !access.canCopyEverything()) {
        throw new Forbidden('not authorized to download this document');
      }
      if (flag(ctx.query, 'dryrun') || flag(ctx.query, 'dryRun')) return {dryRun: 'allowed'};
      const body = await doc.backupStream(join(ctx.engine.dataDir, 'tmp'), {
        nohistory: flag(ctx.query, 'nohistory'),
        template: flag(ctx.query, 'template'),
      });
      const title = ctx.query.get('title') || meta.name;
      return new RawResponse(200, body, {
        'Content-Type': 'application/x-sqlite3',
        'Content-Disposition': contentDisposition(`${title}.grist`),
      });
    },
  }),
];
