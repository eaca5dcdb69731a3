// The shared conformance suite (@gristlite/conformance) through the itty adapter: the API
// registered on an itty-router beside an app route, served over HTTP.
import {Router} from 'itty-router';
import {apiTarget, listenLocal, runConformanceFromEnv} from '@gristlite/conformance';
import {nodeListener} from '@gristlite/fetch/node';
import {registerGristlite} from '../src/index.js';

/** No test is skipped: everything the suite checks goes through this adapter. */
const SKIP: Record<string, string> = {};

runConformanceFromEnv(
  apiTarget(
    'itty-http',
    async (api) => {
      const router = Router();
      router.get('/app/hello', () => new Response('app'));
      registerGristlite(router, api);
      return listenLocal(nodeListener((req) => router.fetch(req) as Promise<Response>));
    },
    SKIP,
  ),
);
