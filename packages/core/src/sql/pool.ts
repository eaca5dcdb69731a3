import {fork, type ChildProcess} from 'node:child_process';
import {fileURLToPath} from 'node:url';
import {ApiError, BadRequest, TooManyRequests} from '../errors.js';
import {DEFAULT_MAX_BYTES, DEFAULT_MAX_ROWS, type ResultCaps} from './execute.js';
import type {FromWorker, ToWorker} from './protocol.js';
import {effectiveTimeoutMs, INTERRUPT_MESSAGE, selectText, sqlParams, type SqlParam} from './statement.js';

/** Settings of the SQL worker pool (see docs/sql.md). */
export interface SqlPoolOptions {
  /** Worker processes kept ready. Default 2. */
  size?: number;
  /** The configured timeout (see sqlTimeoutFromEnv); a request may only lower it. Default 1000. */
  defaultTimeoutMs?: number;
  /** Rows a result may hold. Default 1,000,000. */
  maxRows?: number;
  /** UTF-8 size of a result's records as JSON. Default 64 MiB. */
  maxBytes?: number;
  /** Statements that may wait for a free worker, all callers together; beyond that, 429. Default 64. */
  maxQueue?: number;
  /** Statements one caller (user) may have queued or running; beyond that, 429. Default 4. */
  maxPerUser?: number;
  /** Statements one document may have queued or running; beyond that, 429. Default 8. */
  maxPerDoc?: number;
  /** Longest wait for a free worker before the statement starts; beyond that, 503. Default 10000 ms. */
  queueTimeoutMs?: number;
  /** Called when a worker cannot start for lack of descriptors (the engine then closes idle docs). */
  onShortage?: () => void;
}

/** Who runs a statement, for the per-caller share (an API key's user, or the anonymous caller). */
export interface SqlCaller {
  user?: string;
}

/** What `/sql` answers: the statement and its rows. */
export interface SqlResult {
  statement: string;
  records: {fields: Record<string, unknown>}[];
}

interface Job {
  id: number;
  path: string;
  user: string;
  /** The statement's own budget, counted from when a worker starts it. */
  timeoutMs: number;
  statement: string;
  text: string;
  args: SqlParam[];
  timer: NodeJS.Timeout;
  resolve: (r: SqlResult) => void;
  reject: (e: Error) => void;
  settled?: boolean;
}

interface Child {
  proc: ChildProcess;
  ready: boolean;
  job?: Job;
  /** Pending `forget` acknowledgements, by message id. */
  acks: Map<number, () => void>;
}

const WORKER_PATH = fileURLToPath(new URL('./worker.js', import.meta.url));

/**
 * The read-only SQL sandbox: a few pre-forked worker processes. The parent keeps each statement's
 * deadline (counted from when a worker starts the statement: time spent queued behind other
 * callers has its own bound, `queueTimeoutMs`) and SIGKILLs a worker that passes it, because better-sqlite3 offers no way to interrupt a running statement; a replacement
 * is forked off the request path.
 */
export class SqlPool {
  readonly #size: number;
  readonly #defaultTimeoutMs: number;
  readonly #caps: ResultCaps;
  readonly #maxQueue: number;
  readonly #maxPerUser: number;
  readonly #maxPerDoc: number;
  readonly #queueTimeoutMs: number;
  readonly #onShortage?: () => void;
  readonly #children = new Set<Child>();
  /** Waiting statements, one FIFO lane per (user, document); lanes take turns (round-robin). */
  readonly #lanes = new Map<string, Job[]>();
  #queued = 0;
  /** Statements queued or running, per user and per document. */
  readonly #perUser = new Map<string, number>();
  readonly #perDoc = new Map<string, number>();
  #nextId = 1;
  #closed = false;
  /** Why the last worker died before becoming ready; reported when no worker is left. */
  #startError?: string;

  constructor(opts: SqlPoolOptions = {}) {
    this.#size = Math.max(1, opts.size ?? 2);
    this.#defaultTimeoutMs = opts.defaultTimeoutMs ?? 1000;
    this.#caps = {maxRows: opts.maxRows ?? DEFAULT_MAX_ROWS, maxBytes: opts.maxBytes ?? DEFAULT_MAX_BYTES};
    this.#maxQueue = opts.maxQueue ?? 64;
    this.#maxPerUser = Math.max(1, opts.maxPerUser ?? 4);
    this.#maxPerDoc = Math.max(1, opts.maxPerDoc ?? 8);
    this.#queueTimeoutMs = opts.queueTimeoutMs ?? 10_000;
    this.#onShortage = opts.onShortage;
    this.#fill();
  }

  /** Statements waiting for a worker (for metrics). */
  get queued(): number {
    return this.#queued;
  }

