// Direct tests of HomeService (home/): authentication, the access decisions it makes for orgs,
// workspaces and docs, the shapes it answers with, and its refusals, against the SQLite home store.
import {mkdtempSync, rmSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {suite} from 'uvu';
import * as assert from 'uvu/assert';
import {asViewer} from '../src/access/index.js';
import {ApiError} from '../src/base/errors.js';
import {HomeService, hashApiKey} from '../src/home/service.js';
import {SqliteHomeStore} from '../src/home/sqlite.js';
import type {Principal} from '../src/home/principal.js';

interface Ctx {
  dir: string;
  store: SqliteHomeStore;
  home: HomeService;
  owner: Principal;
  other: Principal;
  anon: Principal;
  orgId: number;
  wsId: number;
  docId: string;
}

const home = suite<Ctx>('HomeService');

home.before.each(async (ctx) => {
  ctx.dir = mkdtempSync(join(tmpdir(), 'gristlite-homeservice-'));
  ctx.store = new SqliteHomeStore(join(ctx.dir, 'home.sqlite3'));
  ctx.home = await HomeService.create(ctx.store);
  ctx.owner = ctx.home.principalFor(await ctx.home.ensureUser('owner@example.com', 'Owner'), true);
  ctx.other = ctx.home.principalFor(await ctx.home.ensureUser('other@example.com', 'Other'), true);
  ctx.anon = ctx.home.anonymousPrincipal();
  ctx.orgId = await ctx.home.createOrg(ctx.owner, {name: 'Team', domain: 'team'});
  ctx.wsId = await ctx.home.createWorkspace(String(ctx.orgId), ctx.owner, null, {name: 'Projects'});
  ctx.docId = (await ctx.home.createDoc(ctx.wsId, ctx.owner, {name: 'Plan'})).id;
});

home.after.each((ctx) => {
  ctx.store.close?.();
  rmSync(ctx.dir, {recursive: true, force: true});
});

/** Awaits a refusal and checks its status and Grist's message. */
async function refused(promise: Promise<unknown>, status: number, message: string | RegExp) {
  try {
    await promise;
  } catch (e) {
    assert.instance(e, ApiError);
    assert.is((e as ApiError).status, status, (e as Error).message);
    if (typeof message === 'string') assert.is((e as Error).message, message);
    else assert.match((e as Error).message, message);
    return;
  }
  assert.unreachable(`expected ${status} ${message}`);
}

function share(
  ctx: Ctx,
  kind: 'org' | 'ws' | 'doc',
  target: {org?: string; wid?: number; doc?: string},
  users: Record<string, string | null>,
) {
  return ctx.home.updateAccess(kind, target, ctx.owner, null, {delta: {users}});
}

home('authenticate: no header is the anonymous caller; a Bearer key is its user', async (ctx) => {
  const anon = await ctx.home.authenticate(undefined);
  assert.ok(anon.anonymous);
  assert.not.ok(anon.viaApiKey);
  const key = await ctx.home.setApiKey(ctx.owner.user.id);
  const p = await ctx.home.authenticate(`Bearer ${key}`);
  assert.is(p.user.id, ctx.owner.user.id);
  assert.ok(p.viaApiKey);
  assert.not.ok(p.anonymous);
  assert.is((await ctx.home.authenticate(`bearer   ${key}  `)).user.id, ctx.owner.user.id);
  // Only the hash is stored.
  assert.is((await ctx.store.getUserByApiKeyHash(hashApiKey(key)))?.id, ctx.owner.user.id);
  assert.is(await ctx.home.getApiKey(p), `${key.slice(0, 4)}...`);
});

home('authenticate: other schemes and unknown keys are 401 with Grist wording', async (ctx) => {
  await refused(
    ctx.home.authenticate('Basic abc'),
    401,
    "Bad request: unsupported Authorization scheme, expected 'Bearer'",
  );
  await refused(ctx.home.authenticate('Bearer nope'), 401, 'Bad request: invalid API key');
  await refused(ctx.home.authenticate('Bearer'), 401, 'Bad request: invalid API key');
});

home(
  'authenticate: a key remembered, then replaced or deleted, is refused; past 256 keys, all still resolve',
  async (ctx) => {
    // The authenticator keeps the hashes of the last keys shown (at most 256, then it forgets them all).
    const first = await ctx.home.setApiKey(ctx.owner.user.id);
    assert.is((await ctx.home.authenticate(`Bearer ${first}`)).user.id, ctx.owner.user.id);
    const second = await ctx.home.setApiKey(ctx.owner.user.id);
    await refused(ctx.home.authenticate(`Bearer ${first}`), 401, 'Bad request: invalid API key');
    assert.is((await ctx.home.authenticate(`Bearer ${second}`)).user.id, ctx.owner.user.id);
    await ctx.home.deleteApiKey(ctx.owner);
    await refused(ctx.home.authenticate(`Bearer ${second}`), 401, 'Bad request: invalid API key');
    // Both sides of the bound: 300 unknown keys fill and empty the memo; known keys still resolve.
    const third = await ctx.home.setApiKey(ctx.other.user.id);
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < 300; i++) {
        await refused(ctx.home.authenticate(`Bearer unknown-${i}`), 401, 'Bad request: invalid API key');
        if (i === 100 || i === 299)
          assert.is((await ctx.home.authenticate(`Bearer ${third}`)).user.id, ctx.other.user.id);
      }
    }
  },
);

