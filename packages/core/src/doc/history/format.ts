/**
 * Grist's action history format: one `_gristsys_ActionHistory` row per committed action, its body a
 * LocalActionBundle marshalled (Python marshal version 2, dict keys sorted, as Grist's JS Marshaller
 * writes), its `actionHash` the SHA-256 of actionNum, parent hash, info and stored actions marshalled
 * one after the other (Grist's computeActionHash). Checked against every stored action of the fixture
 * corpus (test/history-format.test.ts): decoded bodies re-encode byte for byte, and every hash recomputes.
 */
import {createHash} from 'node:crypto';
import {dumps, loads} from '@gristlite/formula';
import {MarshalWriter} from '@gristlite/formula/internal';

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

/** The placeholder of the hash in a body being written: a hex digest's length, patched in after. */
const HASH_PLACEHOLDER = '0'.repeat(64);

/**
 * The buffer bodies are written into, reused from one write to the next: allocating (and first
 * touching) a fresh 50 kB buffer per 500-row add, then copying it out, took about 0.35 ms of
 * the add's 1 ms of recording on this machine, more than marshalling it. A buffer grown past
 * SCRATCH_KEEP_BYTES by a large bundle is let go after that bundle.
 */
let scratch: MarshalWriter | null = null;
const SCRATCH_KEEP_BYTES = 4 * 1024 * 1024;

/**
 * Sets `bundle.actionHash` and returns the body, as `computeActionHash` then `encodeBundle` would,
 * writing the body once into one buffer: the hash is taken over the spans of the number, parent,
 * info and stored actions it holds, then written into its place (a digest has a fixed size); when
 * `userActions` is the list of stored actions itself (a record write's), their bytes are copied.
 * The bundle must have exactly the fields of `ActionBundle`, whose sorted order the body follows.
 * The body is a view of a buffer the next call writes over: store or copy it before then.
 */
export function hashAndEncode(bundle: ActionBundle): Buffer {
  const w = scratch ?? new MarshalWriter(true, 64 * 1024);
  scratch = null; // a call that throws leaves no half-written writer behind
  w.reset();
  w.code(0x7b); // '{'
  w.write('actionHash');
  const hashAt = w.length + 5; // after 'u' and the length
  w.write(HASH_PLACEHOLDER);
  w.write('actionNum');
  const num = w.length;
  w.write(bundle.actionNum);
  const numEnd = w.length;
  w.write('calc');
  w.write(bundle.calc);
  w.write('envelopes');
  w.write(bundle.envelopes);
  w.write('info');
  const info = w.length;
  w.write(bundle.info);
  const infoEnd = w.length;
  w.write('parentActionHash');
  const parent = w.length;
  w.write(bundle.parentActionHash);
  const parentEnd = w.length;
  w.write('stored');
  const stored = w.length;
  w.listHeader(bundle.stored.length);
  const actions: Array<[number, number]> = [];
  for (const [env, a] of bundle.stored) {
    if (env !== 0) throw new Error('hashAndEncode: stored actions go to envelope 0');
    w.listHeader(2);
    w.write(0);
    const at = w.length;
    w.write(a);
    actions.push([at, w.length]);
  }
  const storedEnd = w.length;
  w.write('undo');
  w.write(bundle.undo);
  w.write('userActions');
  const sameActions =
    bundle.userActions.length === bundle.stored.length && bundle.userActions.every((a, i) => a === bundle.stored[i][1]);
  if (sameActions) {
    w.listHeader(actions.length);
    for (const [at, end] of actions) w.bytes(w.span(at, end));
  } else {
    w.write(bundle.userActions);
  }
  w.code(0x30); // '0'
  const hash = createHash('sha256')
    .update(w.span(num, numEnd))
    .update(w.span(parent, parentEnd))
    .update(w.span(info, infoEnd))
    .update(w.span(stored, storedEnd))
    .digest('hex');
  w.patch(hashAt, Buffer.from(hash, 'latin1'));
  bundle.actionHash = hash;
  if (w.capacity <= SCRATCH_KEEP_BYTES) scratch = w;
  return w.span(0, w.length);
}
