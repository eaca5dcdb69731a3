/**
 * Delivery of the webhook outbox (SPEC §13.8, decision 6), one `WebhookDelivery` per open document.
 *
 * Each webhook has its own lane: its events go out strictly in order, in batches of up to 100 (a
 * batch holds events recorded back to back, with no other webhook's event between them, as Grist
 * batches its shared queue, and never mixes `remove` events with `add`/`update` ones), so a slow
 * or failing receiver delays only its own webhook. A batch is POSTed with undici; any 2xx is
 * delivered (the rows leave the outbox), anything else is retried after 1, 2, 4, ... 64, 64, ...
 * units of the wait delay, up to the attempt limit; then the lane reports `postponed` and starts
 * over with the same batch (so order is kept). While the outbox holds `maxQueueSize` events or
 * more ("draining"), a batch gets at most 5 attempts and is then dropped (`error`, batch
 * `rejected`), as in Grist. Usage stats are kept in the document, so they survive a restart, and
 * so do the undelivered events.
 */
import {createHmac} from 'node:crypto';
import type Database from 'better-sqlite3';
import {Agent, request} from 'undici';
import {getSecret} from './meta.js';
import {BeforeCapture, recordEvents, type RowChange} from './events.js';
import {OUTBOX_TABLE, STATS_TABLE, hasTable, upgradeOutbox} from './schema.js';
import {classifyUrl, publicOnlyLookup, socketLookup, type WebhookUrlPolicy} from './urls.js';

/** Whether a webhook is idle, sending, retrying, or failed. */
export type WebhookStatus = 'idle' | 'sending' | 'retrying' | 'postponed' | 'error' | 'invalid';
/** How the last batch of a webhook went. */
export type WebhookBatchStatus = 'success' | 'failure' | 'rejected';

/** The `usage` object of GET /webhooks, shaped as Grist's. */
export interface WebhookUsage {
  status: WebhookStatus;
  numWaiting: number;
  updatedTime?: number | null;
  lastSuccessTime?: number | null;
  lastFailureTime?: number | null;
  lastErrorMessage?: string | null;
  lastHttpStatus?: number | null;
  lastEventBatch: null | {
    status: WebhookBatchStatus;
    httpStatus: number | null;
    errorMessage: string | null;
    size: number;
    attempts: number;
  };
}

/** What delivery reports (through `onError`) when it drops events undelivered. */
export class WebhookEventsDropped extends Error {
  override name = 'WebhookEventsDropped';
}

/** Settings of a document's webhook delivery (attempts, waits, batch and queue sizes, URL policy). */
export interface DeliveryOptions {
  /** For log lines. */
  docId?: string;
  /** Allowed target URLs (see urls.ts). Events for a URL no longer allowed are dropped as sent. */
  policy: WebhookUrlPolicy;
  /** Attempts per batch (GRIST_TRIGGER_MAX_ATTEMPTS, default 20). */
  maxAttempts?: number;
  /** One unit of the backoff, in ms (GRIST_TRIGGER_WAIT_DELAY, default 1000). */
  waitDelayMs?: number;
  /** Outbox size from which delivery drains (GRIST_MAX_QUEUE_SIZE, default 1000). */
  maxQueueSize?: number;
  /** Events per POST (default 100). */
  batchSize?: number;
  /** Longest wait for a receiver's answer, in ms (default 60000). */
  requestTimeoutMs?: number;
  /**
   * Called with unexpected errors of the loop, and with a `WebhookEventsDropped` for each batch
   * dropped undelivered (default: console.error).
   */
  onError?: (e: unknown) => void;
  /** Called at every failed POST attempt (the engine counts them for metrics). */
  onFailure?: () => void;
}

/** Delivery settings from the environment, with Grist's variable names. */
export function deliveryOptionsFromEnv(env: Record<string, string | undefined>): Omit<DeliveryOptions, 'policy'> {
  const int = (name: string) => {
    const n = parseInt(env[name] ?? '', 10);
    return Number.isFinite(n) && n >= 0 ? n : undefined;
  };
  return {
    maxAttempts: int('GRIST_TRIGGER_MAX_ATTEMPTS'),
    waitDelayMs: int('GRIST_TRIGGER_WAIT_DELAY'),
    maxQueueSize: int('GRIST_MAX_QUEUE_SIZE'),
  };
}

