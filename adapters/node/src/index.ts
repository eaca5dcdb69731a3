/**
 * gristlite for Node's http module: translates IncomingMessage/ServerResponse to and from the
 * plain request/response objects of @gristlite/http. Bodies stream both ways.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Handler, HttpRequest } from '@gristlite/http';

export type NodeHandler = (req: IncomingMessage, res: ServerResponse, next?: (err?: unknown) => void) => Promise<void>;

export interface NodeAdapterOptions {
  /**
   * Only serve paths under `/api` (and `/o/<org>/api`), passing others to `next` when given, so the
   * handler can sit in front of an app's own routes. Default true.
   */
  apiOnly?: boolean;
}

function toRequest(req: IncomingMessage): HttpRequest {
  const headers: Record<string, string | undefined> = {};
  for (const [k, val] of Object.entries(req.headers)) headers[k] = Array.isArray(val) ? val.join(', ') : val;
  return { method: req.method ?? 'GET', url: req.url ?? '/', headers, body: req };
}

const API_PATH = /^(?:\/o\/[^/]+)?(?:\/dw\/[^/]+\/v\/[^/]+)?\/api(?:\/|$|\?)/i;

export function toNodeHandler(handler: Handler, opts: NodeAdapterOptions = {}): NodeHandler {
  const apiOnly = opts.apiOnly ?? true;
  return async (req, res, next) => {
    if (apiOnly && next && !API_PATH.test(req.url ?? '')) return next();
    try {
      const out = await handler(toRequest(req));
      res.writeHead(out.status, out.headers);
      const body = out.body;
      if (body === null || typeof body === 'string' || body instanceof Uint8Array) res.end(body ?? undefined);
      else await pipeline(Readable.from(body), res);
      // An unread upload must not keep the connection stalled.
      if (!req.readableEnded) req.resume();
    } catch (e) {
      if (!res.headersSent) {
        res.writeHead(500, { 'Content-Type': 'application/json; charset=utf-8' });
        res.end(JSON.stringify({ error: 'internal error' }));
      } else res.destroy(e as Error);
    }
  };
}
