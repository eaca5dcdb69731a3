export * from './types.js';
export * from './route.js';
export {validate} from './validate.js';
export {readBody, isJsonContentType, parseJsonBody} from './body.js';
export {
  createApiHandler,
  optionsFromEnv,
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
