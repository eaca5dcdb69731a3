// gristlite's "external" server mode for Grist's REST tests (grist-core test/server/lib/docapi).
// Copied over the file of the same name in a grist-core checkout, it replaces Grist's empty hook:
// each scenario gets a fresh `gristlite serve` on 127.0.0.1, seeded by seed.mjs with the users,
// orgs and fixture documents of Grist's test seed that the tests use. See docs/grist-docapi.md.
//   GRISTLITE_DIR   a built gristlite checkout (required)
//   GRISTLITE_NODE  the node that gristlite was installed with (default: node on PATH)
import type {
  ITestServerModeOptions,
  ITestServerSetupResult,
  TestServerInitializer,
} from 'test/server/lib/docapi/helpers';
import type {TestServer} from 'test/server/lib/helpers/TestServer';

import {type ChildProcess, execFileSync, spawn} from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

import {UserAPIImpl} from 'app/common/UserAPI';
import fetch from 'node-fetch';

export type ExtraServerModes = 'external';

let serial = 0;

/**
 * Stands where the tests expect Grist's TestServer. What only Grist's own process can do (its
 * testing hooks: changing its environment, reading its internals) throws, naming the hook, so a test
 * that needs it fails as a harness limit; flushing the authorizer's cache is nothing to do, since
 * gristlite reads access from its home store on every request.
 */
class ExternalServer {
  public stopped = false;
  public readonly proxiedServer = false;
  public readonly testingHooks: any;

  constructor(
    public readonly serverUrl: string,
    private _proc: ChildProcess,
    private _exited: Promise<unknown>,
  ) {
    this.testingHooks = new Proxy(
      {},
      {
        get: (_target, name) => {
          if (name === 'flushAuthorizerCache') {
            return async () => undefined;
          }
          if (name === 'then') {
            return undefined;
          }
          return async () => {
            throw new Error(`harness limit: testingHooks.${String(name)} needs Grist's own server`);
          };
        },
      },
    );
  }

  public makeUserApi(org: string, user: string = 'chimpy'): UserAPIImpl {
    return new UserAPIImpl(`${this.serverUrl}/o/${org}`, {
      headers: {Authorization: `Bearer api_key_for_${user}`},
      fetch: fetch as unknown as typeof globalThis.fetch,
    });
  }

  public async stop() {
    if (this.stopped) {
      return;
    }
    this.stopped = true;
    this._proc.kill('SIGTERM');
    await this._exited;
  }
}

async function startGristlite({tmpDir, env}: ITestServerModeOptions): Promise<ITestServerSetupResult> {
  const repo = process.env.GRISTLITE_DIR;
  if (!repo) {
    throw new Error('GRISTLITE_DIR must name a built gristlite checkout');
  }
  const node = process.env.GRISTLITE_NODE || 'node';
  const dataDir = path.join(tmpDir, `gristlite-${process.pid}-${++serial}`);
  fs.rmSync(dataDir, {recursive: true, force: true});
  // The harness copied the fixture documents into GRIST_DATA_DIR under their Grist test ids.
  execFileSync(
    node,
    [path.join(repo, 'scripts/grist-docapi/seed.mjs'), '--data', dataDir, '--fixtures', env.GRIST_DATA_DIR],
    {stdio: ['ignore', 'ignore', 'inherit']},
  );
  const log = fs.openSync(`${dataDir}.log`, 'a');
  const proc = spawn(
    node,
    [
      path.join(repo, 'packages/cli/dist/src/main.js'),
      'serve',
      '--port',
      '0',
      '--host',
      '127.0.0.1',
      '--data',
      dataDir,
    ],
    {
      env: {
        ...process.env,
        // As Grist's TestServer sets them for its own server (webhook retries and queue).
        GRIST_TRIGGER_WAIT_DELAY: '100',
        GRIST_TRIGGER_MAX_ATTEMPTS: '4',
        GRIST_MAX_QUEUE_SIZE: '10',
        ...env,
        // Grist's test attachment store is a directory of its own (label "test-filesystem"); gristlite's
        // nearest is its directory store (label "filesystem").
        ...(env.GRIST_EXTERNAL_ATTACHMENTS_MODE === 'test'
          ? {GRISTLITE_ATTACHMENT_STORE_DIR: `${dataDir}-attachments`}
          : {}),
        GRISTLITE_DEFAULT_EMAIL: 'chimpy@getgrist.com',
        GRISTLITE_LOG_LEVEL: process.env.GRISTLITE_LOG_LEVEL || 'info',
      },
      stdio: ['ignore', 'pipe', log],
    },
  );
  const exited = new Promise((resolve) => proc.once('exit', resolve));
  // A server the tests never get (a failed start) or never stop (a failed hook) dies with them.
  const killOnExit = () => proc.kill('SIGKILL');
  process.once('exit', killOnExit);
  void exited.then(() => process.removeListener('exit', killOnExit));
  // Started within the tests' own hook timeout (30 s in most files), or stopped with a reason.
  const startMsec = Number(process.env.GRISTLITE_START_MSEC || 25000);
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`gristlite did not start within ${startMsec} ms; see ${dataDir}.log`));
    }, startMsec);
    proc.stdout!.on('data', (d) => {
      fs.writeSync(log, d);
      out += d;
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`gristlite exited (${code}); see ${dataDir}.log`));
    });
  });
  const server = new ExternalServer(url, proc, exited) as unknown as TestServer;
  return {home: server, docs: server, serverUrl: url};
}

/**
 * Hook to allow adding extra server modes in other versions of Grist (SaaS, full edition)
 */
export function getExtraServerModeInitializer(mode: string): TestServerInitializer | undefined {
  return mode === 'external' ? startGristlite : undefined;
}
