import {openApiDocument} from '../openapi.js';
import {metricsRoute, statusRoute} from '../ops.js';
import type {Route} from '../route.js';
import {apiKeyRoutes} from './apikeys.js';
import {attachmentRoutes} from './attachments.js';
import {changeRoutes} from './changes.js';
import {formRoutes} from './forms.js';
import {consoleRoutes} from './console.js';
import {docDataRoutes} from './docdata.js';
import {downloadRoutes} from './download.js';
import {exportRoutes} from './exports.js';
import {homeRoutes} from './home.js';
import {importRoutes} from './imports.js';
import {lifecycleRoutes} from './lifecycle.js';
import {mcpRoutes} from './mcp/route.js';
import {historyRoutes} from './history.js';
import {shareRoutes} from './shares.js';
import {sqlRoutes} from './sql.js';
import {tableImportRoutes} from './table-import.js';
import {triggerRoutes} from './triggers.js';
import {webhookRoutes} from './webhooks.js';

export {SHARE_KEY_PREFIX, shareKeyOf} from './doc-common.js';
export {mcpSettingsFromEnv} from './mcp/settings.js';
export {
  checkShareRoute,
  SHARE_MAX_BODY_BYTES,
  SHARE_MAX_UPLOAD_BYTES,
  SHARE_RATE_LIMIT,
  ShareRateLimiter,
  shareUploadLimit,
} from './shares.js';

const VERSION = '1.0.1';

/** The one route table. Order matters only where two patterns overlap (first match wins). */
export function allRoutes(): Route[] {
  const routes: Route[] = [
    ...homeRoutes,
    ...apiKeyRoutes,
    ...docDataRoutes,
    ...sqlRoutes,
    ...downloadRoutes,
    ...exportRoutes,
    ...importRoutes,
    ...tableImportRoutes,
    ...attachmentRoutes,
    ...webhookRoutes,
    ...changeRoutes,
    ...formRoutes,
    ...shareRoutes,
    ...triggerRoutes,
    ...lifecycleRoutes,
    ...mcpRoutes,
    ...historyRoutes,
    statusRoute,
    metricsRoute,
    ...consoleRoutes,
  ];
  const openapi: Route = {
    method: 'GET',
    path: '/api/openapi.json',
    tag: 'meta',
    summary: 'This OpenAPI document',
    handler: async () => doc,
  };
  routes.unshift(openapi);
  const doc = openApiDocument(routes, VERSION);
  return routes;
}
