/** `gristlite serve | user add | org add`: the command line around the engine. */
import { createServer, type Server } from 'node:http';
import { parseArgs } from 'node:util';
import { BadRequest, Engine, checkDomain, isValidEmail, type HomeStore } from '@gristlite/core';
import { createApiHandler } from '@gristlite/http';
import { toNodeHandler } from '@gristlite/node';

type Env = Record<string, string | undefined>;

const USAGE = `usage:
  gristlite serve [--data DIR] [--port N] [--host H]
  gristlite user add EMAIL [--name NAME] [--key KEY] [--data DIR]
  gristlite org add NAME --domain DOMAIN --owner EMAIL [--data DIR]`;

function dataDir(values: { data?: string }, env: Env): string {
  return values.data ?? env.GRISTLITE_DATA_DIR ?? './data';
}

/** Opens the engine for a data directory. A home store factory can be plugged in for other stores. */
export async function openEngine(dir: string, env: Env, makeHome?: (env: Env) => Promise<HomeStore | undefined>): Promise<Engine> {
  return Engine.open({ dataDir: dir, home: makeHome ? await makeHome(env) : undefined });
}

export interface Served {
  server: Server;
  engine: Engine;
  url: string;
  apiKey: string | null;
  close(): Promise<void>;
}

/** Starts the API over node:http; used by `serve` and by the end-to-end tests. */
export async function serve(opts: { dataDir: string; port: number; host: string; env: Env }): Promise<Served> {
  const engine = await openEngine(opts.dataDir, opts.env);
  const email = opts.env.GRISTLITE_DEFAULT_EMAIL || 'you@example.com';
  const name = opts.env.GRISTLITE_DEFAULT_NAME ?? 'You';
  const { apiKey } = await engine.ensureDefaultUser(email, name, opts.env.GRISTLITE_API_KEY || undefined);
  const server = createServer(toNodeHandler(createApiHandler(engine, { env: opts.env })));
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, resolve);
  });
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : opts.port;
  return {
    server,
    engine,
    url: `http://${opts.host.includes(':') ? `[${opts.host}]` : opts.host}:${port}`,
    apiKey,
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await engine.close();
    },
  };
}

export async function run(argv: string[], env: Env): Promise<number | undefined> {
  const [cmd, sub] = argv;
  if (cmd === 'serve') {
    const { values } = parseArgs({
      args: argv.slice(1),
      options: { data: { type: 'string' }, port: { type: 'string' }, host: { type: 'string' } },
    });
    const served = await serve({
      dataDir: dataDir(values, env),
      port: Number(values.port ?? env.PORT ?? 8484),
      host: values.host ?? env.HOST ?? '127.0.0.1',
      env,
    });
    console.log(`gristlite listening on ${served.url} (data: ${dataDir(values, env)})`);
    if (served.apiKey) console.log(`API key for ${env.GRISTLITE_DEFAULT_EMAIL || 'you@example.com'}: ${served.apiKey}`);
    const stop = () => void served.close().then(() => process.exit(0));
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    return undefined;
  }
  if (cmd === 'user' && sub === 'add') {
    const { values, positionals } = parseArgs({
      args: argv.slice(2),
      allowPositionals: true,
      options: { name: { type: 'string' }, key: { type: 'string' }, data: { type: 'string' } },
    });
    const email = positionals[0];
    if (!email || !isValidEmail(email)) throw new BadRequest(`a valid EMAIL is required\n${USAGE}`);
    if (values.key !== undefined && !/^[0-9a-f]{40}$/.test(values.key) && values.key.length < 16) {
      throw new BadRequest('--key must be at least 16 characters');
    }
    const engine = await openEngine(dataDir(values, env), env);
    try {
      const user = await engine.home.ensureUser(email, values.name ?? '');
      if (values.name !== undefined && user.name !== values.name) await engine.store.updateUser(user.id, { name: values.name });
      console.log(await engine.home.setApiKey(user.id, values.key));
    } finally {
      await engine.close();
    }
    return 0;
  }
  if (cmd === 'org' && sub === 'add') {
    const { values, positionals } = parseArgs({
      args: argv.slice(2),
      allowPositionals: true,
      options: { domain: { type: 'string' }, owner: { type: 'string' }, data: { type: 'string' } },
    });
    const name = positionals[0];
    if (!name || !values.domain || !values.owner) throw new BadRequest(USAGE);
    checkDomain(values.domain);
    const engine = await openEngine(dataDir(values, env), env);
    try {
      const owner = await engine.home.ensureUser(values.owner);
      const org = await engine.store.createOrg({ name, domain: values.domain, ownerUserId: owner.id, personal: false });
      console.log(org.id);
    } finally {
      await engine.close();
    }
    return 0;
  }
  console.error(USAGE);
  return 2;
}
