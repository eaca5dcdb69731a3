/**
 * The request pipeline shared by every adapter: org resolution, CORS, authentication, the CSRF
 * rule, routing, body parsing and error mapping. Input and output are plain objects.
 */
import {join} from 'node:path';
import {
  ApiError,
  BadRequest,
  Forbidden,
  HeldElsewhere,
  Replay,
  TooManyRequests,
  Unauthorized,
  attachmentTooLarge,
  checkIdempotencyKey,
  resourceShortage,
  type Engine,
  type OrgContext,
} from '@gristlite/core/internal';
import {RequestAborted, bodyTooLarge, isJsonContentType, parseJsonBody, readBody} from './body.js';
import {
  FORWARDED_HEADER,
  forward,
  ForwardTo,
  INTERNAL_HEADER,
  NotDelivered,
  signInternal,
  verifyInternal,
} from './forward.js';
import {
  MAX_FORM_PARTS,
  isMultipart,
  makeUploadDir,
  parseMultipart,
  removeUploadDir,
  sweepUploadDirs,
  type ParsedForm,
} from './multipart.js';
import {compileRoute, idempotencyOf, matchRoute, type CompiledRoute, type Route} from './route.js';
import {
  allRoutes,
  checkShareRoute,
  SHARE_MAX_BODY_BYTES,
  SHARE_RATE_LIMIT,
  ShareRateLimiter,
  shareKeyOf,
  shareUploadLimit,
} from './routes/index.js';
import {optionsFromEnv} from './options.js';
import {corsHeaders, orgFromHost, splitPath} from './origin.js';
import {createLogger, createMetrics, loggedUrl, metricsEnabled, requestId, type Logger} from './ops.js';
import {RawResponse, type HttpRequest, type HttpResponse, type RequestContext, type ServerOptions} from './types.js';

const JSON_HEADERS = {'Content-Type': 'application/json; charset=utf-8'};

export function jsonResponse(status: number, value: unknown, headers: Record<string, string> = {}): HttpResponse {
  return {status, headers: mergeHeaders(JSON_HEADERS, headers), body: JSON.stringify(value)};
}

/**
 * The headers of `parts` in order, a later value replacing an earlier one in its place, as spreads
 * would: on Node 20, spreading four small objects that share a key took V8's slow path (8-10 µs a
 * merge under load, 3% of a 304's server CPU in the profile; `Object.assign` 0.3-0.5 µs, D157).
 */
function mergeHeaders(...parts: Record<string, string>[]): Record<string, string> {
  return Object.assign({}, ...parts);
}

export function errorBody(e: ApiError): Record<string, unknown> {
  const details = e.details && Object.keys(e.details).length ? e.details : undefined;
  return details ? {error: e.message, details} : {error: e.message};
}

/**
 * The checked `Idempotency-Key` of a write to a document's contents, or null (none, or a read).
 * Writes to the home database (`/api/docs/{doc}` itself, access, moves, copies) and uploads are
 * refused with one: a key kept in the document cannot cover them (decision D56).
 */
function idempotencyKeyFor(req: HttpRequest, route: Route, method: string, upload: boolean): string | null {
  const value = req.headers['idempotency-key'];
  if (value === undefined) return null;
  const use = idempotencyOf(route, method);
  if (use === 'ignore') return null;
  if (use === 'refuse') {
    throw new BadRequest(
      upload || route.upload
        ? 'Idempotency-Key is not accepted on uploads'
        : "Idempotency-Key is accepted only on writes to a document's contents",
    );
  }
  return checkIdempotencyKey(value);
}

