/**
 * CPU quotas for child processes (issue 43 §3): one cgroup per process, with the cgroup v1 `cpu`
 * controller (`cpu.cfs_quota_us`) or cgroup v2 (`cpu.max`), whichever has the controller here.
 * Groups are named `gristlite-bench-<pid>-<name>` and removed when the process exits, on SIGINT or
 * SIGTERM too; groups left by a bench process that was killed -9 are removed by the next one.
 */
import {existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync} from 'node:fs';
import {join} from 'node:path';

const PREFIX = 'gristlite-bench-';
/** The scheduler period: the kernel's default (100 ms); a quota is a share of it. */
const PERIOD_US = 100_000;

export interface Throttling {
  /** Scheduler periods in which the group ran. */
  periods: number;
  /** Periods in which it used its whole quota and was stopped until the next one. */
  throttled: number;
  /** Time its processes waited, runnable, for a new period. */
  throttledMs: number;
}

export interface CpuGroup {
  readonly name: string;
  readonly dir: string;
  /** `sh -c` arguments that move the shell into the group, then exec `command` (same pid). */
  wrap(command: string, args: string[]): {command: string; args: string[]};
  stat(): Throttling;
  /** Moves this process (all its threads) into the group; `remove` moves it back. */
  enter(): void;
  /** Empties nothing: the group must be empty (its processes exited); retries while they are dying. */
  remove(): void;
}

export interface CpuController {
  version: 1 | 2;
  root: string;
}

/** Where a group with a CPU quota can be made here, or why not. */
export function cpuController(): CpuController | {skip: string} {
  if (process.platform !== 'linux') return {skip: `not Linux (${process.platform})`};
  if (process.getuid?.() !== 0) return {skip: 'not root (a cgroup needs root)'};
  let mounts: string;
  try {
    mounts = readFileSync('/proc/self/mountinfo', 'utf8');
  } catch (e) {
    return {skip: `no /proc/self/mountinfo (${(e as Error).message})`};
  }
  let v2: string | undefined;
  for (const line of mounts.split('\n')) {
    // mountinfo: ... <mount point> <options> ... - <fs type> <source> <super options>
    const [left, right] = line.split(' - ');
    if (!right) continue;
    const point = left.split(' ')[4];
    const [fsType, , superOpts] = right.split(' ');
    if (fsType === 'cgroup' && superOpts?.split(',').includes('cpu')) return {version: 1, root: point};
    if (fsType === 'cgroup2') v2 = point;
  }
  if (v2) {
    const controllers = readFileSync(join(v2, 'cgroup.controllers'), 'utf8').split(/\s+/);
    if (controllers.includes('cpu')) return {version: 2, root: v2};
    return {skip: `cgroup2 at ${v2} has no cpu controller, and no cgroup v1 cpu hierarchy is mounted`};
  }
  return {skip: 'no cgroup v1 cpu controller nor cgroup2 mounted'};
}

const live = new Map<string, CpuGroup>();
let handlersInstalled = false;

/** Removes every group this process made that is still there (kill their processes first). */
export function removeAllGroups(): void {
  for (const g of [...live.values()]) {
    try {
      g.remove();
    } catch {}
  }
}

function installHandlers(): void {
  if (handlersInstalled) return;
  handlersInstalled = true;
  process.once('exit', removeAllGroups);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      // Children in the groups get the terminal's SIGINT too; SIGKILL makes sure they are gone.
      for (const g of live.values()) for (const pid of pidsOf(g.dir)) if (pid !== process.pid) killQuietly(pid);
      removeAllGroups();
      process.exit(signal === 'SIGINT' ? 130 : 143);
    });
  }
}

function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {}
}

