// Issue 16 in the pipeline: /status (db and readiness failing), request log lines (an abort is not
// an error; an unexpected error is logged with its stack), redaction, /metrics on and off.
import {mkdtempSync, rmSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {Writable} from 'node:stream';
import {pino} from 'pino';
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {Engine} from '@gristlite/core/internal';
import {createApiHandler, loggedUrl, type Route} from '../src/index.js';

function capture() {
  const lines: Record<string, any>[] = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      lines.push(JSON.parse(String(chunk)));
      cb();
    },
  });
  return {lines, logger: pino({level: 'info'}, stream)};
}

const boom: Route = {
  method: 'GET',
  path: '/api/boom',
  summary: '',
  tag: 'test',
  handler: async () => {
    throw new Error('kaboom');
  },
};
const gone: Route = {
  method: 'GET',
  path: '/api/gone',
  summary: '',
  tag: 'test',
  handler: async () => {
    throw Object.assign(new Error('aborted'), {code: 'ECONNRESET'});
  },
};

async function setup() {
  const dir = mkdtempSync(join(tmpdir(), 'gl-ops-'));
  const engine = await Engine.open({dataDir: dir});
  const user = await engine.home.ensureUser('ada@example.com', 'Ada');
  const key = await engine.home.setApiKey(user.id);
  return {
    dir,
    engine,
    key,
    userId: user.id,
    async done() {
      await engine.close();
      rmSync(dir, {recursive: true, force: true});
    },
  };
}

test('/status: alive; db=1 fails with 500 once the home database is gone; ready=1 follows the readiness hook', async () => {
  const s = await setup();
  let ready = false;
  const handle = createApiHandler(s.engine, {env: {}, ready: () => ready, logger: capture().logger});
  try {
    const get = async (url: string, headers: Record<string, string> = {}) => {
      const r = await handle({method: 'GET', url, headers});
      return [r.status, r.body, r.headers['Content-Type']];
    };
    assert.equal(await get('/status'), [200, 'Grist server(home,docs,static) is alive.', 'text/plain; charset=utf-8']);
    assert.equal(await get('/status?ready=1'), [
      500,
      'Grist server(home,docs,static) is unhealthy (ready not ok).',
      'text/plain; charset=utf-8',
    ]);
    ready = true;
    assert.equal((await get('/status?db=1&ready=1', {authorization: 'Bearer nonsense'})).slice(0, 2), [
      200,
      'Grist server(home,docs,static) is alive (db ok, ready ok).',
    ]);
    assert.equal((await get('/status/'))[0], 200);
    await s.engine.store.close();
    assert.equal((await get('/status?db=1')).slice(0, 2), [
      500,
      'Grist server(home,docs,static) is unhealthy (db not ok).',
    ]);
  } finally {
    await s.done().catch(() => undefined);
  }
});

test('log lines: one per request; client aborts are info, not errors; unexpected errors at error with a stack', async () => {
  const s = await setup();
  const {lines, logger} = capture();
  const handle = createApiHandler(s.engine, {env: {}, logger, routes: [boom, gone]});
  try {
    const auth = {authorization: `Bearer ${s.key}`};
    assert.is(
      (
        await handle({
          method: 'GET',
          url: `/api/orgs?apiKey=${s.key}&limit=2`,
          headers: {...auth, 'x-request-id': 'bad id with spaces'},
        })
      ).status,
      200,
    );
    assert.is((await handle({method: 'GET', url: '/api/gone', headers: auth})).status, 400);
    assert.is((await handle({method: 'GET', url: '/api/boom', headers: auth})).status, 500);
    const reqs = lines.filter((l) => l.msg === 'request');
    assert.is(reqs.length, 3);
    assert.is(reqs[0].url, '/api/orgs?apiKey=[redacted]&limit=2');
    assert.is(reqs[0].userId, s.userId);
    assert.match(reqs[0].reqId, /^[0-9a-f-]{36}$/, 'an unusable incoming id is replaced');
    assert.is(reqs[1].aborted, true);
    assert.is(reqs[1].level, 30);
    const errors = lines.filter((l) => l.level >= 50);
    assert.is(errors.length, 1);
    assert.is(errors[0].err.message, 'kaboom');
    assert.match(errors[0].err.stack, /kaboom\n\s+at /);
    assert.not.ok(JSON.stringify(lines).includes(s.key));
  } finally {
    await s.done();
  }
});

test('loggedUrl redacts credential-like query values only', () => {
  assert.is(
    loggedUrl('/api/docs/x/sql?q=select%201&auth=abc&token=t&secret=s&password=p&X-Sig=z'),
    '/api/docs/x/sql?q=select%201&auth=[redacted]&token=[redacted]&secret=[redacted]&password=[redacted]&X-Sig=[redacted]',
  );
  assert.is(loggedUrl('/api/orgs'), '/api/orgs');
  assert.is(
    loggedUrl('/api/docs/d/tables/T/records?filter=%7B%7D&sort=A'),
    '/api/docs/d/tables/T/records?filter=%7B%7D&sort=A',
  );
});

test('/metrics: 404 unless GRISTLITE_METRICS=1; then Prometheus text by route pattern and status', async () => {
  const s = await setup();
  try {
    const off = createApiHandler(s.engine, {env: {}, logger: capture().logger});
    assert.is((await off({method: 'GET', url: '/metrics', headers: {}})).status, 404);
    const on = createApiHandler(s.engine, {env: {GRISTLITE_METRICS: '1'}, logger: capture().logger});
    const auth = {authorization: `Bearer ${s.key}`};
    await on({method: 'GET', url: '/api/orgs', headers: auth});
    await on({method: 'GET', url: '/api/orgs/999', headers: auth});
    await on({method: 'GET', url: '/nowhere', headers: auth});
    await on({method: 'BREW', url: '/nowhere', headers: auth});
    const r = await on({method: 'GET', url: '/metrics', headers: {}});
    assert.is(r.status, 200);
    assert.match(r.headers['Content-Type'], /^text\/plain; version=0\.0\.4/);
    const text = String(r.body);
    assert.match(text, /gristlite_http_requests_total\{method="GET",route="\/api\/orgs",status="200"\} 1/);
    assert.match(text, /gristlite_http_requests_total\{method="GET",route="\/api\/orgs\/:oid",status="404"\} 1/);
    assert.match(text, /gristlite_http_requests_total\{method="GET",route="unmatched",status="404"\} 1/);
    assert.match(text, /gristlite_http_requests_total\{method="other",route="unmatched",status="404"\} 1/);
    assert.match(text, /gristlite_http_request_duration_seconds_count\{method="GET",route="\/api\/orgs"\} 1/);
    assert.match(text, /gristlite_open_documents 0/);
    assert.match(text, /gristlite_process_cpu_seconds_total/);
  } finally {
    await s.done();
  }
});

test.run();
