/**
 * The pool of read-only SQL worker processes (docs/sql.md): lanes per caller, deadlines, kills,
 * preemption and the spare process.
 *
 * One thing: one scheduler. Dispatch, preemption, deadlines and worker exits all read and change
 * the same state (lanes, per-user and per-document counts, reserves, children, the spare), and
 * its fairness rules (D50) only hold when one place changes it.
 */
import {fork, type ChildProcess} from 'node:child_process';
import {fileURLToPath} from 'node:url';
import {ApiError, BadRequest, TooManyRequests} from '../base/index.js';
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
  /**
   * When every worker runs statements of one user (or one document) and another user's statement
   * waits, the longest-running of them is stopped once all have run this long. Default 100 ms.
   */
  preemptAfterMs?: number;
  /**
   * After a preemption, that user (or document) holds at most size-1 workers until this long has
   * passed without another caller's statement. Default 5000 ms.
   */
  reserveMs?: number;
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
  /** When a worker started it (performance.now()). */
  startedAt?: number;
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
  readonly #preemptAfterMs: number;
  readonly #reserveMs: number;
  readonly #onShortage?: () => void;
  readonly #children = new Set<Child>();
  /**
   * One more process, forked ahead and idle, that takes the place of a worker killed at a deadline
   * or preempted at once: forking a replacement takes 90-250 ms (measured), longer than the wait
   * the preemption is there to avoid.
   */
  #spare?: Child;
  /** Waiting statements, one FIFO lane per (user, document); lanes take turns (round-robin). */
  readonly #lanes = new Map<string, Job[]>();
  #queued = 0;
  /** Statements queued or running, per user and per document. */
  readonly #perUser = new Map<string, number>();
  readonly #perDoc = new Map<string, number>();
  /**
   * Users (`u` + user) and documents (`d` + path) that were preempted: until the time given, they
   * may not take the last free worker, which stays free for others.
   */
  readonly #reserved = new Map<string, number>();
  #preemptTimer?: NodeJS.Timeout;
  #reserveTimer?: NodeJS.Timeout;
  #preemptions = 0;
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
    this.#preemptAfterMs = opts.preemptAfterMs ?? 100;
    this.#reserveMs = opts.reserveMs ?? 5000;
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
    this.#refreshReserves(user, path);
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

  /** Spare processes ready to replace a worker at once (0 or 1; for tests). */
  get spares(): number {
    return this.#spare?.ready ? 1 : 0;
  }

  /** Statements stopped to free a worker for another caller (for metrics and tests). */
  get preemptions(): number {
    return this.#preemptions;
  }

  /** Stops the workers (queued statements fail). */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#preemptTimer);
    clearTimeout(this.#reserveTimer);
    for (const job of this.#takeAll()) {
      this.#settle(job, new Error('SqlPool is closed'));
    }
    await Promise.all(
      [...this.#children, ...(this.#spare ? [this.#spare] : [])].map((c) => {
        const exited = new Promise((resolve) => c.proc.once('exit', resolve));
        c.proc.ref(); // so that close() is still awaited when nothing else keeps the loop alive
        this.#kill(c, new Error('SqlPool is closed'));
        return exited;
      }),
    );
  }

  #fill(): void {
    if (this.#closed) {
      return;
    }
    if (this.#spare?.ready) {
      // A ready spare takes a missing worker's place, or that of one still starting (which becomes the spare).
      const starting = [...this.#children].find((c) => !c.ready);
      if (this.#children.size < this.#size || starting) {
        this.#children.add(this.#spare);
        this.#spare = undefined;
        if (starting && this.#children.size > this.#size) {
          this.#children.delete(starting);
          this.#spare = starting;
        }
      }
    }
    for (let n = this.#size - this.#children.size; n > 0; n--) {
      this.#spawn(false);
    }
    // The spare forks once the workers are ready, so that it does not slow their start.
    if (!this.#spare && [...this.#children].every((c) => c.ready)) {
      this.#spawn(true);
    }
  }

  #spawn(spare: boolean): void {
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
    if (spare) {
      this.#spare = child;
    } else {
      this.#children.add(child);
    }
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
      this.#fill();
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
    if (child === this.#spare) {
      this.#spare = undefined;
    }
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
    this.#pruneReserves();
    for (const child of this.#children) {
      if (this.#queued === 0) {
        break;
      }
      if (!child.ready || child.job) {
        continue;
      }
      const job = this.#next();
      if (!job) {
        break; // what waits belongs to a reserved user or document: this worker stays free for others
      }
      clearTimeout(job.timer);
      job.startedAt = performance.now();
      job.timer = setTimeout(() => this.#expire(job), job.timeoutMs);
      child.job = job;
      this.#send(child, {type: 'run', id: job.id, path: job.path, text: job.text, args: job.args, caps: this.#caps});
    }
    this.#checkPreempt();
  }

  /**
   * The head of the lane that waited longest for its turn; the lane then goes to the back. Lanes
   * of a reserved user or document that already holds all workers but one are passed over.
   */
  #next(): Job | undefined {
    for (const [key, lane] of this.#lanes) {
      const job = lane[0];
      if (this.#mustLeaveFree(job)) {
        continue;
      }
      lane.shift();
      this.#lanes.delete(key);
      if (lane.length) {
        this.#lanes.set(key, lane);
      }
      this.#queued--;
      return job;
    }
    return undefined;
  }

  /** Would starting `job` give a reserved user (or document) every worker? */
  #mustLeaveFree(job: Job): boolean {
    if (this.#reserved.size === 0) {
      return false;
    }
    const user = this.#reserved.has(`u${job.user}`);
    const doc = this.#reserved.has(`d${job.path}`);
    if (!user && !doc) {
      return false;
    }
    let held = 0;
    for (const c of this.#children) {
      if (c.job && ((user && c.job.user === job.user) || (doc && c.job.path === job.path))) {
        held++;
      }
    }
    return held >= this.#size - 1;
  }

  /** Another caller's statement arriving or ending keeps the reserves against a flooding user or document. */
  #refreshReserves(user: string, path: string): void {
    const until = performance.now() + this.#reserveMs;
    for (const key of this.#reserved.keys()) {
      if (!reserveCovers(key, user, path)) {
        this.#reserved.set(key, until);
      }
    }
  }

  #pruneReserves(): void {
    if (this.#reserved.size === 0) {
      return;
    }
    const now = performance.now();
    let next = Number.POSITIVE_INFINITY;
    const others = (key: string) =>
      [...this.#lanes.values()].some((lane) => lane.some((j) => !reserveCovers(key, j.user, j.path))) ||
      [...this.#children].some((c) => c.job && !reserveCovers(key, c.job.user, c.job.path));
    for (const [key, until] of this.#reserved) {
      if (until <= now && others(key)) {
        this.#reserved.set(key, now + this.#reserveMs); // another caller's statement is still waiting or running
        next = Math.min(next, now + this.#reserveMs);
      } else if (until <= now) {
        this.#reserved.delete(key);
      } else {
        next = Math.min(next, until);
      }
    }
    clearTimeout(this.#reserveTimer);
    if (this.#reserved.size > 0) {
      // A reserve running out may let a waiting statement of the reserved user start.
      this.#reserveTimer = setTimeout(() => this.#dispatch(), Math.ceil(next - now) + 1);
      this.#reserveTimer.unref();
    }
  }

  /**
   * Preemption (decision D50): when every worker runs statements of one user (or of one document,
   * for callers who have none of them running) and another caller's statement waits, the
   * longest-running of them is stopped once all have run `preemptAfterMs`, and answers as a
   * timeout would; that user (or document) then holds at most size-1 workers while others keep
   * sending statements, and its own waiting statements preempt nobody. A caller's own statements
   * never preempt each other, and a pool of one worker never preempts.
   */
  #checkPreempt(): void {
    clearTimeout(this.#preemptTimer);
    this.#preemptTimer = undefined;
    if (this.#size < 2 || this.#queued === 0 || this.#closed) {
      return;
    }
    const running: Job[] = [];
    for (const c of this.#children) {
      if (!c.ready || !c.job) {
        return; // a worker is free or starting: it takes the next statement
      }
      running.push(c.job);
    }
    if (running.length < this.#size) {
      return;
    }
    const {user, path} = running[0];
    const users = new Set(running.map((j) => j.user));
    // A reserved user or document (a flood already preempted once) has its share: its waiting
    // statements never preempt others' (measured: under load they killed another user's select 1).
    const heads = [...this.#lanes.values()]
      .map((lane) => lane[0])
      .filter((j) => !this.#reserved.has(`u${j.user}`) && !this.#reserved.has(`d${j.path}`));
    let reserve: string;
    if (users.size === 1 && heads.some((j) => j.user !== user)) {
      reserve = `u${user}`;
    } else if (running.every((j) => j.path === path) && heads.some((j) => j.path !== path && !users.has(j.user))) {
      reserve = `d${path}`;
    } else {
      return;
    }
    const now = performance.now();
    const youngest = Math.max(...running.map((j) => j.startedAt ?? now));
    const wait = youngest + this.#preemptAfterMs - now;
    if (wait > 0) {
      this.#preemptTimer = setTimeout(() => this.#checkPreempt(), Math.ceil(wait));
      this.#preemptTimer.unref();
      return;
    }
    const victim = running.reduce((a, b) => ((a.startedAt ?? now) <= (b.startedAt ?? now) ? a : b));
    this.#reserved.set(reserve, now + this.#reserveMs);
    this.#preemptions++;
    this.#expire(victim);
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
      this.#kill(child);
    } else {
      this.#unqueue(job);
    }
    this.#settle(job, new BadRequest(INTERRUPT_MESSAGE));
    if (child) {
      this.#fill(); // the spare takes the killed worker's place, and a new spare forks
      this.#dispatch();
    }
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
    this.#refreshReserves(job.user, job.path);
    bump(this.#perUser, job.user, -1);
    bump(this.#perDoc, job.path, -1);
    if (error) {
      job.reject(error);
    } else {
      job.resolve(result!);
    }
  }
}

/** Is a statement of `user` on `path` one of the reserved user's (`u...`) or document's (`d...`)? */
function reserveCovers(key: string, user: string, path: string): boolean {
  return key.slice(1) === (key[0] === 'u' ? user : path);
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
