export * from './errors.js';
export * from './ids.js';
export * from './access/index.js';
export * from './home/types.js';
export * from './home/principal.js';
export { HomeService, hashApiKey, isValidEmail, checkDomain, type AccessDelta } from './home/service.js';
export { SqliteHomeStore } from './home/sqlite.js';
export { Engine, type EngineOptions, type Closeable } from './engine.js';
export * from './doc/index.js';
