import {fork, type ChildProcess} from 'node:child_process';
import {fileURLToPath} from 'node:url';
import {BadRequest, TooManyRequests} from '../errors.js';
import {DEFAULT_MAX_BYTES, DEFAULT_MAX_ROWS, type ResultCaps} from './execute.js';
import type {FromWorker, ToWorker} from './protocol.js';
import {effectiveTimeoutMs, INTERRUPT_MESSAGE, selectText, sqlParams, type SqlParam} from './statement.js';

export interface SqlPoolOptions {
  /** Worker processes kept ready. Default 2. */
  size?: number;
  /** The configured timeout (see sqlTimeoutFromEnv); a request may only lower it. Default 1000. */
  defaultTimeoutMs?: number;
  /** Rows a result may hold. Default 1,000,000. */
  maxRows?: number;
  /** UTF-8 size of a result's records as JSON. Default 64 MiB. */
  maxBytes?: number;
  /** Statements that may wait for a free worker; beyond that, 429. Default 64. */
  maxQueue?: number;
}

export interface SqlResult {
  statement: string;
  records: {fields: Record<string, unknown>}[];
}

interface Job {
  id: number;
  path: string;
  statement: string;
  text: string;
  args: SqlParam[];
  timer: NodeJS.Timeout;
  resolve: (r: SqlResult) => void;
  reject: (e: Error) => void;
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
 * deadline (counted from the request, as Grist's interrupt timer is) and SIGKILLs a worker that
 * passes it, because better-sqlite3 offers no way to interrupt a running statement; a replacement
 * is forked off the request path.
 */
export class SqlPool {
  readonly #size: number;
  readonly #defaultTimeoutMs: number;
  readonly #caps: ResultCaps;
  readonly #maxQueue: number;
  readonly #children = new Set<Child>();
  readonly #queue: Job[] = [];
  #nextId = 1;
  #closed = false;
  /** Why the last worker died before becoming ready; reported when no worker is left. */
  #startError?: string;

  constructor(opts: SqlPoolOptions = {}) {
    this.#size = Math.max(1, opts.size ?? 2);
    this.#defaultTimeoutMs = opts.defaultTimeoutMs ?? 1000;
    this.#caps = {maxRows: opts.maxRows ?? DEFAULT_MAX_ROWS, maxBytes: opts.maxBytes ?? DEFAULT_MAX_BYTES};
    this.#maxQueue = opts.maxQueue ?? 64;
    this.#fill();
  }

  /** Process ids of the workers ready to run statements (for diagnostics and tests). */
  get pids(): number[] {
    return [...this.#children].filter((c) => c.ready).map((c) => c.proc.pid!);
  }

  /** Runs one read-only statement against the document file at `path`. Throws BadRequest with Grist's messages. */
  run(path: string, sql: string, args: unknown[] | null, timeoutMs?: number): Promise<SqlResult> {
    if (this.#closed) { return Promise.reject(new Error('SqlPool is closed')); }
    let text, params;
    try {
      text = selectText(sql);
      params = sqlParams(args);
    } catch (e) {
      return Promise.reject(e);
    }
    const busy = [...this.#children].every((c) => !c.ready || c.job);
    if (busy && this.#queue.length >= this.#maxQueue) {
      return Promise.reject(new TooManyRequests(
        `too many SQL statements are waiting (${this.#maxQueue}); try again later`));
    }
    this.#fill();
    return new Promise<SqlResult>((resolve, reject) => {
      const job: Job = {
        id: this.#nextId++, path, statement: sql, text, args: params, resolve, reject,
        timer: setTimeout(() => this.#expire(job), effectiveTimeoutMs(this.#defaultTimeoutMs, timeoutMs)),
      };
      this.#queue.push(job);
      this.#dispatch();
    });
  }

  /**
   * Tells workers to drop their cached connection to a file (doc deleted or replaced). Resolves
   * when every worker has done so; a worker busy with a statement answers once that ends.
   */
  async forget(path: string): Promise<void> {
    await Promise.all([...this.#children].filter((c) => c.ready).map((c) => new Promise<void>((resolve) => {
      const id = this.#nextId++;
      c.acks.set(id, resolve);
      this.#send(c, {type: 'forget', id, path});
    })));
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const job of this.#queue.splice(0)) { this.#settle(job, new Error('SqlPool is closed')); }
    await Promise.all([...this.#children].map((c) => {
      const exited = new Promise((resolve) => c.proc.once('exit', resolve));
      c.proc.ref();  // so that close() is still awaited when nothing else keeps the loop alive
      this.#kill(c, new Error('SqlPool is closed'));
      return exited;
    }));
  }

  #fill(): void {
    while (!this.#closed && this.#children.size < this.#size) { this.#spawn(); }
  }

  #spawn(): void {
    const proc = fork(WORKER_PATH, [], {serialization: 'advanced', execArgv: []});
    const child: Child = {proc, ready: false, acks: new Map()};
    this.#children.add(child);
    // An idle pool must not keep the embedding process alive; #send refs the channel while busy.
    proc.unref();
    proc.channel?.unref();
    proc.on('message', (msg: FromWorker) => this.#onMessage(child, msg));
    proc.on('error', (err) => {
      // Spawn failures, and sends racing a worker's death (its 'exit' follows).
      if (!child.ready) { this.#startError = err.message; }
      if (proc.pid === undefined) { this.#onExit(child, null, null); }  // never spawned: no 'exit' follows
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
    if (!job || job.id !== msg.id) { return; }
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
    for (const ack of child.acks.values()) { ack(); }  // a dead worker holds no connection
    if (child.job) {
      // Not our kill (that clears the job first): the statement brought the worker down, e.g. memory.
      this.#settle(child.job, new BadRequest(
        `the statement could not complete: its worker process exited (${signal ?? `code ${code}`})`));
    }
    if (this.#closed) { return; }
    if (child.ready) {
      setImmediate(() => this.#fill());
    } else {
      // Died while starting: do not loop on a broken setup. The next run() tries again.
      this.#startError ??= `exited during startup (${signal ?? `code ${code}`})`;
      if (this.#children.size === 0) {
        for (const job of this.#queue.splice(0)) {
          this.#settle(job, new Error(`SQL worker could not start: ${this.#startError}`));
        }
      }
    }
  }

  #dispatch(): void {
    for (const child of this.#children) {
      if (this.#queue.length === 0) { return; }
      if (!child.ready || child.job) { continue; }
      const job = this.#queue.shift()!;
      child.job = job;
      this.#send(child, {type: 'run', id: job.id, path: job.path, text: job.text, args: job.args, caps: this.#caps});
    }
  }

  #expire(job: Job): void {
    const child = [...this.#children].find((c) => c.job === job);
    if (child) {
      this.#kill(child);  // its 'exit' forks the replacement
    } else {
      const i = this.#queue.indexOf(job);
      if (i >= 0) { this.#queue.splice(i, 1); }
    }
    this.#settle(job, new BadRequest(INTERRUPT_MESSAGE));
  }

  /** SIGKILL: safe for a read-only SQLite reader, and the only way to stop a running statement. */
  #kill(child: Child, reason?: Error): void {
    this.#children.delete(child);
    if (child.job && reason) { this.#settle(child.job, reason); }
    child.job = undefined;
    child.proc.kill('SIGKILL');
  }

  #send(child: Child, msg: ToWorker): void {
    child.proc.send(msg);
    this.#updateRef(child);
  }

  #updateRef(child: Child): void {
    if (child.job || child.acks.size > 0) { child.proc.channel?.ref(); } else { child.proc.channel?.unref(); }
  }

  #settle(job: Job, error?: Error, result?: SqlResult): void {
    clearTimeout(job.timer);
    if (error) { job.reject(error); } else { job.resolve(result!); }
  }
}
