/**
 * Fault-injection harness: gristlite workers as separate "hosts" on one Linux machine.
 *
 * Each worker runs in its own network namespace, joined by a veth pair to a bridge in the root
 * namespace (one /24, so nothing is routed and IP forwarding does not matter). Setting the host end
 * of a veth down cuts that worker off from everything at once: PostgreSQL, the object store,
 * clients and peers; its TCP connections hang as in a real network partition.
 * PostgreSQL listens on loopback only, so a TCP proxy on the bridge address forwards to it.
 * Needs root and iproute2; see README.md.
 */
import {type ChildProcess, execFile, execFileSync, spawn} from 'node:child_process';
import {randomBytes, randomInt} from 'node:crypto';
import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import {createServer, connect, type Socket} from 'node:net';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {fileURLToPath} from 'node:url';
import pg from 'pg';
import {underCi} from '@gristlite/core/testing';

/** The repository root, from this file's place in packages/cli/dist/test/netns (never a fixed path). */
export const REPO_ROOT = fileURLToPath(new URL('../../../../../', import.meta.url));
export const GRISTLITE_BIN = join(REPO_ROOT, 'packages/cli/bin/gristlite.js');
const S3_CHILD = fileURLToPath(new URL('./s3-child.js', import.meta.url));

/** The port every worker listens on inside its namespace (each has its own address). */
export const WORKER_PORT = 8484;

function ip(...args: string[]): string {
  return execFileSync('ip', args, {encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe']});
}

/** `ip` without caring whether it works: for cleanup, where the thing may already be gone. */
function ipQuiet(...args: string[]): void {
  try {
    ip(...args);
  } catch {}
}

function message(e: unknown): string {
  const err = e as {stderr?: string; message?: string; code?: string};
  if (err.code === 'ENOENT') return '`ip` (iproute2) not found';
  return (err.stderr || err.message || String(e)).trim().split('\n')[0]!;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// ---- cleanup on exit ---------------------------------------------------------------------------

// Synchronous cleanups run when the process exits, even after a crash or Ctrl-C, so that a failed
// run leaves no namespaces, bridges or processes behind.
const exitCleanups = new Set<() => void>();
let exitHooked = false;
function onExit(fn: () => void): () => void {
  if (!exitHooked) {
    exitHooked = true;
    process.once('exit', () => {
      for (const f of [...exitCleanups].reverse()) {
        try {
          f();
        } catch {}
      }
    });
    // Without these handlers a signal ends node without the 'exit' event.
    for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const)
      process.once(sig, () => process.exit(sig === 'SIGINT' ? 130 : 143));
  }
  exitCleanups.add(fn);
  return () => exitCleanups.delete(fn);
}

// ---- availability ------------------------------------------------------------------------------

/** Null when this process can create network namespaces and veth pairs; else why not. */
export async function netnsAvailable(): Promise<string | null> {
  if (process.platform !== 'linux') return `network namespaces need Linux (this is ${process.platform})`;
  if (process.getuid?.() !== 0) return 'not root (network namespaces and veth pairs need CAP_NET_ADMIN)';
  const tag = randomBytes(3).toString('hex');
  const probe = `gl-probe-${tag}`;
  try {
    ip('netns', 'add', probe);
  } catch (e) {
    return `cannot create a network namespace: ${message(e)}`;
  }
  try {
    // A veth pair too: some containers allow namespaces but no new links.
    ip('link', 'add', `glpa${tag}`, 'type', 'veth', 'peer', 'name', `glpb${tag}`);
    ipQuiet('link', 'del', `glpa${tag}`);
  } catch (e) {
    return `cannot create a veth pair: ${message(e)}`;
  } finally {
    ipQuiet('netns', 'del', probe);
  }
  return null;
}

// ---- prerequisites -----------------------------------------------------------------------------

/** PostgreSQL for the tests (trust auth); the proxy forwards the bridge address to its host and port. */
export const PG_URL = process.env.GRISTLITE_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** Where the proxy forwards to: PG_URL's own host and port. */
export function pgTarget(): {host: string; port: number} {
  const u = new URL(PG_URL);
  return {host: u.hostname, port: Number(u.port || 5432)};
}

/** `url` with another host and port, and `schema` as the query parameter gristlite reads. */
export function pgUrlVia(url: string, host: string, port: number, schema?: string): string {
  const u = new URL(url);
  u.hostname = host;
  u.port = String(port);
  if (schema) u.searchParams.set('schema', schema);
  return u.toString();
}

/** Runs one statement on PG_URL. */
export async function pgQuery(q: string, url = PG_URL): Promise<unknown[]> {
  const c = new pg.Client({connectionString: url, connectionTimeoutMillis: 3000});
  await c.connect();
  try {
    return (await c.query(q)).rows;
  } finally {
    await c.end().catch(() => {});
  }
}

/**
 * Whether a namespace test can run: prints `SKIPPED <what>: <reason>` and returns false when it
 * cannot, but throws under CI (a CI job that silently skips proves nothing). GRISTLITE_E2E_NETNS=0
 * skips everywhere, CI included: it is an explicit choice.
 */
export async function canRun(what: string): Promise<boolean> {
  if (process.env.GRISTLITE_E2E_NETNS === '0') {
    console.log(`SKIPPED ${what}: GRISTLITE_E2E_NETNS=0`);
    return false;
  }
  let reason = await netnsAvailable();
  if (!reason) {
    try {
      await pgQuery('select 1');
    } catch (e) {
      reason = `PostgreSQL unreachable at ${PG_URL}: ${(e as Error).message} (set GRISTLITE_TEST_PG_URL)`;
    }
  }
  if (!reason) return true;
  if (underCi()) throw new Error(`${what} cannot run under CI: ${reason}`);
  console.log(`SKIPPED ${what}: ${reason}`);
  return false;
}

/** Runs a command inside a namespace; never throws (a timeout is reported as code null). */
export function nsExec(
  ns: string,
  cmd: string[],
  timeoutMs = 10_000,
): Promise<{code: number | null; stdout: string; stderr: string}> {
  return new Promise((resolve) => {
    execFile(
      'ip',
      ['netns', 'exec', ns, ...cmd],
      {timeout: timeoutMs, killSignal: 'SIGKILL'},
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : null) : 0;
        resolve({code, stdout: String(stdout), stderr: String(stderr)});
      },
    );
  });
}