/** The handler's answer (or ApiError), kept with the request's Idempotency-Key as it will be sent. */
async function keepAnswer(engine: Engine, answer: Promise<unknown>): Promise<unknown> {
  let result: unknown;
  try {
    result = await answer;
  } catch (e) {
    if (e instanceof ApiError) {
      engine.idempotency.finish({
        status: e.status,
        contentType: JSON_HEADERS['Content-Type'],
        body: JSON.stringify(errorBody(e)),
      });
    } else if (!(e instanceof Replay)) engine.idempotency.finish(null);
    throw e;
  }
  if (result instanceof RawResponse) {
    const body = typeof result.body === 'string' || result.body instanceof Uint8Array ? result.body : null;
    engine.idempotency.finish({status: result.status, contentType: result.headers['Content-Type'] ?? '', body});
  } else {
    engine.idempotency.finish({
      status: 200,
      contentType: JSON_HEADERS['Content-Type'],
      body: JSON.stringify(result === undefined ? null : result),
    });
  }
  return result;
}

export type Handler = (req: HttpRequest) => Promise<HttpResponse>;

export interface ApiHandlerOptions extends Partial<ServerOptions> {
  /** Extra routes (tests, embedding apps); matched before the built-in table. */
  routes?: Route[];
  /** Called with unexpected errors (500s). Defaults to logging them, with their stack, at error level. */
  onError?: (e: unknown) => void;
  /** Where request lines and errors go (pino); default JSON lines on stdout at GRISTLITE_LOG_LEVEL. */
  logger?: Logger;
}

const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** What one request's log line and metrics say about it, filled in as it is handled. */
interface RequestNote {
  route: string;
  userId?: number;
  /** Beyond Grist: the document API key the request showed (its id; the user is its creator). */
  docKeyId?: number;
  docId?: string;
  aborted?: boolean;
}

