// Runs every package's uvu suite in its own process and prints one "N passed, N failed" line.
import {spawnSync} from 'node:child_process';
import {existsSync, readdirSync} from 'node:fs';
import {join} from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const only = process.argv.slice(2);
const dirs = [];
for (const group of ['packages', 'adapters']) {
  for (const name of readdirSync(join(root, group)).sort()) {
    const dir = join(root, group, name, 'dist', 'test');
    if (existsSync(dir) && (only.length === 0 || only.some((o) => dir.includes(o)))) dirs.push(dir);
  }
}
// The benchmarks' smoke test (bench/src/smoke.test.ts) compiles to bench/dist.
const benchDir = join(root, 'bench', 'dist');
if (existsSync(benchDir) && (only.length === 0 || only.some((o) => benchDir.includes(o)))) dirs.push(benchDir);
let passed = 0;
let failed = 0;
let crashed = 0;
// CI shows only the tail of its log: the failures are listed again just above the last line.
const failures = [];
for (const dir of dirs) {
  console.log(`\n### ${dir.slice(root.length)}`);
  const r = spawnSync(process.execPath, [join(root, 'node_modules/uvu/bin.js'), dir, '\\.test\\.js$'], {
    stdio: ['ignore', 'pipe', 'inherit'],
    encoding: 'utf8',
    // Request lines (info) would drown the results; tests that read logs pass their own logger.
    // FORCE_COLOR=0 alone: Node 22 warns on stderr when NO_COLOR is set beside it.
    env: {GRISTLITE_LOG_LEVEL: 'warn', ...process.env, FORCE_COLOR: '0', NO_COLOR: undefined},
  });
  process.stdout.write(r.stdout ?? '');
  // uvu colours its report even under FORCE_COLOR=0 here.
  const lines = (r.stdout ?? '').replace(/\x1b\[[0-9;]*m/g, '').split('\n');
  lines.forEach((line, i) => {
    // uvu's report of a failed test: the FAIL line, then the assertion's message a few lines on.
    if (/^\s*FAIL\s/.test(line))
      failures.push(
        `${dir.slice(root.length)}: ${[line, ...lines.slice(i + 1, i + 5)]
          .map((l) => l.trim())
          .filter(Boolean)
          .join(' | ')}`,
      );
  });
  const total = Number(/Total:\s+(\d+)/.exec(r.stdout ?? '')?.[1] ?? NaN);
  const ok = Number(/Passed:\s+(\d+)/.exec(r.stdout ?? '')?.[1] ?? NaN);
  if (Number.isNaN(total) || Number.isNaN(ok)) {
    crashed++;
    failed++;
    console.log(`!! ${dir}: suite crashed (exit ${r.status})`);
    failures.push(`${dir.slice(root.length)}: suite crashed (exit ${r.status})`);
    continue;
  }
  passed += ok;
  failed += total - ok;
  if (r.status !== 0 && total === ok) {
    failed++;
    console.log(`!! ${dir}: exited ${r.status} although all tests passed`);
    failures.push(`${dir.slice(root.length)}: exited ${r.status} although all tests passed`);
  }
}
if (failures.length > 0) console.log(`\nfailed:\n${failures.map((f) => `  ${f.slice(0, 400)}`).join('\n')}`);
console.log(`\n${passed} passed, ${failed} failed`);
process.exit(failed > 0 || crashed > 0 ? 1 : 0);
