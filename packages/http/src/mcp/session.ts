/** The MCP tools in-process, for embedders: an SDK server over one user's `Session`. */
import type {Server} from '@modelcontextprotocol/sdk/server/index.js';
import type {Session} from '@gristlite/core/internal';
import {sessionGateway} from './gateway.js';
import {createMcpServer} from './server.js';
import {MCP_DEFAULTS, type McpSettings} from './settings.js';

/**
 * An MCP server whose tools act as `session`'s user, checked as over HTTP (access rules
 * included). Connect it to an SDK transport: `InMemoryTransport.createLinkedPair()` for an agent
 * in the same process, `StdioServerTransport` for a local agent (docs/embedding.md).
 */
export function mcpServerFor(session: Session, settings: Partial<McpSettings> = {}): Server {
  return createMcpServer(sessionGateway(session), {...MCP_DEFAULTS, ...settings});
}
