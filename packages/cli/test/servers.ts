// `gristlite serve` as a child process, for tests that need real servers (restarts, kills,
// several processes), and a JSON call to one.
import {spawn, type ChildProcess} from 'node:child_process';
import {fileURLToPath} from 'node:url';
import pg from 'pg';
import {request} from 'undici';
import {underCi} from '@gristlite/core/testing';

export const MAIN = fileURLToPath(new URL('../src/main.js', import.meta.url));

export interface Served {
  url: string;
  proc: ChildProcess;
}

/** Starts `gristlite serve --port 0 ...args` on `dataDir` with `key` as its API key; resolves once it listens. */
export function serve(
  dataDir: string,
  key: string,
  opts: {args?: string[]; env?: Record<string, string>} = {},
): Promise<Served> {
  const proc = spawn(process.execPath, [MAIN, 'serve', '--port', '0', ...(opts.args ?? [])], {
    env: {...process.env, GRISTLITE_DATA_DIR: dataDir, GRISTLITE_API_KEY: key, ...opts.env},
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    proc.stdout!.on('data', (d) => {
      out += d;
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve({url: m[1], proc});
    });
    proc.once('exit', (code) => reject(new Error(`server exited (${code}): ${out}`)));
  });
}

/** One JSON request with `key`: status, headers and the parsed body (null when empty). */
export async function callApi(base: string, key: string, method: string, path: string, body?: unknown) {
  const res = await request(base + path, {
    method: method as 'GET',
    headers: {authorization: `Bearer ${key}`, ...(body !== undefined ? {'content-type': 'application/json'} : {})},
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.body.text();
  return {status: res.statusCode, headers: res.headers, json: text ? JSON.parse(text) : null};
}

/** PostgreSQL for the tests that need it (GRISTLITE_TEST_PG_URL). */
export const PG_URL = process.env.GRISTLITE_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** A home URL on a schema of its own (`?schema=` or `&schema=`). */
export const withSchema = (url: string, schema: string) => `${url}${url.includes('?') ? '&' : '?'}schema=${schema}`;

/**
 * Whether PostgreSQL answers at PG_URL. When it does not: prints `SKIPPED <what>: reason` and
 * returns false, except under CI, where it throws.
 */
export async function pgReachable(what: string): Promise<boolean> {
  const c = new pg.Client({connectionString: PG_URL, connectionTimeoutMillis: 3000});
  try {
    await c.connect();
    return true;
  } catch (e) {
    const reason = `${(e as Error).message} (set GRISTLITE_TEST_PG_URL)`;
    if (underCi()) throw new Error(`${what} cannot run under CI: ${reason}`);
    console.log(`SKIPPED ${what}: ${reason}`);
    return false;
  } finally {
    await c.end().catch(() => {});
  }
}
