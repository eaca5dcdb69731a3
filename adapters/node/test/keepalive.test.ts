// Keep-alive across the idle boundary (issue 24 §5): with configureServer's timeouts and a client
// whose idle timeout is shorter than the server's, requests spaced just under, at and past both
// idle timeouts never meet a connection the server is closing.
import {createServer, type Server} from 'node:http';
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {Pool} from 'undici';
import {configureServer, SERVER_TIMEOUTS, serverTimeouts} from '../src/index.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function serve(server: Server): Promise<string> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as {port: number}).port}`;
}

test('configureServer: keep-alive past load balancers, headers timeout past keep-alive, checked settings', () => {
  const server = configureServer(createServer());
  assert.is(server.keepAliveTimeout, 65_000);
  assert.is(server.headersTimeout, 70_000);
  assert.is(server.requestTimeout, SERVER_TIMEOUTS.requestTimeoutMs);
  const short = configureServer(createServer(), {keepAliveTimeoutMs: 200});
  assert.is(short.headersTimeout, 5200);
  assert.throws(() => serverTimeouts({keepAliveTimeoutMs: 10_000, headersTimeoutMs: 10_000}), /must be longer/);
  assert.throws(() => serverTimeouts({requestTimeoutMs: 1000}), /requestTimeoutMs \(1000\) must be 0 or at least/);
  assert.throws(() => serverTimeouts({keepAliveTimeoutMs: 0}), /must be positive/);
  assert.equal(serverTimeouts({requestTimeoutMs: 0}).requestTimeoutMs, 0);
});

test('connections are reused under the idle timeout and replaced past it, with no socket error', async () => {
  // The server advertises `Keep-Alive: timeout=1`; the client ends idle connections after 500 ms
  // (1 s less its 500 ms margin), before the server would.
  const server = configureServer(
    createServer((req, res) => {
      req.resume();
      res.end('ok');
    }),
    {keepAliveTimeoutMs: 1000},
  );
  let connections = 0;
  server.on('connection', () => connections++);
  const clientErrors: unknown[] = [];
  server.on('clientError', (e) => clientErrors.push(e));
  const pool = new Pool(await serve(server), {connections: 1, keepAliveTimeoutThreshold: 500});
  try {
    const get = async () => {
      const res = await pool.request({method: 'GET', path: '/'});
      assert.is(await res.body.text(), 'ok');
      assert.is(res.headers['keep-alive'], 'timeout=1');
    };
    await get();
    // Under the client's idle timeout: the connection is reused.
    for (let i = 0; i < 3; i++) {
      await sleep(50);
      await get();
    }
    assert.is(connections, 1, 'one connection for requests 50 ms apart');
    // Around the client's boundary (500 ms), the server's advertised one (1000 ms) and Node's
    // actual close (1000 ms + its 1 s margin): each request succeeds on a live connection.
    for (const gap of [450, 490, 510, 550, 1000, 2010]) {
      await sleep(gap);
      await get();
    }
    assert.ok(connections >= 2, `past the idle timeout a new connection is opened (${connections})`);
    assert.equal(clientErrors, []);
  } finally {
    await pool.close();
    await new Promise<void>((r) => server.close(() => r()));
  }
});

test.run();
