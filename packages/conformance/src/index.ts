/**
 * The adapter conformance suite: one set of end-to-end tests of the whole REST API, run against any
 * way of reaching a gristlite server (`Target`). Each area is its own uvu suite with a fresh server.
 *
 *   import { runConformance } from '@gristlite/conformance';
 *   runConformance({ name: 'node', start: async (env) => ({ url, engine, close }) });
 */
import { accessSuite } from './access.js';
import { docsSuite } from './docs.js';
import { errorsSuite } from './errors.js';
import { orgsSuite } from './orgs.js';
import { usersSuite } from './users.js';
import type { Target } from './world.js';
import { workspacesSuite } from './workspaces.js';

export { Client, type ApiResponse, type CallOptions, type FetchHandler } from './client.js';
export { BASE_DOMAIN, ENV, World, startWorld, useWorld, ok, isError, isErrorLike, type Started, type Target, type TestUser } from './world.js';

/** Every suite, in the order they run. Later areas (records, attachments, ...) are added here. */
export const SUITES: Record<string, (target: Target) => void> = {
  orgs: orgsSuite,
  workspaces: workspacesSuite,
  docs: docsSuite,
  access: accessSuite,
  users: usersSuite,
  errors: errorsSuite,
};

/** Registers (and queues for running) every suite against `target`; `only` picks some by name. */
export function runConformance(target: Target, only?: string[]): void {
  for (const [name, register] of Object.entries(SUITES)) {
    if (!only || only.includes(name)) register(target);
  }
}
