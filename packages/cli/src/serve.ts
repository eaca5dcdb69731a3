/** Starting gristlite: the engine from the environment (home store, cluster, attachment stores), the
 * HTTP server around it, and the start-up lines. The commands of `gristlite` are in cli.ts. */
import {createServer, type RequestListener, type Server} from 'node:http';
import {mkdirSync} from 'node:fs';
import {
  BadRequest,
  Engine,
  DEFAULT_MAX_OPEN_DOCS,
  intFromEnv,
  intSetting,
  preloadXlsx,
  type AttachmentStore,
  type ClusterOptions,
  type DocLeases,
  type HomeStore,
} from '@gristlite/core/internal';
import {
  DEFAULT_HOME_CACHE_ENTRIES,
  DEFAULT_HOME_CACHE_MS,
  PgDocLeases,
  PgPlacement,
  homeStoreFromUrl,
} from '@gristlite/store-postgres';
import {S3AttachmentStore, S3ObjectStore} from '@gristlite/store-s3';
import {createApiHandler, createLogger, type Logger, statusResponse} from '@gristlite/http';
import {configureServer, type ServerTimeouts, serverTimeouts, toNodeHandler} from '@gristlite/node';

type Env = Record<string, string | undefined>;

export function dataDir(values: {data?: string}, env: Env): string {
  return values.data ?? env.GRISTLITE_DATA_DIR ?? './data';
}

/**
 * Opens the engine for a data directory: the embedded SQLite home store, or PostgreSQL when
 * `GRISTLITE_HOME_URL` (or `--home`) names one. Documents always stay files in the data directory.
 * A process that `serves` them on the SQLite home holds the directory's lock: a second one fails
 * to start (command-line tools do not serve, and keep working beside it).
 */
export async function openEngine(
  dir: string,
  env: Env,
  leases?: Promise<DocLeases>,
  logger?: Logger,
  cluster?: ClusterOptions,
  serves = false,
): Promise<Engine> {
  privateFiles();
  mkdirSync(dir, {recursive: true, mode: 0o700});
  const homeUrl = env.GRISTLITE_HOME_URL;
  // Background errors go to the server's log lines when there is a logger (serve), else to stderr.
  const onError = logger ? (err: unknown, what: string) => logger.error({err}, what) : undefined;
  const home: HomeStore | undefined = homeUrl
    ? await homeStoreFromUrl(homeUrl, {
        // D177: each process keeps the home's answers every request asks (Grist's 5 s), dropped on any change.
        cache: {
          ttlMs: intFromEnv(env, 'GRISTLITE_HOME_CACHE_MSEC', DEFAULT_HOME_CACHE_MS, 0),
          maxEntries: intFromEnv(env, 'GRISTLITE_HOME_CACHE_ENTRIES', DEFAULT_HOME_CACHE_ENTRIES, 1),
        },
        onError: onError ?? ((err, what) => console.error(what, err)),
      })
    : undefined;
  const attachmentStores = attachmentStoresFromEnv(env, cluster);
  let engine: Engine;
  try {
    const lockDataDir = serves && !home && !leases && !cluster;
    engine = await Engine.open({dataDir: dir, home, leases, env, onError, cluster, attachmentStores, lockDataDir});
  } catch (e) {
    for (const s of attachmentStores) await s.close?.();
    throw e;
  }
  // The cap of open documents is lowered under a small descriptor limit (docs/operations.md).
  const configured = intSetting(env, 'GRISTLITE_MAX_OPEN_DOCS', 1) ?? DEFAULT_MAX_OPEN_DOCS;
  if (logger && engine.maxOpenDocs < configured)
    logger.warn(
      `open documents capped at ${engine.maxOpenDocs} (not ${configured}) by the limit of ${engine.descriptorLimit} open files (ulimit -n): raise it to keep more open`,
    );
  return engine;
}

/**
 * External attachment stores beyond the directory core reads itself (GRISTLITE_ATTACHMENT_STORE_DIR):
 * a bucket of GRISTLITE_ATTACHMENT_STORE_S3 (label `s3`), and with several machines the document
 * store's bucket under `<prefix>attachments/` (label `snapshots`, as Grist's default store).
 */
