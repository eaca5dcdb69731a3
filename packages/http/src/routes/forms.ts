/**
 * `GET /api/docs/{doc}/forms/{vsId}` (Grist 1.7.17, issue 29): what a form widget asks for, read
 * as the caller may read it (`formOf` in core). Shares (`/s/{key}/forms/...`, published forms) are
 * not supported (D58).
 */
import {formOf, integerParam} from '@gristlite/core/internal';
import type {Route} from '../route.js';
import {docRoute} from './doc-common.js';

export const formRoutes: Route[] = [
  docRoute({
    method: 'GET',
    path: '/api/docs/:docId/forms/:vsId',
    tag: 'docs',
    summary: "A form widget's fields, layout, table and title, as the caller may read them (viewers)",
    need: 'viewers',
    handler: async (ctx, {grist}) => formOf(grist, integerParam(ctx.params.vsId, 'vsId')),
  }),
];
