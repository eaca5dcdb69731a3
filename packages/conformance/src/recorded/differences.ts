/**
 * Where gristlite answers otherwise than Grist 1.7.17 on purpose: `<scenario>/<step>` -> the
 * decision (docs/decisions.md) and the level at which the step still compares. Nothing else may
 * differ from the recordings, and an entry whose step answers exactly as Grist did fails the replay
 * (remove it), so the list cannot go stale.
 */
import type {ListedDifference, PathDifference} from './session.js';

/** SPEC's decision 1: bad input gets a 4xx that says what is wrong, never a 500. */
const NO_500 = 'SPEC decision 1';

export const DIFFERENCES: Record<string, ListedDifference> = {
  // document lifecycle
  'lifecycle/replace bad body': {
    level: 'skip',
    decision: 'D52',
    why: 'a body naming no source is refused (400); Grist answers 200 and replaces nothing',
  },
  'lifecycle/fork': {level: 'skip', decision: 'D53', why: 'no forks (404)'},
  'lifecycle/create without workspace': {level: 'skip', decision: 'D53', why: 'no unsaved documents (400)'},
  'lifecycle/import empty doc': {level: 'error', decision: 'D53', why: 'no upload ids: the 400 says to send the file'},
  // access rules
  'access-rules/kiwi: filter on Secret': {
    level: 'skip',
    decision: 'DA6',
    why: 'Grist filters on the hidden values (a leak); 403',
  },
  'access-rules/charon: filter on Secret': {level: 'skip', decision: 'DA6', why: 'as for kiwi'},
  'access-rules/kiwi: sort on Secret': {
    level: 'error',
    decision: 'DA6',
    why: 'Grist 500 "unknown key"; 403 in plain words',
  },
  'access-rules/charon: sort on Secret': {level: 'error', decision: 'DA6', why: 'as for kiwi'},
  'access-rules/kiwi: edit rules': {
    level: 'error',
    decision: NO_500,
    why: 'Grist 500 "Only owners can modify access rules"; 403',
  },
  'access-rules/rule syntax error': {
    level: 'error',
    decision: NO_500,
    why: "Grist 500; 400 with the engine's SyntaxError",
  },
  'access-rules/recover by editor': {
    level: 'error',
    decision: 'DA8',
    why: 'Grist 500 "Only owners can control recovery mode"; 403',
  },
  'access-more/kiwi: snapshots': {
    level: 'error',
    decision: 'D52',
    why: 'Grist 500 "cannot confirm access to snapshots"; 403',
  },
  'access-more/charon: snapshots': {level: 'error', decision: 'D52', why: 'as for kiwi'},
  'access-more/public anon: snapshots': {level: 'error', decision: 'D52', why: 'as for kiwi'},
  // triggers
  'triggers/list after updates': {level: 'shape', decision: 'D51', why: "a webhook action's authorization is masked"},
  'triggers/webhooks after webhook action': {level: 'shape', decision: 'D51', why: 'authorization masked (D2)'},
  'triggers/delete unknown': {
    level: 'skip',
    decision: 'D51',
    why: 'every id is checked before the write: 400 for one that is not a trigger',
  },
  'triggers/list after delete': {
    level: 'shape',
    decision: 'D51',
    why: "listed in id order; Grist's in-memory order puts the last trigger in a removed one's place",
  },
  'access-rules/recover bad body': {level: 'skip', decision: 'DA8', why: 'a recoveryMode that is not a boolean is 400'},
  // document API (rec-docapi)
  'records/read limit x': {
    level: 'error',
    decision: 'D22',
    why: 'Grist 500s on a limit that is not a number; gristlite answers 400 `limit is not a number`',
  },
  'records/read sort unknown column': {
    level: 'error',
    decision: 'D22',
    why: 'Grist 500s (`unknown key Nope`); gristlite answers 400 `Invalid sort: unknown column "Nope"`',
  },
  'records/filter not json': {
    level: 'error',
    decision: 'D22',
    why: 'Grist 500s on a filter that is not JSON; gristlite answers 400 `Invalid query: filter is not valid JSON (...)`',
  },
  'records/add text/plain': {
    level: 'shape',
    decision: 'D74',
    why: "gristlite's 400 says the body was not read because of its Content-Type",
  },
  'records/records/delete not list': {
    level: 'status',
    decision: 'D80',
    why: "Grist's words are an empty sandbox AssertionError; gristlite says the body is not an array",
  },
  'records/records/delete strings': {
    level: 'shape',
    decision: 'D80',
    why: "Grist's words are an empty sandbox AssertionError; gristlite names the bad row id",
  },
  'columns/tables expand columns': {
    level: 'error',
    decision: 'D81',
    why: 'Grist 500s on expand=columns; gristlite answers 400 naming the values allowed',
  },
  'columns/add column bad type': {
    level: 'shape',
    decision: 'D42',
    why: 'gristlite refuses a type Grist does not know before its engine fails on it',
  },
  'data/data update no id': {
    level: 'status',
    decision: 'D80',
    why: "Grist's words are a sandbox TypeError; gristlite answers Invalid payload, `body.id is missing`",
  },
  'data/apply unknown action': {
    level: 'error',
    decision: 'D81',
    why: 'Grist 500s; gristlite answers 400 `Unsupported user action: Explode`',
  },
  'data/apply unknown table': {
    level: 'error',
    decision: 'D81',
    why: 'Grist 500s; gristlite answers 400 with the same KeyError',
  },
  'data/apply missing row': {
    level: 'error',
    decision: 'D81',
    why: 'Grist 500s; gristlite answers 400 `Invalid row id 999`',
  },
  'data/apply not a list': {
    level: 'error',
    decision: 'D81',
    why: 'Grist 500s; gristlite answers 400 Invalid payload, `body is not an array`',
  },
  'data/apply action not a list': {
    level: 'error',
    decision: 'D81',
    why: 'Grist 500s; gristlite answers 400 Invalid payload, `body[0] is not an array`',
  },
  'data/apply second fails, first undone': {
    level: 'error',
    decision: 'D81',
    why: 'Grist 500s; gristlite answers 400 `Invalid row id 999` (the bundle is undone in both)',
  },
  'data/sql select': {
    level: 'shape',
    decision: 'D82',
    why: "a ragged POST /data left NULL in Grist's SQLite where its engine (and gristlite) hold 0",
  },
  'data/table-schema': {
    level: 'shape',
    decision: 'D83',
    why: 'Grist describes Int columns as strings (its switch matches `Integer`, not `Int`)',
  },
  'errors/columns type a number': {
    level: 'shape',
    decision: 'D42',
    why: 'gristlite refuses a type that is not a Grist type before its engine fails on it',
  },
  'errors/webhook bad url': {
    level: 'shape',
    decision: 'D73',
    why: "gristlite's 403 adds which setting allows webhook targets",
  },
  'errors/webhook bad event': {
    level: 'shape',
    decision: 'D84',
    why: 'gristlite also takes `remove` events, so its message lists three',
  },
  'errors/filter null': {
    level: 'error',
    decision: 'D81',
    why: 'Grist 500s on filter=null; gristlite answers 400 `Invalid query: filter must be a JSON object`',
  },
  'errors/table id with space': {
    level: 'status-class',
    decision: 'D80',
    why: "Grist's 400 is a sandbox KeyError; gristlite answers 404 Table not found, as for any unknown table",
  },
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
};

/** Fields that differ in every answer that has them, for one decision each. */
export const PATH_DIFFERENCES: PathDifference[] = [
  {
    path: /^body\.(actionNum|actionHash)$/,
    decision: 'D39',
    why: "gristlite keeps no action history yet (issue 42): its action numbers and hashes do not follow Grist's",
  },
];
