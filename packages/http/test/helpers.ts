// Shared by the http tests: where the real Grist documents are (copy them before opening). The one
// finder of every package's tests is `@gristlite/core/testing`.
export {copyFixture, corpusFiles, fixturePath as fixture, withFixtures} from '@gristlite/core/testing';
