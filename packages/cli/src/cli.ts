/** The `gristlite` commands (serve, user add, org add, import, docs list, backup, key create and revoke): parsing and running them. */
import {parseArgs} from 'node:util';
import {createRequire} from 'node:module';
import {existsSync, mkdirSync, readdirSync, statSync} from 'node:fs';
import {basename, join} from 'node:path';
import {
  BadRequest,
  type Engine,
  backupSqliteFile,
  checkDomain,
  importUpload,
  isValidEmail,
  type ImportProgress,
  type User,
} from '@gristlite/core/internal';
import {dataDir, openEngine, serverSettings, serve, announce} from './serve.js';

type Env = Record<string, string | undefined>;

/** A mistake in the command line: the message, then exit code 2. */
export class UsageError extends Error {}

const VERSION: string = createRequire(import.meta.url)('../../package.json').version;

const COMMON = `  --data DIR     data directory (GRISTLITE_DATA_DIR, default ./data)
  --home URL     home database on PostgreSQL (GRISTLITE_HOME_URL)
  -h, --help     this help`;

interface Command {
  usage: string;
  about: string;
  options: Record<string, {type: 'string' | 'boolean'; short?: string}>;
  /** Number of positional arguments: exactly, or [min, max]. */
  positionals: number;
  run(a: {
    values: Record<string, string | boolean | undefined>;
    positionals: string[];
    env: Env;
  }): Promise<number | undefined>;
}

const HOME_OPTS = {data: {type: 'string'}, home: {type: 'string'}} as const;

function str(v: string | boolean | undefined): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

function withHome(values: Record<string, unknown>, env: Env): Env {
  return typeof values.home === 'string' ? {...env, GRISTLITE_HOME_URL: values.home} : env;
}

function checkEmail(email: string | undefined, what: string): string {
  if (!email || !isValidEmail(email))
    throw new UsageError(`${what} must be an email address${email ? `: ${email}` : ''}`);
  return email;
}

/** Runs `fn` with the engine and the existing user named by the command's EMAIL argument. */
async function withExistingUser(
  a: Parameters<Command['run']>[0],
  fn: (engine: Engine, user: User) => Promise<void>,
): Promise<number> {
  const email = checkEmail(a.positionals[0], 'EMAIL');
  await withEngine(a.values, a.env, async (engine) => {
    const user = await engine.store.getUserByEmail(email);
    if (!user) throw new BadRequest(`no user ${email}: create it with "gristlite user add ${email}"`);
    await fn(engine, user);
  });
  return 0;
}

/**
 * Commands that read or write document files directly: with several machines the files live in
 * object storage and on the worker holding each document, so these go through the HTTP API.
 */
function localDocumentsOnly(env: Env, command: string, instead: string): void {
  if (env.GRISTLITE_DOC_STORE)
    throw new UsageError(
      `gristlite ${command} works on one data directory's documents; with GRISTLITE_DOC_STORE (several machines) ${instead}`,
    );
}

async function withEngine<T>(
  values: Record<string, unknown>,
  env: Env,
  fn: (engine: Engine) => Promise<T>,
): Promise<T> {
  const engine = await openEngine(dataDir(values as {data?: string}, env), withHome(values, env));
  try {
    return await fn(engine);
  } finally {
    await engine.close();
  }
}

/** Documents with a file in the data directory, with their home records. */
async function listDocFiles(engine: Engine) {
  const dir = join(engine.dataDir, 'docs');
  const files = existsSync(dir)
    ? readdirSync(dir)
        .filter((f) => /^[A-Za-z0-9_-]+\.grist$/.test(f))
        .sort()
    : [];
  const out = [];
  for (const f of files) {
    const id = f.slice(0, -'.grist'.length);
    const doc = await engine.store.getDoc(id);
    const ws = doc ? await engine.store.getWorkspace(doc.workspaceId) : null;
    const org = ws ? await engine.store.getOrg(ws.orgId) : null;
    out.push({
      id,
      name: doc?.name ?? '(not in the home database)',
      workspace: ws ? `${ws.id} ${ws.name}` : '-',
      org: org ? (org.domain ?? `personal ${org.id}`) : '-',
      size: statSync(join(dir, f)).size,
      removed: Boolean(doc?.removedAt),
    });
  }
  return out;
}

