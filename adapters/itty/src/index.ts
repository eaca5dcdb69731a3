/**
 * gristlite on a caller's itty-router: registers the whole API under `/api/*` and
 * `/o/:org/api/*`, so the caller's own routes sit beside it. Routing, validation and error
 * mapping stay in @gristlite/http; this only hands the Request over.
 */
import type { Handler } from '@gristlite/http';
import { toFetchHandler } from '@gristlite/fetch';

/** The part of an itty-router router this needs (IttyRouter, Router and AutoRouter all fit). */
export interface IttyLikeRouter {
  all(path: string, ...handlers: ((request: Request, ...args: any[]) => unknown)[]): unknown;
}

export function registerGristlite<R extends IttyLikeRouter>(router: R, handler: Handler): R {
  const fetchHandler = toFetchHandler(handler);
  const forward = (request: Request) => fetchHandler(request);
  for (const path of ['/api', '/api/*', '/o/:org/api', '/o/:org/api/*', '/dw/:w/v/:t/api/*']) router.all(path, forward);
  return router;
}
