// Measures a large CSV import: generates ROWS x 10 columns in a temp dir, then imports it in a
// child process through `gristlite import` (CLI) or through HTTP (`POST /api/docs` upload), and
// prints time and the child's peak RSS. Usage: node scripts/import-big.mjs [rows] [cli|http|both]
import {spawn, spawnSync} from 'node:child_process';
import {createWriteStream, mkdtempSync, rmSync, statSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {once} from 'node:events';

const ROWS = Number(process.argv[2] ?? 1_000_000);
const MODE = process.argv[3] ?? 'both';
const root = new URL('..', import.meta.url).pathname;
const MAIN = join(root, 'packages/cli/dist/src/main.js');
const dir = mkdtempSync(join(tmpdir(), 'gl-import-big-'));

/** A CSV of ROWS rows: text, integers, decimals, dates, booleans. */
async function generate(path) {
  const out = createWriteStream(path);
  out.write('name,city,qty,price,ratio,day,flag,code,note,score\n');
  for (let i = 1; i <= ROWS; i++) {
    const line = `name ${i},city ${i % 977},${i},${(i % 10000) / 100},${(i % 7) / 8},2024-0${1 + (i % 9)}-${10 + (i % 18)},${i % 2 ? 'true' : 'false'},C${i % 100000},note ${i % 13},${i * 3}\n`;
    if (!out.write(line)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
}

/** Runs a node child under /usr/bin/time when present (peak RSS), else reports its own. */
function timed(args, env) {
  const t = performance.now();
  const r = spawnSync('/usr/bin/time', ['-f', '%M', process.execPath, ...args], {
    env: {...process.env, ...env},
    encoding: 'utf8',
  });
  const ms = performance.now() - t;
  const rssKb = Number(r.stderr.trim().split('\n').pop());
  return {ms, rssMb: rssKb / 1024, stdout: r.stdout.trim(), stderr: r.stderr, status: r.status};
}

const csv = join(dir, 'big.csv');
try {
  await generate(csv);
  console.log(`${ROWS} rows x 10 columns: ${(statSync(csv).size / 1e6).toFixed(1)} MB`);
  const data = join(dir, 'data');
  spawnSync(process.execPath, [MAIN, 'user', 'add', 'you@example.com', '--key', 'k'.repeat(40)], {
    env: {...process.env, GRISTLITE_DATA_DIR: data},
  });
  if (MODE !== 'http') {
    const r = timed([MAIN, 'import', csv], {GRISTLITE_DATA_DIR: data});
    if (r.status !== 0) throw new Error(`gristlite import failed: ${r.stderr}`);
    const lastProgress = r.stderr.split('\r').filter(Boolean).slice(-1)[0]?.split('\n')[0];
    console.log(
      `gristlite import: ${(r.ms / 1000).toFixed(1)} s, peak RSS ${r.rssMb.toFixed(0)} MB; doc ${r.stdout}; last progress "${lastProgress}"`,
    );
  }
  if (MODE !== 'cli') {
    const server = spawn(process.execPath, [MAIN, 'serve', '--port', '18499'], {
      env: {...process.env, GRISTLITE_DATA_DIR: data, GRISTLITE_MAX_UPLOAD_BYTES: String(2e9)},
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let err = '';
    server.stderr.on('data', (d) => {
      err += d;
    });
    await new Promise((r) => setTimeout(r, 1500));
    const key = 'k'.repeat(40);
    const wsRes = await fetch('http://127.0.0.1:18499/api/orgs/docs/workspaces', {
      headers: {Authorization: `Bearer ${key}`},
    });
    const wid = (await wsRes.json())[0].id;
    const t = performance.now();
    const curl = spawnSync(
      'curl',
      [
        '-s',
        '-H',
        `Authorization: Bearer ${key}`,
        '-F',
        `upload=@${csv}`,
        '-F',
        `workspaceId=${wid}`,
        'http://127.0.0.1:18499/api/docs',
      ],
      {encoding: 'utf8'},
    );
    const ms = performance.now() - t;
    // VmHWM: the server's peak resident set size (Linux).
    const status = spawnSync('cat', [`/proc/${server.pid}/status`], {encoding: 'utf8'}).stdout;
    const rssMb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1]) / 1024;
    server.kill('SIGTERM');
    await once(server, 'exit');
    if (!curl.stdout.startsWith('"')) console.log(err);
    console.log(
      `HTTP POST /api/docs: ${(ms / 1000).toFixed(1)} s, server peak RSS ${rssMb.toFixed(0)} MB; answer ${curl.stdout.slice(0, 200)}`,
    );
  }
} finally {
  rmSync(dir, {recursive: true, force: true});
}
