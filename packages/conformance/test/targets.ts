// How the conformance suite reaches each adapter. Every target gets a fresh data directory.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Router } from 'itty-router';
import { closeServer, listen, prepareEngine, serve } from '@gristlite/cli';
import { createApiHandler } from '@gristlite/http';
import { toFetchHandler, type FetchHandler } from '@gristlite/fetch';
import { nodeListener } from '@gristlite/fetch/node';
import { registerGristlite } from '@gristlite/itty';
import type { Target } from '../src/index.js';

type Mode = 'itty-http' | 'fetch-http' | 'fetch-inprocess';

/** The Node adapter, served by `gristlite serve` on a free port. */
export function nodeTarget(): Target {
  return {
    name: 'node',
    async start(env) {
      const dataDir = mkdtempSync(join(tmpdir(), 'gl-conf-node-'));
      const served = await serve({ dataDir, port: 0, host: '127.0.0.1', env });
      return {
        url: served.url,
        engine: served.engine,
        async close() {
          await served.close();
          rmSync(dataDir, { recursive: true, force: true });
        },
      };
    },
  };
}

export function target(mode: Mode): Target {
  return {
    name: mode,
    async start(env) {
      const dataDir = mkdtempSync(join(tmpdir(), `gl-conf-${mode}-`));
      const { engine } = await prepareEngine(dataDir, env);
      const api = createApiHandler(engine, { env });
      let handler: FetchHandler;
      if (mode === 'itty-http') {
        const router = Router();
        router.get('/app/hello', () => new Response('app'));
        registerGristlite(router, api);
        handler = (req) => router.fetch(req) as Promise<Response>;
      } else handler = toFetchHandler(api);
      const server = mode === 'fetch-inprocess' ? null : await listen(nodeListener(handler), 0, '127.0.0.1');
      return {
        url: server?.url ?? 'http://127.0.0.1:8484',
        engine,
        ...(server ? {} : { fetch: handler }),
        async close() {
          if (server) await closeServer(server.server);
          await engine.close();
          rmSync(dataDir, { recursive: true, force: true });
        },
      };
    },
  };
}
