// Shared by the http tests: where the real Grist documents are (copy them before opening).
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** Path of a shared fixture: `$GRISTLITE_FIXTURES`, else `../shared/fixtures/grist` above the repo. */
export function fixture(name: string): string {
  if (process.env.GRISTLITE_FIXTURES) return join(process.env.GRISTLITE_FIXTURES, name);
  for (let d = dirname(new URL(import.meta.url).pathname); d !== dirname(d); d = dirname(d)) {
    for (const c of [join(d, 'fixtures/grist', name), join(d, 'shared/fixtures/grist', name)]) if (existsSync(c)) return c;
  }
  throw new Error('Grist fixtures not found; set GRISTLITE_FIXTURES');
}
