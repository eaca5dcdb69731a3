/**
 * The document lifecycle operations of today's Grist (1.7.17 `DocApi`, issue 29) that need more
 * than one open document: force-reload, snapshots, replace and compare. Both the HTTP routes
 * (`routes/lifecycle.ts`) and `SessionDoc` call these, after their own access check, so the
 * checks and errors below are the same on both paths.
 */
import type {AccessContext} from '../access/rules/context.js';
import type {Engine} from './engine.js';
import {BadRequest, Forbidden, HeldElsewhere, NotFound} from '../base/index.js';
import type {OrgContext, Principal} from '../home/principal.js';
import type {Doc, Role} from '../home/types.js';
import {compareStates, type DocStateComparison} from './lifecycle.js';
import type {OpenDocument} from './opendoc.js';

/** Grist's `integerParam`: a number (floored) or a numeric string, else 400 in Grist's words. */
export function integerParam(value: unknown, name: string): number {
  const n = typeof value === 'number' ? Math.floor(value) : typeof value === 'string' ? parseInt(value, 10) : NaN;
  if (Number.isNaN(n)) throw new BadRequest(`${name} parameter cannot be understood as an integer: ${String(value)}`);
  return n;
}

/** One snapshot of a document, as `GET /snapshots` lists it. */
export interface DocSnapshot {
  /** The snapshot's id: `current`, the document as it is (D52). */
  snapshotId: string;
  /** When it was taken (ISO 8601): now, for the current state. */
  lastModified: string;
  /** The document's id. */
  docId: string;
}

/**
 * The snapshots of a document (`GET /snapshots`): with one document store, only its current state,
 * as Grist answers without external storage (D52). A snapshot holds everything, so Grist lists them
 * only to those the access rules hide nothing from.
 */
export function docSnapshots(docId: string, access: AccessContext | null): {snapshots: DocSnapshot[]} {
  if (access && !access.canCopyEverything()) {
    throw new Forbidden('cannot confirm access to snapshots because of access rules');
  }
  return {snapshots: currentSnapshot(docId)};
}

function currentSnapshot(docId: string): DocSnapshot[] {
  return [{snapshotId: 'current', lastModified: new Date().toISOString(), docId}];
}

/**
 * Grist's force-reload of a document this process holds (the caller claimed it): attachments
 * unused for 7 days are removed, as Grist does when it closes a document (in the caller's scope,
 * so the write is logged before the answer), then the document is closed, to open afresh on its
 * next use.
 */
export async function forceReloadDoc(engine: Engine, docId: string): Promise<void> {
  const doc = engine.openDoc(docId);
  if (doc.grist.isWritable) {
    doc.replica?.checkWritable();
    await doc.removeUnusedAttachments({expiredOnly: true});
  }
  await engine.reloadDoc(docId);
}

/** Another document read for a request: view access, refused in Grist's home API words. */
async function otherDoc(engine: Engine, key: string, p: Principal, org: OrgContext) {
  try {
    return await engine.docAccess(key, p, org, 'viewers');
  } catch (e) {
    if (e instanceof Forbidden) throw new Forbidden('access denied');
    throw e;
  }
}

/** The other document of a replace or compare, open here, with the caller's access to all of it checked. */
async function readableWhole(
  engine: Engine,
  key: string,
  p: Principal,
  org: OrgContext,
  refusal: string,
): Promise<OpenDocument> {
  const other = await otherDoc(engine, key, p, org);
  // Several machines: its file is current only where it is held; the request goes there.
  const holder = await engine.claimDoc(other.doc.id);
  if (holder) throw new HeldElsewhere(holder);
  const open = engine.openDoc(other.doc.id);
  const access = open.accessFor(p, other.role!);
  if (access && other.role !== 'owners' && !access.canCopyEverything()) throw new Forbidden(refusal);
  return open;
}

/** What `POST /replace` takes: another document (by id or urlId) or a snapshot. */
export interface ReplaceSource {
  /** The document whose content replaces this one's. */
  sourceDocId?: unknown;
  /** A snapshot of this document (`current`, D52). */
  snapshotId?: unknown;
}

