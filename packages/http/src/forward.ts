/**
 * Forwarding to the process that holds a document's lease (several processes, one deployment).
 * The request is replayed as received; the answer is streamed back unchanged.
 */
import {Readable} from 'node:stream';
import {request} from 'undici';
import {ApiError} from '@gristlite/core';
import type {HttpRequest, HttpResponse} from './types.js';

/** Thrown by a route when another process must serve the request. */
export class ForwardTo extends Error {
  constructor(readonly target: string) {
    super(`forward to ${target}`);
  }
}

/** Marks a forwarded request so that it is never forwarded again (no loops between processes). */
export const FORWARDED_HEADER = 'x-gristlite-forwarded';

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'transfer-encoding',
  'upgrade',
  'proxy-connection',
  'te',
  'trailer',
]);

export async function forward(target: string, req: HttpRequest, body: Uint8Array | null): Promise<HttpResponse> {
  if (req.headers[FORWARDED_HEADER]) throw new ApiError(503, 'Document in flux - try again later');
  const headers: Record<string, string> = {[FORWARDED_HEADER]: '1'};
  for (const [k, v] of Object.entries(req.headers)) if (v !== undefined && !HOP_BY_HOP.has(k)) headers[k] = v;
  if (body) {
    headers['content-length'] = String(body.byteLength);
  }
  const res = await request(new URL(req.url, target), {
    method: req.method as 'GET',
    headers,
    body:
      body ??
      (req.body && req.method !== 'GET' && req.method !== 'HEAD'
        ? Readable.from(req.body as AsyncIterable<Uint8Array>)
        : undefined),
  }).catch((e: Error) => {
    throw new ApiError(503, `Document in flux - try again later (${e.message})`);
  });
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(res.headers)) {
    if (v !== undefined && !HOP_BY_HOP.has(k)) out[k] = Array.isArray(v) ? v.join(', ') : v;
  }
  out['x-gristlite-forwarded-to'] = target;
  return {status: res.statusCode, headers: out, body: res.body};
}
