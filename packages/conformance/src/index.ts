/**
 * The adapter conformance suite: one set of end-to-end tests of the whole REST API, run against any
 * way of reaching a gristlite server (`Target`). Each area is its own uvu suite with a fresh server.
 *
 *   import { runConformance } from '@gristlite/conformance';
 *   runConformance({ name: 'node', start: async (env) => ({ url, engine, close }) });
 */
import { accessSuite } from './access.js';
import { apiConsoleSuite } from './apiconsole.js';
import { attachmentsSuite } from './attachments.js';
import { columnsTablesSuite } from './columns-tables.js';
import { dataSuite } from './data.js';
import { docsSuite } from './docs.js';
import { errorsSuite } from './errors.js';
import { fixturesSuite } from './fixtures.js';
import { formulasSuite } from './formulas.js';
import { orgsSuite } from './orgs.js';
import { recordsSuite } from './records.js';
import { sqlDownloadsSuite } from './sql-downloads.js';
import { usersSuite } from './users.js';
import { webhooksSuite } from './webhooks.js';
import type { Target } from './world.js';
import { workspacesSuite } from './workspaces.js';

export { Client, type ApiResponse, type CallOptions, type FetchHandler } from './client.js';
export { BASE_DOMAIN, ENV, World, startWorld, useWorld, ok, isError, isErrorLike, type Started, type Target, type TestUser } from './world.js';

/** Every suite, in the order they run. */
export const SUITES: Record<string, (target: Target) => void> = {
  orgs: orgsSuite,
  workspaces: workspacesSuite,
  docs: docsSuite,
  access: accessSuite,
  users: usersSuite,
  errors: errorsSuite,
  records: recordsSuite,
  'columns-tables': columnsTablesSuite,
  data: dataSuite,
  fixtures: fixturesSuite,
  'sql-downloads': sqlDownloadsSuite,
  attachments: attachmentsSuite,
  webhooks: webhooksSuite,
  formulas: formulasSuite,
  apiconsole: apiConsoleSuite,
};

/** Registers (and queues for running) every suite against `target`; `only` picks some by name. */
export function runConformance(target: Target, only?: string[]): void {
  for (const [name, register] of Object.entries(SUITES)) {
    if (!only || only.includes(name)) register(target);
  }
}
