/** `gristlite serve | user add | org add`: the command line around the engine. */
import { createServer, type RequestListener, type Server } from 'node:http';
import { parseArgs } from 'node:util';
import { existsSync, mkdirSync } from 'node:fs';
import { basename } from 'node:path';
import { BadRequest, Engine, checkDomain, importUpload, isValidEmail, type DocLeases, type HomeStore, type ImportProgress } from '@gristlite/core';
import { PgDocLeases, homeStoreFromUrl } from '@gristlite/store-postgres';
import { createApiHandler } from '@gristlite/http';
import { toNodeHandler } from '@gristlite/node';

type Env = Record<string, string | undefined>;

const USAGE = `usage:
  gristlite serve [--data DIR] [--port N] [--host H] [--home postgres://...]
  gristlite user add EMAIL [--name NAME] [--key KEY] [--data DIR] [--home URL]
  gristlite org add NAME --domain DOMAIN --owner EMAIL [--data DIR] [--home URL]
  gristlite import FILE.grist|FILE.csv [--workspace ID] [--owner EMAIL] [--name TITLE] [--data DIR] [--home URL]`;

function dataDir(values: { data?: string }, env: Env): string {
  return values.data ?? env.GRISTLITE_DATA_DIR ?? './data';
}

/**
 * Opens the engine for a data directory: the embedded SQLite home store, or PostgreSQL when
 * `GRISTLITE_HOME_URL` (or `--home`) names one. Documents always stay files in the data directory.
 */
export async function openEngine(dir: string, env: Env, leases?: Promise<DocLeases>): Promise<Engine> {
  privateFiles();
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const homeUrl = env.GRISTLITE_HOME_URL;
  const home: HomeStore | undefined = homeUrl ? await homeStoreFromUrl(homeUrl) : undefined;
  return Engine.open({ dataDir: dir, home, leases, env });
}

/**
 * Everything gristlite creates from here on (the data directory, home.sqlite3, documents, their
 * -wal/-shm companions, temporary uploads) is readable by its owner only: documents and API key
 * hashes are nobody else's business on a shared machine.
 */
export function privateFiles(): void {
  process.umask(process.umask() | 0o077);
}

/** Where the default user's key came from: printed only when gristlite made it. */
export type KeySource = 'generated' | 'env' | 'existing';

export interface Served {
  server: Server;
  engine: Engine;
  url: string;
  /** The key gristlite generated now (to print once), else null. */
  apiKey: string | null;
  keySource: KeySource;
  close(): Promise<void>;
}

/**
 * Opens the engine for `serve`-style settings and makes sure the default user exists. Returns the
 * API key when it was created or set now (to be printed once). Shared by every example server.
 */
export async function prepareEngine(
  dataDir: string,
  env: Env,
  leases?: Promise<DocLeases>,
): Promise<{ engine: Engine; apiKey: string | null; keySource: KeySource; email: string }> {
  const engine = await openEngine(dataDir, env, leases);
  const email = env.GRISTLITE_DEFAULT_EMAIL || 'you@example.com';
  const name = env.GRISTLITE_DEFAULT_NAME ?? 'You';
  const given = env.GRISTLITE_API_KEY || undefined;
  const { apiKey } = await engine.ensureDefaultUser(email, name, given);
  // A key the operator chose is theirs already: never echoed (it would land in logs).
  if (given) return { engine, apiKey: null, keySource: 'env', email };
  return { engine, apiKey, keySource: apiKey ? 'generated' : 'existing', email };
}

/** Listens with a node:http request listener; returns the server and its URL. */
export async function listen(listener: RequestListener, port: number, host: string): Promise<{ server: Server; url: string }> {
  const server = createServer(listener);
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (e: NodeJS.ErrnoException) => {
      if (e.code === 'EADDRINUSE') reject(new BadRequest(`port ${port} is already in use on ${host} (another gristlite?): stop it or choose another port with --port or PORT`));
      else if (e.code === 'EACCES') reject(new BadRequest(`no permission to listen on port ${port} on ${host}: choose another port with --port or PORT`));
      else if (e.code === 'EADDRNOTAVAIL') reject(new BadRequest(`cannot listen on ${host}: no such address on this machine (--host or HOST)`));
      else reject(e);
    });
    server.listen(port, host, resolve);
  });
  const addr = server.address();
  const actual = typeof addr === 'object' && addr ? addr.port : port;
  return { server, url: `http://${host.includes(':') ? `[${host}]` : host}:${actual}` };
}

