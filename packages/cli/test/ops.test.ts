// Issue 16, operators: every command's --help and argument checks, `docs list`, online `backup`,
// `key create`/`key revoke`, and a running `gristlite serve` seen from outside: /status, request
// log lines on stdout (never a key or a webhook secret), X-Request-Id and /metrics.
import {spawn, spawnSync} from 'node:child_process';
import {copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {fileURLToPath} from 'node:url';
import {test} from 'uvu';
import * as assert from 'uvu/assert';

const MAIN = fileURLToPath(new URL('../src/main.js', import.meta.url));
const VERSION = JSON.parse(readFileSync(fileURLToPath(new URL('../../package.json', import.meta.url)), 'utf8')).version;

function baseEnv(dir: string): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = {...process.env, GRISTLITE_DATA_DIR: dir, NODE_NO_WARNINGS: '1'};
  for (const k of ['GRISTLITE_API_KEY', 'GRISTLITE_HOME_URL', 'FORCE_COLOR', 'NO_COLOR', 'GRISTLITE_LOG_LEVEL'])
    delete env[k];
  return env;
}

function cli(dir: string, ...args: string[]) {
  const r = spawnSync(process.execPath, [MAIN, ...args], {env: baseEnv(dir), encoding: 'utf8'});
  return {status: r.status, stdout: r.stdout.trim(), stderr: r.stderr};
}

const COMMANDS = ['serve', 'user add', 'org add', 'import', 'docs list', 'backup', 'key create', 'key revoke'];

test('--help for every command exits 0; --version prints the version; no command is exit 2', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gl-cli-'));
  try {
    const top = cli(dir, '--help');
    assert.is(top.status, 0);
    for (const c of COMMANDS) assert.ok(top.stdout.includes(`gristlite ${c}`), c);
    for (const c of COMMANDS) {
      const r = cli(dir, ...c.split(' '), '--help');
      assert.is(r.status, 0, c);
      assert.ok(r.stdout.startsWith(`usage: gristlite ${c}`), r.stdout);
    }
    assert.is(cli(dir, 'key', '--help').status, 0);
    assert.equal(cli(dir, '--version'), {status: 0, stdout: VERSION, stderr: ''});
    const none = cli(dir);
    assert.is(none.status, 2);
    assert.match(none.stderr, /a command is required/);
    assert.not.ok(existsSync(join(dir, 'home.sqlite3')), 'help creates nothing');
  } finally {
    rmSync(dir, {recursive: true, force: true});
  }
});

test('bad arguments: a one-line reason and exit 2', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gl-cli-'));
  try {
    const cases: [string[], RegExp][] = [
      [['serve', '--port', 'abc'], /--port must be a port number \(0-65535\): abc/],
      [['serve', '--port', '70000'], /--port must be a port number/],
      [['serve', '--bogus'], /Unknown option '--bogus'/],
      [['serve', '--port', '8484', 'extra'], /serve takes no arguments, got 1/],
      [
        ['org', 'add', 'Acme', '--domain', 'acme', '--owner', 'not-an-email'],
        /--owner must be an email address: not-an-email/,
      ],
      [['org', 'add', 'Acme', '--owner', 'a@example.com'], /--domain is required/],
      [['user', 'add', 'nobody'], /EMAIL must be an email address: nobody/],
      [['user', 'add', 'a@example.com', 'b@example.com'], /user add takes 1 argument, got 2/],
      [['import', 'x.csv', '--workspace', 'two'], /--workspace must be a workspace id: two/],
      [['key', 'create', 'oops'], /EMAIL must be an email address/],
      [['key'], /key needs a subcommand: key create, key revoke/],
      [['backup', 'onlyone'], /backup takes DOC_ID and OUT/],
      [['frobnicate'], /unknown command: frobnicate/],
    ];
    const badEnv = spawnSync(process.execPath, [MAIN, 'serve'], {
      env: {...baseEnv(dir), PORT: 'http'},
      encoding: 'utf8',
    });
    assert.is(badEnv.status, 2);
    assert.match(badEnv.stderr, /PORT must be a port number \(0-65535\): http/);
    for (const [args, re] of cases) {
      const r = cli(dir, ...args);
      assert.is(r.status, 2, args.join(' '));
      assert.match(r.stderr, re);
      assert.ok(r.stderr.startsWith('gristlite: '), r.stderr);
    }
  } finally {
    rmSync(dir, {recursive: true, force: true});
  }
});

