import type {HomeStore} from '@gristlite/core/internal';
import {PostgresHomeStore, type PostgresHomeStoreOptions} from './store.js';

export {
  PostgresHomeStore,
  connectionConfig,
  migrate,
  LOCK_CLASS_MIGRATE,
  LOCK_CLASS_DOC_LEASE,
  type PostgresHomeStoreOptions,
} from './store.js';
export {MIGRATIONS, type Migration} from './migrations.js';
export {DEFAULT_HOME_CACHE_ENTRIES, DEFAULT_HOME_CACHE_MS, HOME_CHANNEL, type HomeCacheOptions} from './cache.js';

/**
 * Opens the home store named by a URL: `postgres://` or `postgresql://` (an optional `schema`
 * query parameter picks the schema, default `public`). Used by `gristlite serve --home URL` and
 * `GRISTLITE_HOME_URL`.
 */
export async function homeStoreFromUrl(url: string, opts: PostgresHomeStoreOptions = {}): Promise<HomeStore> {
  if (/^postgres(ql)?:\/\//i.test(url)) return PostgresHomeStore.connect(url, opts);
  throw new Error(
    `unsupported home store URL ${JSON.stringify(url.replace(/\/\/[^@/]*@/, '//***@'))}: expected postgres://...`,
  );
}
export {PgDocLeases, type PgDocLeasesOptions} from './leases.js';
export type {DocLeases} from '@gristlite/core/internal';
export {PgPlacement, type PgPlacementOptions} from './placement.js';
