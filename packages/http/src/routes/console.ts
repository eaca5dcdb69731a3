/**
 * The API console at `/apiconsole` (as Grist offers one): Swagger UI, served from the
 * `swagger-ui-dist` package on disk (no CDN), on this server's `/api/openapi.json`.
 * Only the files named in ASSETS are ever read, so no request path reaches the file system.
 */
import {createHash} from 'node:crypto';
import {readFile} from 'node:fs/promises';
import {createRequire} from 'node:module';
import {dirname, join} from 'node:path';
import {NotFound} from '@gristlite/core/internal';
import type {Route} from '../route.js';
import {RawResponse, type RequestContext} from '../types.js';

const require = createRequire(import.meta.url);
const DIST_DIR = dirname(require.resolve('swagger-ui-dist/package.json'));
const DIST_VERSION = (require('swagger-ui-dist/package.json') as {version: string}).version;

const JS = 'text/javascript; charset=utf-8';

/** Our own script: reads the document's address from the page, so the page needs no inline script. */
const INIT_JS = `window.addEventListener('load', function () {
  var el = document.getElementById('swagger-ui');
  window.ui = SwaggerUIBundle({
    url: el.getAttribute('data-openapi'),
    dom_id: '#swagger-ui',
    deepLinking: true,
    presets: [SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
    validatorUrl: null,
    displayRequestDuration: true,
  });
});
`;

/** The files the console serves, by name: from swagger-ui-dist, or (a string) our own. */
const ASSETS: Record<string, {type: string; file?: string; text?: string}> = {
  'swagger-ui.css': {type: 'text/css; charset=utf-8', file: 'swagger-ui.css'},
  'swagger-ui-bundle.js': {type: JS, file: 'swagger-ui-bundle.js'},
  'favicon-32x32.png': {type: 'image/png', file: 'favicon-32x32.png'},
  'favicon-16x16.png': {type: 'image/png', file: 'favicon-16x16.png'},
  'console.js': {type: JS, text: INIT_JS},
};

/** What changes when a file does: the package's version, or a hash of our own text. */
function assetVersion(name: string): string {
  const text = ASSETS[name].text;
  return text === undefined ? DIST_VERSION : createHash('sha256').update(text).digest('hex').slice(0, 12);
}
const ASSET_CACHE = 'public, max-age=86400';
const cache = new Map<string, Promise<Buffer>>();

function loadAsset(name: string): Promise<Buffer> {
  let p = cache.get(name);
  if (!p) {
    const a = ASSETS[name];
    p = a.text !== undefined ? Promise.resolve(Buffer.from(a.text)) : readFile(join(DIST_DIR, a.file!));
    p.catch(() => cache.delete(name));
    cache.set(name, p);
  }
  return p;
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** `/o/<org>` (and `/dw/...`) as requested, so the page's links stay on the same site. */
function sitePrefix(ctx: RequestContext): string {
  const q = ctx.originalUrl.indexOf('?');
  const raw = q < 0 ? ctx.originalUrl : ctx.originalUrl.slice(0, q);
  return raw.slice(0, Math.max(0, raw.length - ctx.path.length));
}

function page(prefix: string): string {
  const p = escapeHtml(prefix);
  const asset = (name: string) => `${p}/apiconsole/${name}?v=${assetVersion(name)}`;
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>gristlite API console</title>
<link rel="stylesheet" href="${asset('swagger-ui.css')}">
<link rel="icon" type="image/png" href="${asset('favicon-32x32.png')}" sizes="32x32">
<link rel="icon" type="image/png" href="${asset('favicon-16x16.png')}" sizes="16x16">
</head>
<body>
<div id="swagger-ui" data-openapi="${p}/api/openapi.json"></div>
<script src="${asset('swagger-ui-bundle.js')}"></script>
<script src="${asset('console.js')}"></script>
</body>
</html>
`;
}

const SECURITY_HEADERS = {
  'X-Content-Type-Options': 'nosniff',
  'Content-Security-Policy':
    "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; script-src 'self'; " +
    "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
};

export const consoleRoutes: Route[] = [
  {
    method: 'GET',
    path: '/apiconsole',
    tag: 'console',
    summary: 'The API console (Swagger UI)',
    internal: true,
    handler: async (ctx) =>
      new RawResponse(200, page(sitePrefix(ctx)), {
        ...SECURITY_HEADERS,
        'Content-Type': 'text/html; charset=utf-8',
        'Cache-Control': 'no-cache',
      }),
  },
  {
    method: 'GET',
    path: '/apiconsole/:asset',
    tag: 'console',
    summary: 'A file of the API console',
    internal: true,
    handler: async (ctx) => {
      const name = ctx.params.asset;
      if (!Object.hasOwn(ASSETS, name)) throw new NotFound(`not found: ${ctx.originalUrl}`);
      const etag = `"${assetVersion(name)}"`;
      const headers = {
        ...SECURITY_HEADERS,
        'Content-Type': ASSETS[name].type,
        'Cache-Control': ASSET_CACHE,
        ETag: etag,
      };
      if (ctx.headers['if-none-match']?.split(',').some((t) => t.trim() === etag))
        return new RawResponse(304, null, headers);
      return new RawResponse(200, await loadAsset(name), headers);
    },
  },
];
