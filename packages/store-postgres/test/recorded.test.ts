// Grist's recorded answers (packages/conformance/golden) replayed with the home on PostgreSQL:
// the `recorded` conformance area over node:http, the engine's home store a PostgresHomeStore in a
// fresh schema (the adapters replay it with the SQLite home).
import {nodeApiTarget, runConformance} from '@gristlite/conformance';
import {PostgresHomeStore} from '../src/index.js';
import {PG_URL, dropSchema, freshSchema, pgAvailable} from './pg-helpers.js';

if (await pgAvailable('recorded conformance')) {
  runConformance(
    nodeApiTarget('postgres-home', async () => {
      const schema = freshSchema('gl_rec');
      const store = await PostgresHomeStore.connect(PG_URL, {schema, max: 5});
      return {store, cleanup: () => dropSchema(schema)};
    }),
    ['recorded'],
  );
}
