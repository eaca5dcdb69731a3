export {createDocFile} from './create.js';
export type {CreateDocOptions} from './create.js';
export {SCHEMA_VERSION, STORAGE_VERSION, META_DDL, META_TYPES} from './schema.js';
