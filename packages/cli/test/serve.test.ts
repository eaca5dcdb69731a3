// Issue 11 item 10, `gristlite serve` as an operator meets it: data files private, a key given in
// GRISTLITE_API_KEY never echoed, one clear line (no stack trace) when the port is taken.
import {spawn, spawnSync} from 'node:child_process';
import {existsSync, mkdtempSync, readdirSync, rmSync, statSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {fileURLToPath} from 'node:url';
import {test} from 'uvu';
import * as assert from 'uvu/assert';

const MAIN = fileURLToPath(new URL('../src/main.js', import.meta.url));

interface Run {
  out: string;
  err: string;
  code: number | null;
  port: number;
  stop(): Promise<void>;
}

/** Starts `gristlite serve`; resolves once it listens (or has exited). */
function serve(dataDir: string, env: Record<string, string> = {}, port = '0'): Promise<Run> {
  // Without what would make node print warnings of its own on stderr.
  const base = {...process.env};
  for (const k of ['GRISTLITE_API_KEY', 'FORCE_COLOR', 'NO_COLOR']) delete base[k];
  const proc = spawn(process.execPath, [MAIN, 'serve', '--port', port], {
    env: {...base, GRISTLITE_DATA_DIR: dataDir, ...env},
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const run: Run = {
    out: '',
    err: '',
    code: null,
    port: 0,
    async stop() {
      if (proc.exitCode !== null) return;
      proc.kill('SIGTERM');
      await new Promise((r) => proc.once('exit', r));
    },
  };
  proc.stderr!.on('data', (d) => (run.err += d));
  return new Promise((resolve) => {
    proc.stdout!.on('data', (d) => {
      run.out += d;
      const m = /listening on http:\/\/[^:]+:(\d+)/.exec(run.out);
      // The key line follows the listening line.
      if (m && /API key/.test(run.out)) {
        run.port = Number(m[1]);
        resolve(run);
      }
    });
    proc.once('exit', (code) => {
      run.code = code;
      resolve(run);
    });
  });
}

async function status(port: number, key: string): Promise<number> {
  return (await fetch(`http://127.0.0.1:${port}/api/orgs`, {headers: {Authorization: `Bearer ${key}`}})).status;
}

test('a key from GRISTLITE_API_KEY is not echoed; a generated one is, once; later starts say how to make one', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gl-serve-'));
  try {
    const key = 'my-own-secret-key-0123456789';
    const first = await serve(join(dir, 'a'), {GRISTLITE_API_KEY: key});
    await first.stop();
    assert.not.match(first.out + first.err, key);
    assert.match(first.out, 'API key for you@example.com: the one set in GRISTLITE_API_KEY');

    const generated = await serve(join(dir, 'b'));
    const printed = /API key for you@example.com: ([0-9a-f]{40})$/m.exec(generated.out)?.[1];
    assert.ok(printed, generated.out);
    assert.is(await status(generated.port, printed!), 200);
    await generated.stop();

    const again = await serve(join(dir, 'b'));
    await again.stop();
    assert.not.match(again.out, printed!);
    assert.match(again.out, 'gristlite user add you@example.com');
  } finally {
    rmSync(dir, {recursive: true, force: true});
  }
});

test('the data directory, home.sqlite3, documents and temporary files are private (0700 / 0600)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gl-serve-'));
  const data = join(dir, 'data');
  const key = 'k'.repeat(40);
  const run = await serve(data, {GRISTLITE_API_KEY: key});
  try {
    const base = `http://127.0.0.1:${run.port}`;
    const h = {Authorization: `Bearer ${key}`, 'Content-Type': 'application/json'};
    const wid = (await (await fetch(`${base}/api/orgs/docs/workspaces`, {headers: h})).json())[0].id;
    const docId = await (
      await fetch(`${base}/api/workspaces/${wid}/docs`, {method: 'POST', headers: h, body: '{"name":"A"}'})
    ).json();
    // An import goes through an upload file and the import's own temporary files.
    const form = new FormData();
    form.append('upload', new Blob(['name,qty\nbolts,4\n']), 'items.csv');
    const imported = await fetch(`${base}/api/workspaces/${wid}/import`, {
      method: 'POST',
      headers: {Authorization: h.Authorization},
      body: form,
    });
    assert.is(imported.status, 200);
    const {id: csvId} = await imported.json();
    await fetch(`${base}/api/docs/${docId}/apply`, {
      method: 'POST',
      headers: h,
      body: '[["AddRecord", "Table1", null, {"A": "x"}]]',
    });

    const mode = (p: string) => (statSync(p).mode & 0o777).toString(8);
    assert.is(mode(data), '700');
    assert.is(mode(join(data, 'docs')), '700');
    assert.is(mode(join(data, 'tmp')), '700');
    for (const f of readdirSync(data).filter((n) => n.startsWith('home.sqlite3')))
      assert.is(mode(join(data, f)), '600', f);
    const docs = readdirSync(join(data, 'docs'));
    assert.ok(docs.includes(`${docId}.grist`) && docs.includes(`${csvId}.grist`), docs.join());
    for (const f of docs) assert.is(mode(join(data, 'docs', f)), '600', f);
  } finally {
    await run.stop();
    rmSync(dir, {recursive: true, force: true});
  }
});