function pidsOf(dir: string): number[] {
  try {
    return readFileSync(join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

const pause = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

function rmdirRetrying(dir: string): void {
  // A process killed a moment ago may still be leaving the group (EBUSY) until it is reaped.
  for (let i = 0; ; i++) {
    try {
      rmdirSync(dir);
      return;
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return;
      if (code !== 'EBUSY' || i >= 50) throw e;
      pause(20);
    }
  }
}

/** Removes groups of bench processes that no longer exist (killed -9 before they could). */
function sweepStale(root: string): void {
  for (const name of readdirSync(root)) {
    const m = new RegExp(`^${PREFIX}(\\d+)-`).exec(name);
    if (!m || alive(Number(m[1]))) continue;
    const dir = join(root, name);
    for (const pid of pidsOf(dir)) killQuietly(pid);
    try {
      rmdirRetrying(dir);
    } catch {}
  }
}

/** The group this process is in now, under the controller's hierarchy (/proc/self/cgroup). */
function ownGroup(ctl: CpuController): string {
  for (const line of readFileSync('/proc/self/cgroup', 'utf8').split('\n')) {
    const [, controllers, path] = line.split(':');
    if (path === undefined) continue;
    if (ctl.version === 2 ? controllers === '' : controllers.split(',').includes('cpu')) return join(ctl.root, path);
  }
  return ctl.root;
}

/**
 * A new group limited to `cores` of CPU (0.4: 40 ms in every 100 ms period; null: no limit).
 * Its weight against other processes is `weight` times a plain process's (cpu.shares 1024 in v1,
 * cpu.weight 100 in v2), so that the quota is what it gets on a busy machine too, not only at most.
 */
export function createCpuGroup(ctl: CpuController, name: string, cores: number | null, weight = 1): CpuGroup {
  if (cores !== null && !(cores > 0)) throw new Error(`a CPU quota must be above 0 (got ${cores})`);
  installHandlers();
  sweepStale(ctl.root);
  if (ctl.version === 2) {
    // Children of the root get the cpu controller only when the root hands it down.
    const control = join(ctl.root, 'cgroup.subtree_control');
    if (!readFileSync(control, 'utf8').split(/\s+/).includes('cpu')) writeFileSync(control, '+cpu');
  }
  const dir = join(ctl.root, `${PREFIX}${process.pid}-${name}`);
  if (existsSync(dir)) throw new Error(`cgroup ${dir} exists already`);
  mkdirSync(dir);
  const quotaUs = cores === null ? -1 : Math.round(cores * PERIOD_US);
  let returnTo: string | undefined;
  const group: CpuGroup = {
    name,
    dir,
    wrap(command, args) {
      // $0 is the group's process list: the shell moves itself in, then becomes the command.
      return {
        command: '/bin/sh',
        args: ['-c', 'echo $$ > "$0" && exec "$@"', join(dir, 'cgroup.procs'), command, ...args],
      };
    },
    stat() {
      const fields = new Map(
        readFileSync(join(dir, 'cpu.stat'), 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => {
            const [k, v] = l.split(' ');
            return [k, Number(v)] as const;
          }),
      );
      return {
        periods: fields.get('nr_periods') ?? 0,
        throttled: fields.get('nr_throttled') ?? 0,
        throttledMs:
          ctl.version === 1 ? (fields.get('throttled_time') ?? 0) / 1e6 : (fields.get('throttled_usec') ?? 0) / 1e3,
      };
    },
    enter() {
      returnTo ??= ownGroup(ctl);
      writeFileSync(join(dir, 'cgroup.procs'), String(process.pid));
    },
    remove() {
      if (returnTo) writeFileSync(join(returnTo, 'cgroup.procs'), String(process.pid));
      returnTo = undefined;
      rmdirRetrying(dir);
      live.delete(dir);
    },
  };
  live.set(dir, group);
  try {
    if (ctl.version === 1) {
      writeFileSync(join(dir, 'cpu.cfs_period_us'), String(PERIOD_US));
      writeFileSync(join(dir, 'cpu.cfs_quota_us'), String(quotaUs));
      writeFileSync(join(dir, 'cpu.shares'), String(Math.round(1024 * weight)));
      // A burst would let a group run past its quota on time saved earlier.
      if (existsSync(join(dir, 'cpu.cfs_burst_us'))) writeFileSync(join(dir, 'cpu.cfs_burst_us'), '0');
    } else {
      writeFileSync(join(dir, 'cpu.max'), `${cores === null ? 'max' : quotaUs} ${PERIOD_US}`);
      writeFileSync(join(dir, 'cpu.weight'), String(Math.min(10_000, Math.round(100 * weight))));
    }
  } catch (e) {
    group.remove();
    throw e;
  }
  return group;
}

/** The difference of two readings of `stat()`. */
export function throttlingSince(before: Throttling, after: Throttling): Throttling {
  return {
    periods: after.periods - before.periods,
    throttled: after.throttled - before.throttled,
    throttledMs: after.throttledMs - before.throttledMs,
  };
}
