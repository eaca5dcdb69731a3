export {SqlPool, type SqlCaller, type SqlPoolOptions, type SqlResult} from './pool.js';
export {effectiveTimeoutMs, sqlPoolSettingsFromEnv, sqlTimeoutFromEnv} from './statement.js';
export {DEFAULT_MAX_BYTES, DEFAULT_MAX_ROWS} from './execute.js';
