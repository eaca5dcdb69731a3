// Issue 11 item 1, through each adapter served in its own process (`gristlite serve` for the
// Node adapter, the fetch and itty example servers): no upload, however truncated, cut off or
// large, ends the process, logs an error, grows its memory or leaves files behind; uploads by
// callers who may not make them are answered before being read.
import {spawn, type ChildProcess} from 'node:child_process';
import {existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {fileURLToPath} from 'node:url';
import {suite} from 'uvu';
import * as assert from 'uvu/assert';
import {FORM_END, MULTIPART, fieldPart, filePartHead, rawRequest} from './rawhttp.js';

const MAIN = fileURLToPath(new URL('../src/main.js', import.meta.url));
const ROOT = new URL('../../../../', import.meta.url);

/** How each adapter is started (the example servers take the settings of `gristlite serve`). */
const TARGETS: {name: string; args: string[]}[] = [
  {name: 'node adapter (gristlite serve)', args: [MAIN, 'serve']},
  {name: 'fetch adapter', args: [fileURLToPath(new URL('adapters/fetch/dist/examples/server.js', ROOT))]},
  {name: 'itty adapter', args: [fileURLToPath(new URL('adapters/itty/dist/examples/server.js', ROOT))]},
];
const KEY = 'u'.repeat(40);
const MB = 1024 * 1024;

interface Server {
  proc: ChildProcess;
  port: number;
  dir: string;
  stderr: () => string;
}

/** The environment less what makes node print warnings of its own on stderr. */
function quietEnv(): Record<string, string | undefined> {
  const env = {...process.env};
  delete env.FORCE_COLOR;
  delete env.NO_COLOR;
  return env;
}

async function start(args: string[], env: Record<string, string> = {}): Promise<Server> {
  const dir = mkdtempSync(join(tmpdir(), 'gl-cli-up-'));
  const proc = spawn(process.execPath, args, {
    env: {...quietEnv(), GRISTLITE_DATA_DIR: join(dir, 'data'), GRISTLITE_API_KEY: KEY, PORT: '0', ...env},
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  proc.stderr!.on('data', (d) => (err += d));
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    proc.stdout!.on('data', (d) => {
      out += d;
      const m = /listening on http:\/\/[^:]+:(\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    proc.once('exit', (code) => reject(new Error(`server exited (${code}): ${out}${err}`)));
  });
  return {proc, port, dir, stderr: () => err};
}

async function stop(s: Server): Promise<void> {
  if (s.proc.exitCode === null) {
    s.proc.kill('SIGTERM');
    await new Promise((r) => s.proc.once('exit', r));
  }
  rmSync(s.dir, {recursive: true, force: true});
}

async function api(s: Server, method: string, path: string, body?: unknown): Promise<{status: number; json: any}> {
  const res = await fetch(`http://127.0.0.1:${s.port}${path}`, {
    method,
    headers: {Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json'},
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return {status: res.status, json: await res.json()};
}

function rssMB(pid: number): number {
  const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]);
  return Math.round(kb / 1024);
}

/** The process's peak RSS so far (VmHWM): a body buffered and freed again still shows here. */
function peakMB(pid: number): number {
  const kb = Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]);
  return Math.round(kb / 1024);
}

function uploadDirs(s: Server): string[] {
  const tmp = join(s.dir, 'data', 'tmp');
  return existsSync(tmp) ? readdirSync(tmp).filter((n) => n.startsWith('upload-')) : [];
}

async function eventually(what: string, cond: () => boolean, ms = 5000): Promise<void> {
  const until = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const AUTH = {Authorization: `Bearer ${KEY}`};
const XHR = {'X-Requested-With': 'XMLHttpRequest'};

for (const target of TARGETS) {
  const s = suite(`uploads: ${target.name}`);
  let srv: Server;
  let wid = 0;
  let doc = '';
  let routes: string[] = [];

  s.before(async () => {
    srv = await start(target.args, {GRISTLITE_MAX_UPLOAD_BYTES: String(4 * MB)});
    wid = (await api(srv, 'GET', '/api/orgs/docs/workspaces')).json[0].id;
    doc = (await api(srv, 'POST', `/api/workspaces/${wid}/docs`, {name: 'D'})).json;
    routes = ['/api/docs', `/api/workspaces/${wid}/import`, `/api/docs/${doc}/attachments`];
  });

  // The checks after each test are part of it, not an `after.each` hook: uvu 0.5 swallows an
  // error thrown by a hook (no message, and exit 0 when this file runs alone).
  const t = (name: string, fn: () => Promise<void>) =>
    s(name, async () => {
      await fn();
      assert.is(srv.proc.exitCode, null, `the server is running (stderr: ${srv.stderr()})`);
      assert.is((await api(srv, 'GET', '/api/orgs')).status, 200, 'the server answers');
      await eventually('temporary uploads to be removed', () => uploadDirs(srv).length === 0);
    });

  s.after(async () => {
    await stop(srv);
  });

  t('the truncated multipart body of the report answers 400, keyed or not, on every upload route', async () => {
    const truncated = Buffer.from('--B\r\nContent-Disposition: form-data; name="upload"; filename="a.csv"\r\n\r\nx');
    const ct = {'Content-Type': 'multipart/form-data; boundary=B'};
    const anon = await rawRequest(srv.port, {path: '/api/docs', headers: {...ct, ...XHR}, head: truncated});
    assert.equal([anon.status, JSON.parse(anon.body)], [401, {error: 'user not authorized'}]);
    for (const path of routes) {
      const res = await rawRequest(srv.port, {path, headers: {...ct, ...AUTH}, head: truncated});
      assert.equal([res.status, JSON.parse(res.body)], [400, {error: 'stream ended unexpectedly'}], path);
    }
  });

  t('a client that disconnects mid-upload: the server lives on, its temporary file goes', async () => {
    for (const path of routes) {
      const head =
        path === '/api/docs' ? Buffer.concat([fieldPart('workspaceId', String(wid)), filePartHead()]) : filePartHead();
      let modes: number[] = [];
      const res = await rawRequest(srv.port, {
        path,
        headers: {...MULTIPART, ...AUTH},
        head,
        fill: 3 * MB,
        tail: FORM_END,
        disconnectAfter: MB,
        beforeDisconnect: async () => {
          // The upload is on disk while it streams, in a private directory and file.
          await eventually(
            'the upload to reach the disk',
            () =>
              uploadDirs(srv).length === 1 &&
              readdirSync(join(srv.dir, 'data', 'tmp', uploadDirs(srv)[0])).length === 1,
          );
          const d = join(srv.dir, 'data', 'tmp', uploadDirs(srv)[0]);
          modes = [statSync(d).mode & 0o777, statSync(join(d, readdirSync(d)[0])).mode & 0o777];
        },
      });
      assert.is(res.status, null, 'no answer: the client left');
      assert.equal(modes, [0o700, 0o600], path);
      await eventually('the upload to be removed', () => uploadDirs(srv).length === 0);
    }
    // A chunked upload and a JSON body cut off the same way.
    await rawRequest(srv.port, {
      path: routes[2],
      headers: {...MULTIPART, ...AUTH},
      head: filePartHead(),
      fill: 2 * MB,
      chunked: true,
      disconnectAfter: MB,
    });
    await rawRequest(srv.port, {
      path: `/api/docs/${doc}/apply`,
      headers: {'Content-Type': 'application/json', ...AUTH},
      head: Buffer.from('[["AddRecord", "Table1", null, {"A": "'),
      fill: 500_000,
      disconnectAfter: 200_000,
    });
  });

  t('over GRISTLITE_MAX_UPLOAD_BYTES: 413 at once for a declared length, at the limit for a chunked body', async () => {
    // The memory of this server, which takes these uploads (checked at the end of this test).
    const rssBefore = rssMB(srv.proc.pid!);
    for (const path of routes) {
      const res = await rawRequest(srv.port, {
        path,
        headers: {...MULTIPART, ...AUTH},
        head: filePartHead(),
        fill: 50 * MB,
        tail: FORM_END,
      });
      assert.equal([res.status, JSON.parse(res.body)], [413, {error: 'Attachments must not exceed 4.0MB'}], path);
      assert.is(res.headers.connection, 'close');
      // The answer comes before the 50 MB body ends. How much the client pushed first depends on the
      // machine's load (socket buffers, the drain after a refusal); memory is checked below.
      assert.ok(res.sent < 45 * MB, `${path}: the body was not read (${res.sent} bytes sent before the answer)`);
    }
    for (const path of routes) {
      const head =
        path === '/api/docs' ? Buffer.concat([fieldPart('workspaceId', String(wid)), filePartHead()]) : filePartHead();
      const res = await rawRequest(srv.port, {
        path,
        headers: {...MULTIPART, ...AUTH},
        head,
        fill: 100 * MB,
        tail: FORM_END,
        chunked: true,
      });
      assert.equal([res.status, JSON.parse(res.body)], [413, {error: 'Attachments must not exceed 4.0MB'}], path);
      assert.is(res.headers.connection, 'close');
      // The answer comes long before the 100 MB body ends (the margin is wide: on a loaded machine
      // the client keeps sending into socket buffers and the post-refusal drain before it sees it;
      // 53 MB were seen beside a second full test run, against 4 MB read).
      assert.ok(res.sent < 80 * MB, `${path}: reading stopped at the limit (${res.sent} bytes sent before the answer)`);
    }
    const json = await rawRequest(srv.port, {
      path: `/api/docs/${doc}/apply`,
      headers: {'Content-Type': 'application/json', ...AUTH},
      fill: 50 * MB,
    });
    assert.equal([json.status, json.headers.connection], [413, 'close']);
    // Several hundred MB of refused bodies went by unread: the peak stays far below one of them.
    const peak = peakMB(srv.proc.pid!);
    console.log(`  ${target.name}: RSS ${rssBefore} MB before seven refused 50-100 MB bodies, peak ${peak} MB`);
    assert.ok(peak - rssBefore < 40, `peak RSS ${peak} MB, ${rssBefore} MB before: a refused body was held`);
  });

  t('four anonymous 90 MB uploads are answered unread: memory does not grow', async () => {
    const big = await start(target.args); // the default limit, 100 MB
    try {
      const rssBefore = rssMB(big.proc.pid!);
      const cases: [string, Record<string, string>, number][] = [
        ['/api/docs', XHR, 401],
        ['/api/docs', {}, 401],
        [`/api/workspaces/${wid}/import`, XHR, 403],
        [`/api/docs/${doc}/attachments`, XHR, 404], // another server: no such document
      ];
      for (const [path, headers, status] of cases) {
        const res = await rawRequest(big.port, {
          path,
          headers: {...MULTIPART, ...headers},
          head: filePartHead(),
          fill: 90 * MB,
          tail: FORM_END,
        });
        assert.is(res.status, status, path);
        assert.ok(res.sent < 80 * MB, `${path}: answered while the client was still sending (${res.sent} bytes sent)`);
      }
      // The peak of the server that took them: one buffered 90 MB body would show.
      const peak = peakMB(big.proc.pid!);
      console.log(
        `  ${target.name}: RSS of the server around four anonymous 90 MB uploads: ${rssBefore} MB before, peak ${peak} MB`,
      );
      assert.ok(peak - rssBefore < 60, `peak RSS ${peak} MB, ${rssBefore} MB before`);
      assert.equal(uploadDirs(big), []);
      assert.is(big.stderr(), '');
    } finally {
      await stop(big);
    }
  });

  // Client aborts and refused uploads are not "unexpected errors": nothing was logged.
  s('nothing was logged on stderr', () => {
    assert.is(srv.stderr(), '');
  });

  s.run();
}
