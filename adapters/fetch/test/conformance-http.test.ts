// The shared conformance suite (@gristlite/conformance) through the fetch adapter, over HTTP.
import {apiTarget, listenLocal, runConformanceFromEnv} from '@gristlite/conformance';
import {toFetchHandler} from '../src/index.js';
import {nodeListener} from '../src/node.js';

/** No test is skipped: everything the suite checks goes through this adapter. */
const SKIP: Record<string, string> = {};

runConformanceFromEnv(apiTarget('fetch-http', async (api) => listenLocal(nodeListener(toFetchHandler(api))), SKIP));
