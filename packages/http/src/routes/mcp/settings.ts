/** How large one MCP tool result may be: the settings, read once with the server's options. */
import {intFromEnv} from '@gristlite/core/internal';

/** How large one tool result may be (docs/mcp.md, docs/operations.md). */
export interface McpSettings {
  /** Records one `read_records` or `run_sql` result holds at most (GRISTLITE_MCP_MAX_ROWS, default 500). */
  maxRows: number;
  /** Bytes of one tool result's JSON text at most (GRISTLITE_MCP_MAX_BYTES, default 131072). */
  maxBytes: number;
}

/**
 * Defaults sized for an agent's context: 128 KiB of JSON is some 30-40k tokens, and a model
 * does better over a few hundred rows than over thousands (asking for fewer is cheap).
 */
export const MCP_DEFAULTS: McpSettings = {maxRows: 500, maxBytes: 128 * 1024};

/** The smallest `maxBytes` accepted: room for the note that says a result was cut. */
export const MCP_MIN_BYTES = 1024;

/** The settings from the environment; a value that is not an integer in range stops start-up. */
export function mcpSettingsFromEnv(env: Record<string, string | undefined>): McpSettings {
  return {
    maxRows: intFromEnv(env, 'GRISTLITE_MCP_MAX_ROWS', MCP_DEFAULTS.maxRows, 1),
    maxBytes: intFromEnv(env, 'GRISTLITE_MCP_MAX_BYTES', MCP_DEFAULTS.maxBytes, MCP_MIN_BYTES),
  };
}
