// Shared helpers of the doc-*.test.ts suites.
import {copyFileSync, existsSync, mkdtempSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {dirname, join} from 'node:path';

/** The directory of Grist's real fixture documents: $GRISTLITE_FIXTURES, or found upwards. */
export const FIXTURES = findFixtures();

function findFixtures(): string {
  if (process.env.GRISTLITE_FIXTURES) { return process.env.GRISTLITE_FIXTURES; }
  let dir = dirname(new URL(import.meta.url).pathname);
  for (;;) {
    for (const candidate of [join(dir, 'fixtures/grist'), join(dir, 'shared/fixtures/grist')]) {
      if (existsSync(join(candidate, 'Hello.grist'))) { return candidate; }
    }
    const parent = dirname(dir);
    if (parent === dir) { throw new Error('Grist fixtures not found; set GRISTLITE_FIXTURES'); }
    dir = parent;
  }
}

export const FIXTURE_NAMES = [
  'Hello.grist', 'TypeEncoding.grist', 'GridWithAllFields.grist', 'CursorWithRefLists1.grist',
  'World.grist', 'Favorite_Films.grist',
];

/** A fresh path in a new temporary directory. */
export function tempPath(name = 'doc.grist'): string {
  return join(mkdtempSync(join(tmpdir(), 'gl-doc-')), name);
}

/** Copies a fixture to a temporary directory (the originals are never opened for writing). */
export function copyFixture(name: string): string {
  const path = tempPath(name);
  copyFileSync(join(FIXTURES, name), path);
  return path;
}
