export {
  serve,
  openEngine,
  prepareEngine,
  listen,
  closeServer,
  serverSettings,
  announce,
  privateFiles,
  type Served,
  type KeySource,
} from './serve.js';
export {run} from './cli.js';
