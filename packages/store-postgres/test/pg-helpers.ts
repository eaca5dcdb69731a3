import pg from 'pg';
import {underCi} from '@gristlite/core/testing';

export const PG_URL = process.env.GRISTLITE_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** A fresh schema name for one test run. */
export function freshSchema(prefix = 'gl_test'): string {
  return `${prefix}_${process.pid}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
}

export async function dropSchema(schema: string): Promise<void> {
  const c = new pg.Client({connectionString: PG_URL});
  await c.connect();
  try {
    await c.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`);
  } finally {
    await c.end();
  }
}

/**
 * Whether PostgreSQL answers at PG_URL. When it does not, prints `SKIPPED PostgreSQL ...: reason`
 * and returns false, except under CI, where an unreachable server is an error.
 */
export async function pgAvailable(what: string): Promise<boolean> {
  const c = new pg.Client({connectionString: PG_URL, connectionTimeoutMillis: 3000});
  try {
    await c.connect();
    await c.query('SELECT 1');
    return true;
  } catch (e) {
    const reason = `${(e as Error).message || String(e)} (at ${PG_URL.replace(/\/\/[^@/]*@/, '//***@')}; set GRISTLITE_TEST_PG_URL)`;
    if (underCi()) throw new Error(`PostgreSQL ${what} cannot run under CI: ${reason}`);
    console.log(`SKIPPED PostgreSQL ${what}: ${reason}`);
    return false;
  } finally {
    await c.end().catch(() => {});
  }
}