// ---------------------------------------------------------------------------------------------
// Stats, persisted in the document.

type StatsRow = {
  status: string | null;
  updatedTime: number | null;
  lastSuccessTime: number | null;
  lastFailureTime: number | null;
  lastErrorMessage: string | null;
  lastHttpStatus: number | null;
  batchStatus: string | null;
  batchHttpStatus: number | null;
  batchErrorMessage: string | null;
  batchSize: number | null;
  batchAttempts: number | null;
};

/** Number of events waiting in the outbox, for one webhook or all. */
export function queueSize(db: Database.Database, webhookId?: string): number {
  if (!hasTable(db, OUTBOX_TABLE)) return 0;
  return webhookId === undefined
    ? (db.prepare(`SELECT count(*) FROM ${OUTBOX_TABLE}`).pluck().get() as number)
    : (db.prepare(`SELECT count(*) FROM ${OUTBOX_TABLE} WHERE webhookId = ?`).pluck().get(webhookId) as number);
}

/** The usage of one webhook, as Grist's `WebhookStatistics.getUsage` builds it. */
export function webhookUsage(db: Database.Database, webhookId: string): WebhookUsage {
  const numWaiting = queueSize(db, webhookId);
  const s = hasTable(db, STATS_TABLE)
    ? (db.prepare(`SELECT * FROM ${STATS_TABLE} WHERE webhookId = ?`).get(webhookId) as StatsRow | undefined)
    : undefined;
  if (!s?.status) return {status: 'idle', numWaiting, lastEventBatch: null};
  return {
    status: s.status as WebhookStatus,
    numWaiting,
    updatedTime: s.updatedTime ?? 0,
    lastEventBatch: s.batchStatus
      ? {
          status: s.batchStatus as WebhookBatchStatus,
          httpStatus: s.batchHttpStatus || null,
          errorMessage: s.batchErrorMessage || null,
          size: s.batchSize ?? 0,
          attempts: s.batchAttempts ?? 0,
        }
      : null,
    lastSuccessTime: s.lastSuccessTime ?? null,
    lastFailureTime: s.lastFailureTime ?? null,
    lastErrorMessage: s.lastErrorMessage || null,
    lastHttpStatus: s.lastHttpStatus || null,
  };
}

function writeStats(db: Database.Database, webhookId: string, values: Partial<StatsRow>): void {
  const cols = Object.keys(values);
  db.prepare(
    `INSERT INTO ${STATS_TABLE} (webhookId, ${cols.join(', ')}) VALUES (?, ${cols.map(() => '?').join(', ')})
     ON CONFLICT(webhookId) DO UPDATE SET ${cols.map((c) => `${c} = excluded.${c}`).join(', ')}`,
  ).run(webhookId, ...cols.map((c) => (values as Record<string, unknown>)[c] ?? null));
}

function logStatus(db: Database.Database, webhookId: string, status: WebhookStatus): void {
  writeStats(db, webhookId, {
    status,
    updatedTime: Date.now(),
    ...(status === 'sending' ? {batchErrorMessage: ''} : {}),
  });
}

function logBatch(
  db: Database.Database,
  webhookId: string,
  status: WebhookBatchStatus,
  stats?: {httpStatus: number | null; error: string | null; size: number; attempts: number},
): void {
  const now = Date.now();
  const values: Partial<StatsRow> = {batchStatus: status, updatedTime: now};
  if (stats) {
    Object.assign(values, {
      batchHttpStatus: stats.httpStatus,
      batchAttempts: stats.attempts,
      batchErrorMessage: stats.error ?? '',
      batchSize: stats.size,
    });
    if (stats.error) values.lastErrorMessage = stats.error;
    if (stats.httpStatus) values.lastHttpStatus = stats.httpStatus;
  }
  if (status === 'success') values.lastSuccessTime = now;
  else if (status === 'failure') values.lastFailureTime = now;
  writeStats(db, webhookId, values);
}

// ---------------------------------------------------------------------------------------------

