export {SqlPool, type SqlPoolOptions, type SqlResult} from './pool.js';
export {effectiveTimeoutMs, sqlTimeoutFromEnv} from './statement.js';
export {DEFAULT_MAX_BYTES, DEFAULT_MAX_ROWS} from './execute.js';
