/**
 * The world every suite starts from: a fresh server (a target started on a free port with an empty
 * data directory), three real users with API keys, and helpers to build orgs, workspaces and docs
 * over the API itself.
 */
import * as assert from 'uvu/assert';
import type {Engine} from '@gristlite/core/internal';
import {suite, type Test} from 'uvu';
import {Client, type ApiResponse, type CallOptions, type FetchHandler} from './client.js';

/** What a target's `start` gives back. */
export interface Started {
  /** Base URL of the server, e.g. `http://127.0.0.1:41234` (no trailing slash). */
  url: string;
  engine: Engine;
  close(): Promise<void>;
  /** When set, requests go to this fetch-style handler in-process instead of over the network. */
  fetch?: FetchHandler;
}

/** How to reach a server. `env` carries GRISTLITE_* settings such as GRISTLITE_BASE_DOMAIN. */
export interface Target {
  name: string;
  start(env: Record<string, string>): Promise<Started>;
  /**
   * Tests this target does not run: `'<area>: <test name>'` -> why (e.g. what the transport cannot
   * carry). `runConformance` refuses an entry that names no test, so the list cannot go stale.
   */
  skip?: Record<string, string>;
}

/**
 * The uvu suite of one area (`orgs`, `docs`, ...) for a target: a test named in `target.skip`
 * is registered as skipped (uvu counts it under Skipped, not in the total).
 */
export function areaSuite(target: Target, area: string): Test {
  const s = suite(`${target.name}: ${area}`);
  const skip = target.skip ?? {};
  const register = ((name: string, fn: Parameters<Test>[1]) => {
    const key = `${area}: ${name}`;
    registered.add(`${target.name}/${key}`);
    if (key in skip) s.skip(name, fn);
    else s(name, fn);
  }) as Test;
  return Object.assign(register, {before: s.before, after: s.after, only: s.only, skip: s.skip, run: s.run});
}

/** Every `<target>/<area>: <test>` registered so far, to check skip lists against. */
const registered = new Set<string>();

/** Throws when a skip entry of `target` names no registered test (a renamed or removed test). */
export function checkSkipList(target: Target, areas: readonly string[]): void {
  for (const key of Object.keys(target.skip ?? {})) {
    const area = key.slice(0, key.indexOf(': '));
    if (areas.includes(area) && !registered.has(`${target.name}/${key}`)) {
      throw new Error(`${target.name}: skip list names no test: '${key}'`);
    }
  }
}

export const BASE_DOMAIN = 'example.test';
export const ENV: Record<string, string> = {
  GRISTLITE_BASE_DOMAIN: BASE_DOMAIN,
  GRISTLITE_DEFAULT_EMAIL: 'you@example.com',
  GRISTLITE_DEFAULT_NAME: 'You',
};

export interface TestUser {
  id: number;
  email: string;
  name: string;
  ref: string;
  key: string;
  /** Options for a call made as this user. */
  as: CallOptions;
}

export class World {
  constructor(
    readonly server: Started,
    readonly api: Client,
    readonly chimpy: TestUser,
    readonly kiwi: TestUser,
    readonly charon: TestUser,
  ) {}

  get engine(): Engine {
    return this.server.engine;
  }

  /** Creates another real user with a key (for tests that delete users or keys). */
  async newUser(email: string, name: string): Promise<TestUser> {
    return makeUser(this.engine, email, name);
  }

  async personalOrgId(u: TestUser): Promise<number> {
    const org = await this.engine.store.getPersonalOrg(u.id);
    return org!.id;
  }

  /** Id of the "Home" workspace of a user's personal org. */
  async homeWs(u: TestUser): Promise<number> {
    const res = await this.api.get(`/api/orgs/docs-${u.id}/workspaces`, u.as);
    ok(res);
    return res.body.find((w: {name: string}) => w.name === 'Home').id;
  }

  async newOrg(u: TestUser, name: string, domain?: string): Promise<number> {
    return ok(await this.api.post('/api/orgs', domain === undefined ? {name} : {name, domain}, u.as)).body;
  }

  async newWorkspace(u: TestUser, org: number | string, name: string): Promise<number> {
    return ok(await this.api.post(`/api/orgs/${org}/workspaces`, {name}, u.as)).body;
  }

  async newDoc(u: TestUser, wid: number, name: string, extra: Record<string, unknown> = {}): Promise<string> {
    return ok(await this.api.post(`/api/workspaces/${wid}/docs`, {name, ...extra}, u.as)).body;
  }