// ---- br_netfilter ------------------------------------------------------------------------------

// With br_netfilter loaded, bridged frames go through iptables/arptables, where a DROP policy
// (Docker sets FORWARD to DROP) would silently break worker-to-worker traffic. Turned off while a
// network exists, and back on when the last of ours is gone.
const BR_NF = ['iptables', 'arptables'].map((t) => `/proc/sys/net/bridge/bridge-nf-call-${t}`);
const brNfSaved = new Map<string, string>();

function disableBridgeNetfilter(): void {
  for (const f of BR_NF) {
    try {
      const v = readFileSync(f, 'utf8').trim();
      if (v !== '0') {
        if (!brNfSaved.has(f)) brNfSaved.set(f, v);
        writeFileSync(f, '0');
      }
    } catch {} // no br_netfilter: nothing to do
  }
}

function restoreBridgeNetfilter(): void {
  let others = '';
  try {
    others = ip('-o', 'link', 'show', 'type', 'bridge');
  } catch {}
  if (/: glbr[0-9a-f]{4}[:@]/.test(others)) return; // another run's bridge still needs it off
  for (const [f, v] of brNfSaved) {
    try {
      writeFileSync(f, v);
    } catch {}
  }
  brNfSaved.clear();
}

// ---- network -----------------------------------------------------------------------------------

export interface NetworkOptions {
  /** Second octet of 10.x.0.0/24; random in 100..199 (not in use here) by default. */
  subnet?: number;
  /** Directory for worker data, logs and the object store; a new temporary one by default. */
  dir?: string;
  /** Keep `dir` on destroy (for looking at logs afterwards). */
  keepDir?: boolean;
}

