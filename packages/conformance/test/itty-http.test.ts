// The conformance suite through the itty adapter (http).
import { runConformance } from '../src/index.js';
import { target } from './targets.js';

runConformance(target('itty-http'), process.env.GRISTLITE_CONFORMANCE_ONLY?.split(',').filter(Boolean));
