#!/usr/bin/env node
// Runs Grist's REST tests (grist-core test/server/lib/docapi) against gristlite, one mocha process
// per file, and prints the per-file table (docs/grist-docapi.md says how to prepare the checkout):
//   node scripts/grist-docapi/run.mjs --grist DIR --grist-node NODE [--out DIR] [--only DocApiSql,...]
// --grist is a grist-core checkout whose tests are compiled (into _build) with this folder's
// extraScenarios.ts and extraServerModes.ts in place of its own; --grist-node the Node it wants.
// Each file's mocha report (json-stream) goes to --out (default: a new folder under the system's temp dir).
import {spawnSync} from 'node:child_process';
import {existsSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync} from 'node:fs';
import {createRequire} from 'node:module';
import {tmpdir} from 'node:os';
import {dirname, join, resolve} from 'node:path';
import {fileURLToPath} from 'node:url';
import {parseArgs} from 'node:util';
import {readReport, table} from './summary.mjs';

const {values} = parseArgs({
  options: {
    grist: {type: 'string'},
    'grist-node': {type: 'string'},
    out: {type: 'string'},
    only: {type: 'string'},
    timeout: {type: 'string'},
  },
});
if (!values.grist || !values['grist-node']) {
  console.error('usage: run.mjs --grist DIR --grist-node NODE [--out DIR] [--only DocApiSql,...] [--timeout MIN]');
  process.exit(2);
}
const grist = resolve(values.grist);
const testDir = join(grist, '_build/test/server/lib/docapi');
if (!existsSync(join(testDir, 'extraServerModes.js'))) {
  console.error(`${testDir} has no compiled tests: build the checkout's tests first (docs/grist-docapi.md)`);
  process.exit(2);
}
const repo = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
// gristlite runs with this Node: its native SQLite module must load here (a Node of another ABI,
// such as Grist's, fails every scenario's seeding).
try {
  const Database = createRequire(join(repo, 'packages/core/package.json'))('better-sqlite3');
  new Database(':memory:').close();
} catch (e) {
  console.error(`run this with the Node gristlite was installed with: ${e.message.split('\n')[0]}`);
  process.exit(2);
}
const out = values.out ? resolve(values.out) : mkdtempSync(join(tmpdir(), 'grist-docapi-'));
mkdirSync(out, {recursive: true});
const only = values.only?.split(',');
const files = readdirSync(testDir)
  .filter((f) => /^DocApi\w*\.js$/.test(f))
  .map((f) => f.slice(0, -3))
  .filter((f) => !only || only.includes(f))
  .sort();
// A file that hangs is stopped; its report is then missing and the table says so.
const timeoutMs = Number(values.timeout ?? 20) * 60_000;

const reports = [];
for (const name of files) {
  const report = join(out, `${name}.jsonl`);
  const started = Date.now();
  // test_env.sh sets what Grist's own test runs set (GRIST_IN_SERVICE, the support user's key, ...).
  const r = spawnSync(
    join(grist, 'test/test_env.sh'),
    [
      values['grist-node'],
      join(grist, 'node_modules/mocha/bin/mocha.js'),
      '--grep',
      'external gristlite',
      '--reporter',
      'json-stream',
      join(testDir, `${name}.js`),
    ],
    {
      cwd: grist,
      env: {...process.env, GRISTLITE_DIR: repo, GRISTLITE_NODE: process.execPath},
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: timeoutMs,
      maxBuffer: 256 * 1024 * 1024,
    },
  );
  writeFileSync(join(out, `${name}.stderr.txt`), r.stderr ?? '');
  if (r.stdout?.length) writeFileSync(report, r.stdout);
  const secs = Math.round((Date.now() - started) / 1000);
  if (existsSync(report)) {
    const rep = readReport(report);
    reports.push(rep);
    console.error(`${name}: ${rep.passed} passed, ${rep.failed} failed, ${rep.pending} pending (${secs} s)`);
  } else {
    reports.push({
      file: `${name} (no report: ${r.error ? r.error.message : `exit ${r.status}`})`,
      passed: 0,
      failed: 0,
      pending: 0,
      failures: [],
    });
    console.error(`${name}: no report (${secs} s; ${join(out, `${name}.stderr.txt`)})`);
  }
}
const {text, total} = table(reports);
console.log(text);
for (const r of reports) for (const f of r.failures) console.log(`\n${r.file}: ${f.title}\n    ${f.reason}`);
console.log(`\nreports in ${out}`);
console.log(`${total.passed} passed, ${total.failed} failed, ${total.pending} skipped`);
