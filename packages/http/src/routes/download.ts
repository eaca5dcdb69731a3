/** Downloads of the whole document (SPEC §6.1). */
import {createReadStream} from 'node:fs';
import {mkdir, rm} from 'node:fs/promises';
import {join} from 'node:path';
import {attachmentContentDisposition, Forbidden, makeId} from '@gristlite/core';
import {flag, type Route} from '../route.js';
import {RawResponse} from '../types.js';
import {docRoute} from './doc-common.js';

/** Streams a temporary file and removes it once sent (or abandoned). */
async function* streamAndRemove(path: string): AsyncIterable<Uint8Array> {
  try {
    yield* createReadStream(path);
  } finally {
    await rm(path, {force: true});
  }
}

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
      const tmpDir = join(ctx.engine.dataDir, 'tmp');
      await mkdir(tmpDir, {recursive: true});
      const tmp = join(tmpDir, `${makeId()}.grist`);
      try {
        await doc.backup(tmp, {nohistory: flag(ctx.query, 'nohistory'), template: flag(ctx.query, 'template')});
      } catch (e) {
        await rm(tmp, {force: true});
        throw e;
      }
      const title = ctx.query.get('title') || meta.name;
      return new RawResponse(200, streamAndRemove(tmp), {
        'Content-Type': 'application/x-sqlite3',
        'Content-Disposition': contentDisposition(`${title}.grist`),
      });
    },
  }),
];
