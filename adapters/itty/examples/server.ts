/** The whole API on an itty-router router, beside an app route of its own. `pnpm example:itty` */
import {Router} from 'itty-router';
import {announce, prepareEngine, listen, serverSettings} from '@gristlite/cli';
import {createApiHandler} from '@gristlite/http';
import {nodeListener} from '@gristlite/fetch/node';
import {registerGristlite} from '@gristlite/itty';

const env = process.env;
const settings = serverSettings(env);
const {engine, apiKey, keySource, email} = await prepareEngine(settings.dataDir, env);
const router = Router();
router.get('/hello', () => new Response('hello from the app\n'));
registerGristlite(router, createApiHandler(engine, {env}));
router.all('*', () => new Response('not found\n', {status: 404}));
const {url} = await listen(
  nodeListener((req) => router.fetch(req)),
  settings.port,
  settings.host,
);
announce('gristlite (itty adapter)', url, settings.dataDir, email, apiKey, keySource);
