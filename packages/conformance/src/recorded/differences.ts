/**
 * Where gristlite answers otherwise than Grist 1.7.17 on purpose: `<scenario>/<step>` -> the
 * decision (docs/decisions.md) and the level at which the step still compares. Nothing else may
 * differ from the recordings, and an entry whose step answers exactly as Grist did fails the replay
 * (remove it), so the list cannot go stale.
 */
import type {ListedDifference, PathDifference} from './session.js';

export const DIFFERENCES: Record<string, ListedDifference> = {
  // home API (rec-home)
  'errors/status': {
    level: 'status',
    decision: 'D12',
    why: "Grist's words, sent as text/plain where Grist's Express `send` says text/html",
  },
  'errors/access delta a string': {
    level: 'error',
    decision: 'D6',
    why: "Grist fails with a 500 (`Cannot use 'in' operator ...`); gristlite answers 400 `Bad request: invalid permission delta`",
  },
  'errors/access users a list': {
    level: 'shape',
    decision: 'D6',
    why: 'Both 400; Grist reads the list as an object and calls the email a role (`Invalid user role kiwi@...`), gristlite says the delta is invalid',
  },
  'errors/users of org': {
    level: 'shape',
    decision: 'harness',
    why: "Both 404 `not found: /api/orgs/<id>/users`; the message quotes the raw org id, which the normaliser leaves alone, and Grist's org ids run one ahead of a fresh gristlite's",
  },
};

/** Fields that differ in every answer that has them, for one decision each. */
export const PATH_DIFFERENCES: PathDifference[] = [
  {
    path: /^body\.(actionNum|actionHash)$/,
    decision: 'D39',
    why: "gristlite keeps no action history yet (issue 42): its action numbers and hashes do not follow Grist's",
  },
];
