/**
 * Test helpers (fixture finders) shared by every package's tests: `import ... from '@gristlite/core/testing'`.
 * The HomeStore conformance suite is `@gristlite/conformance/homestore`, so core needs no test runner.
 */
export {
  FIXTURE_NAMES,
  FIXTURES_SKIPPED,
  copyFixture,
  corpusFiles,
  findFixtures,
  fixturePath,
  needsFixtures,
  requireFixtures,
  underCi,
  withFixtures,
  type FixtureDirs,
} from './fixtures.js';
