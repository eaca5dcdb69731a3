/** The server's settings from the environment (docs/operations.md lists them). */
import {STREAM_DEFAULTS, StreamSlots} from '@gristlite/core/internal';
import {mcpSettingsFromEnv, SHARE_MAX_BODY_BYTES, SHARE_MAX_UPLOAD_BYTES, SHARE_RATE_LIMIT} from './routes/index.js';
import type {ServerOptions} from './types.js';

/** Settings read once from `env` (GRISTLITE_* and the GRIST_* ones Grist also reads). */
export function optionsFromEnv(env: Record<string, string | undefined> = process.env): ServerOptions {
  const num = (name: string, dflt: number) => {
    const n = Number(env[name]);
    return env[name] && Number.isFinite(n) && n > 0 ? n : dflt;
  };
  const streamMaxOpen = num('GRISTLITE_STREAM_MAX_OPEN', STREAM_MAX_OPEN);
  return {
    baseDomain: env.GRISTLITE_BASE_DOMAIN || undefined,
    maxBodyBytes: num('GRISTLITE_MAX_BODY_BYTES', 1024 * 1024),
    maxParallelPerDoc: num('GRISTLITE_MAX_PARALLEL_REQUESTS_PER_DOC', 0),
    forwardTimeoutMs: num('GRISTLITE_FORWARD_TIMEOUT_MSEC', 60_000),
    maxUploadBytes: num(
      'GRISTLITE_MAX_UPLOAD_BYTES',
      num('GRIST_MAX_UPLOAD_ATTACHMENT_MB', 0) * 1024 * 1024 || 100 * 1024 * 1024,
    ),
    uploadDir: env.GRISTLITE_UPLOAD_DIR || undefined,
    supportEmail: (env.GRIST_SUPPORT_EMAIL || 'support@getgrist.com').toLowerCase(),
    shareRateLimit: env.GRISTLITE_SHARE_RATE_LIMIT === '0' ? 0 : num('GRISTLITE_SHARE_RATE_LIMIT', SHARE_RATE_LIMIT),
    shareMaxBodyBytes: num('GRISTLITE_SHARE_MAX_BODY_BYTES', SHARE_MAX_BODY_BYTES),
    shareMaxUploadBytes: num('GRISTLITE_SHARE_MAX_UPLOAD_BYTES', SHARE_MAX_UPLOAD_BYTES),
    mcp: mcpSettingsFromEnv(env),
    stream: {
      minCells: num('GRISTLITE_STREAM_MIN_CELLS', STREAM_DEFAULTS.minCells),
      maxMs: num('GRISTLITE_STREAM_MAX_MSEC', STREAM_DEFAULTS.maxMs),
      // One count for every request of this server: each stream holds a connection (and its
      // descriptors) until its reader is done. 0: no cap.
      ...(env.GRISTLITE_STREAM_MAX_OPEN === '0' ? {} : {slots: new StreamSlots(streamMaxOpen)}),
    },
    env,
  };
}

/** Streams open at once by default (GRISTLITE_STREAM_MAX_OPEN): about 200 descriptors. */
const STREAM_MAX_OPEN = 64;