export function attachmentStoresFromEnv(env: Env, cluster?: ClusterOptions): AttachmentStore[] {
  const stores: AttachmentStore[] = [];
  // As for the document store: the SDK's warning about Node 20 is noise here (clusterFromEnv).
  if (env.GRISTLITE_ATTACHMENT_STORE_S3) process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const s3 = S3AttachmentStore.fromEnv(env);
  if (s3) stores.push(s3);
  if (cluster?.store instanceof S3ObjectStore) {
    stores.push(new S3AttachmentStore(cluster.store, `${cluster.prefix}attachments/`, 'snapshots', false));
  }
  return stores;
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
  logger?: Logger,
  cluster?: ClusterOptions,
): Promise<{engine: Engine; apiKey: string | null; keySource: KeySource; email: string}> {
  const engine = await openEngine(dataDir, env, leases, logger, cluster, true);
  const email = env.GRISTLITE_DEFAULT_EMAIL || 'you@example.com';
  const name = env.GRISTLITE_DEFAULT_NAME ?? 'You';
  const given = env.GRISTLITE_API_KEY || undefined;
  const {apiKey} = await engine.ensureDefaultUser(email, name, given);
  // A key the operator chose is theirs already: never echoed (it would land in logs).
  if (given) return {engine, apiKey: null, keySource: 'env', email};
  return {engine, apiKey, keySource: apiKey ? 'generated' : 'existing', email};
}

/**
 * GRISTLITE_KEEPALIVE_TIMEOUT_MSEC (65000), GRISTLITE_HEADERS_TIMEOUT_MSEC (keep-alive + 5000),
 * GRISTLITE_REQUEST_TIMEOUT_MSEC (300000; 0 = none): the server's connection timeouts
 * (docs/operations.md, "Connections"), checked against each other as configureServer does.
 */
export function serverTimeoutsFromEnv(env: NodeJS.ProcessEnv): ServerTimeouts {
  const timeouts = {
    keepAliveTimeoutMs: intSetting(env, 'GRISTLITE_KEEPALIVE_TIMEOUT_MSEC', 1),
    headersTimeoutMs: intSetting(env, 'GRISTLITE_HEADERS_TIMEOUT_MSEC', 1),
    requestTimeoutMs: intSetting(env, 'GRISTLITE_REQUEST_TIMEOUT_MSEC', 0),
  };
  try {
    serverTimeouts(timeouts);
  } catch (e) {
    throw new BadRequest(`server timeouts: ${(e as Error).message} (GRISTLITE_*_TIMEOUT_MSEC)`);
  }
  return timeouts;
}

/** Listens with a node:http request listener; returns the server and its URL. */
export async function listen(
  listener: RequestListener,
  port: number,
  host: string,
  timeouts: ServerTimeouts = {},
): Promise<{server: Server; url: string}> {
  const server = configureServer(createServer(listener), timeouts);
  await new Promise<void>((resolve, reject) => {
    server.once('error', (e: NodeJS.ErrnoException) => {
      if (e.code === 'EADDRINUSE')
        reject(
          new BadRequest(
            `port ${port} is already in use on ${host} (another gristlite?): stop it or choose another port with --port or PORT`,
          ),
        );
      else if (e.code === 'EACCES')
        reject(
          new BadRequest(`no permission to listen on port ${port} on ${host}: choose another port with --port or PORT`),
        );
      else if (e.code === 'EADDRNOTAVAIL')
        reject(new BadRequest(`cannot listen on ${host}: no such address on this machine (--host or HOST)`));
      else reject(e);
    });
    server.listen(port, host, resolve);
  });
  const addr = server.address();
  const actual = typeof addr === 'object' && addr ? addr.port : port;
  return {server, url: `http://${host.includes(':') ? `[${host}]` : host}:${actual}`};
}

