/**
 * Where gristlite answers otherwise than Grist 1.7.17 on purpose: `<scenario>/<step>` -> the
 * decision (docs/decisions.md) and the level at which the step still compares. Nothing else may
 * differ from the recordings, and an entry whose step answers exactly as Grist did fails the replay
 * (remove it), so the list cannot go stale.
 */
import type {ListedDifference, PathDifference} from './session.js';

export const DIFFERENCES: Record<string, ListedDifference> = {};

/** Fields that differ in every answer that has them, for one decision each. */
export const PATH_DIFFERENCES: PathDifference[] = [
  {
    path: /^body\.(actionNum|actionHash)$/,
    decision: 'D39',
    why: "gristlite keeps no action history yet (issue 42): its action numbers and hashes do not follow Grist's",
  },
];
