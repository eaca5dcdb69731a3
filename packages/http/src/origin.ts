/**
 * Where a request is addressed: the org in its path (`/o/<org>/`) or host (a subdomain of the base
 * domain), share-link paths, and the CORS headers its Origin earns (SPEC §1.2).
 */
import {BadRequest, Forbidden} from '@gristlite/core/internal';
import {decodePathSegment} from './route.js';
import {SHARE_KEY_PREFIX} from './routes/index.js';
import type {HttpRequest, ServerOptions} from './types.js';

/**
 * Splits `/o/<org>/`, `/dw/<w>/` and `/v/<t>/` prefixes off a path, and writes a share link's
 * `/api/s/<key>/...` as `/api/docs/s.<key>/...`, as Grist's DocApi rewrites it.
 */
export function splitPath(path: string): {path: string; org: string | null} {
  // Grist strips `/dw/<worker>/` and `/v/<tag>/` one after the other, each when present.
  path = path.replace(/^(?:\/dw\/[^/]+)?(?:\/v\/[A-Za-z0-9._-]+)?(?=\/)/, '');
  const m = /^\/o\/([^/]+)(\/.*)?$/.exec(path);
  const out = m ? {path: m[2] ?? '/', org: decodePathSegment(m[1])} : {path, org: null};
  if (out.path.startsWith('/api/s/')) out.path = `/api/docs/${SHARE_KEY_PREFIX}${out.path.slice('/api/s/'.length)}`;
  return out;
}

/** The org a host names as a subdomain of the base domain, or null. */
export function orgFromHost(host: string | undefined, baseDomain: string | undefined): string | null {
  if (!host || !baseDomain) return null;
  const hostname = host.replace(/:\d+$/, '').toLowerCase();
  const base = baseDomain.toLowerCase().replace(/^\./, '');
  if (!hostname.endsWith(`.${base}`)) return null;
  const sub = hostname.slice(0, -(base.length + 1));
  return sub && !sub.includes('.') ? sub : null;
}

/** CORS as SPEC §1.2: trusted origins are the base domain and its subdomains. */
export function corsHeaders(req: HttpRequest, opts: ServerOptions): Record<string, string> {
  const headers: Record<string, string> = {'Access-Control-Allow-Methods': 'GET, PATCH, PUT, POST, DELETE, OPTIONS'};
  const origin = req.headers.origin;
  if (!origin) return headers;
  let host: string | null = null;
  if (origin !== 'null') {
    try {
      host = new URL(origin).hostname.toLowerCase();
    } catch {
      throw new BadRequest(`Invalid origin: ${origin}`);
    }
  }
  const reqHost = (req.headers.host ?? '').replace(/:\d+$/, '').toLowerCase();
  const base = opts.baseDomain?.toLowerCase();
  const trusted =
    host !== null && (host === reqHost || (base !== undefined && (host === base || host.endsWith(`.${base}`))));
  if (trusted) {
    Object.assign(headers, {
      'Access-Control-Allow-Origin': origin,
      Vary: 'Origin',
      'Access-Control-Allow-Credentials': 'true',
      'Access-Control-Allow-Headers': 'Authorization, Content-Type, X-Requested-With',
    });
  } else {
    if (req.headers.cookie !== undefined || req.headers.authorization !== undefined) {
      throw new Forbidden('Credentials not supported for cross-origin requests');
    }
    Object.assign(headers, {
      'Access-Control-Allow-Origin': '*',
      'Access-Control-Allow-Headers': 'Content-Type, X-Requested-With',
    });
  }
  return headers;
}
