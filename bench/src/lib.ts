/** Shared pieces of the benchmark suite: timing, data, reporting. */
import v8 from 'node:v8';
import vm from 'node:vm';
import {readFileSync} from 'node:fs';
import type Database from 'better-sqlite3';
import {Pool} from 'undici';

export interface Result {
  scenario: string;
  /** What is measured, e.g. "rows/s" or "req/s". */
  unit: string;
  rate: number;
  /** The physical limit measured in the same run, in the same unit (null when not applicable). */
  limit: number | null;
  /** rate / limit. */
  ratio: number | null;
  /** Target as text, e.g. ">= 0.5 of raw" or "p50 < 5 ms". */
  target: string;
  /** Whether the target holds in this run. */
  met: boolean;
  p50Ms?: number;
  p99Ms?: number;
  peakRssMb?: number;
  note?: string;
}

v8.setFlagsFromString('--expose-gc');
/** A full garbage collection now (the bench process exposes V8's gc to itself). */
export const gc = vm.runInNewContext('gc') as () => void;

export function now(): number {
  return performance.now();
}

/** Runs `fn` `n` times and returns per-call latencies in ms; `before` runs untimed before each call. */
export async function latencies(
  n: number,
  fn: () => Promise<unknown> | unknown,
  before?: () => Promise<unknown> | unknown,
): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    if (before) await before();
    const t = now();
    await fn();
    out.push(now() - t);
  }
  return out;
}

/**
 * Median ms of running `sqls` in one committed transaction on `db`, `runs` times; `undo` (untimed)
 * after each: the raw SQLite limit of a computation the engine makes.
 */
export function transactionMs(db: Database.Database, sqls: string[], undo: string[], runs = 3): number {
  const times: number[] = [];
  for (let run = 0; run < runs; run++) {
    const t = now();
    db.exec('BEGIN');
    for (const sql of sqls) db.exec(sql);
    db.exec('COMMIT');
    times.push(now() - t);
    for (const sql of undo) db.exec(sql);
  }
  return percentile(times, 50);
}

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** Deterministic rows of the five benchmark columns: Text, Int, Numeric, Bool, Date. */
export function makeRows(
  count: number,
  offset = 0,
): {Name: string; Qty: number; Price: number; Active: boolean; Day: number}[] {
  const rows = new Array(count);
  for (let i = 0; i < count; i++) {
    const n = i + offset;
    rows[i] = {
      Name: `name-${(n * 7919) % 1000003}`,
      Qty: n % 1000,
      Price: Math.round(((n * 31) % 100000) * 1.25) / 100,
      Active: n % 3 === 0,
      Day: 1_600_000_000 - (1_600_000_000 % 86400) + (n % 3650) * 86400,
    };
  }
  return rows;
}

export const COLUMNS = [
  {id: 'Name', fields: {type: 'Text'}},
  {id: 'Qty', fields: {type: 'Int'}},
  {id: 'Price', fields: {type: 'Numeric'}},
  {id: 'Active', fields: {type: 'Bool'}},
  {id: 'Day', fields: {type: 'Date'}},
];

/** CPU time (user + system) a process has used, in ms (Linux /proc; clock ticks of 10 ms). */
export function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** Peak resident set of a process (VmHWM), in MB; Linux only. */
export function peakRssMb(pid: number = process.pid): number | undefined {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

export function fmt(n: number | null | undefined, digits = 0): string {
  if (n === null || n === undefined || Number.isNaN(n)) return '-';
  return n.toLocaleString('en-US', {maximumFractionDigits: digits, minimumFractionDigits: digits});
}

export function printTable(results: Result[]): void {
  const rows = results.map((r) => [
    r.scenario,
    `${fmt(r.rate)} ${r.unit}`,
    r.limit === null ? '-' : `${fmt(r.limit)} ${r.unit}`,
    r.ratio === null ? '-' : fmt(r.ratio, 2),
    r.p50Ms === undefined ? '-' : fmt(r.p50Ms, 2),
    r.p99Ms === undefined ? '-' : fmt(r.p99Ms, 2),
    r.peakRssMb === undefined ? '-' : fmt(r.peakRssMb),
    r.target,
    r.met ? 'ok' : 'MISSED',
    r.note ?? '',
  ]);
  const head = ['scenario', 'rate', 'limit', 'ratio', 'p50 ms', 'p99 ms', 'peak MB', 'target', '', 'note'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i])).join('  ');
  console.log(line(head));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const r of rows) console.log(line(r));
}

/**
 * A client pool to one server whose kept-alive connections stay idle for at most 4 s, below the
 * server's keep-alive (65 s with configureServer, Node's default 5 s), whatever the server's
 * Keep-Alive hint says: the client, not the server, ends an idle connection.
 */
export function clientPool(url: string, connections: number): Pool {
  return new Pool(url, {connections, keepAliveTimeout: 4000, keepAliveMaxTimeout: 4000});
}

const IDEMPOTENT = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE']);

/**
 * `pool.request`, tried once more when an idempotent request met a kept-alive connection the
 * server closed as it was reused (undici: `other side closed`, or a reset). Seen once in CI under
 * load (issue 24 §5); a browser or curl retries the same way.
 */
export async function request(
  pool: Pool,
  opts: Parameters<Pool['request']>[0],
): Promise<Awaited<ReturnType<Pool['request']>>> {
  try {
    return await pool.request(opts);
  } catch (e) {
    const code = (e as {code?: string}).code;
    if (!IDEMPOTENT.has(opts.method) || (code !== 'UND_ERR_SOCKET' && code !== 'ECONNRESET')) throw e;
    return pool.request(opts);
  }
}
