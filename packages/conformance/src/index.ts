/**
 * The adapter conformance suite: one set of end-to-end tests of the whole REST API, run against any
 * way of reaching a gristlite server (`Target`). Each area is its own uvu suite with a fresh server.
 *
 *   import { runConformance } from '@gristlite/conformance';
 *   runConformance({ name: 'node', start: async (env) => ({ url, engine, close }) });
 *
 * Each adapter runs it from its own tests, building its target with `apiTarget` (an engine and the
 * API handler) and saying how it mounts the handler; a target's `skip` names, with a reason, any
 * test it does not run. The HomeStore suite for store implementations is `@gristlite/conformance/homestore`.
 */
import {accessSuite} from './access.js';
import {accessRulesSuite} from './access-rules.js';
import {apiKeysSuite} from './apikeys.js';
import {changesSuite} from './changes.js';
import {formsSuite} from './forms.js';
import {apiConsoleSuite} from './apiconsole.js';
import {attachmentsSuite} from './attachments.js';
import {attachmentStoresSuite} from './attachment-stores.js';
import {cachingSuite} from './caching.js';
import {columnsTablesSuite} from './columns-tables.js';
import {dataSuite} from './data.js';
import {docsSuite} from './docs.js';
import {errorsSuite} from './errors.js';
import {fixturesSuite} from './fixtures.js';
import {formulasSuite} from './formulas.js';
import {homeParitySuite} from './home-parity.js';
import {lifecycleSuite} from './lifecycle.js';
import {mcpSuite} from './mcp.js';
import {historySuite} from './history.js';
import {idempotencySuite} from './idempotency.js';
import {importsSuite} from './imports.js';
import {orgsSuite} from './orgs.js';
import {orgFlagsSuite} from './org-flags.js';
import {pagingSuite} from './paging.js';
import {recordedSuite} from './recorded/suite.js';
import {recordsSuite} from './records.js';
import {sharesSuite} from './shares.js';
import {sqlDownloadsSuite} from './sql-downloads.js';
import {summariesSuite} from './summaries.js';
import {usersSuite} from './users.js';
import {webhooksSuite} from './webhooks.js';
import {webhooksStatsSuite} from './webhooks-stats.js';
import {whereSuite} from './where.js';
import {aggregateSuite} from './aggregate.js';
import {checkSkipList, type Target} from './world.js';
import {workspacesSuite} from './workspaces.js';

export {Client, type ApiResponse, type CallOptions, type FetchHandler} from './client.js';
export {
  BASE_DOMAIN,
  ENV,
  World,
  startWorld,
  useWorld,
  ok,
  isError,
  isErrorLike,
  areaSuite,
  type Started,
  type Target,
  type TestUser,
} from './world.js';
export {apiTarget, type HomeFactory, listenLocal, type Mounted, nodeApiTarget} from './targets.js';

/** Every suite, in the order they run. */
export const SUITES: Record<string, (target: Target) => void> = {
  orgs: orgsSuite,
  'org-flags': orgFlagsSuite,
  workspaces: workspacesSuite,
  docs: docsSuite,
  access: accessSuite,
  'access-rules': accessRulesSuite,
  users: usersSuite,
  'home-parity': homeParitySuite,
  errors: errorsSuite,
  records: recordsSuite,
  'columns-tables': columnsTablesSuite,
  data: dataSuite,
  fixtures: fixturesSuite,
  'sql-downloads': sqlDownloadsSuite,
  attachments: attachmentsSuite,
  'attachment-stores': attachmentStoresSuite,
  paging: pagingSuite,
  caching: cachingSuite,
  idempotency: idempotencySuite,
  apikeys: apiKeysSuite,
  imports: importsSuite,
  webhooks: webhooksSuite,
  'webhooks-stats': webhooksStatsSuite,
  changes: changesSuite,
  forms: formsSuite,
  shares: sharesSuite,
  lifecycle: lifecycleSuite,
  history: historySuite,
  formulas: formulasSuite,
  summaries: summariesSuite,
  apiconsole: apiConsoleSuite,
  where: whereSuite,
  mcp: mcpSuite,
  aggregate: aggregateSuite,
  recorded: recordedSuite,
};

/** Registers (and queues for running) every suite against `target`; `only` picks some by name. */
export function runConformance(target: Target, only?: string[]): void {
  const areas = Object.keys(SUITES).filter((name) => !only || only.includes(name));
  for (const name of areas) SUITES[name](target);
  checkSkipList(target, areas);
}

/** `runConformance` with the areas named in GRISTLITE_CONFORMANCE_ONLY (comma-separated), else all. */
export function runConformanceFromEnv(target: Target): void {
  runConformance(target, process.env.GRISTLITE_CONFORMANCE_ONLY?.split(',').filter(Boolean));
}