home('ensureUser finds the existing user instead of creating a second', async (ctx) => {
  const again = await ctx.home.ensureUser('owner@example.com', 'Someone else');
  assert.is(again.id, ctx.owner.user.id);
  assert.is(again.name, 'Owner');
});

home('orgs: the creator owns the org; strangers are refused; deletion needs the name', async (ctx) => {
  const org = await ctx.home.getOrg('team', ctx.owner, null);
  assert.is(org.id, ctx.orgId);
  assert.is(org.domain, 'team');
  assert.is(org.access, 'owners');
  await refused(ctx.home.getOrg('team', ctx.other, null), 403, 'access denied');
  await refused(ctx.home.getOrg('nosuch', ctx.owner, null), 404, 'organization not found');
  await refused(ctx.home.getOrg('current', ctx.owner, null), 400, 'No organization chosen');
  assert.is((await ctx.home.getOrg('current', ctx.owner, 'team')).id, ctx.orgId);
  const listed = await ctx.home.listOrgs(ctx.owner, null, false);
  assert.equal(
    listed.map((o) => o.name),
    ['Personal', 'Team'],
  );
  await refused(ctx.home.deleteOrg('team', 'wrong', ctx.owner, null), 400, 'Name does not match organization');
  await refused(ctx.home.deleteOrg('team', 'team', ctx.other, null), 403, 'access denied');
  const {id, docIds} = await ctx.home.deleteOrg('team', 'team', ctx.owner, null);
  assert.is(id, ctx.orgId);
  assert.equal(docIds, [ctx.docId]);
});

home('orgs: domain rules and personal orgs', async (ctx) => {
  await refused(
    ctx.home.createOrg(ctx.owner, {name: 'X', domain: 'docs-3'}),
    400,
    'Domain is not permitted: Domain cannot use reserved prefix "docs-".',
  );
  await refused(ctx.home.createOrg(ctx.owner, {name: 'X', domain: 'team'}), 400, 'Domain already in use');
  await refused(ctx.home.createOrg(ctx.anon, {name: 'X'}), 401, 'user not authorized');
  const personal = await ctx.home.getOrg('docs', ctx.owner, null);
  assert.is(personal.id, 0);
  assert.is(personal.domain, 'docs');
  await refused(
    ctx.home.updateOrg('docs', ctx.owner, null, {domain: 'mine'}),
    400,
    'Cannot set a domain for a personal organization',
  );
  await refused(ctx.home.updateOrg('team', ctx.owner, null, {colour: 'red'}), 400, 'unrecognized property colour');
});

home('members and guests act as viewers on a document, in every answer that shows a doc role', async (ctx) => {
  // other@ becomes an org member: no role on the workspace or doc by inheritance.
  await share(ctx, 'org', {org: 'team'}, {'other@example.com': 'members'});
  await share(ctx, 'doc', {doc: ctx.docId}, {'other@example.com': 'viewers'});
  const {role} = await ctx.home.docAccess(ctx.docId, ctx.other, null, 'viewers');
  assert.is(role, 'viewers');
  assert.is((await ctx.home.getDoc(ctx.docId, ctx.other, null, false)).access, 'viewers');
  const [ws] = await ctx.home.listWorkspaces('team', ctx.other, null, false);
  assert.equal(
    ws.docs.map((d) => d.access),
    ['viewers'],
  );
  const personal = await ctx.home.getDocAccess(ctx.docId, ctx.other, null);
  assert.equal(
    personal.users.map((u) => u.access),
    ['viewers'],
  );
  await refused(ctx.home.docAccess(ctx.docId, ctx.other, null, 'editors'), 403, 'No write access');
});

