/** The whole API through the fetch adapter, served by node:http. `pnpm example:fetch` */
import {announce, prepareEngine, listen, serverSettings} from '@gristlite/cli';
import {createApiHandler} from '@gristlite/http';
import {toFetchHandler} from '@gristlite/fetch';
import {nodeListener} from '@gristlite/fetch/node';

const env = process.env;
const settings = serverSettings(env);
const {engine, apiKey, keySource, email} = await prepareEngine(settings.dataDir, env);
const handler = toFetchHandler(createApiHandler(engine, {env}));
const {url} = await listen(nodeListener(handler), settings.port, settings.host);
announce('gristlite (fetch adapter)', url, settings.dataDir, email, apiKey, keySource);
