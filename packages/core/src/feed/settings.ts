import {intFromEnv} from '../base/index.js';
import {DEFAULT_FEED_SETTINGS, type FeedSettings} from './types.js';

/** Change feed bounds from GRISTLITE_FEED_* settings (docs/operations.md). */
export function feedSettingsFromEnv(env: Record<string, string | undefined>): FeedSettings {
  const d = DEFAULT_FEED_SETTINGS;
  return {
    maxRows: intFromEnv(env, 'GRISTLITE_FEED_MAX_ROWS', d.maxRows, 0),
    historyEvents: intFromEnv(env, 'GRISTLITE_FEED_HISTORY', d.historyEvents, 0),
    historyBytes: intFromEnv(env, 'GRISTLITE_FEED_HISTORY_BYTES', d.historyBytes, 0),
    lingerMs: intFromEnv(env, 'GRISTLITE_FEED_LINGER_MSEC', d.lingerMs, 1),
    maxSubscribers: intFromEnv(env, 'GRISTLITE_FEED_MAX_SUBSCRIBERS', d.maxSubscribers, 1),
    maxConditions: intFromEnv(env, 'GRISTLITE_FEED_MAX_CONDITIONS', d.maxConditions, 1),
    maxQueued: intFromEnv(env, 'GRISTLITE_FEED_QUEUE', d.maxQueued, 1),
    recheckMs: intFromEnv(env, 'GRISTLITE_FEED_RECHECK_MSEC', d.recheckMs, 1),
    heartbeatMs: intFromEnv(env, 'GRISTLITE_FEED_HEARTBEAT_MSEC', d.heartbeatMs, 1),
  };
}
