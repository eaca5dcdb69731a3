export * from './types.js';
export * from './route.js';
export {validate} from './validate.js';
export {readBody, isJsonContentType, parseJsonBody} from './body.js';
export {optionsFromEnv} from './options.js';
export {
  createApiHandler,
  jsonResponse,
  errorBody,
  type Handler,
  type ApiHandlerOptions,
} from './server.js';
export {allRoutes} from './routes/index.js';
export {openApiDocument} from './openapi.js';
export {
  statusResponse,
  createLogger,
  createMetrics,
  metricsEnabled,
  requestId,
  loggedUrl,
  type Logger,
  type Metrics,
} from './ops.js';
export type {McpServerHooks} from './routes/mcp/server.js';
export {createMcpServer, mcpServerFor} from './routes/mcp/session.js';
export {MCP_DEFAULTS, mcpSettingsFromEnv, type McpSettings} from './routes/mcp/settings.js';
export {TOOLS as MCP_TOOLS, type McpTool} from './routes/mcp/tools.js';
export {
  sessionGateway,
  type McpGateway,
  type McpOrgEntry,
  type McpDocEntry,
  type McpTableEntry,
} from './routes/mcp/gateway.js';
