// Shares and published forms (issue 41) with the home on PostgreSQL: the `shares` conformance
// area over node:http, the engine's home store a PostgresHomeStore in a fresh schema (the
// adapters run it with the SQLite home).
import {nodeApiTarget, runConformance} from '@gristlite/conformance';
import {PostgresHomeStore} from '../src/index.js';
import {PG_URL, dropSchema, freshSchema, pgAvailable} from './pg-helpers.js';

if (await pgAvailable('shares conformance')) {
  runConformance(
    nodeApiTarget('postgres-home', async () => {
      const schema = freshSchema('gl_shr');
      const store = await PostgresHomeStore.connect(PG_URL, {schema, max: 5});
      return {store, cleanup: () => dropSchema(schema)};
    }),
    ['shares', 'forms'],
  );
}
