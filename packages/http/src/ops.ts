/**
 * What operators need around the API: the health check (`GET /status`, as Grist answers it), one
 * structured log line per request (pino) and Prometheus metrics (`GET /metrics`, prom-client).
 */
import {randomUUID} from 'node:crypto';
import {writeSync} from 'node:fs';
import {destination, pino, type Logger} from 'pino';
import {Counter, Gauge, Histogram, Registry, collectDefaultMetrics} from 'prom-client';
import {NotFound, type Engine} from '@gristlite/core/internal';
import {flag} from './route.js';
import type {Route} from './route.js';
import {type Metrics, RawResponse} from './types.js';

export type {Metrics} from './types.js';

export type {Logger} from 'pino';

type Env = Record<string, string | undefined>;

/** The name Grist's status line gives the server: `Grist server(home,docs,static) is alive.` */
const SERVER_NAME = 'server(home,docs,static)';
const TEXT = {'Content-Type': 'text/plain; charset=utf-8'};

/**
 * Grist's health check: 200 `Grist <name> is alive.`; with `db=1` the home database answers a
 * cheap query, with `ready=1` the server is ready (not starting, not shutting down); each check
 * adds `(db ok, ready not ok)`, and any failure answers 500 `... is unhealthy (...)`.
 */
export async function statusResponse(
  query: URLSearchParams,
  checks: {db?: () => Promise<unknown>; ready: () => boolean},
): Promise<RawResponse> {
  const timeoutMs = Math.max(1, Number.parseInt(query.get('timeout') ?? '', 10) || 10_000);
  const results: [string, boolean][] = [];
  if (flag(query, 'db')) {
    let timer: NodeJS.Timeout | undefined;
    const ok = await Promise.race([
      Promise.resolve()
        .then(() => (checks.db ? checks.db() : Promise.reject(new Error('not open'))))
        .then(
          () => true,
          () => false,
        ),
      new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs))),
    ]);
    clearTimeout(timer);
    results.push(['db', ok]);
  }
  if (flag(query, 'ready')) results.push(['ready', checks.ready()]);
  const extra = results.length ? ` (${results.map(([k, ok]) => `${k} ${ok ? 'ok' : 'not ok'}`).join(', ')})` : '';
  const ok = results.every(([, r]) => r);
  return new RawResponse(ok ? 200 : 500, `Grist ${SERVER_NAME} ${ok ? 'is alive' : 'is unhealthy'}${extra}.`, TEXT);
}

export const statusRoute: Route = {
  method: 'GET',
  path: '/status',
  tag: 'meta',
  summary: 'Health check as Grist answers it (`db=1`: home database, `ready=1`: readiness); no authentication',
  query: ['db', 'ready', 'timeout'],
  public: true,
  handler: (ctx) =>
    statusResponse(ctx.query, {
      db: () => ctx.engine.store.getUser(0),
      ready: () => ctx.options.ready?.() ?? true,
    }),
};

export const metricsRoute: Route = {
  method: 'GET',
  path: '/metrics',
  tag: 'meta',
  summary: 'Prometheus metrics (only when GRISTLITE_METRICS=1; no authentication)',
  public: true,
  handler: async (ctx) => {
    const metrics = ctx.options.metrics;
    if (!metrics) throw new NotFound(`not found: ${ctx.originalUrl}`);
    return new RawResponse(200, await metrics.registry.metrics(), {'Content-Type': metrics.registry.contentType});
  },
};

export function metricsEnabled(env: Env): boolean {
  return ['1', 'true', 'yes', 'on'].includes((env.GRISTLITE_METRICS ?? '').toLowerCase());
}

