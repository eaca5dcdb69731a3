/**
 * `GET /api/docs/{doc}/forms/{vsId}` (Grist 1.7.17, issue 29): what a form widget asks for, read
 * as the caller may read it (`formOf` in core). Through a share link (`/api/s/{key}/forms/{vsId}`,
 * issue 41) the form must be one the share publishes (`checkPublishedForm`), and it is read as the
 * share's anonymous caller.
 */
import {checkPublishedForm, formOf, integerParam} from '@gristlite/core/internal';
import type {Route} from '../route.js';
import {docRoute} from './doc-common.js';

export const formRoutes: Route[] = [
  docRoute({
    method: 'GET',
    path: '/api/docs/:docId/forms/:vsId',
    tag: 'docs',
    summary: "A form widget's fields, layout, table and title, as the caller may read them (viewers)",
    need: 'viewers',
    handler: async (ctx, {doc, grist, share}) => {
      const sectionId = integerParam(ctx.params.vsId, 'vsId');
      if (share) checkPublishedForm(doc.shareRules(), share.linkId, sectionId);
      return formOf(grist, sectionId);
    },
  }),
];