/**
 * Grist's `POST /replace` on a document the caller may edit (checked, opened with the owners'
 * exception for broken rules): owners only; the source needs read access to all of it, as its
 * `download?dryrun=1` would. As in Grist's DocApi, the source is checked before the owners-only
 * rule of the replacement itself, so an editor naming a source they cannot read hears why.
 */
export async function replaceDoc(
  engine: Engine,
  target: {meta: Doc; role: Role; open: OpenDocument},
  p: Principal,
  org: OrgContext,
  body: () => unknown | Promise<unknown>,
): Promise<null> {
  const ownersOnly = () => {
    if (target.role !== 'owners') throw new Forbidden('Only owners can replace a document');
  };
  const given = await body();
  const {sourceDocId, snapshotId} = (given && typeof given === 'object' ? given : {}) as ReplaceSource;
  if (sourceDocId) {
    const source = await readableWhole(engine, String(sourceDocId), p, org, 'not authorized to download this document');
    ownersOnly();
    await engine.replaceDocContent(target.open, source.id);
    return null;
  }
  ownersOnly();
  if (!given || typeof given !== 'object') throw new BadRequest('Invalid payload');
  if (snapshotId !== undefined && snapshotId !== null && snapshotId !== '') {
    const id = String(snapshotId);
    // The one snapshot is the current state: replacing the document with it changes nothing.
    if (!currentSnapshot(target.meta.id).some((s) => s.snapshotId === id)) {
      throw new NotFound(`Snapshot not found: ${id}`);
    }
    return null;
  }
  throw new BadRequest('sourceDocId or snapshotId is required');
}

/** Options of `GET /compare/{other}`. */
export interface CompareOptions {
  /** Grist's `maxRows`: cells kept per bulk change in details (a positive integer; null or `null`: all; default 10). */
  maxRows?: string | number | null;
  /** Grist's `detail`: add what changed on each side since the common state (ActionSummary). */
  detail?: boolean;
}

/** `maxRows` as Grist's optIntegerParam reads it (nullable, positive), 400 otherwise. */
export function maxRowsParam(maxRows: string | number | null | undefined): number | null | undefined {
  if (maxRows === undefined) return undefined;
  if (maxRows === null || maxRows === 'null') return null;
  const n = integerParam(maxRows, 'maxRows');
  if (!(n > 0)) throw new BadRequest(`maxRows parameter is invalid: ${maxRows}`);
  return n;
}

/**
 * Grist's `GET /compare/{other}` from a document the caller may view (`doc`, `access`): both
 * documents read whole, so the access rules must hide nothing in either (403 `insufficient
 * access`); compared by their histories, and by content when those end alike (D54). With
 * `detail`, the changes of each side since their common state.
 */
export async function compareDocs(
  engine: Engine,
  left: {open: OpenDocument; access: AccessContext | null},
  p: Principal,
  org: OrgContext,
  otherKey: string,
  opts: CompareOptions = {},
): Promise<DocStateComparison> {
  if (left.access && !left.access.canCopyEverything()) throw new Forbidden('insufficient access');
  const maxRows = maxRowsParam(opts.maxRows);
  const right = await readableWhole(engine, otherKey, p, org, 'insufficient access');
  const doc = left.open;
  const cmp = compareStates(
    doc.states().states,
    right.states().states,
    () => doc.contentDigest() === right.contentDigest(),
  );
  if (opts.detail && cmp.parent) {
    // Two documents without history (the empty state) have no actions to summarise.
    const since = (d: OpenDocument) =>
      cmp.parent!.h === ''
        ? {tableRenames: [], tableDeltas: {}}
        : d.changes(cmp.parent!.h, 'HEAD', maxRows).details!.rightChanges;
    cmp.details = {leftChanges: since(doc), rightChanges: since(right)};
  }
  return cmp;
}

/**
 * Grist's `GET /compare?left=&right=` on a document the caller may view: what changed from `left`
 * to `right` (both default `HEAD`); the access rules must hide nothing (403 `insufficient access`).
 */
export function versionChanges(
  open: OpenDocument,
  access: AccessContext | null,
  opts: {left?: string | null; right?: string | null; maxRows?: string | number | null},
): DocStateComparison {
  if (access && !access.canCopyEverything()) throw new Forbidden('insufficient access');
  const maxRows = maxRowsParam(opts.maxRows);
  return open.changes(opts.left || 'HEAD', opts.right || 'HEAD', maxRows);
}