/**
 * `DELETE /webhooks/queue` (all webhooks) or `/webhooks/queue/{id}`: drops the waiting events,
 * aborts the request in flight (of `delivery`, the document's), and resets the stats (of every
 * webhook, as Grist does).
 */
export function clearWebhookQueue(db: Database.Database, webhookId?: string, delivery?: WebhookDelivery): void {
  if (hasTable(db, OUTBOX_TABLE)) {
    db.transaction(() => {
      if (webhookId === undefined) db.prepare(`DELETE FROM ${OUTBOX_TABLE}`).run();
      else db.prepare(`DELETE FROM ${OUTBOX_TABLE} WHERE webhookId = ?`).run(webhookId);
      if (hasTable(db, STATS_TABLE)) db.prepare(`DELETE FROM ${STATS_TABLE}`).run();
    })();
  }
  delivery?.abortLanes(webhookId);
}

/** Forgets a deleted webhook's events and stats (its lane, if running, is stopped). */
export function forgetWebhook(db: Database.Database, webhookId: string, delivery?: WebhookDelivery): void {
  if (hasTable(db, OUTBOX_TABLE)) db.prepare(`DELETE FROM ${OUTBOX_TABLE} WHERE webhookId = ?`).run(webhookId);
  if (hasTable(db, STATS_TABLE)) db.prepare(`DELETE FROM ${STATS_TABLE} WHERE webhookId = ?`).run(webhookId);
  delivery?.abortLanes(webhookId);
}

// ---------------------------------------------------------------------------------------------

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, {once: true});
  });

interface Lane {
  controller: AbortController;
  done: Promise<void>;
}

interface OutboxRow {
  id: number;
  eventType: string;
  payload: string;
  apiKeyId: number | null;
}

/** Signature headers of a delivery when the webhook has a signing secret (docs/webhooks.md). */
export function signatureHeaders(secret: string, body: string, timestamp: number): Record<string, string> {
  const signature = createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex');
  return {'X-Gristlite-Timestamp': String(timestamp), 'X-Gristlite-Signature': `sha256=${signature}`};
}

/** Delivers one open document's outbox: one lane per webhook, batches in order, retries with backoff. */
export class WebhookDelivery {
  private readonly lanes = new Map<string, Lane>();
  private stopped = false;
  private started = false;
  private wakeScheduled = false;
  private inFlight = 0;
  private readonly maxAttempts: number;
  private readonly waitDelayMs: number;
  private readonly maxQueueSize: number;
  private readonly batchSize: number;
  private readonly requestTimeoutMs: number;
  private readonly anyAgent: Agent;
  private readonly publicAgent: Agent;
  private readonly onError: (e: unknown) => void;

  constructor(
    private readonly db: Database.Database,
    private readonly opts: DeliveryOptions,
  ) {
    this.maxAttempts = opts.maxAttempts ?? 20;
    this.waitDelayMs = opts.waitDelayMs ?? 1000;
    this.maxQueueSize = opts.maxQueueSize ?? 1000;
    this.batchSize = opts.batchSize ?? 100;
    this.requestTimeoutMs = opts.requestTimeoutMs ?? 60_000;
    this.onError = opts.onError ?? ((e) => console.error(`gristlite: webhook delivery (doc ${opts.docId ?? '?'})`, e));
    const timeouts = {headersTimeout: this.requestTimeoutMs, bodyTimeout: this.requestTimeoutMs};
    this.anyAgent = new Agent(
      opts.policy.lookup ? {...timeouts, connect: {lookup: socketLookup(opts.policy, false)}} : timeouts,
    );
    this.publicAgent = new Agent({...timeouts, connect: {lookup: publicOnlyLookup(opts.policy)}});
  }

  /** Starts sending whatever the outbox holds (one delivery per open document: the engine's). */
  start(): this {
    if (this.started) return this;
    this.started = true;
    this.wake();
    return this;
  }

  /** Stops sending (aborting requests in flight; their events stay in the outbox) and waits for it. */
  async stop(): Promise<void> {
    this.stopped = true;
    const lanes = [...this.lanes.values()];
    for (const lane of lanes) lane.controller.abort(new Error('stopped'));
    await Promise.allSettled(lanes.map((l) => l.done));
    await Promise.allSettled([this.anyAgent.close(), this.publicAgent.close()]);
  }

