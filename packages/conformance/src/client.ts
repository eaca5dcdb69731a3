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

/** A response read as it arrives (`Client.stream`). */
export interface StreamResponse {
  status: number;
  headers: Record<string, string>;
  /** The body as text, chunk by chunk. */
  text: AsyncIterableIterator<string>;
  /** Hangs up. */
  close(): void;
}

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

  /**
   * A GET whose body is read as it arrives (Server-Sent Events): the status and headers, the
   * body's chunks as text, and `close()` to hang up.
   */
  async stream(path: string, opts: CallOptions = {}): Promise<StreamResponse> {
    const headers: Record<string, string> = {...(opts.headers ?? {})};
    if (opts.key !== undefined) headers.authorization ??= `Bearer ${opts.key}`;
    const url = this.baseUrl + path;
    const abort = new AbortController();
    const outHeaders: Record<string, string> = {};
    let status: number;
    let chunks: AsyncIterable<Uint8Array>;
    if (this.fetchHandler) {
      const res = await this.fetchHandler(new Request(url, {headers, signal: abort.signal}));
      status = res.status;
      res.headers.forEach((v, k) => (outHeaders[k] = v));
      const body = res.body;
      let reader: ReadableStreamDefaultReader<Uint8Array> | null = null;
      // Hanging up cancels the body, read or not (an in-process handler sees the cancel at once).
      abort.signal.addEventListener('abort', () => void (reader ?? body)?.cancel().catch(() => {}), {once: true});
      chunks = {
        async *[Symbol.asyncIterator]() {
          if (!body) return;
          reader = body.getReader();
          try {
            for (;;) {
              const {value, done} = await reader.read();
              if (done) return;
              yield value;
            }
          } catch (e) {
            if (!abort.signal.aborted) throw e;
          }
        },
      };
    } else {
      const res = await request(url, {method: 'GET', headers, signal: abort.signal, dispatcher: agent});
      status = res.statusCode;
      for (const [k, v] of Object.entries(res.headers))
        if (v !== undefined) outHeaders[k] = Array.isArray(v) ? v.join(', ') : v;
      const body = res.body;
      chunks = {
        async *[Symbol.asyncIterator]() {
          try {
            for await (const c of body) yield c as Uint8Array;
          } catch (e) {
            if (!abort.signal.aborted) throw e;
          }
        },
      };
    }
    const decoder = new TextDecoder();
    return {
      status,
      headers: outHeaders,
      text: (async function* () {
        for await (const c of chunks) yield decoder.decode(c, {stream: true});
      })(),
      close: () => abort.abort(),
    };
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