export interface Network {
  readonly tag: string;
  readonly subnet: number;
  readonly bridge: string;
  /** The bridge's address in the root namespace: where the proxy and the object store listen. */
  readonly hostIp: string;
  /** Namespace names, index 0 for worker 1. */
  readonly namespaces: string[];
  readonly dir: string;
  readonly workers: Map<number, Worker>;
  /** Worker i's address (1-based): 10.x.0.(10+i). */
  workerIp(i: number): string;
  namespace(i: number): string;
  /** Sets the host end of worker i's veth down: the worker loses every link. */
  cut(i: number): void;
  restore(i: number): void;
  isCut(i: number): boolean;
  /** Starts `gristlite serve` in worker i's namespace; resolves when /status?ready=1 answers 200. */
  startWorker(i: number, env: Record<string, string>, opts?: WorkerOptions): Promise<Worker>;
  /** Kills what runs in the namespaces, deletes namespaces, veths and the bridge. Idempotent. */
  destroy(): void;
}

function usedSubnets(): Set<number> {
  const used = new Set<number>();
  let text = '';
  try {
    text = ip('-o', '-4', 'addr', 'show') + ip('-4', 'route', 'show');
  } catch {}
  for (const m of text.matchAll(/\b10\.(\d+)\./g)) used.add(Number(m[1]));
  return used;
}

export async function createNetwork(n: number, opts: NetworkOptions = {}): Promise<Network> {
  let subnet = opts.subnet;
  if (subnet === undefined) {
    // Random, so a previous crashed run's leftovers (or a parallel run) do not clash.
    const used = usedSubnets();
    const free = Array.from({length: 100}, (_, k) => 100 + k).filter((x) => !used.has(x));
    if (!free.length) throw new Error('no free 10.x.0.0/24 subnet with x in 100..199');
    subnet = free[randomInt(free.length)]!;
  }
  const tag = randomBytes(2).toString('hex');
  const bridge = `glbr${tag}`;
  const hostIp = `10.${subnet}.0.1`;
  const namespaces = Array.from({length: n}, (_, k) => `gl-${tag}-w${k + 1}`);
  // Interface names are limited to 15 characters: glv<tag>w<i> (host end), glp<tag>w<i> (peer).
  const hostEnd = (i: number) => `glv${tag}w${i}`;
  const peerEnd = (i: number) => `glp${tag}w${i}`;
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), `gl-netns-${tag}-`));
  mkdirSync(dir, {recursive: true});
  const workers = new Map<number, Worker>();
  const cutSet = new Set<number>();
  let destroyed = false;

  const check = (i: number) => {
    if (!Number.isInteger(i) || i < 1 || i > n) throw new Error(`no worker ${i} (1..${n})`);
  };

  const destroy = () => {
    if (destroyed) return;
    destroyed = true;
    unhook();
    for (const w of workers.values()) w.forceKill();
    for (const ns of namespaces) {
      // Anything else still running in the namespace (a stray child) would keep it alive unnamed.
      try {
        for (const pid of ip('netns', 'pids', ns).split(/\s+/).filter(Boolean)) {
          try {
            process.kill(Number(pid), 'SIGKILL');
          } catch {}
        }
      } catch {}
      ipQuiet('netns', 'del', ns); // takes the peer veth with it, and so its host end
    }
    for (let i = 1; i <= n; i++) ipQuiet('link', 'del', hostEnd(i));
    ipQuiet('link', 'del', bridge);
    restoreBridgeNetfilter();
    if (!opts.keepDir && !opts.dir) rmSync(dir, {recursive: true, force: true});
  };
  const unhook = onExit(destroy);

  try {
    disableBridgeNetfilter();
    ip('link', 'add', 'name', bridge, 'type', 'bridge');
    ip('addr', 'add', `${hostIp}/24`, 'dev', bridge);
    ip('link', 'set', bridge, 'up');
    for (let i = 1; i <= n; i++) {
      const ns = namespaces[i - 1]!;
      ip('netns', 'add', ns);
      ip('link', 'add', hostEnd(i), 'type', 'veth', 'peer', 'name', peerEnd(i));
      ip('link', 'set', peerEnd(i), 'netns', ns);
      ip('link', 'set', hostEnd(i), 'master', bridge);
      ip('link', 'set', hostEnd(i), 'up');
      ip('-n', ns, 'link', 'set', 'lo', 'up');
      ip('-n', ns, 'addr', 'add', `10.${subnet}.0.${10 + i}/24`, 'dev', peerEnd(i));
      ip('-n', ns, 'link', 'set', peerEnd(i), 'up');
      ip('-n', ns, 'route', 'add', 'default', 'via', hostIp);
    }
  } catch (e) {
    destroy();
    throw new Error(`cannot create the test network: ${message(e)}`);
  }

  const network: Network = {
    tag,
    subnet,
    bridge,
    hostIp,
    namespaces,
    dir,
    workers,
    workerIp(i) {
      check(i);
      return `10.${subnet}.0.${10 + i}`;
    },
    namespace(i) {
      check(i);
      return namespaces[i - 1]!;
    },
    cut(i) {
      check(i);
      ip('link', 'set', hostEnd(i), 'down');
      cutSet.add(i);
    },
    restore(i) {
      check(i);
      ip('link', 'set', hostEnd(i), 'up');
      cutSet.delete(i);
    },
    isCut: (i) => cutSet.has(i),
    async startWorker(i, env, wopts = {}) {
      check(i);
      if (workers.get(i)?.running) throw new Error(`worker ${i} is already running`);
      const w = workers.get(i) ?? new Worker(network, i, env, wopts);
      workers.set(i, w);
      await w.start();
      return w;
    },
    destroy,
  };
  return network;
}

