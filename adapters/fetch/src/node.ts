/** Serves a fetch-style handler from node:http (for the example server and the tests). */
import type {IncomingMessage, RequestListener, ServerResponse} from 'node:http';
import {Readable} from 'node:stream';
import {pipeline} from 'node:stream/promises';
import {unreadBodyCloses} from '@gristlite/node';
import type {FetchHandler} from './index.js';

export function toRequest(req: IncomingMessage): Request {
  const headers = new Headers();
  for (const [k, v] of Object.entries(req.headers)) {
    if (v !== undefined) headers.set(k, Array.isArray(v) ? v.join(', ') : v);
  }
  const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
  return new Request(`http://${req.headers.host ?? 'localhost'}${req.url ?? '/'}`, {
    method: req.method,
    headers,
    body: hasBody ? (Readable.toWeb(req) as ReadableStream) : undefined,
    // Required by Node's fetch for a streamed request body.
    ...(hasBody ? {duplex: 'half'} : {}),
  } as RequestInit);
}

export async function writeResponse(res: ServerResponse, response: Response, req?: IncomingMessage): Promise<void> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, key) => {
    headers[key] = value;
  });
  // A body still arriving when the answer is ready (an upload refused unread) is not read: the
  // connection closes after the answer, lingering first (the Node adapter's rule).
  res.writeHead(response.status, req ? unreadBodyCloses(req, res, headers) : headers);
  if (response.body) await pipeline(Readable.fromWeb(response.body as any), res);
  else res.end();
}

export function nodeListener(fetchHandler: FetchHandler): RequestListener {
  return (req: IncomingMessage, res: ServerResponse) => {
    // A client that goes away mid-request makes these emit 'error': nothing to do but let go.
    req.on('error', () => undefined);
    res.on('error', () => undefined);
    fetchHandler(toRequest(req))
      .then((response) => writeResponse(res, response, req))
      .catch((e) => {
        if (!res.headersSent) {
          res.writeHead(500, {'Content-Type': 'application/json; charset=utf-8'});
          res.end(JSON.stringify({error: 'internal error'}));
        } else res.destroy(e as Error);
      });
  };
}
