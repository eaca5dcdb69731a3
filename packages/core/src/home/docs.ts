/** Home operations on document records (SPEC §3.9-3.12); the Engine creates and removes the files. */
import {asViewer, can, effectiveRoles} from '../access/index.js';
import {BadRequest, Forbidden, NotFound, shownValue} from '../base/index.js';
import {makeId, nowIso} from '../base/index.js';
import {DOC, ORG, WS} from './access.js';
import type {HomeParts} from './parts.js';
import type {OrgContext, Principal} from './principal.js';
import {Conflict, type Doc} from './types.js';
import {checkDocType, checkKeys, checkUrlId, docName, mergeOptions} from './validate.js';

/** Creates the doc's home record. The caller (Engine) then creates the file. */
export async function createDoc(h: HomeParts, wid: number, p: Principal, body: Record<string, unknown>): Promise<Doc> {
  const {ws, org, role} = await h.access.workspaceFor(wid, p, 'view');
  const name = docName(body.name);
  checkKeys(body, ['name', 'urlId', 'isPinned', 'options', 'type', 'createdAt', 'updatedAt']);
  if (!can(role, 'add')) throw new Forbidden('access denied');
  if (ws.removedAt) throw new BadRequest('Cannot add document to a deleted workspace');
  const id = makeId();
  // An explicit urlId, or Grist's default: the first 12 characters of the id, longer while that
  // prefix is taken (the store decides what "taken" means: see HomeStore.updateDoc).
  const candidates: string[] = [];
  if (body.urlId !== undefined && body.urlId !== null) {
    const urlId = checkUrlId(body.urlId);
    if (await h.store.getDoc(urlId)) throw new BadRequest('urlId already in use as document id');
    candidates.push(urlId);
  } else {
    for (let n = 12; n <= id.length; n++) {
      const candidate = id.slice(0, n);
      if (!(await h.store.getDocByUrlId(candidate, org.id))) candidates.push(candidate);
    }
  }
  const type = checkDocType(body);
  for (let i = 0; ; i++) {
    try {
      return await h.store.createDoc({
        id,
        workspaceId: ws.id,
        name,
        urlId: candidates[i] ?? null,
        isPinned: body.isPinned === true,
        options: mergeOptions(null, body.options),
        type,
        ownerUserId: p.user.id,
      });
    } catch (e) {
      if (!(e instanceof Conflict)) throw e;
      if (body.urlId !== undefined && body.urlId !== null) throw new BadRequest('urlId already in use');
      if (i >= candidates.length) throw e;
    }
  }
}

export async function getDoc(h: HomeParts, key: string, p: Principal, ctx: OrgContext, showRemoved: boolean) {
  const doc = await h.access.findDoc(key, p, ctx);
  const {org, ws, chain} = await h.access.docChain(doc, p);
  // A doc in a soft-deleted workspace counts as removed too.
  if (Boolean(doc.removedAt || ws.removedAt) !== showRemoved) throw new NotFound('document not found');
  const role = asViewer(h.access.rawDocRole(chain, p));
  if (!role) throw new Forbidden('access denied');
  const owner = await h.shapes.orgOwner(org);
  // Grist's document query marks the caller's role on the workspace and the org alike (guests and
  // members read as viewers): HomeDBManager `_doc` -> `_applyLimit(["docs", "workspaces", "orgs"])`.
  // As `GET /api/workspaces/{wid}` computes it: a share of any document in it makes a guest.
  const roles = effectiveRoles(chain, p.accessIds).roles;
  const wsRole = effectiveRoles((await h.access.wsChain(ws, p)).chain, p.accessIds).roles[WS];
  // Grist joins the aliases the lookup matched: all of them by document id, by a urlId only that
  // urlId's alias in the document's org (HomeDBManager `_doc`).
  const aliases = (await h.store.listAliases(doc.id)).filter(
    (a) => key === doc.id || (a.urlId === key && a.orgId === org.id),
  );
  return {
    ...h.shapes.doc(doc, role, h.shapes.isPublic(chain[DOC].acl), !p.anonymous),
    workspace: {
      id: ws.id,
      name: ws.name,
      access: asViewer(wsRole),
      createdAt: ws.createdAt,
      updatedAt: ws.updatedAt,
      isSupportWorkspace: false,
      owner,
      // Grist's document query marks the org's access too (guests and members see it as viewers).
      org: h.shapes.embeddedOrg(org, owner, {
        access: asViewer(roles[ORG]),
        withBilling: true,
      }),
    },
    aliases,
  };
}

