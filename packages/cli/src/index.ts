export { run, serve, openEngine, prepareEngine, listen, closeServer, serverSettings, announce, type Served } from './cli.js';
