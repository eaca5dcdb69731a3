/** `pnpm bench [--json [FILE]]`: runs every scenario and prints a table (or writes JSON). */
import {writeFileSync} from 'node:fs';
import {join} from 'node:path';
import os from 'node:os';
import {Engine} from '@gristlite/core/internal';
import {printTable, type Result} from './lib.js';
import {inProcess, overHttp, tempDir} from './scenarios.js';
import {formulaScenarios} from './formulas.js';
import {formulaHttpScenarios} from './formulas-http.js';
import {mixedScenarios} from './mixed.js';
import {clusterScenarios} from './cluster.js';
import {scaleoutScenarios} from './scaleout.js';
import {accessScenarios} from './access.js';
import {feedScenarios} from './feeds.js';
import {pagingScenarios} from './paging.js';
import {streamScenarios} from './stream.js';
import {mcpScenarios} from './mcp.js';
import {historyScenarios} from './history.js';
import {queryScenarios} from './queries.js';
import {servingScenarios} from './serving.js';

const args = process.argv.slice(2);
const jsonAt = args.indexOf('--json');
/**
 * BENCH_ONLY=<group> runs one group alone: engine (in-process scenarios, no HTTP; quick runs while
 * profiling), http (the same, then over HTTP), formulas (F1-F9), formulas-http (issue 26 §3's steps over HTTP, FH), access (A1-A3),
 * mixed (issue 28's mixed load over HTTP), paging (P1-P2), stream (S1-S5), feeds (E1-E2), mcp (M1-M2), history (H1-H2), queries (Q1-Q5: where, count, aggregate, write by condition; BENCH_QUERY_ROWS, default 100k), cluster (PostgreSQL and s3rver, C1-C8),
 * serving (issue 43 §2's HTTP add and revalidation rows alone, on a fresh server; also in http),
 * scaleout (SO1-SO4: the same with each worker under a cgroup CPU quota; root only, else skipped).
 */
const only = process.env.BENCH_ONLY;
// The bench measures speed, not deadlines: its SQL rows (6a-6d, the mixed load's /sql) get one a
// starved machine cannot reach, in-process and in the servers it starts (they inherit the
// environment). Without it a loaded run died on an interrupted aggregate. An explicit setting wins.
if (!process.env.GRISTLITE_SQL_TIMEOUT_MSEC && !process.env.GRIST_SQL_TIMEOUT_MSEC) {
  process.env.GRISTLITE_SQL_TIMEOUT_MSEC = '60000';
}
const wants = (group: string) => !only || only === group;

const {dir, cleanup} = tempDir();
const results: Result[] = [];
try {
  if (wants('engine') || only === 'http') {
    const engine = await Engine.open({dataDir: join(dir, 'engine')});
    const user = await engine.home.ensureUser('bench@example.com', 'Bench');
    const principal = engine.home.principalFor(user, true);
    const ws = (await engine.store.listWorkspaces((await engine.store.getPersonalOrg(user.id))!.id))[0];
    const docId = await engine.createDoc(ws.id, principal, {name: 'bench'});
    const {results: r, raw} = await inProcess(dir, engine, docId);
    results.push(...r);
    if (!only || only === 'http') results.push(...(await overHttp(dir, raw)));
    await engine.close();
  }
  if (wants('formulas')) results.push(...(await formulaScenarios(dir)));
  if (wants('formulas-http')) results.push(...(await formulaHttpScenarios(dir)));
  if (wants('mixed')) results.push(...(await mixedScenarios(dir)));
  if (wants('access')) results.push(...(await accessScenarios(dir)));
  if (wants('paging')) results.push(...(await pagingScenarios(dir)));
  if (wants('stream')) results.push(...(await streamScenarios(dir)));
  if (wants('feeds')) results.push(...(await feedScenarios(dir)));
  if (wants('mcp')) results.push(...(await mcpScenarios(dir)));
  if (wants('history')) results.push(...(await historyScenarios(dir)));
  if (only === 'serving') results.push(...(await servingScenarios(dir)));
  if (wants('queries')) results.push(...(await queryScenarios(dir)));
  if (wants('cluster')) results.push(...(await clusterScenarios(dir)));
  if (wants('scaleout')) results.push(...(await scaleoutScenarios(dir)));
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
