/**
 * Where gristlite answers otherwise than Grist 1.7.17 on purpose: `<scenario>/<step>` -> the
 * decision (docs/decisions.md) and the level at which the step still compares. Nothing else may
 * differ from the recordings, and an entry whose step answers exactly as Grist did fails the replay
 * (remove it), so the list cannot go stale.
 */
import type {ListedDifference} from './session.js';

export const DIFFERENCES: Record<string, ListedDifference> = {};
