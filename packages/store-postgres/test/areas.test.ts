// Conformance areas whose routes create documents or deliver events through the home store
// (imports into workspaces and tables, webhooks, change feeds, MCP's document listing; issue 42),
// and the org settings that hide personal orgs from the store's listings (org-flags),
// run with the home on PostgreSQL (the adapters run them with the SQLite home).
import {nodeApiTarget, runConformance} from '@gristlite/conformance';
import {PostgresHomeStore} from '../src/index.js';
import {PG_URL, dropSchema, freshSchema, pgAvailable} from './pg-helpers.js';

if (await pgAvailable('conformance areas on the PostgreSQL home')) {
  runConformance(
    nodeApiTarget('postgres-home', async () => {
      const schema = freshSchema('gl_areas');
      const store = await PostgresHomeStore.connect(PG_URL, {schema, max: 5});
      return {store, cleanup: () => dropSchema(schema)};
    }),
    ['imports', 'webhooks', 'changes', 'mcp', 'org-flags'],
  );
}
