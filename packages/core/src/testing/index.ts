/** Test helpers shipped for implementers of core's interfaces: `import ... from '@gristlite/core/testing'`. */
export { homeStoreConformance, type HomeStoreFactoryResult } from './homestore-conformance.js';
export {
  FIXTURE_NAMES, FIXTURES_SKIPPED, copyFixture, corpusFiles, findFixtures, fixturePath, needsFixtures, requireFixtures,
  underCi, withFixtures, type FixtureDirs,
} from './fixtures.js';