/** Builds the transport-neutral handler that every adapter wraps. */
export function createApiHandler(engine: Engine, options: ApiHandlerOptions = {}): Handler {
  const opts: ServerOptions = {...optionsFromEnv(options.env ?? process.env), ...stripUndefined(options)};
  const routes: CompiledRoute[] = [...(options.routes ?? []), ...allRoutes()].map(compileRoute);
  const logger = options.logger ?? createLogger(opts.env);
  const onError = options.onError ?? ((e: unknown) => logger.error({err: e}, 'unexpected error'));
  if (opts.metrics === undefined && metricsEnabled(opts.env)) opts.metrics = createMetrics(engine);
  const metrics = opts.metrics;
  const logRequests = logger.isLevelEnabled('info');
  const uploadRoot = opts.uploadDir ?? join(engine.dataDir, 'tmp');
  // What a killed process left behind (its uploads are removed when answered otherwise).
  void sweepUploadDirs(uploadRoot);

  // Requests through each share key (issue 41, D99).
  const shareLimiter = new ShareRateLimiter(opts.shareRateLimit ?? SHARE_RATE_LIMIT);

  // Decision 3: Grist refuses an 11th concurrent request per document; we only do when configured.
  const inFlight = new Map<string, number>();
  const DOC_ROUTES = '/api/docs/:docId/';
  function withDocSlot<T>(path: string, docKey: string | undefined, fn: () => Promise<T>): Promise<T> {
    const limited = opts.maxParallelPerDoc > 0 && docKey !== undefined && path.startsWith('/api/docs/:docId/');
    // Not limited (the default): no promise of its own around the handler's (each costs the
    // request scope's async hooks, 4-5% of a 304's server CPU together, issue 43).
    return limited ? inDocSlot(docKey, fn) : fn();
  }
  async function inDocSlot<T>(docKey: string, fn: () => Promise<T>): Promise<T> {
    const n = inFlight.get(docKey) ?? 0;
    if (n >= opts.maxParallelPerDoc) {
      throw new TooManyRequests(`Too many backlogged requests for document ${docKey} - try again later?`);
    }
    inFlight.set(docKey, n + 1);
    try {
      return await fn();
    } finally {
      const left = (inFlight.get(docKey) ?? 1) - 1;
      if (left) inFlight.set(docKey, left);
      else inFlight.delete(docKey);
    }
  }

  return async function handle(req: HttpRequest): Promise<HttpResponse> {
    const start = performance.now();
    const id = requestId(req.headers['x-request-id']);
    const note: RequestNote = {route: 'unmatched'};
    const res = await dispatch(req, id, note);
    if (metrics) {
      // Labels stay few: route patterns, and methods outside the known ones counted as `other`.
      const method = KNOWN_METHODS.has(req.method) ? req.method : 'other';
      metrics.requests.inc({method, route: note.route, status: res.status});
      metrics.duration.observe({method, route: note.route}, (performance.now() - start) / 1000);
    }
    if (logRequests) {
      logger.info(
        {
          reqId: id,
          method: req.method,
          url: loggedUrl(req.url),
          status: res.status,
          ms: Math.round((performance.now() - start) * 10) / 10,
          userId: note.userId,
          ...(note.docKeyId !== undefined ? {apiKeyId: note.docKeyId} : {}),
          docId: note.docId,
          aborted: note.aborted,
        },
        'request',
      );
    }
    return res;
  };

  /**
   * Several machines: a request for a document another worker holds goes there untouched, before
   * any login or access check here (the holder does both, as for a request it got directly), so
   * a forwarded request costs one hop and no home-database query here (issue 17). When the holder
   * refuses the connection (it crashed), the request is served here instead, from a buffered body.
   */
  async function routeToHolder(
    req: HttpRequest,
    route: Route,
    docId: string | undefined,
    method: string,
  ): Promise<{res?: HttpResponse; req: HttpRequest}> {
    const cluster = engine.cluster;
    if (!cluster || !docId || !route.path.startsWith('/api/docs/:docId')) return {req};
    if (req.headers[FORWARDED_HEADER] || req.headers[INTERNAL_HEADER]) return {req};
    const holder = await cluster.liveHolder(docId);
    if (!holder) return {req};
    const streamed = route.upload === true && isMultipart(req.headers['content-type']);
    const bytes =
      streamed || method === 'GET' || method === 'HEAD' ? null : await readBody(req.body, opts.maxBodyBytes);
    try {
      const res = await forward(holder, req, bytes, {
        timeoutMs: opts.forwardTimeoutMs,
        holderAlive: () => cluster.holderAlive(docId, holder),
        watchMs: Math.max(250, Math.floor(cluster.leaseMs / 2)),
      });
      return {res, req};
    } catch (e) {
      cluster.placement.forgetHolder(docId);
      if (e instanceof NotDelivered) cluster.orphanSeen(docId); // it crashed: take over now
      if (!(e instanceof NotDelivered) || streamed) throw e;
      return {req: bytes ? {...req, body: bytes} : req};
    }
  }

  /** Sends the request to the document's holder: signed (several machines), with timeouts and a watch. */
  async function forwardTo(
    to: ForwardTo,
    req: HttpRequest,
    body: Uint8Array | null,
    ctx: RequestContext,
  ): Promise<HttpResponse> {
    const cluster = engine.cluster;
    if (!cluster) return forward(to.target, req, body, {timeoutMs: opts.forwardTimeoutMs});
    const docId = to.doc?.id;
    const internal = signInternal(cluster.placement.secret, req, {
      principal: ctx.principal,
      meta: to.doc?.meta,
      role: to.doc?.role,
    });
    try {
      return await forward(to.target, req, body, {
        timeoutMs: opts.forwardTimeoutMs,
        internal,
        holderAlive: docId ? () => cluster.holderAlive(docId, to.target) : undefined,
        watchMs: Math.max(250, Math.floor(cluster.leaseMs / 2)),
      });
    } catch (e) {
      if (docId) cluster.placement.forgetHolder(docId);
      throw e;
    }
  }

  async function dispatch(req: HttpRequest, id: string, note: RequestNote): Promise<HttpResponse> {
    let cors: Record<string, string> = {};
    const baseHeaders = {'Cache-Control': 'no-cache', 'X-Request-Id': id};
    /** The request context's `responseHeaders`, kept here for the answers made in `catch` (replays). */
    const answerHeaders: Record<string, string> = {};
    /** The Content-Type of a body left unread because it is not JSON (Grist reads it as `{}`). */
    let unreadBody: string | null = null;
    try {
      cors = corsHeaders(req, opts);
      const q = req.url.indexOf('?');
      const rawPath = q < 0 ? req.url : req.url.slice(0, q);
      const query = new URLSearchParams(q < 0 ? '' : req.url.slice(q + 1));
      const split = splitPath(rawPath);
      const hostOrg = orgFromHost(req.headers.host, opts.baseDomain);
      if (hostOrg && split.org && hostOrg !== split.org) {
        throw new BadRequest(`Wrong org for this domain: '${split.org}' does not match '${hostOrg}'`);
      }
      const org: OrgContext = split.org ?? hostOrg;
      const method = req.method.toUpperCase();
      if (method === 'OPTIONS') return {status: 200, headers: {...baseHeaders, ...cors}, body: ''};
      const match = matchRoute(routes, method === 'HEAD' ? 'GET' : method, split.path);
      // A person opening the server's address in a browser is shown where to go (issue 37 §6).
      if (!match && split.path === '/' && (method === 'GET' || method === 'HEAD')) {
        return jsonResponse(200, ROOT_INDEX, {...baseHeaders, ...cors});
      }
      if (!match) return jsonResponse(404, {error: `not found: ${req.url}`}, {...baseHeaders, ...cors});
      note.route = match.route.path;
      note.docId = match.params.docId;
      // Through a share link (issue 41): counted against the key first, then only the routes a
      // form uses, as Grist's anonymous share caller (whatever credentials came with it).
      const shareKey = match.route.path.startsWith('/api/docs/:docId') ? shareKeyOf(match.params.docId) : null;
      if (shareKey !== null) {
        shareLimiter.take(shareKey);
        checkShareRoute(method === 'HEAD' ? 'GET' : method, match.route.path, match.params.tableId);
      }
      if (engine.cluster) {
        const routed = await routeToHolder(req, match.route, match.params.docId, method);
        if (routed.res) return routed.res;
        req = routed.req;
      }

      // Forwarded by another worker of the deployment: it logged the caller in and checked access.
      const vouched =
        req.headers[INTERNAL_HEADER] && engine.cluster ? verifyInternal(engine.cluster.placement.secret, req) : null;
      if (req.headers[INTERNAL_HEADER] && !vouched) throw new Unauthorized('Invalid or expired internal signature');
      const principal = vouched
        ? vouched.principal
        : match.route.public || shareKey !== null
          ? engine.home.anonymousPrincipal()
          : await engine.home.authenticate(req.headers.authorization);
      if (!principal.anonymous) note.userId = principal.user.id;
      if (principal.docKey) {
        // Beyond Grist: a document API key reaches its document's routes only (the document
        // itself is checked where it is resolved: home/access.ts findDoc).
        note.docKeyId = principal.docKey.id;
        // A copy would make a document in the creator's workspace: beyond the key's one document.
        if (!match.route.path.startsWith('/api/docs/:docId') || match.route.path === '/api/docs/:docId/copy') {
          throw new Forbidden("A document API key opens only its document's /api/docs/{doc}/... routes");
        }
      }
      if (!principal.viaApiKey && !['GET', 'HEAD'].includes(method)) {
        const ct = req.headers['content-type'];
        if (req.headers['x-requested-with'] !== 'XMLHttpRequest' && ct !== 'application/json') {
          throw new Unauthorized(
            "Unauthenticated requests require one of the headers'Content-Type: application/json' or 'X-Requested-With: XMLHttpRequest'",
          );
        }
      }
      // Size limits before any byte of the body is read: a declared length over the limit is
      // refused at once; a chunked body is counted as it streams (readBody, parseMultipart).
      const upload = match.route.upload === true && isMultipart(req.headers['content-type']);
      const shareBodyBytes = opts.shareMaxBodyBytes ?? SHARE_MAX_BODY_BYTES;
      const shareBound = shareKey !== null && shareBodyBytes < opts.maxBodyBytes;
      const jsonLimit = shareBound ? shareBodyBytes : opts.maxBodyBytes;
      const jsonSetting = shareBound ? 'GRISTLITE_SHARE_MAX_BODY_BYTES' : undefined;
      const uploadLimit = shareKey !== null ? shareUploadLimit(opts) : opts.maxUploadBytes;
      const bodyLimit = upload ? uploadLimit + opts.maxBodyBytes : jsonLimit;
      const declared = Number(req.headers['content-length']);
      if (Number.isFinite(declared) && declared > bodyLimit) {
        throw upload ? attachmentTooLarge(uploadLimit) : bodyTooLarge(jsonLimit, jsonSetting);
      }
      let parsed: Promise<unknown> | null = null;
      let formPromise: Promise<ParsedForm> | null = null;
      let uploadDir: string | null = null;
      let bodyBytes: Uint8Array | null = null;
      const ctx: RequestContext = {
        engine,
        principal,
        org,
        method,
        path: split.path,
        originalUrl: req.url,
        params: match.params,
        query,
        headers: req.headers,
        rawBody: req.body,
        options: opts,
        vouched: vouched ?? undefined,
        responseHeaders: answerHeaders,
        docSlot: (docId, fn) => withDocSlot(DOC_ROUTES, docId, fn),
        form(formOpts = {}) {
          if (!upload) return Promise.reject(new ApiError(415, 'unsupported content-type'));
          formPromise ??= (async () => {
            uploadDir = await makeUploadDir(uploadRoot);
            return parseMultipart(
              req.headers,
              req.body,
              uploadDir,
              {
                maxFileBytes: uploadLimit,
                maxFieldBytes: opts.maxBodyBytes,
                maxBodyBytes: bodyLimit,
                maxParts: MAX_FORM_PARTS,
              },
              formOpts,
            );
          })();
          return formPromise;
        },
        json() {
          parsed ??= (async () => {
            const buf = await readBody(req.body, jsonLimit, jsonSetting);
            bodyBytes = buf;
            if (isJsonContentType(req.headers['content-type'])) return parseJsonBody(buf);
            if (buf.toString('utf8').trim()) unreadBody = req.headers['content-type'] ?? 'none';
            return {};
          })();
          return parsed;
        },
      };
      let result: Awaited<ReturnType<typeof match.route.handler>>;
      const idempotencyKey = idempotencyKeyFor(req, match.route, method, upload);
      // Beyond Grist: a write with an Idempotency-Key keeps its answer with the key (idempotency.ts),
      // inside the request's scope so that, with several machines, both are logged before it is answered.
      const handle = idempotencyKey
        ? () => engine.idempotency.run(idempotencyKey, () => keepAnswer(engine, match.route.handler(ctx)))
        : () => match.route.handler(ctx);
      // The documents the handler opens stay open (never closed by the LRU) until it is done.
      const run = () => engine.inScope(() => withDocSlot(match.route.path, match.params.docId, handle));
      try {
        // A document held by another worker or process: forwarded. When the holder is not there at
        // all (crashed), nothing reached it, so this worker may take the document over and serve
        // the request itself: a second attempt, the last.
        for (let attempt = 0; ; attempt++) {
          let to: ForwardTo;
          try {
            result = await run();
            break;
          } catch (e) {
            if (e instanceof HeldElsewhere) to = new ForwardTo(e.holder);
            else if (e instanceof ForwardTo) to = e;
            else throw e;
          }
          if (!upload) {
            // Buffered, for that second attempt. A body that is not JSON is the holder's to refuse;
            // one too large is refused here (it was not all read).
            await ctx.json().catch((je) => {
              if (!bodyBytes) throw je;
            });
          }
          try {
            return await forwardTo(to, req, bodyBytes, ctx);
          } catch (fe) {
            if (attempt > 0 || !(fe instanceof NotDelivered) || !engine.cluster || (upload && !bodyBytes)) throw fe;
            engine.cluster.placement.forgetHolder(to.doc?.id ?? match.params.docId);
          }
        }
      } finally {
        // The upload's files go, whatever the outcome, before the answer leaves.
        if (formPromise) await (formPromise as Promise<ParsedForm>).catch(() => undefined);
        if (uploadDir) await removeUploadDir(uploadDir).catch((e) => onError(e));
      }
      if (result instanceof RawResponse) {
        // A stream nobody will read lets go of what it holds (a snapshot's connection) at once.
        if (method === 'HEAD') closeUnread(result.body);
        return {
          status: result.status,
          headers: mergeHeaders(baseHeaders, cors, ctx.responseHeaders, result.headers),
          body: method === 'HEAD' ? null : result.body,
        };
      }
      return jsonResponse(
        200,
        result === undefined ? null : result,
        mergeHeaders(baseHeaders, cors, ctx.responseHeaders),
      );
    } catch (caught) {
      if (caught instanceof Replay) {
        const {status, contentType, body} = caught.answer;
        return {
          status,
          // Which worker answered, under which epoch (set once the document was opened), as for any answer.
          headers: {
            ...baseHeaders,
            ...cors,
            ...answerHeaders,
            'Content-Type': contentType,
            'Idempotent-Replayed': 'true',
          },
          body: new Uint8Array(body),
        };
      }
      const e = isClientGone(caught) ? new RequestAborted((caught as Error).message) : caught;
      if (e instanceof RequestAborted) note.aborted = true;
      if (e instanceof ApiError) {
        // A body refused half-read leaves the connection unusable for the next request: close it.
        const close: Record<string, string> =
          e.status === 413 || e instanceof RequestAborted ? {Connection: 'close'} : {};
        const body = errorBody(e);
        // Grist reads a body sent without a JSON Content-Type (curl -d) as `{}`, then complains
        // of missing fields: the refusal says why they are missing (decision D74).
        if (unreadBody !== null && e.status === 400) {
          body.error = `${body.error} (the request body was not read: its Content-Type is ${unreadBody}, not application/json)`;
        }
        return jsonResponse(e.status, body, {...baseHeaders, ...cors, ...close});
      }
      // Out of file descriptors is the server's momentary state, never a bug in the request.
      const shortage = resourceShortage(e);
      if (shortage) {
        engine.closeIdle(); // give descriptors back for the next requests
        return jsonResponse(503, errorBody(shortage), {...baseHeaders, ...cors});
      }
      onError(e);
      return jsonResponse(500, {error: 'internal error'}, {...baseHeaders, ...cors});
    }
  }
}

