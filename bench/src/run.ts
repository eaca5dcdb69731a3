/** `pnpm bench [--json [FILE]]`: runs every scenario and prints a table (or writes JSON). */
import {writeFileSync} from 'node:fs';
import {join} from 'node:path';
import os from 'node:os';
import {Engine} from '@gristlite/core/internal';
import {printTable, type Result} from './lib.js';
import {inProcess, overHttp, tempDir} from './scenarios.js';
import {formulaScenarios} from './formulas.js';
import {clusterScenarios} from './cluster.js';
import {accessScenarios} from './access.js';
import {feedScenarios} from './feeds.js';
import {pagingScenarios} from './paging.js';
import {streamScenarios} from './stream.js';

const args = process.argv.slice(2);
const jsonAt = args.indexOf('--json');
// BENCH_ONLY=engine skips the HTTP half (quick runs while profiling the engine).
const engineOnly = process.env.BENCH_ONLY === 'engine';
// BENCH_ONLY=formulas runs the formula scenarios alone.
const formulasOnly = process.env.BENCH_ONLY === 'formulas';
// BENCH_ONLY=cluster runs the several-machine scenarios alone (PostgreSQL and s3rver, C1-C8).
const clusterOnly = process.env.BENCH_ONLY === 'cluster';
// BENCH_ONLY=access runs the access-rule scenarios alone (A1-A3).
const accessOnly = process.env.BENCH_ONLY === 'access';
// BENCH_ONLY=paging runs the cursor pagination scenarios alone (P1-P2).
const pagingOnly = process.env.BENCH_ONLY === 'paging';
// BENCH_ONLY=stream runs the streamed-answer scenarios alone (S1-S5).
const streamOnly = process.env.BENCH_ONLY === 'stream';
// BENCH_ONLY=feeds runs the change-feed scenarios alone (E1-E2).
const feedsOnly = process.env.BENCH_ONLY === 'feeds';

const {dir, cleanup} = tempDir();
const results: Result[] = [];
try {
  if (feedsOnly) results.push(...(await feedScenarios(dir)));
  else if (pagingOnly) results.push(...(await pagingScenarios(dir)));
  else if (streamOnly) results.push(...(await streamScenarios(dir)));
  else if (!formulasOnly && !clusterOnly && !accessOnly) {
    const engine = await Engine.open({dataDir: join(dir, 'engine')});
    const user = await engine.home.ensureUser('bench@example.com', 'Bench');
    const principal = engine.home.principalFor(user, true);
    const ws = (await engine.store.listWorkspaces((await engine.store.getPersonalOrg(user.id))!.id))[0];
    const docId = await engine.createDoc(ws.id, principal, {name: 'bench'});
    const {results: r, raw} = await inProcess(dir, engine, docId);
    results.push(...r);
    if (!engineOnly) results.push(...(await overHttp(dir, raw)));
    await engine.close();
  }
  if (!engineOnly && !clusterOnly && !accessOnly && !pagingOnly && !streamOnly && !feedsOnly) {
    results.push(...(await formulaScenarios(dir)));
  }
  if (!engineOnly && !formulasOnly && !clusterOnly && !pagingOnly && !streamOnly && !feedsOnly) {
    results.push(...(await accessScenarios(dir)));
  }
  if (!engineOnly && !formulasOnly && !clusterOnly && !accessOnly && !pagingOnly && !streamOnly && !feedsOnly) {
    results.push(...(await pagingScenarios(dir)));
    results.push(...(await streamScenarios(dir)));
    results.push(...(await feedScenarios(dir)));
  }
  if (!engineOnly && !formulasOnly && !accessOnly && !pagingOnly && !streamOnly && !feedsOnly) {
    results.push(...(await clusterScenarios(dir)));
  }
} finally {
  cleanup();
}

const machine = {
  cpus: os.cpus().length,
  model: os.cpus()[0]?.model,
  memGb: Math.round(os.totalmem() / 2 ** 30),
  node: process.version,
};
if (jsonAt >= 0) {
  const out = JSON.stringify({date: new Date().toISOString(), machine, results}, null, 2);
  const file = args[jsonAt + 1];
  if (file && !file.startsWith('--')) writeFileSync(file, out);
  else console.log(out);
} else {
  console.log(`gristlite benchmarks: ${machine.cpus} x ${machine.model}, ${machine.memGb} GB, Node ${machine.node}\n`);
  printTable(results);
}