export function createMetrics(engine: Engine): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({register: registry, prefix: 'gristlite_'});
  const requests = new Counter({
    name: 'gristlite_http_requests_total',
    help: 'HTTP requests by method, route pattern and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'gristlite_http_request_duration_seconds',
    help: 'Time to the response (headers and in-memory body), by route pattern',
    labelNames: ['method', 'route'] as const,
    registers: [registry],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  });
  let stats: ReturnType<Engine['stats']> | null = null;
  // One read of the engine per scrape, shared by the gauges below.
  const read = () => ((stats ??= engine.stats()), queueMicrotask(() => (stats = null)), stats);
  const gauge = (name: string, help: string, pick: (s: ReturnType<Engine['stats']>) => number) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        this.set(pick(read()));
      },
    });
  gauge('gristlite_open_documents', 'Documents open in this process', (s) => s.openDocs);
  gauge('gristlite_sql_queue_size', 'SQL statements waiting for a worker', (s) => s.sqlQueued);
  gauge(
    'gristlite_webhook_queue_size',
    'Webhook events waiting to be sent (documents open in this process)',
    (s) => s.webhookQueued,
  );
  if (engine.cluster) {
    gauge(
      'gristlite_cluster_log_bytes',
      'Action-log bytes of open documents not yet in a snapshot',
      (s) => s.cluster!.logBytes,
    );
    gauge(
      'gristlite_cluster_snapshot_age_seconds',
      'Age of the oldest change of an open document not yet in a snapshot',
      (s) => s.cluster!.snapshotAgeSec,
    );
    new Counter({
      name: 'gristlite_cluster_takeovers_total',
      help: 'Documents this worker rebuilt from snapshot and log since it started',
      registers: [registry],
      collect() {
        this.reset();
        this.inc(read().cluster!.takeovers);
      },
    });
    new Counter({
      name: 'gristlite_cluster_snapshots_damaged_total',
      help: 'Recorded snapshots found missing or corrupt at a takeover (restored from an older one and the log)',
      registers: [registry],
      collect() {
        this.reset();
        this.inc(read().cluster!.damagedSnapshots);
      },
    });
  }
  new Counter({
    name: 'gristlite_sql_preemptions_total',
    help: "SQL statements stopped to free a worker for another caller's waiting statement",
    registers: [registry],
    collect() {
      this.reset();
      this.inc(read().sqlPreemptions);
    },
  });
  new Counter({
    name: 'gristlite_webhook_failures_total',
    help: 'Failed webhook delivery attempts since the process started',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(read().webhookFailures);
    },
  });
  return {registry, requests, duration};
}

const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
/** Log lines waiting for stdout, at most (bytes); beyond, new lines are dropped (D175). */
const LOG_BUFFER_BYTES = 16 * 1024 * 1024;
/** Lines of one turn kept before handing them on at once (the 16 MB bound applies from there). */
const TURN_BATCH_BYTES = 64 * 1024;

/** Where pino's lines go (pino.destination's stream, or a test's). */
export interface LineSink {
  write(s: string): unknown;
  flushSync?(): void;
  flush?(cb?: (err?: Error) => void): void;
}

/** The batches holding lines now: the process's exit hands them on (one listener for all). */
const holding = new Set<TurnBatch>();
let exitHooked = false;
function flushHeldAtExit(): void {
  for (const batch of [...holding]) batch.flushSync();
}

/**
 * The lines logged in one turn of the event loop, handed to `sink` in one write when the turn
 * ends (D185): pino's asynchronous destination otherwise starts one thread-pool write per line
 * whenever none is under way, 8-11% of a 304's server CPU (issue 43). At exit (exit(), the end of
 * the loop, an uncaught exception) the held lines go first and the sink is flushed synchronously;
 * pino's fatal level flushes synchronously through `flushSync` as before.
 */
export class TurnBatch implements LineSink {
  private pending = '';
  private scheduled = false;
  /**
   * `writeSync`: how to write lines synchronously where the sink writes (at exit the sink must not
   * be handed them: it would start an asynchronous write that exit cuts short).
   */
  constructor(
    private readonly sink: LineSink,
    private readonly writeSync?: (lines: string) => void,
  ) {}

  write(line: string): boolean {
    this.pending += line;
    if (this.pending.length >= TURN_BATCH_BYTES) this.handOn();
    else if (!this.scheduled) {
      this.scheduled = true;
      holding.add(this);
      if (!exitHooked) {
        exitHooked = true;
        // Before pino's own exit flush of the sink (registered when the sink was made).
        process.prependListener('exit', flushHeldAtExit);
      }
      setImmediate(this.endOfTurn);
    }
    return true;
  }