home('asViewer maps members and guests to viewers and keeps the rest', () => {
  assert.equal(
    ['owners', 'editors', 'viewers', 'members', 'guests', null].map((r) => asViewer(r as never)),
    ['owners', 'editors', 'viewers', 'viewers', 'viewers', null],
  );
});

home('docs: access wording for doc endpoints, and soft deletion', async (ctx) => {
  await refused(ctx.home.docAccess(ctx.docId, ctx.other, null, 'viewers'), 403, 'No view access');
  await refused(ctx.home.docAccess('nosuchdoc', ctx.owner, null, 'viewers'), 404, 'document not found');
  await ctx.home.setDocRemoved(ctx.docId, ctx.owner, null, true);
  await refused(ctx.home.docAccess(ctx.docId, ctx.owner, null, 'viewers'), 404, 'Document is deleted');
  await refused(ctx.home.getDoc(ctx.docId, ctx.owner, null, false), 404, 'document not found');
  const removed = await ctx.home.getDoc(ctx.docId, ctx.owner, null, true);
  assert.ok(removed.removedAt);
  await ctx.home.setDocRemoved(ctx.docId, ctx.owner, null, false);
  const doc = await ctx.home.getDoc(ctx.docId, ctx.owner, null, false);
  assert.is(doc.name, 'Plan');
  assert.is(doc.workspace.id, ctx.wsId);
  assert.is(doc.workspace.org.domain, 'team');
  assert.is(doc.urlId, ctx.docId.slice(0, 12));
});

home('docs: urlId, options and type are validated; renames need schema rights', async (ctx) => {
  await refused(ctx.home.updateDoc(ctx.docId, ctx.owner, null, {urlId: 'new'}), 400, 'invalid urlId');
  await refused(ctx.home.updateDoc(ctx.docId, ctx.owner, null, {type: 'other'}), 400, /'type' key authorized values/);
  await refused(
    ctx.home.updateDoc(ctx.docId, ctx.owner, null, {options: {colour: 1}}),
    400,
    'unrecognized property options.colour',
  );
  await ctx.home.updateDoc(ctx.docId, ctx.owner, null, {urlId: 'my-plan', options: {description: 'd'}});
  const byUrlId = await ctx.home.getDoc('my-plan', ctx.owner, 'team', false);
  assert.is(byUrlId.id, ctx.docId);
  assert.equal(byUrlId.options, {description: 'd'});
  await share(ctx, 'doc', {doc: ctx.docId}, {'other@example.com': 'editors'});
  await refused(ctx.home.updateDoc(ctx.docId, ctx.other, null, {name: 'Mine'}), 403, 'access denied');
});

home('docs: moving needs ownership of the doc and add rights on the destination', async (ctx) => {
  const dest = await ctx.home.createWorkspace('team', ctx.owner, null, {name: 'Archive'});
  await refused(
    ctx.home.moveDoc(ctx.docId, ctx.owner, null, 'x'),
    400,
    'workspace parameter cannot be understood as an integer: x',
  );
  await refused(
    ctx.home.moveDoc(ctx.docId, ctx.owner, null, ctx.wsId),
    400,
    'Bad request: doc is already in destination workspace',
  );
  assert.is(await ctx.home.moveDoc(ctx.docId, ctx.owner, null, String(dest)), ctx.docId);
  assert.is((await ctx.home.getDoc(ctx.docId, ctx.owner, null, false)).workspace.id, dest);
});

