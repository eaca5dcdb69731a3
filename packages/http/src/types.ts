import type {Counter, Histogram, Registry} from 'prom-client';
import type {Doc, Engine, OrgContext, Principal, Role, StreamOptions} from '@gristlite/core/internal';
import type {McpSettings} from './routes/mcp/settings.js';

/** Request body as an adapter hands it over: bytes already read, or a stream to read on demand. */
export type RequestBody = Uint8Array | AsyncIterable<Uint8Array> | null | undefined;

/** The transport-neutral request every adapter builds. Header names are lower-case. */
export interface HttpRequest {
  method: string;
  /** Path and query string as received, e.g. `/o/acme/api/orgs?merged=1`. */
  url: string;
  headers: Record<string, string | undefined>;
  body?: RequestBody;
}

/** The response every adapter writes. `body` may be a stream for downloads. */
export interface HttpResponse {
  status: number;
  headers: Record<string, string>;
  body: string | Uint8Array | AsyncIterable<Uint8Array> | null;
}

/** Everything a route handler gets. */
export interface RequestContext {
  engine: Engine;
  principal: Principal;
  org: OrgContext;
  method: string;
  /** Path after the `/o/<org>` prefix, without the query string. */
  path: string;
  /** The original URL (for `not found: <url>` and absolute links). */
  originalUrl: string;
  params: Record<string, string>;
  query: URLSearchParams;
  headers: Record<string, string | undefined>;
  /** Parsed JSON body (`{}` when the request is not JSON), read with the size limit. */
  json(): Promise<unknown>;
  /**
   * The multipart form of an upload route, its files streamed to a private temporary directory
   * that is removed once the request is answered. Call it only after the access checks: nothing
   * of the body is read before. `onField` sees each plain field as it arrives (to refuse early).
   */
  form(opts?: {onField?: (name: string, value: string) => Promise<void> | void}): Promise<ParsedForm>;
  /** The raw body stream; consumed once. */
  rawBody: RequestBody;
  options: ServerOptions;
  /** Caller and access vouched for by the worker that forwarded this request (signed header). */
  vouched?: Vouched;
  /** Headers added to the answer (which worker served it, under which epoch). */
  responseHeaders: Record<string, string>;
  /**
   * Runs `fn` in one of the document's request slots (GRISTLITE_MAX_PARALLEL_REQUESTS_PER_DOC), as
   * a request under `/api/docs/{docId}/` runs: for a route that reaches documents named in its
   * body (an MCP tool call). Throws the same 429 when the document has none free.
   */
  docSlot<T>(docId: string, fn: () => Promise<T>): Promise<T>;
}

/** What a handler returns: a JSON value (sent with 200), or a full response. */
export type HandlerResult = unknown | RawResponse;

export class RawResponse {
  constructor(
    readonly status: number,
    readonly body: HttpResponse['body'],
    readonly headers: Record<string, string> = {},
  ) {}
}

export interface ServerOptions {
  /** Base domain for org subdomains (`acme.example.com` when this is `example.com`). */
  baseDomain?: string;
  /** Largest JSON body accepted, in bytes (default 1 MB). */
  maxBodyBytes: number;
  /** Largest upload accepted (the sum of a form's files), in bytes. */
  maxUploadBytes: number;
  /** Where uploads are streamed while a request runs (default: `<data dir>/tmp`). */
  uploadDir?: string;
  /** Decision 3: concurrent requests per document (doc endpoints); 0 = no cap (the default). */
  maxParallelPerDoc: number;
  /**
   * Longest wait for the answer of a request forwarded to the worker holding its document
   * (GRISTLITE_FORWARD_TIMEOUT_MSEC, default 60000 ms). A holder that stalls or is cut off is
   * noticed sooner, when its lease expires.
   */
  forwardTimeoutMs: number;
  /** Readiness for `GET /status?ready=1` (false while starting or shutting down); default ready. */
  ready?: () => boolean;
  /**
   * Large record and column reads stream (D61, D62): from how many cells
   * (GRISTLITE_STREAM_MIN_CELLS, default 200,000), for how long at most
   * (GRISTLITE_STREAM_MAX_MSEC, default 600000 ms) and how many at once
   * (GRISTLITE_STREAM_MAX_OPEN, default 64; 0: no cap). Absent: core's defaults, no cap.
   */
  stream?: StreamOptions;
  /**
   * The support user's email (Grist's GRIST_SUPPORT_EMAIL, default `support@getgrist.com`): the
   * only caller of the housekeeping endpoints.
   */
  supportEmail?: string;
  /**
   * Requests a minute through one share key, in bursts of as many (GRISTLITE_SHARE_RATE_LIMIT,
   * default 60; 0: no limit); beyond, 429 (issue 41, D99).
   */
  shareRateLimit?: number;
  /** Largest JSON body through a share key (GRISTLITE_SHARE_MAX_BODY_BYTES, default 256 KiB; D99). */
  shareMaxBodyBytes?: number;
  /** Largest upload through a share key (GRISTLITE_SHARE_MAX_UPLOAD_BYTES, default 10 MiB; D101). */
  shareMaxUploadBytes?: number;
  /** The size bounds of an MCP tool result (GRISTLITE_MCP_MAX_ROWS, GRISTLITE_MCP_MAX_BYTES; issue 42 §4). */
  mcp?: McpSettings;
  /** Set when `/metrics` is served (GRISTLITE_METRICS=1). */
  metrics?: Metrics;
  /** Environment-derived settings read once by `optionsFromEnv`. */
  env: Record<string, string | undefined>;
}

/** One uploaded file, on disk until the request is answered. */
export interface FormFile {
  /** The file name the client gave (its last path component). */
  fileName: string;
  /** The part's Content-Type, or null when it had none. */
  mimeType: string | null;
  /** The temporary file holding the bytes (mode 0600). */
  path: string;
  size: number;
}

export interface ParsedForm {
  /** Files of each field, in arrival order. */
  files: Map<string, FormFile[]>;
  /** Plain (non-file) fields; the first value of each. */
  fields: Map<string, string>;
}

/** The request metrics of one handler, in a registry of its own. */
export interface Metrics {
  registry: Registry;
  requests: Counter<'method' | 'route' | 'status'>;
  duration: Histogram<'method' | 'route'>;
}

/** What a signed header vouches for. */
export interface Vouched {
  principal: Principal;
  meta?: Doc;
  role?: Role;
}
