// A streamed answer (an AsyncIterable body) is pulled only as fast as the client reads, through the
// Node adapter and through the fetch adapter (which itty uses): a client that stops reading stops
// the producer once the socket buffers are full, and a client that goes away ends the producer.
import {createServer, type RequestListener, type Server} from 'node:http';
import {connect} from 'node:net';
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import type {Handler} from '@gristlite/http';
import {toNodeHandler} from '@gristlite/node';
import {toFetchHandler} from '../src/index.js';
import {nodeListener} from '../src/node.js';

const CHUNK = 64 * 1024;

/** An endless body that counts the chunks pulled and whether it was ended. */
function endless(): {handler: Handler; state: {pulled: number; ended: boolean}} {
  const state = {pulled: 0, ended: false};
  const chunk = new Uint8Array(CHUNK).fill(120);
  const body: AsyncIterableIterator<Uint8Array> = {
    [Symbol.asyncIterator]() {
      return this;
    },
    async next() {
      state.pulled++;
      return {value: chunk, done: false};
    },
    async return() {
      state.ended = true;
      return {value: undefined, done: true};
    },
  };
  return {handler: async () => ({status: 200, headers: {'Content-Type': 'text/plain'}, body}), state};
}

async function listen(listener: RequestListener): Promise<{server: Server; port: number}> {
  const server = createServer(listener);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {server, port: (server.address() as {port: number}).port};
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits until `read()` stays the same for `quietMs`; returns it (or throws after `maxMs`). */
async function settled(read: () => number, quietMs = 300, maxMs = 10_000): Promise<number> {
  const start = Date.now();
  let last = read();
  let since = Date.now();
  while (Date.now() - start < maxMs) {
    await sleep(50);
    const now = read();
    if (now !== last) {
      last = now;
      since = Date.now();
    } else if (Date.now() - since >= quietMs) return now;
  }
  throw new Error(`still producing after ${maxMs} ms (${last} chunks)`);
}

const ADAPTERS: Array<[string, (h: Handler) => RequestListener]> = [
  ['node adapter', (h) => toNodeHandler(h) as unknown as RequestListener],
  ['fetch adapter', (h) => nodeListener(toFetchHandler(h))],
];

for (const [name, make] of ADAPTERS) {
  test(`${name}: a client that does not read stops the producer; one that leaves ends it`, async () => {
    const {handler, state} = endless();
    const {server, port} = await listen(make(handler));
    const socket = connect(port, '127.0.0.1');
    try {
      await new Promise<void>((r) => socket.once('connect', () => r()));
      socket.pause(); // Reads nothing: only the kernel's buffers take bytes.
      socket.write('GET /api/x HTTP/1.1\r\nHost: localhost\r\n\r\n');
      const pulled = await settled(() => state.pulled);
      // Loopback socket buffers hold a few MB; without backpressure this would grow without end.
      assert.ok(pulled * CHUNK < 64 * 1024 * 1024, `${pulled} chunks produced for a client reading nothing`);
      assert.not.ok(state.ended);
      // Reading resumes production.
      let received = 0;
      socket.on('data', (d: Buffer) => {
        received += d.length;
      });
      socket.resume();
      await sleep(200);
      assert.ok(state.pulled > pulled, 'production resumes when the client reads');
      assert.ok(received > 0);
      socket.destroy();
      const start = Date.now();
      while (!state.ended && Date.now() - start < 5000) await sleep(20);
      assert.ok(state.ended, 'the body is ended (return) when the client goes away');
      const after = state.pulled;
      await sleep(200);
      assert.ok(state.pulled - after <= 1, 'nothing more is produced');
    } finally {
      socket.destroy();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });
}

for (const [name, make] of ADAPTERS) {
  test(`${name}: a body failing after its first bytes cuts the connection (D61), never a short answer`, async () => {
    const chunk = new TextEncoder().encode('{"records":[{"id":1}');
    let n = 0;
    const body: AsyncIterableIterator<Uint8Array> = {
      [Symbol.asyncIterator]() {
        return this;
      },
      async next() {
        if (n++ < 3) return {value: chunk, done: false};
        throw new Error('failed mid-stream');
      },
    };
    const handler: Handler = async () => ({status: 200, headers: {'Content-Type': 'application/json'}, body});
    const {server, port} = await listen(make(handler));
    try {
      const res = await fetch(`http://127.0.0.1:${port}/api/x`);
      assert.is(res.status, 200, 'the status was sent before the failure');
      const read = await res.text().then(
        (text) => ({text}),
        (e: Error) => ({error: e}),
      );
      assert.ok('error' in read, `the body must not end as if complete (got ${JSON.stringify(read)})`);
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });
}

test.run();