home('workspaces: only owners rename (decision D1) or remove', async (ctx) => {
  await share(ctx, 'ws', {wid: ctx.wsId}, {'other@example.com': 'editors'});
  await refused(ctx.home.updateWorkspace(ctx.wsId, ctx.other, {name: 'Mine'}), 403, 'access denied');
  assert.is(await ctx.home.updateWorkspace(ctx.wsId, ctx.owner, {name: 2024}), ctx.wsId);
  assert.is((await ctx.home.getWorkspace(ctx.wsId, ctx.owner, false)).name, '2024');
  await refused(ctx.home.deleteWorkspace(ctx.wsId, ctx.other), 403, 'access denied');
  await refused(ctx.home.getWorkspace(9999, ctx.owner, false), 404, 'workspace not found');
  await ctx.home.setWorkspaceRemoved(ctx.wsId, ctx.owner, true);
  await refused(ctx.home.getWorkspace(ctx.wsId, ctx.owner, false), 404, 'workspace not found');
  await refused(
    ctx.home.createDoc(ctx.wsId, ctx.owner, {name: 'Late'}),
    400,
    'Cannot add document to a deleted workspace',
  );
});

home('GET /api/docs/{doc} lists the aliases its lookup matched, as Grist does', async (ctx) => {
  const urlId = ctx.docId.slice(0, 12);
  const byId = await ctx.home.getDoc(ctx.docId, ctx.owner, null, false);
  assert.equal(
    byId.aliases.map((a) => [a.orgId, a.urlId, a.docId]),
    [[ctx.orgId, urlId, ctx.docId]],
  );
  await ctx.home.updateDoc(ctx.docId, ctx.owner, null, {urlId: 'plan'});
  const all = (await ctx.home.getDoc(ctx.docId, ctx.owner, null, false)).aliases.map((a) => a.urlId);
  assert.equal(all, [urlId, 'plan']);
  // By a urlId, only that alias (HomeDBManager `_doc` joins aliases under its where clause).
  const byUrlId = await ctx.home.getDoc('plan', ctx.owner, 'team', false);
  assert.equal(
    byUrlId.aliases.map((a) => a.urlId),
    ['plan'],
  );
});

home('a public (everyone@) doc makes nobody a guest of its workspace or org', async (ctx) => {
  await share(ctx, 'doc', {doc: ctx.docId}, {'everyone@getgrist.com': 'viewers'});
  for (const p of [ctx.other, ctx.anon]) {
    const doc = await ctx.home.getDoc(ctx.docId, p, null, false);
    assert.is(doc.access, 'viewers');
    assert.is(doc.workspace.access, null);
    assert.is(doc.workspace.org.access, null);
  }
  await refused(ctx.home.getOrg(String(ctx.orgId), ctx.other, null), 403, 'access denied');
});

home('org 0 is the merged personal org, as docs', async (ctx) => {
  const merged = await ctx.home.getOrg('0', ctx.owner, null);
  assert.is(merged.id, 0);
  assert.is(merged.domain, 'docs');
  assert.is(merged.access, 'owners');
  assert.is((await ctx.home.getOrg('0', ctx.anon, null)).name, 'Anonymous');
});

home('session access all: the caller and the orgs they belong to, their personal one as docs', async (ctx) => {
  await share(ctx, 'doc', {doc: ctx.docId}, {'other@example.com': 'editors'});
  const other = await ctx.home.sessionAccessAll(ctx.other, null);
  assert.equal(other.users, [
    {id: ctx.other.user.id, email: 'other@example.com', name: 'Other', picture: null, anonymous: false},
  ]);
  assert.equal(
    other.orgs.map((o) => [o.id, o.domain, o.accessOptions[0].access, o.accessOptions[0].perms]),
    [
      [0, 'docs', 'owners', 63],
      [ctx.orgId, 'team', 'viewers', 1],
    ],
  );
  assert.not.ok('access' in other.orgs[1]);
  assert.equal((await ctx.home.sessionAccessAll(ctx.anon, null)).orgs, []);
});

home('access lists: owners see everyone; a doc share makes a guest of the org', async (ctx) => {
  await share(ctx, 'doc', {doc: ctx.docId}, {'other@example.com': 'editors'});
  const org = await ctx.home.getOrgAccess('team', ctx.owner, null);
  const byEmail = Object.fromEntries(org.users.map((u) => [u.email, u]));
  assert.is(byEmail['owner@example.com'].access, 'owners');
  assert.is(byEmail['other@example.com'].access, 'guests');
  assert.is(byEmail['other@example.com'].isMember, false);
  const doc = await ctx.home.getDocAccess(ctx.docId, ctx.owner, null);
  const other = doc.users.find((u) => u.email === 'other@example.com')!;
  assert.is(other.access, 'editors');
  assert.is((other as {parentAccess?: unknown}).parentAccess, null);
});

