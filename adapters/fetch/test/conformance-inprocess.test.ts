// The shared conformance suite (@gristlite/conformance) through the fetch adapter, in-process:
// each request is a WHATWG Request handed to the handler, with no socket.
import {apiTarget, runConformanceFromEnv} from '@gristlite/conformance';
import {toFetchHandler} from '../src/index.js';

/** No test is skipped: everything the suite checks goes through this adapter. */
const SKIP: Record<string, string> = {};

runConformanceFromEnv(
  apiTarget(
    'fetch-inprocess',
    async (api) => ({url: 'http://127.0.0.1:8484', fetch: toFetchHandler(api), close: async () => {}}),
    SKIP,
  ),
);
