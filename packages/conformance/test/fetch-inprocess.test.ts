// The conformance suite through the fetch adapter (inprocess).
import { runConformance } from '../src/index.js';
import { target } from './targets.js';

runConformance(target('fetch-inprocess'), process.env.GRISTLITE_CONFORMANCE_ONLY?.split(',').filter(Boolean));
