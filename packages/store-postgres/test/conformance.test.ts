import {homeStoreConformance} from '@gristlite/conformance/homestore';
import {PostgresHomeStore} from '../src/index.js';
import {PG_URL, dropSchema, freshSchema, pgAvailable} from './pg-helpers.js';

if (await pgAvailable('conformance')) {
  homeStoreConformance('PostgresHomeStore', async () => {
    const schema = freshSchema();
    const store = await PostgresHomeStore.connect(PG_URL, {schema, max: 5});
    return {store, cleanup: () => dropSchema(schema)};
  });
}