  async share(u: TestUser, path: string, users: Record<string, string | null>, maxInheritedRole?: string | null) {
    const delta: Record<string, unknown> = {users};
    if (maxInheritedRole !== undefined) delta.maxInheritedRole = maxInheritedRole;
    ok(await this.api.patch(`${path}/access`, {delta}, u.as));
  }

  /**
   * Adds a rule on every column of `tableId` (or on `colIds`, comma-separated) through `/apply`
   * (`permissionsText` '-R': rows it matches, or those columns, are hidden).
   */
  async addTableRule(
    u: TestUser,
    docId: string,
    tableId: string,
    aclFormula: string,
    permissionsText = '-R',
    colIds = '*',
  ) {
    ok(
      await this.api.post(
        `/api/docs/${docId}/apply`,
        [
          ['AddRecord', '_grist_ACLResources', -1, {tableId, colIds}],
          ['AddRecord', '_grist_ACLRules', null, {resource: -1, aclFormula, permissionsText}],
        ],
        u.as,
      ),
    );
  }

  docPath(docId: string): string {
    return this.engine.docPath(docId);
  }
}

async function makeUser(engine: Engine, email: string, name: string): Promise<TestUser> {
  const user = await engine.home.ensureUser(email, name);
  const key = await engine.home.setApiKey(user.id);
  return {id: user.id, email: user.email, name: user.name, ref: user.ref, key, as: {key}};
}

export async function startWorld(target: Target, env: Record<string, string> = {}): Promise<World> {
  const server = await target.start({...ENV, ...env});
  const api = new Client(server.url.replace(/\/$/, ''), server.fetch);
  const chimpy = await makeUser(server.engine, 'chimpy@getgrist.com', 'Chimpy');
  const kiwi = await makeUser(server.engine, 'kiwi@getgrist.com', 'Kiwi');
  const charon = await makeUser(server.engine, 'charon@getgrist.com', 'Charon');
  return new World(server, api, chimpy, kiwi, charon);
}

/**
 * Registers a fresh world on a uvu suite (started before its first test, closed after its last)
 * and returns a getter for it. `env` extends ENV; give a function when it is known only once the
 * suite's own `before` hooks (registered earlier) have run, e.g. the port of a local receiver.
 */
export function useWorld(
  s: Test,
  target: Target,
  env: Record<string, string> | (() => Record<string, string>) = {},
): () => World {
  let world: World | undefined;
  s.before(async () => {
    world = await startWorld(target, typeof env === 'function' ? env() : env);
  });
  s.after(async () => {
    await world?.server.close();
    world = undefined;
  });
  return () => {
    if (!world) throw new Error('world not started');
    return world;
  };
}

function describeRes(res: ApiResponse): string {
  return `${res.status} ${res.text.slice(0, 300)}`;
}

/** Asserts a 200 and returns the response. */
export function ok(res: ApiResponse, what = ''): ApiResponse {
  assert.is(res.status, 200, `${what} expected 200, got ${describeRes(res)}`);
  return res;
}

/** Asserts an exact error: status and body `{"error": message}` (no details). */
export function isError(res: ApiResponse, status: number, message: string, what = ''): void {
  assert.is(res.status, status, `${what} expected ${status} "${message}", got ${describeRes(res)}`);
  assert.equal(res.body, {error: message}, `${what} error body`);
}

/** Asserts Grist's schema-validation error: 400 `{"error": "Invalid payload", "details": {"userError": ...}}`. */
export function isInvalidPayload(res: ApiResponse, userError: string, what = ''): void {
  assert.is(res.status, 400, `${what} expected 400 Invalid payload, got ${describeRes(res)}`);
  assert.equal(res.body, {error: 'Invalid payload', details: {userError}}, `${what} error body`);
}

/** Asserts an error status whose message matches a pattern. */
export function isErrorLike(res: ApiResponse, status: number, pattern: RegExp, what = ''): void {
  assert.is(res.status, status, `${what} expected ${status} ${pattern}, got ${describeRes(res)}`);
  assert.type(res.body?.error, 'string', `${what} error body is {"error": string}`);
  assert.match(res.body.error, pattern, `${what} error message`);
}

/** The keys of an object, sorted (to check a response's exact shape). */
export function keys(o: object): string[] {
  return Object.keys(o).sort();
}

export const ISO_DATE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