interface Server {
  port: number;
  key: string;
  out: () => string;
  stop(): Promise<void>;
}

function serve(dir: string, env: Record<string, string>): Promise<Server> {
  const proc = spawn(process.execPath, [MAIN, 'serve', '--port', '0'], {
    env: {...baseEnv(dir), ...env},
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  proc.stderr!.on('data', (d) => (err += d));
  return new Promise((resolve, reject) => {
    proc.stdout!.on('data', (d) => {
      out += d;
      const m = /listening on http:\/\/[^:]+:(\d+)[\s\S]*API key for \S+: ([0-9a-f]{40})/.exec(out);
      if (m) {
        resolve({
          port: Number(m[1]),
          key: m[2],
          out: () => out,
          async stop() {
            if (proc.exitCode !== null) return;
            proc.kill('SIGTERM');
            await new Promise((r) => proc.once('exit', r));
          },
        });
      }
    });
    proc.once('exit', (code) => reject(new Error(`serve exited ${code}: ${err}`)));
  });
}

test('a running server: /status, request lines without secrets, X-Request-Id, /metrics; docs list, online backup, keys', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gl-ops-'));
  const server = await serve(join(dir, 'data'), {GRISTLITE_METRICS: '1', ALLOWED_WEBHOOK_DOMAINS: '127.0.0.1:9'});
  const base = `http://127.0.0.1:${server.port}`;
  const call = async (
    method: string,
    path: string,
    body?: unknown,
    key = server.key,
    headers: Record<string, string> = {},
  ) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: {Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', ...headers},
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return {status: res.status, text: await res.text(), headers: res.headers};
  };
  try {
    // Health, as Grist answers it; no credentials needed (a wrong key is ignored).
    const alive = await fetch(`${base}/status`);
    assert.is(alive.status, 200);
    assert.is(await alive.text(), 'Grist server(home,docs,static) is alive.');
    assert.is(
      (await call('GET', '/status?db=1&ready=1', undefined, 'wrong-key')).text,
      'Grist server(home,docs,static) is alive (db ok, ready ok).',
    );

    // Some traffic, with the key and a webhook secret in places where they could leak.
    const ws = JSON.parse((await call('GET', '/api/orgs/docs/workspaces')).text)[0].id;
    const docId = JSON.parse((await call('POST', `/api/workspaces/${ws}/docs`, {name: 'Ledger'})).text);
    assert.is(
      (await call('POST', `/api/docs/${docId}/tables`, {tables: [{id: 'T', columns: [{id: 'A'}]}]})).status,
      200,
    );
    assert.is((await call('POST', `/api/docs/${docId}/tables/T/records`, {records: [{fields: {A: 'x'}}]})).status, 200);
    const hookSecret = 'whsec-0123456789abcdef-do-not-log';
    const hookAuth = 'Bearer hook-auth-token-do-not-log';
    const hook = await call('POST', `/api/docs/${docId}/webhooks`, {
      webhooks: [
        {
          fields: {
            url: `http://127.0.0.1:9/hook?token=${hookSecret}`,
            authorization: hookAuth,
            secret: hookSecret,
            eventTypes: ['add'],
            tableId: 'T',
          },
        },
      ],
    });
    assert.is(hook.status, 200, hook.text);
    assert.is((await call('GET', `/api/docs/${docId}/webhooks`)).status, 200);
    assert.is((await call('GET', `/api/orgs?auth=${server.key}&api_key=${server.key}`)).status, 200);
    const own = await call('GET', '/api/orgs', undefined, server.key, {'X-Request-Id': 'lb-trace-42'});
    assert.is(own.headers.get('x-request-id'), 'lb-trace-42');
    const made = (await call('GET', '/api/orgs')).headers.get('x-request-id');
    assert.match(made ?? '', /^[0-9a-f-]{36}$/);
    assert.is((await call('GET', '/api/orgs', undefined, 'bad-key')).status, 401);

    // /metrics: Prometheus text with the request counter by route pattern.
    const metrics = await fetch(`${base}/metrics`);
    assert.is(metrics.status, 200);
    const text = await metrics.text();
    assert.match(
      text,
      /gristlite_http_requests_total\{method="POST",route="\/api\/docs\/:docId\/tables\/:tableId\/records",status="200"\} 1/,
    );
    assert.match(text, /gristlite_http_request_duration_seconds_bucket\{le="0.005",method="GET",route="\/api\/orgs"\}/);
    assert.match(text, /gristlite_open_documents 1/);
    assert.match(text, /gristlite_sql_queue_size 0/);
    assert.match(text, /gristlite_sql_preemptions_total 0/);
    assert.match(text, /gristlite_webhook_queue_size \d/);
    assert.match(text, /gristlite_webhook_failures_total \d/);

    // docs list and an online backup, while the server holds the document open.
    const list = cli(join(dir, 'data'), 'docs', 'list');
    assert.is(list.status, 0, list.stderr);
    assert.match(
      list.stdout,
      new RegExp(
        `^ID\\s+NAME\\s+WORKSPACE\\s+ORG\\s+SIZE\\n${docId}\\s+Ledger\\s+${ws} Home\\s+personal \\d+\\s+\\d+$`,
      ),
    );
    const one = cli(join(dir, 'data'), 'backup', docId, join(dir, 'one.grist'));
    assert.is(one.status, 0, one.stderr);
    assert.is(readFileSync(join(dir, 'one.grist')).subarray(0, 15).toString(), 'SQLite format 3');
    const all = cli(join(dir, 'data'), 'backup', '--all', join(dir, 'bk'));
    assert.is(all.status, 0, all.stderr);
    assert.equal(readdirSync(join(dir, 'bk', 'docs')), [`${docId}.grist`]);
    // The backup is a data directory: another gristlite reads the document and its rows from it.
    const restored = join(dir, 'restored');
    mkdirSync(join(restored, 'docs'), {recursive: true});
    copyFileSync(join(dir, 'bk', 'home.sqlite3'), join(restored, 'home.sqlite3'));
    copyFileSync(join(dir, 'bk', 'docs', `${docId}.grist`), join(restored, 'docs', `${docId}.grist`));
    assert.match(cli(restored, 'docs', 'list').stdout, new RegExp(`${docId}\\s+Ledger`));
    assert.is(cli(dir, 'backup', 'nosuchdoc', join(dir, 'x.grist')).status, 1);

    // key create: a new key works, the old one stops; key revoke: none works.
    const created = cli(join(dir, 'data'), 'key', 'create', 'you@example.com');
    assert.is(created.status, 0, created.stderr);
    assert.match(created.stdout, /^[0-9a-f]{40}$/);
    assert.is((await call('GET', '/api/orgs', undefined, created.stdout)).status, 200);
    assert.is((await call('GET', '/api/orgs')).status, 401);
    assert.is(cli(join(dir, 'data'), 'key', 'revoke', 'you@example.com').status, 0);
    assert.is((await call('GET', '/api/orgs', undefined, created.stdout)).status, 401);
    assert.is(cli(join(dir, 'data'), 'key', 'create', 'nobody@example.com').status, 1);

    // The request lines: one JSON object per request, no key, no webhook secret.
    await new Promise((r) => setTimeout(r, 200));
    const out = server.out();
    const lines = out
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l));
    const reqs = lines.filter((l) => l.msg === 'request');
    assert.ok(reqs.length >= 15, String(reqs.length));
    const post = reqs.find((l) => l.method === 'POST' && l.url === `/api/docs/${docId}/tables/T/records`);
    assert.ok(post, 'the records POST is logged');
    assert.is(post.status, 200);
    assert.is(typeof post.ms, 'number');
    assert.is(post.docId, docId);
    assert.is(typeof post.userId, 'number');
    assert.match(post.reqId, /^[0-9a-f-]{36}$/);
    assert.is(post.level, 30);
    assert.ok(reqs.some((l) => l.reqId === 'lb-trace-42'));
    assert.ok(
      reqs.some((l) => l.url === '/api/orgs?auth=[redacted]&api_key=[redacted]'),
      'secret query values are redacted',
    );
    for (const secret of [created.stdout, hookSecret, 'hook-auth-token-do-not-log']) {
      assert.not.ok(out.includes(secret), `a secret appears in the log: ${secret.slice(0, 8)}...`);
    }
    // The first start prints its generated key once, on the announce line only.
    assert.is(out.split(server.key).length, 2);
  } finally {
    await server.stop();
    rmSync(dir, {recursive: true, force: true});
  }
});

test.run();