home("updateAccess: validates the delta and refuses changing one's own role", async (ctx) => {
  const target = {doc: ctx.docId};
  await refused(
    ctx.home.updateAccess('doc', target, ctx.owner, null, {}),
    400,
    'Bad request: missing permission delta',
  );
  await refused(share(ctx, 'doc', target, {'other@example.com': 'members'}), 400, 'Invalid user role members');
  await refused(share(ctx, 'doc', target, {'not-an-email': 'viewers'}), 400, 'Invalid email address included');
  await refused(
    share(ctx, 'doc', target, {'OWNER@example.com': 'viewers'}),
    400,
    'Bad request: cannot update own permissions',
  );
  await refused(
    share(ctx, 'org', {org: 'team'}, {'everyone@getgrist.com': 'viewers'}),
    403,
    'This user cannot share with everyone at top level',
  );
  // A new email is invited: the user is created.
  await share(ctx, 'doc', target, {'New@Example.com': 'viewers'});
  assert.ok(await ctx.store.getUserByEmail('new@example.com'));
  // A non-owner may only remove themselves.
  const invited = ctx.home.principalFor((await ctx.store.getUserByEmail('new@example.com'))!, true);
  await refused(
    ctx.home.updateAccess('doc', target, invited, null, {delta: {users: {'other@example.com': 'viewers'}}}),
    403,
    'access denied',
  );
  await ctx.home.updateAccess('doc', target, invited, null, {delta: {users: {'new@example.com': null}}});
  await refused(ctx.home.docAccess(ctx.docId, invited, null, 'viewers'), 403, 'No view access');
});

home('public shares: everyone@ makes a doc public and readable by the anonymous caller', async (ctx) => {
  await share(ctx, 'doc', {doc: ctx.docId}, {'everyone@getgrist.com': 'viewers'});
  const doc = await ctx.home.getDoc(ctx.docId, ctx.owner, null, false);
  assert.is((doc as {public?: boolean}).public, true);
  assert.is((await ctx.home.docAccess(ctx.docId, ctx.anon, null, 'viewers')).role, 'viewers');
  const seen = await ctx.home.getDocAccess(ctx.docId, ctx.anon, null);
  assert.equal(seen, {personal: true, public: true, maxInheritedRole: 'owners', users: []});
});

home('users: profile, name, API keys and self-deletion', async (ctx) => {
  assert.equal(ctx.home.profile(ctx.anon), {...ctx.home.profile(ctx.anon), anonymous: true});
  assert.is(ctx.home.profile(ctx.owner).email, 'owner@example.com');
  await ctx.home.updateName(ctx.owner, 'Boss');
  assert.is((await ctx.store.getUser(ctx.owner.user.id))?.name, 'Boss');
  await refused(ctx.home.updateName(ctx.anon, 'x'), 401, 'user not authorized');
  assert.is(await ctx.home.getApiKey(ctx.owner), '');
  const key = await ctx.home.createApiKey(ctx.owner, false);
  await refused(ctx.home.createApiKey(ctx.owner, false), 400, /already set/);
  assert.is.not(await ctx.home.createApiKey(ctx.owner, true), key);
  await ctx.home.deleteApiKey(ctx.owner);
  assert.is(await ctx.home.getApiKey(ctx.owner), '');
  await refused(
    ctx.home.deleteUser(ctx.owner.user.id, ctx.owner, {}),
    400,
    'to confirm deletion of a user, provide their name',
  );
  await refused(
    ctx.home.deleteUser(ctx.owner.user.id, ctx.other, {name: 'Boss'}),
    403,
    'not permitted to delete this user',
  );
  await refused(
    ctx.home.deleteUser(ctx.owner.user.id, ctx.owner, {name: 'Nope'}),
    400,
    "user name did not match ('Nope' vs 'Boss')",
  );
  await ctx.home.deleteUser(ctx.owner.user.id, ctx.owner, {name: 'Boss'});
  assert.is(await ctx.store.getUser(ctx.owner.user.id), null);
});

home.run();