export function closeServer(server: Server): Promise<void> {
  return new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

/** Settings every server takes from the environment (as `gristlite serve` does). */
export function serverSettings(env: Env, args: { data?: string; port?: string; host?: string } = {}) {
  return {
    dataDir: dataDir(args, env),
    port: Number(args.port ?? env.PORT ?? 8484),
    host: args.host ?? env.HOST ?? '127.0.0.1',
  };
}

/** Starts the API over node:http; used by `serve` and by the end-to-end tests. */
export async function serve(opts: { dataDir: string; port: number; host: string; env: Env }): Promise<Served> {
  // With a shared (PostgreSQL) home, several processes may serve one data directory: documents are
  // leased, and the lease names this process's URL, known only once it listens.
  const homeUrl = opts.env.GRISTLITE_HOME_URL;
  let setLeases!: (l: DocLeases) => void;
  let failLeases!: (e: unknown) => void;
  const leases = homeUrl
    ? new Promise<DocLeases>((resolve, reject) => ((setLeases = resolve), (failLeases = reject)))
    : undefined;
  // The port first: a busy port fails before anything is created (a first start would otherwise
  // make, and lose, the default user's key). Requests wait for the engine.
  let ready!: (h: RequestListener) => void;
  const handler = new Promise<RequestListener>((resolve) => (ready = resolve));
  const { server, url } = await listen((req, res) => void handler.then((h) => h(req, res)), opts.port, opts.host);
  let prepared;
  try {
    prepared = await prepareEngine(opts.dataDir, opts.env, leases);
  } catch (e) {
    await closeServer(server);
    throw e;
  }
  const { engine, apiKey, keySource } = prepared;
  ready(toNodeHandler(createApiHandler(engine, { env: opts.env })));
  if (homeUrl) {
    await PgDocLeases.connect(homeUrl, {
      holderId: opts.env.GRISTLITE_SELF_URL || url,
      onLost: (e) => {
        // Without the lease connection this process can no longer prove it is the only writer.
        console.error(`gristlite: document leases lost (${e.message}); exiting`);
        process.exit(1);
      },
    }).then(setLeases, failLeases);
  }
  return {
    server,
    engine,
    url,
    apiKey,
    keySource,
    async close() {
      await closeServer(server);
      await engine.close();
    },
  };
}

/**
 * Prints the start-up lines: the URL, and the default user's key when gristlite generated it now
 * (a key from GRISTLITE_API_KEY is never echoed; an existing one is stored hashed, so say how to
 * make a new one).
 */
export function announce(what: string, url: string, dataDir: string, email: string, apiKey: string | null,
                         keySource: KeySource = apiKey ? 'generated' : 'existing'): void {
  console.log(`${what} listening on ${url} (data: ${dataDir})`);
  if (apiKey && keySource === 'generated') console.log(`API key for ${email}: ${apiKey}`);
  else if (keySource === 'env') console.log(`API key for ${email}: the one set in GRISTLITE_API_KEY`);
  else console.log(`API key for ${email}: unchanged (stored hashed; to make a new one: gristlite user add ${email})`);
}

export async function run(argv: string[], env: Env): Promise<number | undefined> {
  const [cmd, sub] = argv;
  if (cmd === 'serve') {
    const { values } = parseArgs({
      args: argv.slice(1),
      options: { data: { type: 'string' }, port: { type: 'string' }, host: { type: 'string' }, home: { type: 'string' } },
    });
    if (values.home) env = { ...env, GRISTLITE_HOME_URL: values.home };
    const settings = serverSettings(env, values);
    const served = await serve({ ...settings, env });
    announce('gristlite', served.url, settings.dataDir, env.GRISTLITE_DEFAULT_EMAIL || 'you@example.com', served.apiKey, served.keySource);
    const stop = () => void served.close().then(() => process.exit(0));
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    return undefined;
  }
  if (cmd === 'user' && sub === 'add') {
    const { values, positionals } = parseArgs({
      args: argv.slice(2),
      allowPositionals: true,
      options: { name: { type: 'string' }, key: { type: 'string' }, data: { type: 'string' }, home: { type: 'string' } },
    });
    const email = positionals[0];
    if (!email || !isValidEmail(email)) throw new BadRequest(`a valid EMAIL is required\n${USAGE}`);
    if (values.key !== undefined && !/^[0-9a-f]{40}$/.test(values.key) && values.key.length < 16) {
      throw new BadRequest('--key must be at least 16 characters');
    }
    const engine = await openEngine(dataDir(values, env), values.home ? { ...env, GRISTLITE_HOME_URL: values.home } : env);
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
      options: { domain: { type: 'string' }, owner: { type: 'string' }, data: { type: 'string' }, home: { type: 'string' } },
    });
    const name = positionals[0];
    if (!name || !values.domain || !values.owner) throw new BadRequest(USAGE);
    checkDomain(values.domain);
    const engine = await openEngine(dataDir(values, env), values.home ? { ...env, GRISTLITE_HOME_URL: values.home } : env);
    try {
      const owner = await engine.home.ensureUser(values.owner);
      const org = await engine.store.createOrg({ name, domain: values.domain, ownerUserId: owner.id, personal: false });
      console.log(String(org.id));
    } finally {
      await engine.close();
    }
    return 0;
  }
  if (cmd === 'import') {
    const { values, positionals } = parseArgs({
      args: argv.slice(1),
      allowPositionals: true,
      options: {
        workspace: { type: 'string' }, owner: { type: 'string' }, name: { type: 'string' },
        data: { type: 'string' }, home: { type: 'string' },
      },
    });
    const file = positionals[0];
    if (!file) throw new BadRequest(USAGE);
    if (!existsSync(file)) throw new BadRequest(`no such file: ${file}`);
    const engine = await openEngine(dataDir(values, env), values.home ? { ...env, GRISTLITE_HOME_URL: values.home } : env);
    try {
      // Imports act as a user: --owner, else the server's default user.
      const email = values.owner ?? env.GRISTLITE_DEFAULT_EMAIL ?? 'you@example.com';
      const user = await engine.store.getUserByEmail(email);
      if (!user) throw new BadRequest(`no user ${email}: create it with "gristlite user add ${email}"`);
      const principal = engine.home.principalFor(user, true);
      const wid = values.workspace
        ? Number(values.workspace)
        : (await engine.store.listWorkspaces((await engine.store.getPersonalOrg(user.id))!.id))[0].id;
      if (!Number.isInteger(wid)) throw new BadRequest(`--workspace must be a workspace id: ${values.workspace}`);
      // One progress line, rewritten in place (at most every 200 ms): rows and percent read.
      let progressShown = false;
      let last = 0;
      const progress = ({ rows, fraction }: ImportProgress) => {
        const now = Date.now();
        if (now - last < 200 && fraction !== 1) return;
        last = now;
        progressShown = true;
        const parts = [rows !== null ? `${rows} rows` : null, fraction !== null ? `${Math.floor(fraction * 100)}%` : null];
        process.stderr.write(`\rimporting ${basename(file)}: ${parts.filter(Boolean).join(', ')}`);
      };
      const result = await importUpload(engine, wid, principal, { fileName: basename(file), path: file }, {
        documentName: values.name,
        onProgress: progress,
      });
      if (progressShown) process.stderr.write('\n');
      console.log(result.id);
    } finally {
      await engine.close();
    }
    return 0;
  }
  console.error(USAGE);
  return 2;
}
