/**
 * Forwarding to the process that holds a document (several processes or machines, one
 * deployment). The request is replayed as received; the answer is streamed back unchanged.
 *
 * In a several-machine deployment the forwarding worker has already authenticated the caller and
 * checked their access; it says so in a header signed with the deployment's secret (kept in
 * PostgreSQL), so the holder skips both (issue 17 measured the second login and access check at
 * about half of a forwarded request's cost).
 */
import {createHmac, timingSafeEqual} from 'node:crypto';
import {EventEmitter} from 'node:events';
import {Readable} from 'node:stream';
import {request} from 'undici';
import {ApiError, type Doc, type Role} from '@gristlite/core/internal';
import type {HttpRequest, HttpResponse, Vouched} from './types.js';

export type {Vouched} from './types.js';

/** Thrown by a route when another process must serve the request. */
export class ForwardTo extends Error {
  constructor(
    readonly target: string,
    /** Several machines: the document, and the access already checked here if it was (signed header). */
    readonly doc?: {id: string; meta?: Doc; role?: Role},
  ) {
    super(`forward to ${target}`);
  }
}

/** Marks a forwarded request so that it is never forwarded again (no loops between processes). */
export const FORWARDED_HEADER = 'x-gristlite-forwarded';
/** Carries the caller and the access checked by the forwarding worker, signed. */
export const INTERNAL_HEADER = 'x-gristlite-internal';

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'transfer-encoding',
  'upgrade',
  'proxy-connection',
  'te',
  'trailer',
]);

interface Payload extends Vouched {
  method: string;
  url: string;
  /** Expiry, ms since the epoch (a minute: allows for clock differences between machines). */
  exp: number;
}

function mac(secret: string, data: string): Buffer {
  return createHmac('sha256', secret).update(data).digest();
}

/** The signed header for a request (its method and URL are part of what is signed). */
export function signInternal(secret: string, req: HttpRequest, v: Vouched): string {
  // The key hash and similar never travel; the holder needs who the user is and their ids.
  const {apiKeyHash: _h, ...user} = v.principal.user as typeof v.principal.user & {apiKeyHash?: unknown};
  const payload: Payload = {
    ...v,
    principal: {...v.principal, user},
    method: req.method,
    url: req.url,
    exp: Date.now() + 60_000,
  };
  const data = Buffer.from(JSON.stringify(payload)).toString('base64url');
  return `${data}.${mac(secret, data).toString('base64url')}`;
}

/** The vouched caller and access, or null when the header is absent, forged, expired or for another request. */
export function verifyInternal(secret: string, req: HttpRequest): Vouched | null {
  const raw = req.headers[INTERNAL_HEADER];
  if (!raw || !secret) return null;
  const dot = raw.indexOf('.');
  if (dot < 0) return null;
  const data = raw.slice(0, dot);
  const given = Buffer.from(raw.slice(dot + 1), 'base64url');
  const want = mac(secret, data);
  if (given.length !== want.length || !timingSafeEqual(given, want)) return null;
  let p: Payload;
  try {
    p = JSON.parse(Buffer.from(data, 'base64url').toString());
  } catch {
    return null;
  }
  if (p.exp < Date.now() || p.method !== req.method || p.url !== req.url) return null;
  return {principal: p.principal, meta: p.meta, role: p.role};
}

/** Forwarding settings: timeouts, and the liveness watch of several-machine deployments. */
export interface ForwardOptions {
  /** Longest wait for the holder's answer to start, and between its body's chunks (ms). */
  timeoutMs: number;
  /** The signed header (several machines). */
  internal?: string;
  /**
   * Checked every `watchMs` while waiting: false when the holder lost the document (stalled or
   * cut off), which ends the wait with a 503 instead of waiting for the timeout.
   */
  holderAlive?: () => Promise<boolean>;
  watchMs?: number;
}

/** The holder could not be reached at all: the request was certainly not delivered (safe to retry). */
export class NotDelivered extends ApiError {
  constructor(message: string) {
    super(503, `Document in flux - try again later (${message})`);
  }
}

/** Answers up to this size are buffered rather than streamed back. */
const SMALL_ANSWER = 256 * 1024;

const CONNECT_ERRORS = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT', 'ENOTFOUND']);

export async function forward(
  target: string,
  req: HttpRequest,
  body: Uint8Array | null,
  opts: ForwardOptions = {timeoutMs: 300_000},
): Promise<HttpResponse> {
  if (req.headers[FORWARDED_HEADER] || req.headers[INTERNAL_HEADER])
    throw new ApiError(503, 'Document in flux - try again later');
  const headers: Record<string, string> = {[FORWARDED_HEADER]: '1'};
  for (const [k, v] of Object.entries(req.headers)) if (v !== undefined && !HOP_BY_HOP.has(k)) headers[k] = v;
  if (opts.internal) {
    headers[INTERNAL_HEADER] = opts.internal;
    delete headers.authorization; // vouched for instead: the holder does not log in again
  }
  if (body) headers['content-length'] = String(body.byteLength);
  // undici takes an EventEmitter as its abort signal: far cheaper per request than an
  // AbortController (about 45 us each in a profile of forwarded writes).
  const abort = new EventEmitter();
  let stopped: ApiError | null = null;
  let watch: NodeJS.Timeout | undefined;
  if (opts.holderAlive) {
    const check = opts.holderAlive;
    watch = setInterval(() => {
      check().then(
        (alive) => {
          if (alive || stopped) return;
          stopped = new ApiError(503, 'Document in flux - try again later (its holder stopped)');
          abort.emit('abort');
        },
        () => {},
      );
    }, opts.watchMs ?? 1000);
    watch.unref();
  }
  try {
    const res = await request(new URL(req.url, target), {
      method: req.method as 'GET',
      headers,
      signal: abort,
      headersTimeout: opts.timeoutMs,
      bodyTimeout: opts.timeoutMs,
      body:
        body ??
        (req.body && req.method !== 'GET' && req.method !== 'HEAD'
          ? Readable.from(req.body as AsyncIterable<Uint8Array>)
          : undefined),
    }).catch((e: Error & {code?: string}) => {
      if (stopped) throw stopped;
      if (CONNECT_ERRORS.has(e.code ?? '')) throw new NotDelivered(e.message);
      throw new ApiError(503, `Document in flux - try again later (${e.message})`);
    });
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(res.headers)) {
      if (v !== undefined && !HOP_BY_HOP.has(k)) out[k] = Array.isArray(v) ? v.join(', ') : v;
    }
    out['x-gristlite-forwarded-to'] = target;
    // A small answer (most are) is read here: one write to the client instead of a stream pipe.
    const length = Number(res.headers['content-length']);
    if (Number.isFinite(length) && length <= SMALL_ANSWER) {
      // The holder may die mid-answer: that is the deployment's state, a 503, never a 500.
      const body = await res.body.arrayBuffer().catch((e: Error) => {
        throw new ApiError(503, `Document in flux - try again later (${e.message})`);
      });
      return {status: res.statusCode, headers: out, body: new Uint8Array(body)};
    }
    return {status: res.statusCode, headers: out, body: res.body};
  } finally {
    clearInterval(watch);
  }
}