  /** Events were written: look at the outbox once the current synchronous write is over. */
  scheduleWake(): void {
    if (this.wakeScheduled || this.stopped) return;
    this.wakeScheduled = true;
    setImmediate(() => {
      this.wakeScheduled = false;
      this.wake();
    });
  }

  /** Starts a lane for every webhook with waiting events that has none running. */
  wake(): void {
    if (this.stopped || !this.started) return;
    try {
      if (!this.db.open || this.db.inTransaction) {
        // Never read events of a transaction that has not committed: look again shortly.
        if (this.db.open) setTimeout(() => this.wake(), 5).unref();
        return;
      }
      if (!hasTable(this.db, OUTBOX_TABLE)) return;
      const ids = this.db.prepare(`SELECT DISTINCT webhookId FROM ${OUTBOX_TABLE}`).pluck().all() as string[];
      for (const id of ids) if (!this.lanes.has(id)) this.startLane(id);
    } catch (e) {
      this.onError(e);
    }
  }

  /** True while some webhook has events waiting (a lane runs, perhaps only waiting to retry). */
  get pending(): boolean {
    return this.lanes.size > 0;
  }

  /** True while a POST is in flight: closing the document now would abort it and send it again. */
  get sending(): boolean {
    return this.inFlight > 0;
  }

  /** True while the outbox holds `maxQueueSize` events or more. */
  get draining(): boolean {
    return queueSize(this.db) >= this.maxQueueSize;
  }

  /**
   * Resolves once the outbox is below `maxQueueSize` (at once if it is). Grist makes a write that
   * enqueues events wait while the queue is full: await this before a write to do the same.
   */
  async waitForCapacity(signal?: AbortSignal): Promise<void> {
    while (!this.stopped && this.db.open && this.draining) await sleep(Math.min(this.waitDelayMs, 1000) || 10, signal);
  }

  /** Aborts the lanes (of one webhook, or all): requests in flight are dropped, lanes re-read the outbox. */
  abortLanes(webhookId?: string): void {
    for (const [id, lane] of this.lanes) {
      if (webhookId === undefined || id === webhookId) lane.controller.abort(new Error('queue cleared'));
    }
    setImmediate(() => this.wake());
  }

  private startLane(webhookId: string): void {
    const lane: Lane = {controller: new AbortController(), done: Promise.resolve()};
    this.lanes.set(webhookId, lane);
    lane.done = this.runLane(webhookId, lane)
      .catch((e) => {
        if (!this.stopped && this.db.open) this.onError(e);
      })
      .finally(() => {
        if (this.lanes.get(webhookId) === lane) this.lanes.delete(webhookId);
      });
  }

  private async dbReady(signal: AbortSignal): Promise<boolean> {
    while (this.db.open && this.db.inTransaction) await sleep(5, signal);
    return this.db.open && !this.stopped;
  }

  /**
   * A webhook's oldest events, up to `batchSize`, cut as Grist cuts its queue into batches: a run
   * of this webhook's events with no other webhook's event recorded between them (consecutive
   * outbox ids), so one write's events for one webhook go together. Never mixes `remove` events
   * with `add`/`update` ones.
   */
  private nextBatch(webhookId: string): OutboxRow[] {
    upgradeOutbox(this.db);
    const rows = this.db
      .prepare(`SELECT id, eventType, payload, apiKeyId FROM ${OUTBOX_TABLE} WHERE webhookId = ? ORDER BY id LIMIT ?`)
      .all(webhookId, this.batchSize) as OutboxRow[];
    if (!rows.length) return rows;
    const isRemove = rows[0].eventType === 'remove';
    // A batch is sent with one X-Gristlite-Api-Key-Id header: writes by different keys split it.
    const key = rows[0].apiKeyId;
    const end = rows.findIndex(
      (r, i) => r.id !== rows[0].id + i || (r.eventType === 'remove') !== isRemove || r.apiKeyId !== key,
    );
    return end < 0 ? rows : rows.slice(0, end);
  }

