/** Home operations on workspaces (SPEC §3.8, §4). */
import {asViewer, can, type ResourceAcl} from '../access/index.js';
import {Forbidden, NotFound} from '../base/index.js';
import {nowIso} from '../base/index.js';
import {DOC, WS} from './access.js';
import type {HomeParts} from './parts.js';
import type {OrgContext, Principal} from './principal.js';
import type {Org} from './types.js';
import {checkKeys, docName} from './validate.js';

/** Workspaces of an org visible to the caller, each with its visible docs (SPEC §3.8). */
export async function listWorkspaces(h: HomeParts, key: string, p: Principal, ctx: OrgContext, showRemoved: boolean) {
  const {org, merged} = await h.access.resolveOrg(key, p, ctx);
  // The merged `docs` org spans every personal org the caller sees.
  const orgs = merged ? (await h.store.listOrgsForUsers(p.listIds)).filter((o) => o.ownerId !== null) : [org];
  if (!can(await h.access.orgRole(org, p), 'view')) throw new Forbidden('access denied');
  const result = [];
  for (const o of orgs) result.push(...(await workspacesOf(h, o, p, showRemoved, !p.anonymous)));
  return result.sort((a, b) => a.name.localeCompare(b.name));
}

async function workspacesOf(h: HomeParts, org: Org, p: Principal, showRemoved: boolean, withForks: boolean) {
  const orgLevel = await h.access.orgChainLevel(org, p);
  const workspaces = await h.store.listWorkspaces(org.id);
  const docs = await h.store.listDocs(workspaces.map((w) => w.id));
  const [wsAcl, docAcl] = await Promise.all([
    h.store.getAcl(
      'ws',
      workspaces.map((w) => String(w.id)),
    ),
    h.store.getAcl(
      'doc',
      docs.map((d) => d.id),
    ),
  ]);
  const owner = await h.shapes.orgOwner(org);
  const out = [];
  for (const ws of workspaces) {
    const wsDocs = docs.filter((d) => d.workspaceId === ws.id);
    const wsLevel: ResourceAcl = {
      acl: wsAcl.filter((e) => e.resourceId === String(ws.id)),
      maxInheritedRole: ws.maxInheritedRole,
      hasInnerShare: docAcl.some((e) => p.listIds.includes(e.userId) && wsDocs.some((d) => d.id === e.resourceId)),
    };
    const listed = h.access.listedRole([orgLevel, wsLevel], p, WS);
    if (!listed || Boolean(ws.removedAt) !== showRemoved) {
      if (!(showRemoved && listed && wsDocs.some((d) => d.removedAt))) continue;
    }
    const docsOut = [];
    for (const doc of wsDocs) {
      if (Boolean(doc.removedAt) !== showRemoved && !(showRemoved && ws.removedAt)) continue;
      const acl = docAcl.filter((e) => e.resourceId === doc.id);
      const role = h.access.listedRole([orgLevel, wsLevel, {acl, maxInheritedRole: doc.maxInheritedRole}], p, DOC);
      if (!role) continue;
      docsOut.push(h.shapes.doc(doc, asViewer(role), h.shapes.isPublic(acl), withForks));
    }
    out.push(h.shapes.listedWorkspace(ws, org, asViewer(listed), owner, docsOut));
  }
  return out;
}

export async function createWorkspace(
  h: HomeParts,
  key: string,
  p: Principal,
  ctx: OrgContext,
  body: Record<string, unknown>,
) {
  const {org, role} = await h.access.orgFor(key, p, ctx, 'view');
  // A number is taken as its text, as Grist stores it (its name column is text).
  const name = docName(body.name);
  checkKeys(body, ['name', 'createdAt', 'updatedAt']);
  if (!can(role, 'add')) throw new Forbidden('access denied');
  const ws = await h.store.createWorkspace({orgId: org.id, name, ownerUserId: p.user.id});
  return ws.id;
}

export async function getWorkspace(h: HomeParts, wid: number, p: Principal, showRemoved: boolean) {
  const {ws, org, role} = await h.access.workspaceFor(wid, p, 'view');
  // A soft-deleted workspace exists only for showRemoved, which shows a live one only if it
  // holds soft-deleted docs (SPEC §4.1, Grist's removedAt test).
  const hasRemoved = showRemoved && !ws.removedAt && (await h.store.listDocs([ws.id])).some((d) => d.removedAt);
  if (Boolean(ws.removedAt) !== showRemoved && !hasRemoved) throw new NotFound('workspace not found');
  const listed = (await workspacesOf(h, org, p, showRemoved, false)).find((w) => w.id === ws.id);
  const owner = await h.shapes.orgOwner(org);
  return {
    id: ws.id,
    name: ws.name,
    access: asViewer(role),
    createdAt: ws.createdAt,
    updatedAt: ws.updatedAt,
    isSupportWorkspace: false,
    docs: listed?.docs ?? [],
    org: h.shapes.embeddedOrg(org, owner),
  };
}

export async function updateWorkspace(h: HomeParts, wid: number, p: Principal, body: Record<string, unknown>) {
  checkKeys(body, ['name', 'createdAt', 'updatedAt']);
  // Owners only: Grist's updateWorkspace needs SCHEMA_EDIT (decision D1).
  await h.access.workspaceFor(wid, p, 'schemaEdit');
  if ('name' in body) await h.store.updateWorkspace(wid, {name: docName(body.name)});
  return wid;
}

/** The caller must be allowed to remove and to edit the schema: owners only. */
async function workspaceToRemove(h: HomeParts, wid: number, p: Principal) {
  const {role} = await h.access.workspaceFor(wid, p, 'view');
  if (!can(role, 'remove') || !can(role, 'schemaEdit')) throw new Forbidden('access denied');
}

export async function deleteWorkspace(
  h: HomeParts,
  wid: number,
  p: Principal,
): Promise<{id: number; docIds: string[]}> {
  await workspaceToRemove(h, wid, p);
  const {docIds} = await h.store.deleteWorkspace(wid);
  return {id: wid, docIds};
}

export async function setWorkspaceRemoved(h: HomeParts, wid: number, p: Principal, removed: boolean) {
  await workspaceToRemove(h, wid, p);
  await h.store.updateWorkspace(wid, {removedAt: removed ? nowIso() : null});
  return null;
}
