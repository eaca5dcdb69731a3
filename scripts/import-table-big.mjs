// Measures a large import into an existing table (issue 42 §3) through HTTP: generates ROWS x 10
// columns of CSV, starts `gristlite serve`, makes a table of typed columns, then uploads the file
// to POST /api/docs/{doc}/tables/{t}/import (append, then upsert of the same file on a key, then a
// dry run), printing each one's time, the server's peak RSS, and the longest wait of a /status
// request sent every 50 ms meanwhile (how long the event loop was held).
// Usage (after pnpm build): node scripts/import-table-big.mjs [rows]
import {spawn, spawnSync} from 'node:child_process';
import {createWriteStream, mkdtempSync, readFileSync, rmSync, statSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {once} from 'node:events';

const ROWS = Number(process.argv[2] ?? 1_000_000);
const root = new URL('..', import.meta.url).pathname;
const MAIN = join(root, 'packages/cli/dist/src/main.js');
const dir = mkdtempSync(join(tmpdir(), 'gl-import-table-big-'));
const PORT = 18511;
const base = `http://127.0.0.1:${PORT}`;
const key = 'k'.repeat(40);
const auth = {Authorization: `Bearer ${key}`};

async function generate(path) {
  const out = createWriteStream(path);
  out.write('Name,City,Qty,Price,Ratio,Day,Flag,Code,Note,Score\n');
  for (let i = 1; i <= ROWS; i++) {
    const line = `name ${i},city ${i % 977},${i},${(i % 10000) / 100},${(i % 7) / 8},2024-0${1 + (i % 9)}-${10 + (i % 18)},${i % 2 ? 'true' : 'false'},C${i},note ${i % 13},${i * 3}\n`;
    if (!out.write(line)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
}

function peakRssMb(pid) {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

/** Runs `fn` while probing /status every 50 ms; returns its time and the longest probe. */
async function probed(fn) {
  let worst = 0;
  let stop = false;
  const probe = (async () => {
    while (!stop) {
      const t = performance.now();
      await fetch(`${base}/status`).then((r) => r.text());
      worst = Math.max(worst, performance.now() - t);
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  const t = performance.now();
  const out = await fn();
  const ms = performance.now() - t;
  stop = true;
  await probe;
  return {ms, worst, out};
}

function upload(csv, path, fields) {
  const args = ['-s', '-H', `Authorization: Bearer ${key}`, '-F', `upload=@${csv};type=text/csv`];
  for (const [k, v] of Object.entries(fields)) args.push('-F', `${k}=${v}`);
  args.push(`${base}${path}`);
  return new Promise((resolve, reject) => {
    const c = spawn('curl', args);
    let body = '';
    c.stdout.on('data', (d) => {
      body += d;
    });
    c.on('close', (code) => (code === 0 ? resolve(body) : reject(new Error(`curl ${code}`))));
  });
}

const csv = join(dir, 'big.csv');
const data = join(dir, 'data');
let server;
try {
  await generate(csv);
  console.log(`${ROWS} rows x 10 columns: ${(statSync(csv).size / 1e6).toFixed(1)} MB`);
  spawnSync(process.execPath, [MAIN, 'user', 'add', 'you@example.com', '--key', key], {
    env: {...process.env, GRISTLITE_DATA_DIR: data},
  });
  server = spawn(process.execPath, [MAIN, 'serve', '--port', String(PORT)], {
    env: {
      ...process.env,
      GRISTLITE_DATA_DIR: data,
      GRISTLITE_MAX_UPLOAD_BYTES: String(2e9),
      GRISTLITE_LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  for (let i = 0; ; i++) {
    const up = await fetch(`${base}/status`).then(
      () => true,
      () => false,
    );
    if (up) break;
    if (i > 150) throw new Error('the server did not start');
    await new Promise((r) => setTimeout(r, 100));
  }
  const wid = (await (await fetch(`${base}/api/orgs/docs/workspaces`, {headers: auth})).json())[0].id;
  const doc = await (
    await fetch(`${base}/api/workspaces/${wid}/docs`, {
      method: 'POST',
      headers: {...auth, 'Content-Type': 'application/json'},
      body: JSON.stringify({name: 'Big'}),
    })
  ).json();
  const cols = [
    ['Name', 'Text'],
    ['City', 'Text'],
    ['Qty', 'Int'],
    ['Price', 'Numeric'],
    ['Ratio', 'Numeric'],
    ['Day', 'Date'],
    ['Flag', 'Bool'],
    ['Code', 'Text'],
    ['Note', 'Text'],
    ['Score', 'Numeric'],
  ];
  await fetch(`${base}/api/docs/${doc}/tables`, {
    method: 'POST',
    headers: {...auth, 'Content-Type': 'application/json'},
    body: JSON.stringify({tables: [{id: 'Big', columns: cols.map(([id, type]) => ({id, fields: {type}}))}]}),
  });
  const path = `/api/docs/${doc}/tables/Big/import`;
  const base0 = peakRssMb(server.pid);
  for (const [label, fields] of [
    ['append', {}],
    ['upsert on Code (every row unchanged)', {mode: 'upsert', keys: 'Code'}],
    ['dry run of append', {dryRun: 'true'}],
  ]) {
    const r = await probed(() => upload(csv, path, fields));
    const body = JSON.parse(r.out);
    if (body.error) throw new Error(`${label}: ${body.error}`);
    console.log(
      `${label}: ${(r.ms / 1000).toFixed(1)} s; added ${body.added}, updated ${body.updated}, unchanged ${body.unchanged}; ` +
        `server peak RSS ${peakRssMb(server.pid).toFixed(0)} MB (at start ${base0.toFixed(0)} MB); longest /status wait ${r.worst.toFixed(0)} ms`,
    );
  }
} finally {
  server?.kill();
  rmSync(dir, {recursive: true, force: true});
}
