/**
 * A small HTTP client for the conformance suite: undici against a real server, or a fetch-style
 * handler called in-process. Every call returns status, headers and the body (parsed when JSON).
 */
import {Agent, request} from 'undici';

/**
 * Kept-alive connections idle at most 4 s, below any server's keep-alive (65 s with the node
 * adapter's configureServer, Node's default 5 s), so the client ends idle connections, never
 * reusing one the server is closing (issue 24 §5).
 */
const agent = new Agent({keepAliveTimeout: 4000, keepAliveMaxTimeout: 4000});

export interface ApiResponse {
  status: number;
  headers: Record<string, string>;
  /** Parsed JSON when the response is JSON, the text otherwise. */
  body: any;
  text: string;
  /** The body's bytes, for binary downloads. */
  raw: Buffer;
}

export interface CallOptions {
  /** API key sent as `Authorization: Bearer <key>`; omit for an anonymous call. */
  key?: string;
  /** A JSON value sent with `Content-Type: application/json`. */
  json?: unknown;
  /** A raw body sent as is (set the content type in `headers`). */
  body?: string | Uint8Array | AsyncIterable<Uint8Array>;
  headers?: Record<string, string>;
}

export type FetchHandler = (req: Request) => Promise<Response>;

export class Client {
  constructor(
    readonly baseUrl: string,
    private readonly fetchHandler?: FetchHandler,
  ) {}

  async call(method: string, path: string, opts: CallOptions = {}): Promise<ApiResponse> {
    const headers: Record<string, string> = {...(opts.headers ?? {})};
    if (opts.key !== undefined) headers.authorization ??= `Bearer ${opts.key}`;
    let body = opts.body;
    if (opts.json !== undefined) {
      body = JSON.stringify(opts.json);
      headers['content-type'] ??= 'application/json';
    }
    const url = this.baseUrl + path;
    let status: number;
    const outHeaders: Record<string, string> = {};
    let raw: Buffer;
    if (this.fetchHandler) {
      const init: RequestInit & {duplex?: 'half'} = {method, headers, body: body as any};
      if (body !== undefined && typeof body !== 'string' && !(body instanceof Uint8Array)) init.duplex = 'half';
      const res = await this.fetchHandler(new Request(url, init));
      status = res.status;
      res.headers.forEach((v, k) => (outHeaders[k] = v));
      raw = Buffer.from(await res.arrayBuffer());
    } else {
      const res = await request(url, {method: method as any, headers, body: body as any, dispatcher: agent});
      status = res.statusCode;
      for (const [k, v] of Object.entries(res.headers))
        if (v !== undefined) outHeaders[k] = Array.isArray(v) ? v.join(', ') : v;
      raw = Buffer.from(await res.body.arrayBuffer());
    }
    const text = raw.toString('utf8');
    let parsed: unknown = text;
    if ((outHeaders['content-type'] ?? '').includes('json') && text !== '') {
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = text;
      }
    }
    return {status, headers: outHeaders, body: parsed, text, raw};
  }

  get(path: string, opts?: CallOptions) {
    return this.call('GET', path, opts);
  }
  post(path: string, json: unknown, opts: CallOptions = {}) {
    return this.call('POST', path, {...opts, json});
  }
  patch(path: string, json: unknown, opts: CallOptions = {}) {
    return this.call('PATCH', path, {...opts, json});
  }
  del(path: string, opts: CallOptions = {}) {
    return this.call('DELETE', path, opts);
  }
}
