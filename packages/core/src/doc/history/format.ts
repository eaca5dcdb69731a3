/**
 * Grist's action history format: one `_gristsys_ActionHistory` row per committed action, its body a
 * LocalActionBundle marshalled (Python marshal version 2, dict keys sorted, as Grist's JS Marshaller
 * writes), its `actionHash` the SHA-256 of actionNum, parent hash, info and stored actions marshalled
 * one after the other (Grist's computeActionHash). Checked against every stored action of the fixture
 * corpus (test/history-format.test.ts): decoded bodies re-encode byte for byte, and every hash recomputes.
 */
import {createHash} from 'node:crypto';
import {dumps, loads} from '@gristlite/formula';

/** A Grist doc action (`["BulkAddRecord", tableId, rowIds, colValues]`, ...), as stored in a bundle. */
export type DocActionTuple = [string, ...unknown[]];

/** Who made an action and when (Grist's ActionInfo). */
export interface ActionInfo {
  /** Milliseconds since the epoch. */
  time: number;
  /** The user's email; `grist` for system actions, "" when Grist knew none. */
  user: string | null;
  /** The instance id (`unset-inst` in a Grist that does not share). */
  inst: string;
  /** A description (null when none was given). */
  desc?: string | null;
  /** Grist's otherId (an action this one undoes or redoes), 0 when none. */
  otherId: number;
  /** Grist's linkId (the action this one is bundled with), 0 when none. */
  linkId: number;
  /** Further fields a bundle may hold: kept so that a decoded bundle re-encodes unchanged. */
  [key: string]: unknown;
}

/** A recipient set of an action's parts: Grist writes one, `{recipients: ["#ALL"]}`. */
export interface Envelope {
  recipients: string[];
}

/** One action bundle as Grist stores it (LocalActionBundle). */
export interface ActionBundle {
  actionNum: number;
  actionHash: string | null;
  parentActionHash: string | null;
  envelopes: Envelope[];
  /** `[envelope index, info]`. */
  info: [number, ActionInfo];
  /** `[envelope index, doc action]` per stored action, formula results included. */
  stored: Array<[number, DocActionTuple]>;
  /** Calculated actions: empty in bundles Grist writes since formula results became stored actions. */
  calc: Array<[number, DocActionTuple]>;
  /** The user actions as applied. */
  userActions: unknown[][];
  /** The actions that undo `stored`, in the order they apply. */
  undo: DocActionTuple[];
}

/** The envelope every part of a bundle goes to (Grist's allToken). */
export const ALL_RECIPIENTS = '#ALL';

/** The body bytes of a bundle, as Grist's encodeAction writes them. */
export function encodeBundle(bundle: ActionBundle): Buffer {
  return dumps(bundle, {sortKeys: true});
}

/** Thrown when a stored body is not an action bundle. */
export class BundleFormatError extends Error {}

/** A stored body decoded (byte strings kept as bytes, so that it re-encodes to the same body). */
export function decodeBundle(body: Uint8Array): ActionBundle {
  let value: unknown;
  try {
    value = loads(body, {bytes: true});
  } catch (e) {
    throw new BundleFormatError(`action body is not marshalled data: ${(e as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new BundleFormatError('action body is not a bundle');
  }
  const b = value as Partial<ActionBundle>;
  if (typeof b.actionNum !== 'number' || !Array.isArray(b.stored) || !Array.isArray(b.info)) {
    throw new BundleFormatError('action body lacks actionNum, info or stored actions');
  }
  return value as ActionBundle;
}

/**
 * The hash Grist gives an action: SHA-256 (hex) of its number, its parent's hash, its info and its
 * stored actions, each marshalled in turn. Undo, user actions and calc are not covered.
 */
export function computeActionHash(
  bundle: Pick<ActionBundle, 'actionNum' | 'parentActionHash' | 'info' | 'stored'>,
): string {
  const h = createHash('sha256');
  h.update(dumps(bundle.actionNum, {sortKeys: true}));
  h.update(dumps(bundle.parentActionHash, {sortKeys: true}));
  h.update(dumps(bundle.info, {sortKeys: true}));
  h.update(dumps(bundle.stored, {sortKeys: true}));
  return h.digest('hex');
}

const SORTED = {sortKeys: true};

function listHeader(code: string, n: number): Buffer {
  const b = Buffer.allocUnsafe(5);
  b.write(code, 0, 'latin1');
  b.writeInt32LE(n, 1);
  return b;
}

/** `[0, action]` marshalled, before the action's own bytes. */
const STORED_PREFIX = Buffer.concat([listHeader('[', 2), Buffer.from('i'), Buffer.alloc(4)]);

/**
 * Sets `bundle.actionHash` and returns the body, as `computeActionHash` then `encodeBundle` would,
 * marshalling each stored action once: its bytes serve the hash, the body's `stored` and, when
 * `userActions` is the list of stored actions itself, the body's `userActions` (a record write's).
 * The bundle must have exactly the fields of `ActionBundle`, whose sorted order the body follows.
 */
export function hashAndEncode(bundle: ActionBundle): Buffer {
  const actions = bundle.stored.map(([env, a]) => {
    if (env !== 0) throw new Error('hashAndEncode: stored actions go to envelope 0');
    return dumps(a, SORTED);
  });
  const stored = Buffer.concat([listHeader('[', actions.length), ...actions.flatMap((a) => [STORED_PREFIX, a])]);
  const num = dumps(bundle.actionNum, SORTED);
  const parent = dumps(bundle.parentActionHash, SORTED);
  const info = dumps(bundle.info, SORTED);
  const hash = createHash('sha256').update(num).update(parent).update(info).update(stored).digest('hex');
  bundle.actionHash = hash;
  const sameActions =
    bundle.userActions.length === bundle.stored.length && bundle.userActions.every((a, i) => a === bundle.stored[i][1]);
  const userActions = sameActions
    ? Buffer.concat([listHeader('[', actions.length), ...actions])
    : dumps(bundle.userActions, SORTED);
  const key = (k: string) => dumps(k);
  return Buffer.concat([
    Buffer.from('{'),
    key('actionHash'),
    dumps(hash),
    key('actionNum'),
    num,
    key('calc'),
    dumps(bundle.calc, SORTED),
    key('envelopes'),
    dumps(bundle.envelopes, SORTED),
    key('info'),
    info,
    key('parentActionHash'),
    parent,
    key('stored'),
    stored,
    key('undo'),
    dumps(bundle.undo, SORTED),
    key('userActions'),
    userActions,
    Buffer.from('0'),
  ]);
}