const COMMANDS: Record<string, Command> = {
  serve: {
    usage: 'gristlite serve [--data DIR] [--port N] [--host H] [--home postgres://...]',
    about: 'Serves the API (default http://127.0.0.1:8484). Settings: docs/operations.md.',
    options: {...HOME_OPTS, port: {type: 'string'}, host: {type: 'string'}},
    positionals: 0,
    async run({values, env}) {
      const port = str(values.port) ?? env.PORT;
      if (port !== undefined && (!/^\d{1,5}$/.test(port) || Number(port) > 65535)) {
        throw new UsageError(
          `${str(values.port) !== undefined ? '--port' : 'PORT'} must be a port number (0-65535): ${port}`,
        );
      }
      env = withHome(values, env);
      const settings = serverSettings(env, {data: str(values.data), port: str(values.port), host: str(values.host)});
      const served = await serve({...settings, env});
      announce(
        'gristlite',
        served.url,
        settings.dataDir,
        env.GRISTLITE_DEFAULT_EMAIL || 'you@example.com',
        served.apiKey,
        served.keySource,
      );
      const stop = () => void served.close().then(() => process.exit(0));
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
      return undefined;
    },
  },
  'user add': {
    usage: 'gristlite user add EMAIL [--name NAME] [--key KEY] [--data DIR] [--home URL]',
    about: 'Creates (or finds) a user and prints only their new API key.',
    options: {...HOME_OPTS, name: {type: 'string'}, key: {type: 'string'}},
    positionals: 1,
    async run({values, positionals, env}) {
      const email = checkEmail(positionals[0], 'EMAIL');
      const key = str(values.key);
      if (key !== undefined && !/^[0-9a-f]{40}$/.test(key) && key.length < 16)
        throw new UsageError('--key must be at least 16 characters');
      await withEngine(values, env, async (engine) => {
        const name = str(values.name);
        const user = await engine.home.ensureUser(email, name ?? '');
        if (name !== undefined && user.name !== name) await engine.store.updateUser(user.id, {name});
        console.log(await engine.home.setApiKey(user.id, key));
      });
      return 0;
    },
  },
  'org add': {
    usage: 'gristlite org add NAME --domain DOMAIN --owner EMAIL [--data DIR] [--home URL]',
    about: 'Creates a team site and prints its id.',
    options: {...HOME_OPTS, domain: {type: 'string'}, owner: {type: 'string'}},
    positionals: 1,
    async run({values, positionals, env}) {
      const domain = str(values.domain);
      if (!domain) throw new UsageError('--domain is required');
      const ownerEmail = checkEmail(str(values.owner), '--owner');
      try {
        checkDomain(domain);
      } catch (e) {
        throw new UsageError(`--domain: ${(e as Error).message}`);
      }
      await withEngine(values, env, async (engine) => {
        const owner = await engine.home.ensureUser(ownerEmail);
        const org = await engine.store.createOrg({
          name: positionals[0],
          domain,
          ownerUserId: owner.id,
          personal: false,
        });
        console.log(String(org.id));
      });
      return 0;
    },
  },
  import: {
    usage:
      'gristlite import FILE.grist|FILE.csv|FILE.tsv|FILE.xlsx|FILE.json [--workspace ID] [--owner EMAIL] [--name TITLE] [--data DIR] [--home URL]',
    about: 'Creates a document from a file and prints its id (progress on stderr).',
    options: {...HOME_OPTS, workspace: {type: 'string'}, owner: {type: 'string'}, name: {type: 'string'}},
    positionals: 1,
    async run({values, positionals, env}) {
      const file = positionals[0];
      const owner = str(values.owner);
      if (owner !== undefined) checkEmail(owner, '--owner');
      const wsArg = str(values.workspace);
      if (wsArg !== undefined && !/^\d+$/.test(wsArg))
        throw new UsageError(`--workspace must be a workspace id: ${wsArg}`);
      if (!existsSync(file)) throw new BadRequest(`no such file: ${file}`);
      localDocumentsOnly(env, 'import', 'upload it with POST /api/workspaces/:wid/import or /api/docs');
      await withEngine(values, env, async (engine) => {
        // Imports act as a user: --owner, else the server's default user.
        const email = owner ?? env.GRISTLITE_DEFAULT_EMAIL ?? 'you@example.com';
        const user = await engine.store.getUserByEmail(email);
        if (!user) throw new BadRequest(`no user ${email}: create it with "gristlite user add ${email}"`);
        const principal = engine.home.principalFor(user, true);
        // Without --workspace, the user's Home, which GRIST_PERSONAL_ORGS=false leaves out.
        const personal =
          wsArg === undefined && engine.home.settings.personalOrgs ? await engine.store.getPersonalOrg(user.id) : null;
        if (wsArg === undefined && !personal)
          throw new UsageError(`--workspace is needed: ${email} has no personal org`);
        const wid = wsArg !== undefined ? Number(wsArg) : (await engine.store.listWorkspaces(personal!.id))[0].id;
        // One progress line, rewritten in place (at most every 200 ms, and at each new stage):
        // rows, percent read or copied, and for a .grist file the schema upgrade and formulas.
        let progressShown = false;
        let last = 0;
        let lastStage = '';
        const STAGES = {
          rows: '',
          copy: 'copying',
          upgrade: 'upgrading the schema',
          formulas: 'computing formulas',
          done: 'done',
        };
        const progress = ({rows, fraction, stage}: ImportProgress) => {
          const now = Date.now();
          if (now - last < 200 && stage === lastStage && fraction !== 1) return;
          last = now;
          lastStage = stage;
          progressShown = true;
          const parts = [
            STAGES[stage] || null,
            rows !== null ? `${rows} rows` : null,
            fraction !== null && stage !== 'done' ? `${Math.floor(fraction * 100)}%` : null,
          ];
          process.stderr.write(
            `\rimporting ${basename(file)}: ${parts.filter(Boolean).join(', ')}${process.stderr.isTTY ? '\x1b[K' : ''}`,
          );
        };
        const result = await importUpload(
          engine,
          wid,
          principal,
          {fileName: basename(file), path: file},
          {
            documentName: str(values.name),
            onProgress: progress,
          },
        );
        if (progressShown) process.stderr.write('\n');
        if (result.readOnly)
          process.stderr.write(`warning: ${result.title} can be read but not written: ${result.readOnly}\n`);
        console.log(result.id);
      });
      return 0;
    },
  },
  'docs list': {
    usage: 'gristlite docs list [--json] [--data DIR] [--home URL]',
    about: 'Lists the documents of the data directory: id, name, workspace, org, size in bytes.',
    options: {...HOME_OPTS, json: {type: 'boolean'}},
    positionals: 0,
    async run({values, env}) {
      localDocumentsOnly(env, 'docs list', 'list them with GET /api/orgs/:org/workspaces');
      const docs = await withEngine(values, env, listDocFiles);
      if (values.json) {
        console.log(JSON.stringify(docs, null, 2));
        return 0;
      }
      const rows = [
        ['ID', 'NAME', 'WORKSPACE', 'ORG', 'SIZE'],
        ...docs.map((d) => [d.id, d.name + (d.removed ? ' (removed)' : ''), d.workspace, d.org, String(d.size)]),
      ];
      const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
      for (const r of rows) console.log(r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]))).join('  '));
      return 0;
    },
  },
  backup: {
    usage: 'gristlite backup DOC_ID OUT.grist | gristlite backup --all DIR [--data DIR] [--home URL]',
    about:
      "Copies a document, or every document and the home database, with SQLite's online backup (safe while a server runs).",
    options: {...HOME_OPTS, all: {type: 'boolean'}},
    positionals: -1,
    async run({values, positionals, env}) {
      if (values.all ? positionals.length !== 1 : positionals.length !== 2) {
        throw new UsageError(
          values.all ? 'backup --all takes one argument: DIR' : 'backup takes DOC_ID and OUT (or --all DIR)',
        );
      }
      localDocumentsOnly(env, 'backup', 'download documents with GET /api/docs/:docId/download');
      await withEngine(values, env, async (engine) => {
        if (!values.all) {
          const [docId, out] = positionals;
          if (!/^[A-Za-z0-9_-]+$/.test(docId) || !existsSync(engine.docPath(docId)))
            throw new BadRequest(`no document ${docId} in ${engine.dataDir}`);
          await backupSqliteFile(engine.docPath(docId), out);
          console.log(out);
          return;
        }
        const out = positionals[0];
        mkdirSync(join(out, 'docs'), {recursive: true});
        const home = join(engine.dataDir, 'home.sqlite3');
        if (!withHome(values, env).GRISTLITE_HOME_URL && existsSync(home)) {
          await backupSqliteFile(home, join(out, 'home.sqlite3'));
          console.log(join(out, 'home.sqlite3'));
        } else if (withHome(values, env).GRISTLITE_HOME_URL) {
          console.error('gristlite: the home database is on PostgreSQL: back it up with pg_dump');
        }
        for (const d of await listDocFiles(engine)) {
          const dest = join(out, 'docs', `${d.id}.grist`);
          await backupSqliteFile(engine.docPath(d.id), dest);
          console.log(dest);
        }
      });
      return 0;
    },
  },
  'key create': {
    usage: 'gristlite key create EMAIL [--data DIR] [--home URL]',
    about: 'Makes a new API key for an existing user (the old one stops working) and prints it.',
    options: {...HOME_OPTS},
    positionals: 1,
    run: (args) =>
      withExistingUser(args, async (engine, user) => {
        console.log(await engine.home.setApiKey(user.id));
      }),
  },
  'key revoke': {
    usage: 'gristlite key revoke EMAIL [--data DIR] [--home URL]',
    about: "Removes a user's API key: requests with it answer 401.",
    options: {...HOME_OPTS},
    positionals: 1,
    run: (args) =>
      withExistingUser(args, async (engine, user) => {
        await engine.store.setApiKey(user.id, null, null);
        console.log(`API key of ${user.email} revoked`);
      }),
  },
};