  /**
   * Takes a batch off the outbox and records the usage that says so, in one transaction: a crash
   * between the two would leave a usage (`sending`) that no lane will ever correct.
   */
  private settle(rows: OutboxRow[], logUsage: () => void): void {
    this.db.transaction(() => {
      this.db
        .prepare(`DELETE FROM ${OUTBOX_TABLE} WHERE id IN (SELECT value FROM json_each(?))`)
        .run(JSON.stringify(rows.map((r) => r.id)));
      logUsage();
    })();
  }

  private async runLane(webhookId: string, lane: Lane): Promise<void> {
    while (!this.stopped) {
      try {
        if (!(await this.dbReady(lane.controller.signal))) return;
        const batch = this.nextBatch(webhookId);
        if (!batch.length) {
          // Synchronously with the empty read: an event recorded after it wakes a new lane.
          if (this.lanes.get(webhookId) === lane) this.lanes.delete(webhookId);
          return;
        }
        const secret = getSecret(this.db, webhookId);
        if (!secret?.url || classifyUrl(secret.url, this.opts.policy) === 'forbidden') {
          // Grist discards events whose webhook is gone or whose URL is no longer allowed.
          this.settle(batch, () => logStatus(this.db, webhookId, 'idle'));
          this.dropped(
            webhookId,
            batch.length,
            secret?.url
              ? 'its URL is not allowed by GRISTLITE_ALLOWED_WEBHOOK_DOMAINS in this process'
              : 'the webhook no longer exists',
          );
          continue;
        }
        const ok = await this.sendWithRetries(webhookId, batch, secret, lane.controller.signal);
        if (ok) {
          // Synchronously with the answer's bookkeeping: nothing can close the document in between.
          this.inFlight--;
          if (!this.db.open || this.stopped) return;
          this.settle(batch, () => logStatus(this.db, webhookId, 'idle'));
          continue;
        }
        if (!(await this.dbReady(lane.controller.signal))) return;
        // Grist takes the failed batch off its queue before it looks at the queue's size: a batch
        // that brought the queue to exactly the limit is postponed, not dropped.
        if (queueSize(this.db) - batch.length >= this.maxQueueSize) {
          this.settle(batch, () => {
            logStatus(this.db, webhookId, 'error');
            logBatch(this.db, webhookId, 'rejected');
          });
          this.dropped(
            webhookId,
            batch.length,
            `delivery failed ${this.currentMaxAttempts()} times while the outbox held ${this.maxQueueSize} events or more (GRIST_MAX_QUEUE_SIZE)`,
          );
        } else {
          logStatus(this.db, webhookId, 'postponed');
          await sleep(this.waitDelayMs, lane.controller.signal);
        }
      } catch (e) {
        if (this.stopped || !this.db.open) return;
        if (lane.controller.signal.aborted) {
          lane.controller = new AbortController(); // Queue cleared: start over from the outbox.
          continue;
        }
        throw e;
      }
    }
  }

  /** Every dropped event is told, with why (issue 37 §6: one was dropped without a word). */
  private dropped(webhookId: string, count: number, why: string): void {
    this.onError(new WebhookEventsDropped(`${count} webhook event(s) of webhook ${webhookId} dropped: ${why}`));
  }

  private currentMaxAttempts(): number {
    return this.draining ? Math.min(5, this.maxAttempts) : this.maxAttempts;
  }

