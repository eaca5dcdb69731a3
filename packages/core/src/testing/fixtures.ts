/**
 * Where the real Grist documents used by the tests are: the six in `fixtures/grist` and the corpus
 * in `fixtures/grist-corpus`. They are never committed to the project (the tests of a fresh clone
 * run without them), so every package's tests find them here, in one place:
 *
 * - `GRISTLITE_FIXTURES`: the `grist` directory itself, or a directory holding `grist/` (and
 *   optionally `grist-corpus/`); the corpus is then looked for beside `grist`.
 * - otherwise `fixtures/grist` or `shared/fixtures/grist` in the working directory or any directory
 *   above it or above this module (a checkout next to `shared/` finds `../shared/fixtures/grist`).
 *
 * Tests that need them wrap their body in `needsFixtures`: when they are absent the test prints
 * `SKIPPED (no Grist fixtures: ...)` and passes, except under CI, where it fails.
 */
import {copyFileSync, existsSync, mkdtempSync, readdirSync, statSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {dirname, join, resolve} from 'node:path';
import {fileURLToPath} from 'node:url';

export const FIXTURES_SKIPPED =
  'SKIPPED (no Grist fixtures: set GRISTLITE_FIXTURES or place them at ../shared/fixtures/grist)';

/** The six fixture documents of `fixtures/grist` that the tests name. */
export const FIXTURE_NAMES = [
  'Hello.grist',
  'TypeEncoding.grist',
  'GridWithAllFields.grist',
  'CursorWithRefLists1.grist',
  'World.grist',
  'Favorite_Films.grist',
];

export interface FixtureDirs {
  /** The directory of the six documents (`fixtures/grist`). */
  grist: string;
  /** The corpus directory (`fixtures/grist-corpus`), or null when it is not beside them. */
  corpus: string | null;
}

const isDir = (p: string) => existsSync(p) && statSync(p).isDirectory();
const hasGrist = (p: string) => isDir(p) && readdirSync(p).some((f) => f.endsWith('.grist'));

function dirsFrom(grist: string): FixtureDirs {
  const corpus = join(dirname(grist), 'grist-corpus');
  return {grist, corpus: hasGrist(corpus) ? corpus : null};
}

let found: FixtureDirs | null | undefined;

/** The fixture directories, or null when there are none (see the module comment). */
export function findFixtures(): FixtureDirs | null {
  if (found !== undefined) return found;
  found = null;
  const env = process.env.GRISTLITE_FIXTURES;
  if (env) {
    const dir = resolve(env);
    if (hasGrist(join(dir, 'grist'))) found = dirsFrom(join(dir, 'grist'));
    else if (hasGrist(dir)) found = dirsFrom(dir);
    return found;
  }
  for (const start of [process.cwd(), dirname(fileURLToPath(import.meta.url))]) {
    for (let d = resolve(start); ; d = dirname(d)) {
      for (const c of [join(d, 'fixtures/grist'), join(d, 'shared/fixtures/grist')]) {
        if (hasGrist(c)) return (found = dirsFrom(c));
      }
      if (d === dirname(d)) break;
    }
  }
  return found;
}

/** Under CI a missing fixture directory is a failure, as for the PostgreSQL tests. */
export function underCi(): boolean {
  const ci = process.env.CI;
  return Boolean(ci) && ci !== '0' && ci !== 'false';
}

/** The fixture directories; throws (with the reason) when they are absent. */
export function requireFixtures(): FixtureDirs {
  const dirs = findFixtures();
  if (!dirs) {
    const where = process.env.GRISTLITE_FIXTURES
      ? `GRISTLITE_FIXTURES=${process.env.GRISTLITE_FIXTURES} holds no .grist files`
      : 'none found upwards';
    throw new Error(
      `Grist fixtures not found (${where}): set GRISTLITE_FIXTURES or place them at ../shared/fixtures/grist`,
    );
  }
  return dirs;
}

/** Path of one of the six fixtures (`Hello.grist`); throws when absent. */
export function fixturePath(name: string): string {
  return join(requireFixtures().grist, name);
}

/** Every `.grist` file of the corpus, sorted (full paths); throws when the corpus is absent. */
export function corpusFiles(): string[] {
  const {corpus} = requireFixtures();
  if (!corpus) throw new Error('Grist fixture corpus (grist-corpus beside fixtures/grist) not found');
  return readdirSync(corpus)
    .filter((f) => f.endsWith('.grist'))
    .sort()
    .map((f) => join(corpus, f));
}

/** A copy of a fixture (a name in `fixtures/grist`, or a full path) in a new temporary directory. */
export function copyFixture(nameOrPath: string, dir = mkdtempSync(join(tmpdir(), 'gl-fixture-'))): string {
  const src = nameOrPath.includes('/') ? nameOrPath : fixturePath(nameOrPath);
  const dest = join(dir, src.slice(src.lastIndexOf('/') + 1));
  copyFileSync(src, dest);
  return dest;
}

/**
 * Wraps a test body that needs the fixtures: without them it prints `SKIPPED (...)` with the
 * test's name and passes, except under CI, where it fails saying why.
 */
export function needsFixtures<A extends unknown[]>(
  name: string,
  fn: (...args: A) => void | Promise<void>,
): (...args: A) => Promise<void> {
  return async (...args: A) => {
    if (!findFixtures()) {
      if (underCi()) requireFixtures();
      console.log(`${FIXTURES_SKIPPED}: ${name}`);
      return;
    }
    await fn(...args);
  };
}

/**
 * A uvu `test`/suite whose tests all need the fixtures: `const ftest = withFixtures(test)` then
 * `ftest('name', async () => ...)`.
 */
export function withFixtures<C>(
  t: (name: string, fn: (ctx: C) => void | Promise<void>) => void,
): (name: string, fn: (ctx: C) => void | Promise<void>) => void {
  return (name, fn) => t(name, needsFixtures(name, fn));
}
