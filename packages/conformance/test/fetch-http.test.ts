// The conformance suite through the fetch adapter (http).
import { runConformance } from '../src/index.js';
import { target } from './targets.js';

runConformance(target('fetch-http'), process.env.GRISTLITE_CONFORMANCE_ONLY?.split(',').filter(Boolean));