  private readonly endOfTurn = (): void => {
    this.scheduled = false;
    holding.delete(this);
    this.handOn();
  };

  private handOn(): void {
    if (!this.pending) return;
    const lines = this.pending;
    this.pending = '';
    this.sink.write(lines);
  }

  flushSync(): void {
    holding.delete(this);
    if (!this.writeSync) {
      this.handOn();
      this.sink.flushSync?.();
      return;
    }
    // The sink's earlier lines first, then this turn's.
    this.sink.flushSync?.();
    const lines = this.pending;
    this.pending = '';
    if (lines) this.writeSync(lines);
  }

  flush(cb?: (err?: Error) => void): void {
    this.handOn();
    if (this.sink.flush) this.sink.flush(cb);
    else cb?.();
  }
}

/**
 * Writes `text` to `fd` before returning, as sonic-boom's `flushSync` does: partial writes go on,
 * a pipe that is full (EAGAIN) is waited on briefly, up to a second; stdout gone (EPIPE) drops it.
 */
function writeAllSync(fd: number, text: string): void {
  let buf = Buffer.from(text, 'utf8');
  const wait = new Int32Array(new SharedArrayBuffer(4));
  for (let waits = 0; buf.length > 0; ) {
    try {
      buf = buf.subarray(writeSync(fd, buf));
    } catch (e) {
      const code = (e as {code?: string}).code;
      if ((code !== 'EAGAIN' && code !== 'EBUSY') || ++waits > 100) return;
      Atomics.wait(wait, 0, 0, 10);
    }
  }
}

/** pino's ISO timestamp, its text made once per millisecond (several request lines share one). */
function isoTimeField(): () => string {
  let last = -1;
  let text = '';
  return () => {
    const t = Date.now();
    if (t !== last) {
      last = t;
      text = `,"time":"${new Date(t).toISOString()}"`;
    }
    return text;
  };
}

/**
 * The default logger: JSON lines on stdout at `GRISTLITE_LOG_LEVEL` (default info). Written
 * asynchronously (D175), a turn's lines in one write (D185): under load one write carries many
 * request lines (a synchronous write per request was 7-10% of a 304's CPU, issue 43). What is
 * pending is written when the process exits.
 */
export function createLogger(env: Env, sink?: LineSink): Logger {
  const wanted = (env.GRISTLITE_LOG_LEVEL ?? process.env.GRISTLITE_LOG_LEVEL ?? 'info').toLowerCase();
  return pino(
    {
      level: LEVELS.includes(wanted) ? wanted : 'info',
      base: undefined,
      timestamp: isoTimeField(),
    },
    sink
      ? new TurnBatch(sink)
      : new TurnBatch(
          // A reader that stops reading must not grow the buffer without end: past 16 MB lines are dropped.
          destination({dest: 1, sync: false, minLength: 0, maxLength: LOG_BUFFER_BYTES}),
          (lines) => writeAllSync(1, lines),
        ),
  );
}

/** An incoming `X-Request-Id` is kept when it is short and plain; otherwise a new one. */
export function requestId(incoming: string | undefined): string {
  return incoming && /^[A-Za-z0-9._:@/+=-]{1,128}$/.test(incoming) ? incoming : randomUUID();
}

const SECRET_PARAM = /auth|key|token|secret|passw|signature|sig$/i;

/** The URL as logged: query parameters that may carry credentials have their values replaced. */
export function loggedUrl(url: string): string {
  const q = url.indexOf('?');
  if (q < 0 || !SECRET_PARAM.test(url.slice(q))) return url;
  const parts = url
    .slice(q + 1)
    .split('&')
    .map((p) => {
      const eq = p.indexOf('=');
      let name = eq < 0 ? p : p.slice(0, eq);
      try {
        name = decodeURIComponent(name);
      } catch {
        /* logged as received */
      }
      return SECRET_PARAM.test(name) ? `${p.slice(0, eq < 0 ? p.length : eq)}=[redacted]` : p;
    });
  return `${url.slice(0, q)}?${parts.join('&')}`;
}