/** `GET /`: what this server is and where to go (a browser's first look). */
const ROOT_INDEX = {
  name: 'gristlite',
  about: "Grist's REST API (v1.0.1). Requests need an API key: Authorization: Bearer <key>",
  console: '/apiconsole',
  openapi: '/api/openapi.json',
  status: '/status',
  orgs: '/api/orgs',
};

/** Ends a streamed body that will not be sent (its iterator's `return`). */
function closeUnread(body: HttpResponse['body']): void {
  if (body && typeof body === 'object' && Symbol.asyncIterator in body) {
    const it = (body as AsyncIterable<Uint8Array>)[Symbol.asyncIterator]();
    void it.return?.()?.catch(() => undefined);
  }
}

/** A connection the client closed or broke: not the server's failure, nothing to log. */
function isClientGone(e: unknown): boolean {
  const code = (e as {code?: unknown} | null)?.code;
  return (
    code === 'ECONNRESET' ||
    code === 'EPIPE' ||
    code === 'ERR_STREAM_PREMATURE_CLOSE' ||
    code === 'ECONNABORTED' ||
    (e instanceof Error && e.message === 'aborted')
  );
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(
    Object.entries(o).filter(([k, v]) => v !== undefined && k !== 'routes' && k !== 'onError' && k !== 'logger'),
  ) as Partial<T>;
}
