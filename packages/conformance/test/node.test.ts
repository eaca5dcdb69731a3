// The conformance suite against the Node adapter, served by `gristlite serve` on a free port.
import { runConformance } from '../src/index.js';
import { nodeTarget } from './targets.js';

runConformance(nodeTarget(), process.env.GRISTLITE_CONFORMANCE_ONLY?.split(',').filter(Boolean));
