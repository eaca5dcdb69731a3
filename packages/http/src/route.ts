import type * as v from 'valibot';
import {BadRequest} from '@gristlite/core/internal';
import type {HandlerResult, RequestContext} from './types.js';

export type Method = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

/** One entry of the route table. Every adapter and the OpenAPI document are fed from it. */
export interface Route {
  method: Method;
  /** Path pattern with `:name` parameters, e.g. `/api/orgs/:oid/workspaces`. */
  path: string;
  summary: string;
  tag: string;
  /** JSON body schema, when the route takes one (used for validation and the OpenAPI document). */
  body?: v.GenericSchema;
  /** Query parameters the route reads, for the OpenAPI document. */
  query?: string[];
  /**
   * Takes a multipart upload (read through `ctx.form()`): its body may be as large as
   * `maxUploadBytes` plus `maxBodyBytes` for the fields; other bodies, `maxBodyBytes`.
   */
  upload?: boolean;
  /** The form fields an upload route reads besides `upload` (JSON Schema each), for the OpenAPI document. */
  uploadFields?: Record<string, Record<string, unknown>>;
  /** Answered without looking at credentials (`/status`, `/metrics`). */
  public?: boolean;
  /** The success response, for the OpenAPI document (built-in routes: `RESPONSES` in openapi-schemas.ts). */
  response?: RouteResponse;
  /** Not part of the REST API (the console's page and files): left out of the OpenAPI document. */
  internal?: boolean;
  /**
   * Beyond Grist: a read of document data answered with an ETag, and 304 to a matching
   * `If-None-Match` (routes/revalidate.ts). `docRoute` does it; other routes call `revalidate`.
   */
  revalidate?: boolean;
  handler(ctx: RequestContext): Promise<HandlerResult>;
}

/** A success response as the OpenAPI document describes it. */
export interface RouteResponse {
  description: string;
  /** JSON Schema of the body. */
  schema: Record<string, unknown>;
  /** Default `application/json`. */
  contentType?: string;
}

export interface CompiledRoute extends Route {
  regex: RegExp;
  keys: string[];
}

export function compileRoute(r: Route): CompiledRoute {
  const keys: string[] = [];
  const pattern = r.path
    .split('/')
    .map((seg) => {
      if (seg.startsWith(':')) {
        keys.push(seg.slice(1));
        return '([^/]+)';
      }
      return seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    })
    .join('/');
  // Express defaults: case-insensitive, an optional trailing slash.
  return {...r, regex: new RegExp(`^${pattern}/?$`, 'i'), keys};
}

export function matchRoute(
  routes: readonly CompiledRoute[],
  method: string,
  path: string,
): {route: CompiledRoute; params: Record<string, string>} | null {
  for (const route of routes) {
    if (route.method !== method) continue;
    const m = route.regex.exec(path);
    if (!m) continue;
    const params: Record<string, string> = {};
    route.keys.forEach((k, i) => {
      params[k] = decodePathSegment(m[i + 1]);
    });
    return {route, params};
  }
  return null;
}

/** Grist's integer parameter check (`parseInt`, so `12abc` reads as 12 as in Grist). */
export function intParam(name: string, value: string | null | undefined): number {
  const n = value == null ? NaN : parseInt(value, 10);
  if (Number.isNaN(n)) throw new BadRequest(`${name} parameter cannot be understood as an integer: ${value}`);
  return n;
}

/** Grist's flag parameter: affirmative when `1`, `on`, `true` or `yes` (any case). */
export function flag(query: URLSearchParams, name: string): boolean {
  const v = query.get(name);
  return v !== null && ['1', 'on', 'true', 'yes'].includes(v.toLowerCase());
}

/** Grist's check of a string parameter against an allowed list. */
export function oneOf<T extends string>(name: string, value: string | null, allowed: readonly T[], dflt: T): T {
  if (value === null || value === '') return dflt;
  if (!(allowed as readonly string[]).includes(value)) {
    throw new BadRequest(`${name} parameter ${value} should be one of ${allowed.join(',')}`);
  }
  return value as T;
}

/** A path segment, percent-decoded; a malformed escape is the client's error, not a 500. */
export function decodePathSegment(segment: string): string {
  // Most segments (ids) have no escape: nothing to decode, no try block entered.
  if (!segment.includes('%')) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new BadRequest(`Invalid URL encoding in path: ${segment}`);
  }
}

/** Routes under /api/docs/{doc} that write the home database, not the document. */
const HOME_TAGS = new Set(['docs', 'apikeys']);

/**
 * What a route does with an `Idempotency-Key` (beyond Grist, issue 30): writes to a document's
 * contents keep it (`keep`); reads ignore it; home writes and uploads refuse it (decision D56).
 */
export function idempotencyOf(route: Route, method: string = route.method): 'keep' | 'ignore' | 'refuse' {
  if (!['POST', 'PATCH', 'PUT', 'DELETE'].includes(method)) return 'ignore';
  if (route.tag === 'sql' || route.path.endsWith('/records/list')) return 'ignore';
  if (!route.path.startsWith('/api/docs/:docId/') || HOME_TAGS.has(route.tag) || route.upload) return 'refuse';
  return 'keep';
}
