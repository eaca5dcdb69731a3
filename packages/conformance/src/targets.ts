/**
 * Building blocks for a `Target`: each adapter's own tests say how it mounts the API, and this
 * gives it an engine on a fresh data directory (as `gristlite serve` would open it) and a free
 * port. Adapters stay out of this package, but for the node adapter's server timeouts, which every
 * mounted target shares with `gristlite serve`.
 */
import {mkdtempSync, rmSync} from 'node:fs';
import {createServer, type RequestListener} from 'node:http';
import type {AddressInfo} from 'node:net';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {Engine, type HomeStore} from '@gristlite/core/internal';
import {createApiHandler, type Handler} from '@gristlite/http';
import {configureServer, toNodeHandler} from '@gristlite/node';
import type {FetchHandler} from './client.js';
import type {Target} from './world.js';

/** How an adapter serves the API handler: over a URL, or in-process through `fetch`. */
export interface Mounted {
  url: string;
  /** Requests go to this handler in-process instead of over the network. */
  fetch?: FetchHandler;
  close(): Promise<void>;
}

/**
 * A target that opens an engine from `env` (with the default user that GRISTLITE_DEFAULT_EMAIL
 * names, as `gristlite serve` makes), builds the API handler and lets `mount` serve it.
 * `skip` names tests this target does not run, each with its reason (see `Target.skip`).
 */
export function apiTarget(
  name: string,
  mount: (api: Handler) => Promise<Mounted>,
  skip: Record<string, string> = {},
  home?: HomeFactory,
): Target {
  return {
    name,
    skip,
    async start(env) {
      const dataDir = mkdtempSync(join(tmpdir(), `gl-conf-${name}-`));
      const made = home ? await home() : undefined;
      const engine = await Engine.open({dataDir, env, ...(made ? {home: made.store} : {})});
      await engine.ensureDefaultUser(
        env.GRISTLITE_DEFAULT_EMAIL || 'you@example.com',
        env.GRISTLITE_DEFAULT_NAME ?? 'You',
        env.GRISTLITE_API_KEY || undefined,
      );
      const mounted = await mount(createApiHandler(engine, {env}));
      return {
        url: mounted.url,
        engine,
        ...(mounted.fetch ? {fetch: mounted.fetch} : {}),
        async close() {
          await mounted.close();
          await engine.close();
          await made?.cleanup();
          rmSync(dataDir, {recursive: true, force: true});
        },
      };
    },
  };
}

/** A home store for a target's engine (e.g. PostgreSQL in a fresh schema) and how to remove it. */
export type HomeFactory = () => Promise<{store: HomeStore; cleanup(): Promise<void>}>;

/** The API handler over node:http on a free port, with the engine on a home store of `home`'s. */
export function nodeApiTarget(name: string, home?: HomeFactory, skip: Record<string, string> = {}): Target {
  return apiTarget(name, async (api) => listenLocal(toNodeHandler(api)), skip, home);
}

/** Serves a node:http request listener on a free port of 127.0.0.1. */
export async function listenLocal(listener: RequestListener): Promise<Mounted> {
  // The timeouts `gristlite serve` uses (keep-alive past clients' and load balancers' idle time).
  const server = configureServer(createServer(listener));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
