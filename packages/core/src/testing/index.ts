/**
 * Test helpers (fixture finders) shared by every package's tests: `import ... from '@gristlite/core/testing'`.
 * The HomeStore conformance suite is `@gristlite/conformance/homestore`, so core needs no test runner.
 */
export {
  FIXTURE_NAMES,
  FIXTURES_SKIPPED,
  MIN_CORPUS_FILES,
  copyFixture,
  corpusFiles,
  findFixtures,
  missingFixtures,
  fixturePath,
  needsFixtures,
  requireFixtures,
  skipOrFail,
  underCi,
  withFixtures,
  type FixtureDirs,
  type FixtureSet,
} from './fixtures.js';
export {WAIT_MS, waitFor} from './wait.js';
export {seededRandom} from './random.js';
