// The conformance target for the Node adapter: the API handler on a node:http server.
import {apiTarget, listenLocal, type Target} from '@gristlite/conformance';
import {toNodeHandler} from '../src/index.js';

/** No test is skipped: everything the suite checks goes through this adapter. */
const SKIP: Record<string, string> = {};

export function nodeTarget(): Target {
  return apiTarget('node', async (api) => listenLocal(toNodeHandler(api)), SKIP);
}
