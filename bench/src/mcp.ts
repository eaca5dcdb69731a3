/**
 * The MCP endpoint (issue 42 §4, D130), in-process through the API handler: a tool call beside
 * the REST call it mirrors, alternating, measured in the same run (the limit). What the ratio
 * shows is the protocol's own cost per call: a stateless endpoint builds the SDK's server and
 * transport for each request (~0.3 ms and ~0.6 ms measured), whatever the tool does. Measured
 * here: 0.29 of REST for a cold 10-record read, 0.24 for a one-record add; the targets leave
 * half of that for a loaded machine.
 */
import {join} from 'node:path';
import {Engine} from '@gristlite/core/internal';
import {createApiHandler} from '@gristlite/http';
import {latencies, percentile, type Result} from './lib.js';
import {result} from './scenarios.js';

const RUNS = Number(process.env.BENCH_MCP_RUNS ?? 400);

export async function mcpScenarios(dir: string): Promise<Result[]> {
  const engine = await Engine.open({dataDir: join(dir, 'mcp'), resumeWebhooks: false});
  try {
    const handle = createApiHandler(engine, {env: {GRISTLITE_LOG_LEVEL: 'warn'}});
    const ada = await engine.forUser('ada@example.com', 'Ada');
    const key = await engine.home.setApiKey(ada.principal.user.id);
    const docId = await ada.createDoc((await ada.personalWorkspace()).id, {name: 'mcp'});
    const doc = await ada.doc(docId);
    await doc.addRecords(
      'Table1',
      Array.from({length: 1000}, (_, i) => ({A: `row ${i}`, B: i})),
    );
    const headers = {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-06-18',
    };
    const post = async (url: string, body: unknown) => {
      const res = await handle({method: 'POST', url, headers, body: new TextEncoder().encode(JSON.stringify(body))});
      if (res.status !== 200) throw new Error(`${url}: ${res.status}`);
      if (res.body && typeof res.body === 'object' && Symbol.asyncIterator in res.body) for await (const _ of res.body);
      return res;
    };
    const tool = (name: string, args: Record<string, unknown>) => () =>
      post('/api/mcp', {jsonrpc: '2.0', id: 1, method: 'tools/call', params: {name, arguments: args}});
    const table = `/api/docs/${docId}/tables/Table1`;
    // A write before each read retires the cached answer (readcache.ts): both reads run.
    let tick = 0;
    const cold = () => doc.updateRecords('Table1', [{id: 1000, fields: {B: ++tick}}]);
    const scenarios = [
      {
        name: 'M1. read_records of 10 records through /api/mcp',
        mcp: tool('read_records', {docId, tableId: 'Table1', limit: 10}),
        rest: () => post(`${table}/records/list`, {limit: 10}),
        before: cold,
        ratioTarget: 0.15,
      },
      {
        name: 'M2. add_records of 1 record through /api/mcp',
        mcp: tool('add_records', {docId, tableId: 'Table1', records: [{fields: {A: 'x'}}]}),
        rest: () => post(`${table}/records`, {records: [{fields: {A: 'x'}}]}),
        before: undefined,
        ratioTarget: 0.12,
      },
    ];
    const results: Result[] = [];
    for (const s of scenarios) {
      const viaMcp: number[] = [];
      const viaRest: number[] = [];
      // Warm both paths, then alternate so that both meet the same state of the process.
      await latencies(50, s.mcp, s.before);
      await latencies(50, s.rest, s.before);
      for (let i = 0; i < RUNS; i++) {
        viaMcp.push(...(await latencies(1, s.mcp, s.before)));
        viaRest.push(...(await latencies(1, s.rest, s.before)));
      }
      const mcp = percentile(viaMcp, 50);
      const rest = percentile(viaRest, 50);
      results.push(
        result({
          scenario: `${s.name} (limit: the same REST call)`,
          unit: 'calls/s',
          rate: 1000 / mcp,
          limit: 1000 / rest,
          ratioTarget: s.ratioTarget,
          target: `>= ${s.ratioTarget} of REST (a stateless call builds the SDK's server and transport)`,
          p50Ms: mcp,
        }),
      );
    }
    return results;
  } finally {
    await engine.close();
  }
}