/** The whole usage text (`gristlite --help`). */
export function usage(): string {
  const lines = Object.values(COMMANDS).map((c) => `  ${c.usage}\n      ${c.about}`);
  return (
    `gristlite ${VERSION}: Grist's REST API over .grist files\n\nusage:\n${lines.join('\n')}\n\n` +
    `Every command takes --help. gristlite --version prints the version.`
  );
}

function commandHelp(c: Command): string {
  return `usage: ${c.usage}\n\n${c.about}\n\noptions:\n${COMMON}`;
}

export async function run(argv: string[], env: Env): Promise<number | undefined> {
  const [first, second] = argv;
  if (first === undefined || first === '--help' || first === '-h' || first === 'help') {
    if (first === undefined) throw new UsageError(`a command is required\n\n${usage()}`);
    console.log(usage());
    return 0;
  }
  if (first === '--version' || first === '-v' || first === 'version') {
    console.log(VERSION);
    return 0;
  }
  const two = second !== undefined ? `${first} ${second}` : '';
  const name = COMMANDS[two] ? two : COMMANDS[first] ? first : null;
  const group = Object.keys(COMMANDS).filter((k) => k.startsWith(`${first} `));
  if (!name && group.length && (second === '--help' || second === '-h')) {
    console.log(group.map((k) => `usage: ${COMMANDS[k].usage}\n    ${COMMANDS[k].about}`).join('\n'));
    return 0;
  }
  if (!name) {
    throw new UsageError(
      group.length && second === undefined
        ? `${first} needs a subcommand: ${group.join(', ')}`
        : group.length
          ? `unknown command: ${two || first} (expected ${group.join(', ')})`
          : `unknown command: ${first} (gristlite --help lists the commands)`,
    );
  }
  const cmd = COMMANDS[name];
  const rest = argv.slice(name.split(' ').length);
  if (rest.includes('--help') || rest.includes('-h')) {
    console.log(commandHelp(cmd));
    return 0;
  }
  const parsed = (() => {
    try {
      return parseArgs({args: rest, options: cmd.options, allowPositionals: true, strict: true});
    } catch (e) {
      throw new UsageError(
        `${(e as Error).message.replace(/\. To specify a positional.*$/s, '')}\nusage: ${cmd.usage}`,
      );
    }
  })();
  if (cmd.positionals >= 0 && parsed.positionals.length !== cmd.positionals) {
    throw new UsageError(
      `${name} takes ${cmd.positionals || 'no'} argument${cmd.positionals === 1 ? '' : 's'}, got ${parsed.positionals.length}\nusage: ${cmd.usage}`,
    );
  }
  return cmd.run({values: parsed.values, positionals: parsed.positionals, env});
}

/** Exit code for an error: 2 for a mistake in the command line, else 1. */
export function exitCodeFor(e: unknown): number {
  return e instanceof UsageError ? 2 : 1;
}
