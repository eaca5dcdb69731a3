/**
 * gristlite on a caller's itty-router: registers the whole API (paths under `/api` and
 * `/o/<org>/api`, in any case, the API console at `/apiconsole`, and the `/status` health check), so the caller's own routes sit beside it. Routing, validation and error
 * mapping stay in @gristlite/http; this only hands the Request over.
 */
import type {Handler} from '@gristlite/http';
import {toFetchHandler} from '@gristlite/fetch';

/** The part of an itty-router router this needs (IttyRouter, Router and AutoRouter all fit). */
export interface IttyLikeRouter {
  all(path: string, ...handlers: ((request: Request, ...args: any[]) => unknown)[]): unknown;
}

// Matched here rather than by itty patterns: Grist's paths are case-insensitive (Express defaults).
// `/status` too: Grist's health check, which clients and load balancers probe at the root.
const API_PATH = /^(?:(?:\/o\/[^/]+)?(?:\/dw\/[^/]+\/v\/[^/]+)?\/(?:api|apiconsole)(?:\/|$)|\/status$)/i;

export function registerGristlite<R extends IttyLikeRouter>(router: R, handler: Handler): R {
  const fetchHandler = toFetchHandler(handler);
  // Returning undefined lets itty try the caller's later routes for everything outside the API.
  router.all('*', (request: Request) =>
    API_PATH.test(new URL(request.url).pathname) ? fetchHandler(request) : undefined,
  );
  return router;
}