// ---- TCP proxy ---------------------------------------------------------------------------------

export interface TcpProxy {
  readonly host: string;
  readonly port: number;
  /** Open client connections. */
  readonly connections: number;
  /** Stops listening and destroys every socket (both sides). */
  close(): Promise<void>;
}

/** Forwards `listen` to `target`: PostgreSQL listens on loopback, the workers reach it through here. */
export async function startTcpProxy(
  listen: {host: string; port: number},
  target: {host: string; port: number},
): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  let clients = 0;
  const server = createServer((client) => {
    clients++;
    const upstream = connect(target.port, target.host);
    sockets.add(client).add(upstream);
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.once('close', () => {
      clients--;
      sockets.delete(client);
      end();
    });
    upstream.once('close', () => {
      sockets.delete(upstream);
      end();
    });
    client.on('error', end);
    upstream.on('error', end);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(listen.port, listen.host, () => resolve());
  });
  const unhook = onExit(() => {
    for (const s of sockets) s.destroy();
    server.close();
  });
  return {
    host: listen.host,
    port: listen.port,
    get connections() {
      return clients;
    },
    async close() {
      unhook();
      const closed = new Promise<void>((r) => server.close(() => r()));
      for (const s of sockets) s.destroy();
      await closed;
    },
  };
}

// ---- object store ------------------------------------------------------------------------------

