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
 * Tests that need them wrap their body in `needsFixtures` (naming the sets they need: the six
 * documents, and the corpus when it is used too): when a set is absent the test prints
 * `SKIPPED (...)` and passes, except under CI (`underCi()`), where it fails saying which set is missing.
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

/**
 * Whether the tests run under CI: `CI` set to anything but empty, `0` or `false` (CI services set
 * `CI=true`, `.ci/run` sets `CI=1`). The one test of it for every package's tests: under CI a
 * missing resource (fixtures, PostgreSQL, a command) is a failure, never a passing placeholder.
 */
export function underCi(): boolean {
  const ci = process.env.CI;
  return ci !== undefined && ci !== '' && ci !== '0' && ci.toLowerCase() !== 'false';
}

/** The fixture sets a test can name: the six documents of `fixtures/grist`, the corpus of `fixtures/grist-corpus`. */
export type FixtureSet = 'grist' | 'corpus';

/** At least this many documents make a corpus (it holds 95): fewer is a partial copy, reported as missing. */
export const MIN_CORPUS_FILES = 90;

/** Why one of the named fixture sets is absent (saying which), or null when all are present. */
export function missingFixtures(sets: readonly FixtureSet[] = ['grist']): string | null {
  const dirs = findFixtures();
  if (!dirs) {
    const where = process.env.GRISTLITE_FIXTURES
      ? `GRISTLITE_FIXTURES=${process.env.GRISTLITE_FIXTURES} holds no .grist files`
      : 'none found upwards';
    return `no Grist fixtures (fixtures/grist: ${where}; set GRISTLITE_FIXTURES or place them at ../shared/fixtures/grist)`;
  }
  const absent = FIXTURE_NAMES.filter((n) => !existsSync(join(dirs.grist, n)));
  if (absent.length) return `no ${absent.join(', ')} in the Grist fixtures at ${dirs.grist}`;
  if (sets.includes('corpus')) {
    const beside = join(dirname(dirs.grist), 'grist-corpus');
    if (!dirs.corpus) return `no Grist fixture corpus (${beside} is missing or holds no .grist files)`;
    const n = readdirSync(dirs.corpus).filter((f) => f.endsWith('.grist')).length;
    if (n < MIN_CORPUS_FILES) {
      return `the Grist fixture corpus at ${dirs.corpus} holds ${n} documents, fewer than ${MIN_CORPUS_FILES}`;
    }
  }
  return null;
}

/**
 * What a test does when a fixture set it names is absent (`reason` from `missingFixtures`): under
 * CI it fails saying which; otherwise it prints `SKIPPED (reason): name` and passes.
 */
export function skipOrFail(name: string, reason: string): void {
  if (underCi()) throw new Error(`${name}: ${reason} (under CI every fixture set a test names must be present)`);
  console.log(`SKIPPED (${reason}): ${name}`);
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
 * Wraps a test body that needs the fixture sets `sets` (the six documents by default): without
 * one it prints `SKIPPED (...)` with the test's name and passes, except under CI, where it fails
 * saying which set is missing.
 */
export function needsFixtures<A extends unknown[]>(
  name: string,
  fn: (...args: A) => void | Promise<void>,
  sets: readonly FixtureSet[] = ['grist'],
): (...args: A) => Promise<void> {
  return async (...args: A) => {
    const missing = missingFixtures(sets);
    if (missing) {
      skipOrFail(name, missing);
      return;
    }
    await fn(...args);
  };
}

/**
 * A uvu `test`/suite whose tests all need the fixture sets `sets` (the six documents by default):
 * `const ftest = withFixtures(test)` then `ftest('name', async () => ...)`.
 */
export function withFixtures<C>(
  t: (name: string, fn: (ctx: C) => void | Promise<void>) => void,
  sets: readonly FixtureSet[] = ['grist'],
): (name: string, fn: (ctx: C) => void | Promise<void>) => void {
  return (name, fn) => t(name, needsFixtures(name, fn, sets));
}
