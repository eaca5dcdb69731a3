/** Test helpers shipped for implementers of core's interfaces: `import ... from '@gristlite/core/testing'`. */
export { homeStoreConformance, type HomeStoreFactoryResult } from './homestore-conformance.js';
