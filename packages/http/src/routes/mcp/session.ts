/** The MCP tools in-process, for embedders: an SDK server over one user's `Session`. */
import type {Server} from '@modelcontextprotocol/sdk/server/index.js';
import type {Session} from '@gristlite/core/internal';
import type {McpGateway} from './gateway.js';
import {sessionGateway} from './gateway.js';
import type {McpServerHooks} from './server.js';
import {MCP_DEFAULTS, type McpSettings} from './settings.js';

/**
 * The SDK's server over `gateway`. The SDK is loaded on first use: it is some 150 ms of
 * loading (zod, ajv) that a server or CLI command which never speaks MCP does not pay.
 */
export async function createMcpServer(
  gateway: McpGateway,
  settings: McpSettings,
  hooks: McpServerHooks = {},
): Promise<Server> {
  const {createMcpServer: create} = await import('./server.js');
  return create(gateway, settings, hooks);
}

/**
 * An MCP server whose tools act as `session`'s user, checked as over HTTP (access rules
 * included). Connect it to an SDK transport: `InMemoryTransport.createLinkedPair()` for an agent
 * in the same process, `StdioServerTransport` for a local agent (docs/embedding.md).
 */
export function mcpServerFor(session: Session, settings: Partial<McpSettings> = {}): Promise<Server> {
  return createMcpServer(sessionGateway(session), {...MCP_DEFAULTS, ...settings});
}