  /** Process ids of the workers ready to run statements (for diagnostics and tests). */
  get pids(): number[] {
    return [...this.#children].filter((c) => c.ready).map((c) => c.proc.pid!);
  }

  /**
   * Runs one read-only statement against the document file at `path`. Throws BadRequest with
   * Grist's messages; 429 when the caller's own share (or the whole queue) is full, 503 when no
   * worker frees up within the queue timeout. The statement's timeout starts when a worker starts it.
   */
  run(
    path: string,
    sql: string,
    args: unknown[] | null,
    timeoutMs?: number,
    caller: SqlCaller = {},
  ): Promise<SqlResult> {
    if (this.#closed) {
      return Promise.reject(new Error('SqlPool is closed'));
    }
    let text: string;
    let params: ReturnType<typeof sqlParams>;
    try {
      text = selectText(sql);
      params = sqlParams(args);
    } catch (e) {
      return Promise.reject(e);
    }
    const user = caller.user ?? '';
    // Shares are checked before the global queue, so that one caller's flood is refused as theirs.
    if ((this.#perUser.get(user) ?? 0) >= this.#maxPerUser) {
      return Promise.reject(
        new TooManyRequests(
          `too many SQL statements of yours are running or waiting (${this.#maxPerUser}); try again later`,
        ),
      );
    }
    if ((this.#perDoc.get(path) ?? 0) >= this.#maxPerDoc) {
      return Promise.reject(
        new TooManyRequests(
          `too many SQL statements on this document are running or waiting (${this.#maxPerDoc}); try again later`,
        ),
      );
    }
    const busy = [...this.#children].every((c) => !c.ready || c.job);
    if (busy && this.#queued >= this.#maxQueue) {
      return Promise.reject(
        new TooManyRequests(`too many SQL statements are waiting (${this.#maxQueue}); try again later`),
      );
    }
    this.#fill();
    return new Promise<SqlResult>((resolve, reject) => {
      const job: Job = {
        id: this.#nextId++,
        path,
        user,
        statement: sql,
        text,
        args: params,
        resolve,
        reject,
        timeoutMs: effectiveTimeoutMs(this.#defaultTimeoutMs, timeoutMs),
        timer: setTimeout(() => this.#expireQueued(job), this.#queueTimeoutMs),
      };
      bump(this.#perUser, user, 1);
      bump(this.#perDoc, path, 1);
      const key = `${user}\u0000${path}`;
      const lane = this.#lanes.get(key);
      if (lane) {
        lane.push(job);
      } else {
        this.#lanes.set(key, [job]);
      }
      this.#queued++;
      this.#dispatch();
    });
  }

  /**
   * Tells workers to drop their cached connection to a file (doc deleted or replaced). Resolves
   * when every worker has done so; a worker busy with a statement answers once that ends.
   */
  async forget(path: string): Promise<void> {
    await Promise.all(
      [...this.#children]
        .filter((c) => c.ready)
        .map(
          (c) =>
            new Promise<void>((resolve) => {
              const id = this.#nextId++;
              c.acks.set(id, resolve);
              this.#send(c, {type: 'forget', id, path});
            }),
        ),
    );
  }

  /** Stops the workers (queued statements fail). */
  async close(): Promise<void> {
    this.#closed = true;
    for (const job of this.#takeAll()) {
      this.#settle(job, new Error('SqlPool is closed'));
    }
    await Promise.all(
      [...this.#children].map((c) => {
        const exited = new Promise((resolve) => c.proc.once('exit', resolve));
        c.proc.ref(); // so that close() is still awaited when nothing else keeps the loop alive
        this.#kill(c, new Error('SqlPool is closed'));
        return exited;
      }),
    );
  }

  #fill(): void {
    for (let n = this.#size - this.#children.size; n > 0 && !this.#closed; n--) {
      this.#spawn();
    }
  }

  #spawn(): void {
    let proc: ChildProcess;
    try {
      proc = fork(WORKER_PATH, [], {serialization: 'advanced', execArgv: []});
    } catch (e) {
      // Out of descriptors or processes: fail the waiting statements now; the next run() retries.
      this.#startError = (e as Error).message;
      if (this.#children.size === 0) {
        const error = startFailure(this.#startError);
        if (error instanceof ApiError) {
          this.#onShortage?.();
        }
        queueMicrotask(() => {
          for (const job of this.#takeAll()) {
            this.#settle(job, error);
          }
        });
      }
      return;
    }
    const child: Child = {proc, ready: false, acks: new Map()};
    this.#children.add(child);
    // An idle pool must not keep the embedding process alive; #send refs the channel while busy.
    proc.unref();
    proc.channel?.unref();
    proc.on('message', (msg: FromWorker) => this.#onMessage(child, msg));
    proc.on('error', (err) => {
      // Spawn failures, and sends racing a worker's death (its 'exit' follows).
      if (!child.ready) {
        this.#startError = err.message;
      }
      if (proc.pid === undefined) {
        this.#onExit(child, null, null);
      } // never spawned: no 'exit' follows
    });
    proc.once('exit', (code, signal) => this.#onExit(child, code, signal));
  }

  #onMessage(child: Child, msg: FromWorker): void {
    if (msg.type === 'ready') {
      child.ready = true;
      this.#startError = undefined;
      this.#dispatch();
      return;
    }
    if (msg.type === 'forgotten') {
      child.acks.get(msg.id)?.();
      child.acks.delete(msg.id);
      this.#updateRef(child);
      return;
    }
    const job = child.job;
    if (!job || job.id !== msg.id) {
      return;
    }
    child.job = undefined;
    this.#updateRef(child);
    if (msg.type === 'result') {
      this.#settle(job, undefined, {statement: job.statement, records: JSON.parse(msg.json)});
    } else {
      this.#settle(job, msg.userError ? new BadRequest(msg.message) : new Error(`SQL worker: ${msg.message}`));
    }
    this.#dispatch();
  }

  #onExit(child: Child, code: number | null, signal: string | null): void {
    this.#children.delete(child);
    for (const ack of child.acks.values()) {
      ack();
    } // a dead worker holds no connection
    if (child.job) {
      // Not our kill (that clears the job first): the statement brought the worker down, e.g. memory.
      this.#settle(
        child.job,
        new BadRequest(`the statement could not complete: its worker process exited (${signal ?? `code ${code}`})`),
      );
    }
    if (this.#closed) {
      return;
    }
    if (child.ready) {
      setImmediate(() => this.#fill());
    } else {
      // Died while starting: do not loop on a broken setup. The next run() tries again.
      this.#startError ??= `exited during startup (${signal ?? `code ${code}`})`;
      if (this.#children.size === 0) {
        const error = startFailure(this.#startError);
        if (error instanceof ApiError) {
          this.#onShortage?.();
        }
        for (const job of this.#takeAll()) {
          this.#settle(job, error);
        }
      }
    }
  }

  /** Gives free workers the next statements, taking one from each lane in turn. */
  #dispatch(): void {
    for (const child of this.#children) {
      if (this.#queued === 0) {
        return;
      }
      if (!child.ready || child.job) {
        continue;
      }
      const job = this.#next();
      clearTimeout(job.timer);
      job.timer = setTimeout(() => this.#expire(job), job.timeoutMs);
      child.job = job;
      this.#send(child, {type: 'run', id: job.id, path: job.path, text: job.text, args: job.args, caps: this.#caps});
    }
  }

  /** The head of the lane that waited longest for its turn; the lane then goes to the back. */
  #next(): Job {
    const [key, lane] = this.#lanes.entries().next().value!;
    const job = lane.shift()!;
    this.#lanes.delete(key);
    if (lane.length) {
      this.#lanes.set(key, lane);
    }
    this.#queued--;
    return job;
  }

  #unqueue(job: Job): boolean {
    const key = `${job.user}\u0000${job.path}`;
    const lane = this.#lanes.get(key);
    const i = lane ? lane.indexOf(job) : -1;
    if (i < 0) {
      return false;
    }
    lane!.splice(i, 1);
    if (!lane!.length) {
      this.#lanes.delete(key);
    }
    this.#queued--;
    return true;
  }

  #takeAll(): Job[] {
    const jobs = [...this.#lanes.values()].flat();
    this.#lanes.clear();
    this.#queued = 0;
    return jobs;
  }

  /** No worker took the statement in time: the pool is saturated (503), not the statement slow. */
  #expireQueued(job: Job): void {
    if (!this.#unqueue(job)) {
      return;
    }
    this.#settle(job, new ApiError(503, `no SQL worker was free within ${this.#queueTimeoutMs} ms; try again later`));
  }

  #expire(job: Job): void {
    const child = [...this.#children].find((c) => c.job === job);
    if (child) {
      this.#kill(child); // its 'exit' forks the replacement
    } else {
      this.#unqueue(job);
    }
    this.#settle(job, new BadRequest(INTERRUPT_MESSAGE));
  }

  /** SIGKILL: safe for a read-only SQLite reader, and the only way to stop a running statement. */
  #kill(child: Child, reason?: Error): void {
    this.#children.delete(child);
    if (child.job && reason) {
      this.#settle(child.job, reason);
    }
    child.job = undefined;
    child.proc.kill('SIGKILL');
  }

  #send(child: Child, msg: ToWorker): void {
    child.proc.send(msg);
    this.#updateRef(child);
  }

  #updateRef(child: Child): void {
    if (child.job || child.acks.size > 0) {
      child.proc.channel?.ref();
    } else {
      child.proc.channel?.unref();
    }
  }

  #settle(job: Job, error?: Error, result?: SqlResult): void {
    clearTimeout(job.timer);
    if (job.settled) {
      return;
    }
    job.settled = true;
    bump(this.#perUser, job.user, -1);
    bump(this.#perDoc, job.path, -1);
    if (error) {
      job.reject(error);
    } else {
      job.resolve(result!);
    }
  }
}

function bump(counts: Map<string, number>, key: string, by: number): void {
  const n = (counts.get(key) ?? 0) + by;
  if (n > 0) {
    counts.set(key, n);
  } else {
    counts.delete(key);
  }
}

/** A worker that cannot start for lack of file descriptors or processes is a 503, not a bug. */
function startFailure(reason: string | undefined): Error {
  const message = `SQL worker could not start: ${reason}`;
  return /EMFILE|ENFILE|EAGAIN|ENOMEM/.test(reason ?? '')
    ? new ApiError(503, `${message}; try again later`)
    : new Error(message);
}
