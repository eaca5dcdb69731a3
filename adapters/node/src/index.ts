/**
 * gristlite for Node's http module: translates IncomingMessage/ServerResponse to and from the
 * plain request/response objects of @gristlite/http. Bodies stream both ways.
 */
import type {IncomingMessage, Server, ServerResponse} from 'node:http';
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
  const from = req.headers;
  // for-in over Node's own header object: no array of entries made per request.
  for (const k in from) {
    const val = from[k];
    headers[k] = Array.isArray(val) ? val.join(', ') : val;
  }
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
      // read the answer in one piece, and clients know what to expect. Object.assign, not a
      // spread: V8's slow path on Node 20 (5-10 µs an answer under load, D157).
      const headers =
        whole && !Object.keys(out.headers).some((k) => k.toLowerCase() === 'content-length')
          ? Object.assign({}, out.headers, {
              'Content-Length': String(typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength),
            })
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

/** Connection timeouts of a node:http server (docs/operations.md, "Connections"). */
export interface ServerTimeouts {
  /**
   * How long a kept-alive connection may sit idle before the server closes it. Default 65000 ms:
   * longer than the 60 s idle timeout of common load balancers and proxies (AWS ALB, nginx
   * upstream keepalive_timeout), so the side that closes is the client's, never ours mid-reuse.
   */
  keepAliveTimeoutMs?: number;
  /**
   * How long a request's headers may take to arrive. Default keep-alive + 5000 ms; it must be
   * longer than the keep-alive, or Node may close an idle kept-alive socket early.
   */
  headersTimeoutMs?: number;
  /** How long a whole request (body included) may take to arrive. Default 300000 ms (Node's). */
  requestTimeoutMs?: number;
}

/** Defaults of `configureServer`. */
export const SERVER_TIMEOUTS = {keepAliveTimeoutMs: 65_000, headersMarginMs: 5000, requestTimeoutMs: 300_000};

/** The timeouts `configureServer` sets: defaults filled in, checked against each other. */
export function serverTimeouts(opts: ServerTimeouts = {}): Required<ServerTimeouts> {
  const keepAlive = opts.keepAliveTimeoutMs ?? SERVER_TIMEOUTS.keepAliveTimeoutMs;
  const headers = opts.headersTimeoutMs ?? keepAlive + SERVER_TIMEOUTS.headersMarginMs;
  const whole = opts.requestTimeoutMs ?? SERVER_TIMEOUTS.requestTimeoutMs;
  if (!(keepAlive > 0)) throw new RangeError(`keepAliveTimeoutMs must be positive, got ${keepAlive}`);
  if (!(headers > keepAlive))
    throw new RangeError(`headersTimeoutMs (${headers}) must be longer than keepAliveTimeoutMs (${keepAlive})`);
  // Node refuses a headers timeout longer than a (non-zero) request timeout.
  if (whole !== 0 && !(whole >= headers))
    throw new RangeError(`requestTimeoutMs (${whole}) must be 0 or at least headersTimeoutMs (${headers})`);
  return {keepAliveTimeoutMs: keepAlive, headersTimeoutMs: headers, requestTimeoutMs: whole};
}

/**
 * Sets a server's keep-alive, headers and request timeouts as a server behind load balancers and
 * keep-alive clients needs them. Returns the server.
 */
export function configureServer<S extends Server>(server: S, opts: ServerTimeouts = {}): S {
  const t = serverTimeouts(opts);
  server.keepAliveTimeout = t.keepAliveTimeoutMs;
  server.headersTimeout = t.headersTimeoutMs;
  server.requestTimeout = t.requestTimeoutMs;
  return server;
}
