export {
  run,
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
} from './cli.js';