export function closeServer(server: Server): Promise<void> {
  return new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

/** Settings every server takes from the environment (as `gristlite serve` does). */
export function serverSettings(env: Env, args: {data?: string; port?: string; host?: string} = {}) {
  return {
    dataDir: dataDir(args, env),
    port: Number(args.port ?? env.PORT ?? 8484),
    host: args.host ?? env.HOST ?? '127.0.0.1',
  };
}

/**
 * A worker of a several-machine deployment, from the settings: GRISTLITE_DOC_STORE (s3://...),
 * GRISTLITE_S3_ENDPOINT and AWS_*, GRISTLITE_WORKER_URL (default: the address it listens on),
 * GRISTLITE_LEASE_MSEC (default 10000), GRISTLITE_SNAPSHOT_MSEC (default 5000), GRISTLITE_SNAPSHOT_KEEP
 * (default 5), GRISTLITE_LOG_MAX_MB (default 256), GRISTLITE_LOCAL_COPIES (default 200).
 */
export async function clusterFromEnv(
  env: Env,
  homeUrl: string,
  listenUrl: string,
  logger: Logger,
): Promise<ClusterOptions> {
  const num = (name: string, dflt: number, min: number) => intFromEnv(env, name, dflt, min);
  const self = env.GRISTLITE_WORKER_URL || listenUrl;
  if (!/^https?:\/\/[^/]+\/?$/.test(self))
    throw new BadRequest(`GRISTLITE_WORKER_URL must be http(s)://host:port, got ${JSON.stringify(self)}`);
  // The AWS SDK warns at start that its releases after January 2027 need Node 22; the lockfile
  // pins one that runs on 20 (package.json engines), so the warning is noise in a server's log.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const {store, prefix} = S3ObjectStore.fromEnv(env);
  const placement = await PgPlacement.connect(homeUrl, {
    self: self.replace(/\/$/, ''),
    leaseMs: num('GRISTLITE_LEASE_MSEC', 10_000, 500),
    keepSnapshots: num('GRISTLITE_SNAPSHOT_KEEP', 5, 1),
    onError: (err, what) => logger.warn({err}, what),
  });
  return {
    placement,
    store,
    prefix,
    snapshotDelayMs: num('GRISTLITE_SNAPSHOT_MSEC', 5000, 0),
    maxLogBytes: num('GRISTLITE_LOG_MAX_MB', 256, 1) * 1024 * 1024,
    keepLocalCopies: num('GRISTLITE_LOCAL_COPIES', 200, 0),
  };
}

/** Starts the API over node:http; used by `serve` and by the end-to-end tests. */
export async function serve(opts: {dataDir: string; port: number; host: string; env: Env}): Promise<Served> {
  // With a shared (PostgreSQL) home, several processes may serve one data directory: documents are
  // leased, and the lease names this process's URL, known only once it listens.
  const homeUrl = opts.env.GRISTLITE_HOME_URL;
  // Several machines (docs/deployment.md): documents in object storage, placement in PostgreSQL.
  const docStore = opts.env.GRISTLITE_DOC_STORE;
  if (docStore && !homeUrl) throw new BadRequest('GRISTLITE_DOC_STORE needs GRISTLITE_HOME_URL (a PostgreSQL home)');
  // One logger for request lines and the engine's background errors.
  const logger = createLogger(opts.env);
  let setLeases!: (l: DocLeases) => void;
  let failLeases!: (e: unknown) => void;
  const leases =
    homeUrl && !docStore
      ? new Promise<DocLeases>((resolve, reject) => ((setLeases = resolve), (failLeases = reject)))
      : undefined;
  // The port first: a busy port fails before anything is created (a first start would otherwise
  // make, and lose, the default user's key). Requests wait for the engine.
  let ready!: (h: RequestListener) => void;
  const handler = new Promise<RequestListener>((resolve) => (ready = resolve));
  let isReady = false;
  const {server, url} = await listen(
    (req, res) => {
      // Until the engine is open, /status answers itself (alive, not ready) instead of waiting.
      if (!isReady && /^\/status(\?|$)/.test(req.url ?? '')) {
        const q = (req.url ?? '').indexOf('?');
        void statusResponse(new URLSearchParams(q < 0 ? '' : req.url!.slice(q + 1)), {ready: () => false}).then((r) => {
          res.writeHead(r.status, r.headers).end(r.body as string);
        });
        return;
      }
      void handler.then((h) => h(req, res));
    },
    opts.port,
    opts.host,
    serverTimeoutsFromEnv(opts.env),
  );
  let prepared: Awaited<ReturnType<typeof prepareEngine>>;
  try {
    const cluster = docStore ? await clusterFromEnv(opts.env, homeUrl!, url, logger) : undefined;
    prepared = await prepareEngine(opts.dataDir, opts.env, leases, logger, cluster);
    // Before the first request: the import would hold the loop at the first XLSX download (D127).
    await preloadXlsx();
  } catch (e) {
    await closeServer(server);
    throw e;
  }
  const {engine, apiKey, keySource} = prepared;
  ready(toNodeHandler(createApiHandler(engine, {env: opts.env, ready: () => isReady, logger})));
  isReady = true;
  if (leases) {
    await PgDocLeases.connect(homeUrl!, {
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
      isReady = false;
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
export function announce(
  what: string,
  url: string,
  dataDir: string,
  email: string,
  apiKey: string | null,
  keySource: KeySource = apiKey ? 'generated' : 'existing',
): void {
  console.log(`${what} listening on ${url} (data: ${dataDir})`);
  if (apiKey && keySource === 'generated') console.log(`API key for ${email}: ${apiKey}`);
  else if (keySource === 'env') console.log(`API key for ${email}: the one set in GRISTLITE_API_KEY`);
  else console.log(`API key for ${email}: unchanged (stored hashed; to make a new one: gristlite user add ${email})`);
}
