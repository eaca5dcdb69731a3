// The shared conformance suite (@gristlite/conformance) through the Node adapter, over HTTP.
import {runConformanceFromEnv} from '@gristlite/conformance';
import {nodeTarget} from './target.js';

runConformanceFromEnv(nodeTarget());