test('a second serve on a busy port prints one clear line, exits non-zero, creates nothing', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gl-serve-'));
  const first = await serve(join(dir, 'a'), {GRISTLITE_API_KEY: 'k'.repeat(40)});
  try {
    const second = await serve(join(dir, 'b'), {}, String(first.port));
    assert.is(second.code, 1);
    assert.is(second.out, '');
    assert.equal(second.err.trim().split('\n'), [
      `gristlite: port ${first.port} is already in use on 127.0.0.1 (another gristlite?): stop it or choose another port with --port or PORT`,
    ]);
    // Nothing was created: a first start cannot make (and lose) the default user's key.
    assert.is(existsSync(join(dir, 'b')), false);
  } finally {
    await first.stop();
    rmSync(dir, {recursive: true, force: true});
  }
});

test('a second serve on the same SQLite data directory stops with one line; tools still work beside the first', async () => {
  // Issue 37 §6: it started silently, and both processes served the same documents.
  const dir = mkdtempSync(join(tmpdir(), 'gl-serve-'));
  const data = join(dir, 'data');
  const key = 'k'.repeat(40);
  const first = await serve(data, {GRISTLITE_API_KEY: key});
  try {
    const second = await serve(data, {GRISTLITE_API_KEY: key});
    assert.is(second.code, 1);
    const lines = second.err.trim().split('\n');
    assert.is(lines.length, 1, second.err);
    assert.match(lines[0], `another gristlite process is serving the data directory ${data}`);
    assert.match(lines[0], 'GRISTLITE_HOME_URL');
    // The first still serves; a command-line tool on the same directory still works.
    assert.is(await status(first.port, key), 200);
    const tool = spawnSync(process.execPath, [MAIN, 'user', 'add', 'ada@example.com'], {
      env: {...process.env, GRISTLITE_DATA_DIR: data},
      encoding: 'utf8',
    });
    assert.is(tool.status, 0, tool.stderr);
    assert.match(tool.stdout, /^[0-9a-f]{40}$/m);
  } finally {
    await first.stop();
  }
  // Its end lets go of the directory.
  const third = await serve(data, {GRISTLITE_API_KEY: key});
  try {
    assert.is(await status(third.port, key), 200);
  } finally {
    await third.stop();
    rmSync(dir, {recursive: true, force: true});
  }
});

test('connection timeouts: the keep-alive announced is the setting; inconsistent settings stop the start', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gl-serve-'));
  const ok = await serve(join(dir, 'a'), {GRISTLITE_API_KEY: 'k'.repeat(40), GRISTLITE_KEEPALIVE_TIMEOUT_MSEC: '7000'});
  try {
    const res = await fetch(`http://127.0.0.1:${ok.port}/status`);
    await res.text();
    assert.is(res.headers.get('keep-alive'), 'timeout=7');
    const defaults = await serve(join(dir, 'b'), {GRISTLITE_API_KEY: 'k'.repeat(40)});
    try {
      const r = await fetch(`http://127.0.0.1:${defaults.port}/status`);
      await r.text();
      assert.is(r.headers.get('keep-alive'), 'timeout=65');
    } finally {
      await defaults.stop();
    }
    const bad = await serve(join(dir, 'c'), {
      GRISTLITE_KEEPALIVE_TIMEOUT_MSEC: '80000',
      GRISTLITE_HEADERS_TIMEOUT_MSEC: '60000',
    });
    assert.is(bad.code, 1);
    assert.match(bad.err, /headersTimeoutMs \(60000\) must be longer than keepAliveTimeoutMs \(80000\)/);
    assert.is(existsSync(join(dir, 'c')), false);
  } finally {
    await ok.stop();
    rmSync(dir, {recursive: true, force: true});
  }
});

test.run();