  private async sendWithRetries(
    webhookId: string,
    batch: OutboxRow[],
    secret: {url: string; authorization: string; signingSecret: string | null},
    signal: AbortSignal,
  ): Promise<boolean> {
    const body = `[${batch.map((r) => r.payload).join(',')}]`;
    const size = batch.length;
    const agent = classifyUrl(secret.url, this.opts.policy) === 'explicit' ? this.anyAgent : this.publicAgent;
    logStatus(this.db, webhookId, 'sending');
    let wait = 1;
    for (let attempt = 0; attempt < this.currentMaxAttempts(); attempt++) {
      if (!(await this.dbReady(signal))) return false;
      if (attempt > 0) logStatus(this.db, webhookId, 'retrying');
      const headers: Record<string, string> = {'Content-Type': 'application/json'};
      if (secret.authorization) headers.Authorization = secret.authorization;
      if (batch[0].eventType === 'remove') headers['X-Gristlite-Event'] = 'remove';
      // Beyond Grist: the document API key whose request made these events (issue 30).
      if (batch[0].apiKeyId !== null) headers['X-Gristlite-Api-Key-Id'] = String(batch[0].apiKeyId);
      if (secret.signingSecret)
        Object.assign(headers, signatureHeaders(secret.signingSecret, body, Math.floor(Date.now() / 1000)));
      let httpStatus: number | null = null;
      let error: string | null = null;
      // A delivered batch stays "in flight" until runLane has deleted it from the outbox.
      this.inFlight++;
      let held = true;
      const letGo = () => {
        if (held) this.inFlight--;
        held = false;
      };
      try {
        const res = await request(secret.url, {method: 'POST', body, headers, signal, dispatcher: agent});
        httpStatus = res.statusCode;
        if (res.statusCode >= 200 && res.statusCode < 300) {
          await res.body.dump().catch(() => undefined);
        } else {
          error = await res.body.text().catch((e: Error) => e.message);
        }
      } catch (e) {
        if (signal.aborted) {
          letGo();
          throw e;
        }
        const err = e as Error & {cause?: Error};
        error = err.cause?.message || err.message || 'Unrecognized error during fetch';
      }
      if (signal.aborted) {
        // The queue was cleared (or the webhook disabled or deleted) while the answer came: its
        // usage was reset and stays so (Grist would log the aborted call as a failure after it).
        letGo();
        throw signal.reason;
      }
      if (error !== null) letGo();
      try {
        if (!(await this.dbReady(signal))) {
          letGo();
          return false;
        }
        if (error === null) {
          logBatch(this.db, webhookId, 'success', {size, httpStatus, error: null, attempts: attempt + 1});
          return true;
        }
      } catch (e) {
        letGo();
        throw e;
      }
      logBatch(this.db, webhookId, 'failure', {size, httpStatus, error, attempts: attempt + 1});
      this.opts.onFailure?.();
      if (attempt >= this.currentMaxAttempts() - 1) return false;
      await sleep(wait * this.waitDelayMs, signal);
      if (wait < 64) wait *= 2;
    }
    return false;
  }
}

/** Creates and starts the delivery of a document's outbox (call once per open document). */
export function startWebhookDelivery(db: Database.Database, opts: DeliveryOptions): WebhookDelivery {
  return new WebhookDelivery(db, opts).start();
}

/** Webhook recording and delivery attached to one open document. */
export interface AttachedWebhooks {
  /** The delivery of its outbox. */
  delivery: WebhookDelivery;
  /** Stops recording and delivery (call before closing the connection). */
  detach(): Promise<void>;
}

/**
 * Wires webhooks to an open document in one call: every change the document reports (inside its
 * write transaction) records its events, and the outbox is delivered. `detach()` stops delivery
 * and unhooks the listener; call it before closing the connection.
 */
export function attachWebhooks(
  db: Database.Database,
  doc: {
    onChange(listener: (change: RowChange & {writeSeq?: number}) => void): () => void;
    onBeforeRows?(listener: (tableId: string, rowIds: number[], writeSeq: number) => void): () => void;
  },
  opts: DeliveryOptions,
): AttachedWebhooks {
  // Old values of updated/removed rows, captured during the current write (ready-column and
  // watched-column rules compare them with the new ones).
  let capture: BeforeCapture | null = null;
  let captureSeq = -1;
  const unhookBefore = doc.onBeforeRows?.((tableId, rowIds, writeSeq) => {
    if (writeSeq !== captureSeq) {
      capture = new BeforeCapture(db);
      captureSeq = writeSeq;
    }
    capture!.capture(tableId, rowIds);
  });
  const ids = {last: 0};
  const delivery = startWebhookDelivery(db, opts);
  const unhook = doc.onChange((change) => {
    const before =
      change.writeSeq !== undefined && change.writeSeq === captureSeq ? capture?.get(change.tableId) : change.before;
    // Delivery looks at the outbox once the current synchronous write is over.
    if (recordEvents(db, {...change, before}, ids).length) delivery.scheduleWake();
  });
  return {
    delivery,
    /** Stops recording and delivery (call before closing the connection). */
    async detach() {
      unhook();
      unhookBefore?.();
      await delivery.stop();
    },
  };
}