export const S3_BUCKET = 'gristlite-e2e';
/** s3rver's built-in account. */
export const S3_CREDENTIALS = {accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER', region: 'us-east-1'};

export interface S3Server {
  readonly url: string;
  readonly dir: string;
  readonly running: boolean;
  readonly pid: number | undefined;
  /** Graceful stop (SIGTERM: connections cut, written objects kept). */
  stop(): Promise<void>;
  /** Starts a new process over the same directory. */
  start(): Promise<void>;
  restart(): Promise<void>;
}

/**
 * Runs s3rver in a child process on `host:port` over `dir`, with the bucket `gristlite-e2e`.
 * Stops use SIGTERM, not SIGKILL: s3rver writes objects in place (not write-then-rename), so a
 * kill mid-write would leave a torn object, which no real object store does.
 */
export async function startS3(dir: string, host: string, port: number): Promise<S3Server> {
  mkdirSync(dir, {recursive: true});
  const log = `${dir}.log`;
  let proc: ChildProcess | null = null;
  const running = () => proc !== null && proc.exitCode === null && proc.signalCode === null;
  const kill = () => {
    if (running()) proc!.kill('SIGKILL');
  };
  const unhook = onExit(kill);

  const start = async () => {
    if (running()) throw new Error('s3rver is already running');
    const fd = openSync(log, 'a');
    writeSync(fd, `=== s3rver start ${new Date().toISOString()}\n`);
    const p = spawn(process.execPath, [S3_CHILD, JSON.stringify({host, port, dir, bucket: S3_BUCKET})], {
      stdio: ['pipe', 'pipe', fd],
    });
    closeSync(fd);
    proc = p;
    await new Promise<void>((resolve, reject) => {
      let out = '';
      const timer = setTimeout(() => reject(new Error(`s3rver did not start in 10 s: ${tail(log)}`)), 10_000);
      p.stdout!.on('data', (d) => {
        out += d;
        if (out.includes('s3rver ready')) {
          clearTimeout(timer);
          resolve();
        }
      });
      p.once('exit', (code, sig) => {
        clearTimeout(timer);
        reject(new Error(`s3rver exited (${code ?? sig}) while starting:\n${tail(log)}`));
      });
    });
  };

  const stop = async () => {
    if (!running()) return;
    const p = proc!;
    const exited = new Promise((r) => p.once('exit', r));
    p.kill('SIGTERM');
    const t = setTimeout(() => p.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(t);
  };

  await start();
  return {
    url: `http://${host}:${port}`,
    dir,
    get running() {
      return running();
    },
    get pid() {
      return proc?.pid;
    },
    async stop() {
      await stop();
      unhook();
    },
    async start() {
      onExit(kill);
      await start();
    },
    async restart() {
      await stop();
      await start();
    },
  };
}

// ---- workers -----------------------------------------------------------------------------------

export interface WorkerOptions {
  /** Time allowed for /status?ready=1 to answer 200 after a start (default 20 s). */
  readyTimeoutMs?: number;
}

/** The last `lines` lines of a log file. */
export function tail(file: string, lines = 40): string {
  try {
    return readFileSync(file, 'utf8')
      .split('\n')
      .slice(-lines - 1)
      .join('\n');
  } catch {
    return `(no log at ${file})`;
  }
}

/** `gristlite serve` in one namespace, on its own data directory, which survives restarts. */
export class Worker {
  readonly url: string;
  readonly dataDir: string;
  readonly logFile: string;
  proc: ChildProcess | null = null;
  /** Starts, including restarts. */
  starts = 0;
  /** Exits this harness did not cause (kill9, wipeDisk): the worker ended itself or crashed. */
  unexpectedExits: {at: number; code: number | null; signal: string | null}[] = [];
  private expectExit = false;
  private stopped = false;

  constructor(
    readonly network: Network,
    readonly index: number,
    readonly env: Record<string, string>,
    readonly opts: WorkerOptions = {},
  ) {
    this.url = `http://${network.workerIp(index)}:${WORKER_PORT}`;
    this.dataDir = join(network.dir, `w${index}`, 'data');
    this.logFile = join(network.dir, `w${index}.log`);
    mkdirSync(this.dataDir, {recursive: true});
  }

  get pid(): number {
    if (!this.proc?.pid) throw new Error(`worker ${this.index} has no process`);
    return this.proc.pid;
  }

  get running(): boolean {
    return this.proc !== null && this.proc.exitCode === null && this.proc.signalCode === null;
  }

  /** SIGSTOPped and not yet continued. */
  get paused(): boolean {
    return this.stopped;
  }

  async start(): Promise<void> {
    if (this.running) throw new Error(`worker ${this.index} is already running`);
    const ns = this.network.namespace(this.index);
    const fd = openSync(this.logFile, 'a');
    writeSync(fd, `=== worker ${this.index} start #${this.starts + 1} ${new Date().toISOString()}\n`);
    const env = {
      ...process.env,
      ...this.env,
      GRISTLITE_DATA_DIR: this.dataDir,
      GRISTLITE_WORKER_URL: this.url,
      // Today's lease holder id: without it a worker on 0.0.0.0 would name itself http://0.0.0.0:8484.
      GRISTLITE_SELF_URL: this.env.GRISTLITE_SELF_URL ?? this.url,
    };
    const args = ['netns', 'exec', ns, process.execPath, GRISTLITE_BIN, 'serve'];
    args.push('--host', '0.0.0.0', '--port', String(WORKER_PORT), '--data', this.dataDir);
    const p = spawn('ip', args, {env, stdio: ['ignore', fd, fd]});
    closeSync(fd);
    this.proc = p;
    this.starts++;
    this.expectExit = false;
    this.stopped = false;
    p.once('exit', (code, signal) => {
      if (!this.expectExit && this.proc === p) this.unexpectedExits.push({at: Date.now(), code, signal});
    });
    await this.ready(this.opts.readyTimeoutMs ?? 20_000);
    // `ip netns exec` execs the command: the child's pid is node's, so signals reach gristlite itself.
    const exe = readlinkSync(`/proc/${p.pid}/exe`);
    if (exe !== realpathSync(process.execPath)) throw new Error(`worker ${this.index}: pid ${p.pid} runs ${exe}`);
    const inNs = ip('netns', 'identify', String(p.pid)).trim();
    if (inNs !== ns) throw new Error(`worker ${this.index}: pid ${p.pid} is in namespace "${inNs}", not ${ns}`);
  }

  /** Waits until /status?ready=1 answers 200; fails early with the log's tail if the process ends. */
  async ready(timeoutMs = 20_000): Promise<void> {
    const p = this.proc;
    if (!p) throw new Error(`worker ${this.index} was never started`);
    const deadline = Date.now() + timeoutMs;
    let last = '';
    while (Date.now() < deadline) {
      if (p.exitCode !== null || p.signalCode !== null)
        throw new Error(
          `worker ${this.index} exited (${p.exitCode ?? p.signalCode}) while starting:\n${this.logTail()}`,
        );
      try {
        const res = await fetch(`${this.url}/status?ready=1`, {signal: AbortSignal.timeout(1000)});
        await res.text();
        if (res.status === 200) return;
        last = `status ${res.status}`;
      } catch (e) {
        last = (e as Error).message;
      }
      await sleep(100);
    }
    throw new Error(`worker ${this.index} not ready in ${timeoutMs} ms (${last}):\n${this.logTail()}`);
  }

  /** kill -9, and wait for the process to be gone. */
  async kill9(): Promise<void> {
    if (!this.running) return;
    this.expectExit = true;
    const p = this.proc!;
    const exited = new Promise((r) => p.once('exit', r));
    p.kill('SIGKILL');
    await exited;
    this.stopped = false;
  }

  /** SIGSTOP: the process freezes with its connections open (a long GC pause, a stuck VM). */
  stop(): void {
    this.proc?.kill('SIGSTOP');
    this.stopped = true;
  }

  cont(): void {
    this.proc?.kill('SIGCONT');
    this.stopped = false;
  }

  /** Starts again on the same data directory (killing the old process first if it still runs). */
  async restart(): Promise<void> {
    await this.kill9();
    await this.start();
  }

  /** Empties the data directory, as a lost disk would; only while the worker is down. */
  wipeDisk(): void {
    if (this.running) throw new Error(`worker ${this.index}: wipeDisk while it runs`);
    if (!existsSync(this.dataDir)) return;
    for (const f of readdirSync(this.dataDir)) rmSync(join(this.dataDir, f), {recursive: true, force: true});
  }

  logTail(lines = 40): string {
    return tail(this.logFile, lines);
  }

  /** For cleanup (also from the exit handler): no waiting. */
  forceKill(): void {
    if (!this.running) return;
    this.expectExit = true;
    this.proc!.kill('SIGKILL');
  }
}