export async function updateDoc(
  h: HomeParts,
  key: string,
  p: Principal,
  ctx: OrgContext,
  body: Record<string, unknown>,
) {
  const type = checkDocType(body);
  checkKeys(body, ['name', 'urlId', 'isPinned', 'type', 'options', 'createdAt', 'updatedAt', 'appearance']);
  const {doc} = await h.access.docFor(key, p, ctx, ['schemaEdit']);
  const name = 'name' in body ? docName(body.name) : undefined;
  if ('isPinned' in body && typeof body.isPinned !== 'boolean') throw new BadRequest('isPinned must be a boolean');
  const urlId = body.urlId === undefined ? undefined : body.urlId === null ? null : checkUrlId(body.urlId);
  if (urlId) {
    const other = await h.store.getDoc(urlId);
    if (other && other.id !== doc.id) throw new BadRequest('urlId already in use as document id');
  }
  try {
    await h.store.updateDoc(doc.id, {
      ...(name !== undefined ? {name} : {}),
      ...(urlId !== undefined ? {urlId} : {}),
      ...(body.isPinned !== undefined ? {isPinned: body.isPinned as boolean} : {}),
      ...('type' in body ? {type} : {}),
      ...(body.options !== undefined ? {options: mergeOptions(doc.options, body.options)} : {}),
    });
  } catch (e) {
    if (e instanceof Conflict) throw new BadRequest('urlId already in use');
    throw e;
  }
  return doc.id;
}

/** Hard delete of the home record; returns the id so that the caller removes the file. */
export async function deleteDoc(h: HomeParts, key: string, p: Principal, ctx: OrgContext): Promise<string> {
  const {doc} = await h.access.docAccess(key, p, ctx, 'editors', {allowRemoved: true});
  await h.access.docFor(doc.id, p, null, ['remove', 'schemaEdit']);
  await h.store.deleteDoc(doc.id);
  return doc.id;
}

export async function setDocRemoved(h: HomeParts, key: string, p: Principal, ctx: OrgContext, removed: boolean) {
  const doc = await h.access.findDoc(key, p, ctx);
  await h.access.docFor(doc.id, p, null, ['remove', 'schemaEdit']);
  await h.store.updateDoc(doc.id, {removedAt: removed ? nowIso() : null});
  return null;
}

export async function setDocPinned(h: HomeParts, key: string, p: Principal, ctx: OrgContext, pinned: boolean) {
  const doc = await h.access.findDoc(key, p, ctx);
  const org = await h.access.orgOfDoc(doc);
  if (!can(await h.access.orgRole(org, p), 'update')) throw new Forbidden('access denied');
  await h.store.updateDoc(doc.id, {isPinned: pinned});
  return null;
}

export async function moveDoc(h: HomeParts, key: string, p: Principal, ctx: OrgContext, workspace: unknown) {
  const wid =
    typeof workspace === 'number'
      ? workspace
      : typeof workspace === 'string' && /^\d+$/.test(workspace)
        ? Number(workspace)
        : NaN;
  if (!Number.isInteger(wid))
    throw new BadRequest(`workspace parameter cannot be understood as an integer: ${shownValue(workspace)}`);
  const {doc, role} = await h.access.docFor(key, p, ctx, ['view']);
  if (role !== 'owners') throw new Forbidden('access denied');
  const dest = await h.store.getWorkspace(wid);
  if (!dest) throw new NotFound('workspace not found');
  if (dest.id === doc.workspaceId) throw new BadRequest('Bad request: doc is already in destination workspace');
  await h.access.workspaceFor(wid, p, 'add');
  await h.store.moveDoc(doc.id, wid);
  return doc.id;
}
