/**
 * The MCP server of the tools (the SDK's low-level `Server`: the tools check their own input with
 * the REST routes' schemas, so no zod schema stands between the agent and Grist's error texts).
 */
import {createRequire} from 'node:module';
import {Server} from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';
import {ApiError} from '@gristlite/core/internal';
import type {McpGateway} from './gateway.js';
import type {McpSettings} from './settings.js';
import {TOOLS, TOOLS_BY_NAME, toolListing} from './tools.js';

const VERSION = (createRequire(import.meta.url)('../../../../package.json') as {version: string}).version;

const INSTRUCTIONS =
  'gristlite: Grist documents (tables of records). Start with list_documents, then describe_document ' +
  'for the tables and columns of one document; read_records or run_sql to read, add_records, ' +
  'update_records and delete_records to write. Results are cut at a size limit, with a note saying ' +
  'how to narrow the query. Errors are answered as {"error": ...} with the HTTP status REST would give.';

/** What a caller of `createMcpServer` may do with an error that is not a tool's to answer. */
export interface McpServerHooks {
  /**
   * Sees every error a tool throws first; a result returned is the answer (the HTTP route keeps
   * a request to forward to the worker holding the document, and a bug to answer as a 500).
   */
  intercept?(e: unknown, tool: string): CallToolResult | null;
}

/** A tool's answer: its result as JSON text. */
function textResult(value: unknown, isError = false): CallToolResult {
  return {content: [{type: 'text', text: JSON.stringify(value)}], ...(isError ? {isError: true} : {})};
}

/** A tool error: the body and status the REST route would answer. */
export function toolError(e: ApiError): CallToolResult {
  const details = e.details && Object.keys(e.details).length ? e.details : undefined;
  return textResult({error: e.message, ...(details ? {details} : {}), status: e.status}, true);
}

/**
 * An MCP server answering `tools/list` and `tools/call` with gristlite's tools over `gateway`.
 * Connect it to any SDK transport (the HTTP route uses one per request; embedders an in-memory
 * or stdio one).
 */
export function createMcpServer(gateway: McpGateway, settings: McpSettings, hooks: McpServerHooks = {}): Server {
  const server = new Server(
    {name: 'gristlite', version: VERSION},
    {capabilities: {tools: {}}, instructions: INSTRUCTIONS},
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({tools: TOOLS.map(toolListing)}));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const tool = TOOLS_BY_NAME.get(request.params.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`);
    try {
      return textResult(await tool.run(request.params.arguments ?? {}, gateway, settings));
    } catch (e) {
      const taken = hooks.intercept?.(e, tool.name);
      if (taken) return taken;
      if (e instanceof ApiError) return toolError(e);
      throw e;
    }
  });
  return server;
}
