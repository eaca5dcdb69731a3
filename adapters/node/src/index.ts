/**
 * gristlite for Node's http module: translates IncomingMessage/ServerResponse to and from the
 * plain request/response objects of @gristlite/http. Bodies stream both ways.
 */
import type {IncomingMessage, ServerResponse} from 'node:http';
import {Readable} from 'node:stream';
import {pipeline} from 'node:stream/promises';
import type {Handler, HttpRequest} from '@gristlite/http';

export type NodeHandler = (req: IncomingMessage, res: ServerResponse, next?: (err?: unknown) => void) => Promise<void>;

export interface NodeAdapterOptions {
  /**
   * Only serve paths under `/api` and `/apiconsole` (and `/o/<org>/...`), passing others to `next` when given, so the
   * handler can sit in front of an app's own routes. Default true.
   */
  apiOnly?: boolean;
}

function toRequest(req: IncomingMessage): HttpRequest {
  const headers: Record<string, string | undefined> = {};
  for (const [k, val] of Object.entries(req.headers)) headers[k] = Array.isArray(val) ? val.join(', ') : val;
  return {method: req.method ?? 'GET', url: req.url ?? '/', headers, body: req};
}

// The API, and the API console (`/apiconsole` and its files).
const API_PATH = /^(?:\/o\/[^/]+)?(?:\/dw\/[^/]+\/v\/[^/]+)?\/(?:api|apiconsole)(?:\/|$|\?)/i;

function ignore(): void {}

/** How long a connection answered before its body was read keeps reading (and dropping) it. */
export const LINGER_MS = 2000;

/**
 * A body still arriving when the answer is ready (an upload refused before it was read: 401,
 * 403, 413) is not read: the answer says `Connection: close`. The connection then lingers a
 * moment, discarding what still arrives, before it closes: closing a socket with unread input
 * resets it, and a client that is still sending would lose the answer.
 */
export function unreadBodyCloses(
  req: IncomingMessage,
  res: ServerResponse,
  headers: Record<string, string>,
): Record<string, string> {
  if (req.complete) return headers;
  res.once('finish', () => lingerThenClose(req));
  if (Object.keys(headers).some((k) => k.toLowerCase() === 'connection')) return headers;
  return {...headers, Connection: 'close'};
}

function lingerThenClose(req: IncomingMessage): void {
  const socket = req.socket;
  // Node has just ended the socket (Connection: close) and would destroy it once flushed.
  socket.removeListener('finish', socket.destroy);
  const close = () => socket.destroy();
  const timer = setTimeout(close, LINGER_MS).unref();
  socket.once('close', () => clearTimeout(timer));
  req.once('end', close);
  // Nobody reads the body any more (an abandoned reader may still be attached): drop it.
  req.removeAllListeners('readable');
  req.removeAllListeners('data');
  req.on('data', ignore);
  req.resume();
}

export function toNodeHandler(handler: Handler, opts: NodeAdapterOptions = {}): NodeHandler {
  const apiOnly = opts.apiOnly ?? true;
  return async (req, res, next) => {
    if (apiOnly && next && !API_PATH.test(req.url ?? '')) return next();
    // A client that goes away mid-request makes these emit 'error': nothing to do but let go.
    req.on('error', ignore);
    res.on('error', ignore);
    try {
      const out = await handler(toRequest(req));
      const body = out.body;
      const whole = typeof body === 'string' || body instanceof Uint8Array;
      // A body known in full goes with its length (not chunked): a forwarding worker can then
      // read the answer in one piece, and clients know what to expect.
      const headers =
        whole && !Object.keys(out.headers).some((k) => k.toLowerCase() === 'content-length')
          ? {
              ...out.headers,
              'Content-Length': String(typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength),
            }
          : out.headers;
      res.writeHead(out.status, unreadBodyCloses(req, res, headers));
      if (body === null || whole) res.end(body ?? undefined);
      // A Node stream (a forwarded answer, a file) pipes as it is; other iterables are wrapped.
      else await pipeline(body instanceof Readable ? body : Readable.from(body), res);
      // What is left of a body already received is discarded, keeping the connection usable.
      if (!req.readableEnded) req.resume();
    } catch (e) {
      if (!res.headersSent) {
        res.writeHead(500, {'Content-Type': 'application/json; charset=utf-8'});
        res.end(JSON.stringify({error: 'internal error'}));
      } else res.destroy(e as Error);
    }
  };
}
