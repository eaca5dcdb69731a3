export { run, serve, openEngine, type Served } from './cli.js';
