/**
 * The HomeStore conformance suite, written once and run against every implementation (the pattern
 * of Lucia's `testAdapter(adapter)`):
 *
 *   homeStoreConformance('SqliteHomeStore', async () => {
 *     const dir = mkdtempSync(join(tmpdir(), 'home-'));
 *     return { store: new SqliteHomeStore(join(dir, 'home.sqlite3')), cleanup: async () => rmSync(dir, { recursive: true }) };
 *   });
 *
 * The factory is called once per test and must return an empty store. After each test the suite
 * closes the store (unless the test closed it) and then calls `cleanup()`.
 */
import {suite} from 'uvu';
import * as assert from 'uvu/assert';
import {
  Conflict,
  type AclEntry,
  type Doc,
  HomeService,
  type HomeStore,
  type Org,
  type User,
  type Workspace,
} from '@gristlite/core/internal';

export interface HomeStoreFactoryResult {
  store: HomeStore;
  cleanup(): Promise<void>;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const ISO_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

async function expectConflict(p: Promise<unknown>, what: Conflict['what']): Promise<void> {
  let error: unknown;
  let threw = false;
  try {
    await p;
  } catch (e) {
    threw = true;
    error = e;
  }
  if (!threw) assert.unreachable(`expected Conflict('${what}'), but the call succeeded`);
  assert.instance(error, Conflict, `expected Conflict('${what}'), got ${String(error)}`);
  assert.is((error as Conflict).what, what);
}

async function expectRejects(p: Promise<unknown>, message: string): Promise<void> {
  let threw = false;
  try {
    await p;
  } catch {
    threw = true;
  }
  assert.ok(threw, message);
}

/** ACL entries in a canonical order, so that stores may return them in any order of equal user ids. */
function sortAcl(entries: AclEntry[]): AclEntry[] {
  const key = (e: AclEntry) => `${e.userId}\u0000${e.kind}\u0000${e.resourceId}`;
  return [...entries]
    .map((e) => ({kind: e.kind, resourceId: e.resourceId, userId: e.userId, role: e.role}))
    .sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}
const ids = <T extends {id: number | string}>(rows: T[]) => rows.map((r) => r.id);
const sortedIds = <T extends {id: number | string}>(rows: T[]) => [...ids(rows)].sort();
const sorted = <T>(xs: T[]) => [...xs].sort();

export function homeStoreConformance(name: string, factory: () => Promise<HomeStoreFactoryResult>): void {
  const s = suite(`HomeStore conformance: ${name}`);
  let made: HomeStoreFactoryResult | null = null;
  let closed = false;
  let docSeq = 0;

  s.before.each(async () => {
    made = await factory();
    closed = false;
  });
  s.after.each(async () => {
    if (!made) return;
    const m = made;
    made = null;
    try {
      if (!closed) await m.store.close();
    } finally {
      await m.cleanup();
    }
  });

  const store = (): HomeStore => {
    if (!made) throw new Error('no store: the factory failed');
    return made.store;
  };
  const newUser = (email: string, personalOrg = false, name = '') => store().createUser({email, name, personalOrg});
  async function teamOrg(owner: User, domain: string, name = domain): Promise<{org: Org; home: Workspace}> {
    const org = await store().createOrg({name, domain, ownerUserId: owner.id, personal: false});
    const [home] = await store().listWorkspaces(org.id);
    return {org, home};
  }
  /** Doc ids are chosen by callers; make them unique and in Grist's character set. */
  const newDocId = () => `doc${String(++docSeq).padStart(4, '0')}x${Math.random().toString(36).slice(2, 10)}`;
  function newDoc(ws: Workspace, owner: User, extra: {urlId?: string | null; name?: string} = {}): Promise<Doc> {
    return store().createDoc({
      id: newDocId(),
      workspaceId: ws.id,
      name: extra.name ?? 'Doc',
      urlId: extra.urlId ?? null,
      ownerUserId: owner.id,
    });
  }

  // ------------------------------------------------------------------ users

  s('createUser returns the user as stored; getUser finds it; unknown ids give null', async () => {
    const u = await newUser('Alice@Example.com', false, 'Alice');
    assert.type(u.id, 'number');
    assert.is(u.email, 'Alice@Example.com');
    assert.is(u.name, 'Alice');
    assert.type(u.ref, 'string');
    assert.ok(u.ref.length > 0, 'ref is non-empty');
    assert.is(u.picture, null);
    assert.is(u.apiKeyPrefix, null);
    assert.match(u.createdAt, ISO_RE);
    assert.equal(await store().getUser(u.id), u);
    assert.is(await store().getUser(u.id + 1000), null);
    const v = await newUser('bob@example.com');
    assert.is.not(v.id, u.id);
    assert.is.not(v.ref, u.ref, 'refs are unique per user');
  });

  s('getUsers returns the existing users among the ids, and [] for []', async () => {
    const a = await newUser('a@example.com');
    const b = await newUser('b@example.com');
    await newUser('c@example.com');
    assert.equal(await store().getUsers([]), []);
    const got = await store().getUsers([b.id, a.id, a.id + b.id + 1000]);
    assert.equal(sorted(ids(got)), sorted([a.id, b.id]));
    assert.equal(
      got.find((u) => u.id === a.id),
      a,
    );
  });

  s(
    'emails are case-insensitive: lookup ignores case, display form is kept, duplicates are Conflict(email)',
    async () => {
      const u = await newUser('Mixed.Case@Example.COM');
      const found = await store().getUserByEmail('mixed.case@example.com');
      assert.ok(found, 'found by lower-cased email');
      assert.is(found!.id, u.id);
      assert.is(found!.email, 'Mixed.Case@Example.COM');
      assert.is((await store().getUserByEmail('MIXED.CASE@EXAMPLE.COM'))?.id, u.id);
      assert.is(await store().getUserByEmail('other@example.com'), null);
      await expectConflict(newUser('mixed.case@example.com'), 'email');
      await expectConflict(newUser('MIXED.CASE@example.com', true), 'email');
      // The failed creation with a personal org left nothing behind.
      assert.is(await store().getPersonalOrg(u.id), null);
      assert.equal(await store().listOrgsForUsers([u.id]), []);
    },
  );

  s('createUser with personalOrg: org "Personal" owned by the user, workspace "Home", owners ACL', async () => {
    const u = await newUser('p@example.com', true);
    const org = await store().getPersonalOrg(u.id);
    assert.ok(org, 'personal org exists');
    assert.is(org!.name, 'Personal');
    assert.is(org!.ownerId, u.id);
    assert.is(org!.domain, null);
    assert.equal(await store().getOrg(org!.id), org);
    const wss = await store().listWorkspaces(org!.id);
    assert.equal(
      wss.map((w) => w.name),
      ['Home'],
    );
    assert.equal(await store().getAcl('org', [String(org!.id)]), [
      {kind: 'org', resourceId: String(org!.id), userId: u.id, role: 'owners'},
    ]);
    assert.equal(ids(await store().listOrgsForUsers([u.id])), [org!.id]);
  });

  s('createUser without personalOrg creates no org', async () => {
    const u = await newUser('np@example.com', false);
    assert.is(await store().getPersonalOrg(u.id), null);
    assert.equal(await store().listOrgsForUsers([u.id]), []);
  });

  s('updateUser changes the name only when given', async () => {
    const u = await newUser('n@example.com', false, 'Old');
    await store().updateUser(u.id, {name: 'New'});
    assert.is((await store().getUser(u.id))!.name, 'New');
    await store().updateUser(u.id, {});
    const after = (await store().getUser(u.id))!;
    assert.is(after.name, 'New');
    assert.is(after.email, 'n@example.com');
  });

  s('setApiKey: lookup by hash, prefix shown, rotation, clearing, Conflict(apiKey) on a taken hash', async () => {
    const a = await newUser('ka@example.com');
    const b = await newUser('kb@example.com');
    assert.is(await store().getUserByApiKeyHash('hash-1'), null);
    await store().setApiKey(a.id, 'hash-1', 'abcd');
    const found = await store().getUserByApiKeyHash('hash-1');
    assert.is(found?.id, a.id);
    assert.is(found?.apiKeyPrefix, 'abcd');
    assert.is((await store().getUser(a.id))!.apiKeyPrefix, 'abcd');

    await expectConflict(store().setApiKey(b.id, 'hash-1', 'efgh'), 'apiKey');
    assert.is((await store().getUserByApiKeyHash('hash-1'))?.id, a.id, 'the holder keeps the key');
    assert.is((await store().getUser(b.id))!.apiKeyPrefix, null, 'the failed call changed nothing');

    await store().setApiKey(a.id, 'hash-2', 'wxyz');
    assert.is(await store().getUserByApiKeyHash('hash-1'), null, 'the old key stops working');
    assert.is((await store().getUserByApiKeyHash('hash-2'))?.id, a.id);

    await store().setApiKey(a.id, null, null);
    assert.is(await store().getUserByApiKeyHash('hash-2'), null);
    assert.is((await store().getUser(a.id))!.apiKeyPrefix, null);
    await store().setApiKey(b.id, 'hash-2', 'qqqq');
    assert.is((await store().getUserByApiKeyHash('hash-2'))?.id, b.id, 'a cleared hash can be taken by another user');
  });

  s(
    'deleteUser removes the user, the personal org with its docs, every ACL entry and prefs; nulls createdBy',
    async () => {
      const gone = await newUser('gone@example.com', true);
      const stay = await newUser('stay@example.com', true);
      await store().setApiKey(gone.id, 'gone-hash', 'gone');
      const personal = (await store().getPersonalOrg(gone.id))!;
      const [personalHome] = await store().listWorkspaces(personal.id);
      const pDoc1 = await newDoc(personalHome, gone, {urlId: 'pdoc'});
      const pDoc2 = await newDoc(personalHome, gone);
      const pWs = await store().createWorkspace({orgId: personal.id, name: 'More', ownerUserId: gone.id});
      const pDoc3 = await newDoc(pWs, gone);

      const {org: team, home: teamHome} = await teamOrg(stay, 'team');
      await store().updateAcl('org', String(team.id), [{userId: gone.id, role: 'editors'}]);
      await store().updateAcl('ws', String(teamHome.id), [{userId: gone.id, role: 'editors'}]);
      const teamDoc = await newDoc(teamHome, gone);
      await store().updateAcl('doc', teamDoc.id, [{userId: stay.id, role: 'viewers'}]);
      await store().setPrefs(team.id, gone.id, {a: 1});
      await store().setPrefs(team.id, stay.id, {b: 2});

      const {docIds} = await store().deleteUser(gone.id);
      assert.equal(sorted(docIds), sorted([pDoc1.id, pDoc2.id, pDoc3.id]));

      assert.is(await store().getUser(gone.id), null);
      assert.is(await store().getUserByEmail('gone@example.com'), null);
      assert.is(await store().getUserByApiKeyHash('gone-hash'), null);
      assert.is(await store().getPersonalOrg(gone.id), null);
      assert.is(await store().getOrg(personal.id), null);
      assert.is(await store().getWorkspace(pWs.id), null);
      for (const d of [pDoc1, pDoc2, pDoc3]) assert.is(await store().getDoc(d.id), null);
      assert.is(await store().getDocByUrlId('pdoc', null), null);

      const left = await store().getDoc(teamDoc.id);
      assert.ok(left, 'a doc the user created in another org stays');
      assert.is(left!.createdBy, null);

      const teamAcl = await store().getAclInOrg(team.id, null);
      assert.ok(
        teamAcl.every((e) => e.userId !== gone.id),
        'no ACL entry of the deleted user remains',
      );
      assert.equal(
        sortAcl(teamAcl),
        sortAcl([
          {kind: 'org', resourceId: String(team.id), userId: stay.id, role: 'owners'},
          {kind: 'doc', resourceId: teamDoc.id, userId: stay.id, role: 'viewers'},
        ]),
      );
      assert.is(await store().getPrefs(team.id, gone.id), null);
      assert.equal(await store().getPrefs(team.id, stay.id), {b: 2});
      assert.ok(await store().getPersonalOrg(stay.id), 'other users keep their personal org');

      const again = await newUser('gone@example.com', true);
      assert.is.not(again.id, gone.id);
      assert.ok(await store().getPersonalOrg(again.id), 'the email can be registered again, with a new personal org');
    },
  );

  s('ids of deleted users, orgs and workspaces are never given out again', async () => {
    const keep = await newUser('keep@example.com');
    const gone = await newUser('gone@example.com', true);
    const goneOrg = (await store().getPersonalOrg(gone.id))!;
    const [goneWs] = await store().listWorkspaces(goneOrg.id);
    const {org} = await teamOrg(keep, 'ids');
    const ws = await store().createWorkspace({orgId: org.id, name: 'Last', ownerUserId: keep.id});
    // Delete the newest of each kind, where a reused id would come from.
    await store().deleteWorkspace(ws.id);
    await store().deleteOrg(org.id);
    await store().deleteUser(gone.id);
    const again = await newUser('gone@example.com', true);
    assert.ok(again.id > gone.id, `user id ${again.id} reuses a deleted one (${gone.id})`);
    const againOrg = (await store().getPersonalOrg(again.id))!;
    assert.ok(againOrg.id > org.id && againOrg.id > goneOrg.id, 'org ids are not reused');
    const [againWs] = await store().listWorkspaces(againOrg.id);
    assert.ok(againWs.id > ws.id && againWs.id > goneWs.id, 'workspace ids are not reused');
  });

  // ------------------------------------------------------------------ orgs

  s('createOrg: team org with domain, workspace "Home", owner gets owners on the org', async () => {
    const owner = await newUser('o@example.com');
    const org = await store().createOrg({name: 'Team', domain: 'team', ownerUserId: owner.id, personal: false});
    assert.type(org.id, 'number');
    assert.is(org.name, 'Team');
    assert.is(org.domain, 'team');
    assert.is(org.ownerId, null);
    assert.is(org.host, null);
    assert.is(org.orgPrefs, null);
    assert.match(org.createdAt, ISO_RE);
    assert.match(org.updatedAt, ISO_RE);
    assert.equal(await store().getOrg(org.id), org);
    assert.equal(await store().getOrgByDomain('team'), org);
    assert.is(await store().getOrgByDomain('nope'), null);
    assert.is(await store().getOrg(org.id + 1000), null);
    const wss = await store().listWorkspaces(org.id);
    assert.is(wss.length, 1);
    assert.is(wss[0].name, 'Home');
    assert.is(wss[0].orgId, org.id);
    assert.equal(await store().getAcl('org', [String(org.id)]), [
      {kind: 'org', resourceId: String(org.id), userId: owner.id, role: 'owners'},
    ]);
    assert.is(await store().getPersonalOrg(owner.id), null, "a team org is nobody's personal org");
  });

  s('createOrg with personal: true makes the personal org of the owner', async () => {
    const owner = await newUser('po@example.com');
    const org = await store().createOrg({name: 'Personal', domain: null, ownerUserId: owner.id, personal: true});
    assert.is(org.ownerId, owner.id);
    assert.equal(await store().getPersonalOrg(owner.id), org);
  });

  s('createOrg: a duplicate domain is Conflict(domain) and leaves nothing behind', async () => {
    const a = await newUser('a@example.com');
    const b = await newUser('b@example.com');
    const first = await store().createOrg({name: 'One', domain: 'dup', ownerUserId: a.id, personal: false});
    await expectConflict(store().createOrg({name: 'Two', domain: 'dup', ownerUserId: b.id, personal: false}), 'domain');
    assert.equal(await store().listOrgsForUsers([b.id]), [], 'no org, ACL or workspace was created for the loser');
    assert.is((await store().getOrgByDomain('dup'))?.id, first.id);
    // null domains never collide
    await store().createOrg({name: 'N1', domain: null, ownerUserId: a.id, personal: false});
    await store().createOrg({name: 'N2', domain: null, ownerUserId: a.id, personal: false});
    assert.is((await store().listOrgsForUsers([a.id])).length, 3);
  });

  s('concurrent createOrg with one domain: exactly one wins, the others get Conflict(domain)', async () => {
    const u = await newUser('race@example.com');
    const results = await Promise.allSettled(
      [1, 2, 3, 4].map((i) => store().createOrg({name: `R${i}`, domain: 'race', ownerUserId: u.id, personal: false})),
    );
    const won = results.filter((r) => r.status === 'fulfilled');
    const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    assert.is(won.length, 1);
    for (const r of lost) {
      assert.instance(r.reason, Conflict);
      assert.is((r.reason as Conflict).what, 'domain');
    }
    assert.is((await store().listOrgsForUsers([u.id])).length, 1);
  });

  s('concurrent createUser with one email (any case): exactly one wins, the others get Conflict(email)', async () => {
    const results = await Promise.allSettled(
      ['same@example.com', 'SAME@example.com', 'Same@Example.com'].map((email) => newUser(email, true)),
    );
    assert.is(results.filter((r) => r.status === 'fulfilled').length, 1);
    for (const r of results) if (r.status === 'rejected') assert.is((r.reason as Conflict).what, 'email');
  });

  s('updateOrg: name, domain, orgPrefs (set and clear); updatedAt moves; Conflict(domain)', async () => {
    const u = await newUser('u@example.com');
    const {org} = await teamOrg(u, 'first');
    const {org: other} = await teamOrg(u, 'second');
    await sleep(5);
    await store().updateOrg(org.id, {name: 'Renamed', domain: 'third', orgPrefs: {customLogoUrl: 'x', n: [1, 2]}});
    const after = (await store().getOrg(org.id))!;
    assert.is(after.name, 'Renamed');
    assert.is(after.domain, 'third');
    assert.equal(after.orgPrefs, {customLogoUrl: 'x', n: [1, 2]});
    assert.is(after.createdAt, org.createdAt);
    assert.ok(Date.parse(after.updatedAt) > Date.parse(org.updatedAt), 'updatedAt moves forward');
    assert.is(await store().getOrgByDomain('first'), null, 'the old domain is free');
    assert.is((await store().getOrgByDomain('third'))?.id, org.id);

    await expectConflict(store().updateOrg(other.id, {name: 'Stolen', domain: 'third'}), 'domain');
    const otherAfter = (await store().getOrg(other.id))!;
    assert.is(otherAfter.domain, 'second');
    assert.is(otherAfter.name, 'second', 'the failed update changed nothing');

    await store().updateOrg(org.id, {orgPrefs: null});
    const cleared = (await store().getOrg(org.id))!;
    assert.is(cleared.orgPrefs, null);
    assert.is(cleared.name, 'Renamed', 'fields not in the patch stay');
  });

  s('prefs: per org and user, org-wide with null user, replace not merge, null clears', async () => {
    const a = await newUser('a@example.com');
    const b = await newUser('b@example.com');
    const {org} = await teamOrg(a, 'prefs');
    const {org: org2} = await teamOrg(a, 'prefs2');
    assert.is(await store().getPrefs(org.id, a.id), null);
    await store().setPrefs(org.id, a.id, {theme: 'dark', n: 1});
    await store().setPrefs(org.id, b.id, {theme: 'light'});
    await store().setPrefs(org.id, null, {shared: true});
    assert.equal(await store().getPrefs(org.id, a.id), {theme: 'dark', n: 1});
    assert.equal(await store().getPrefs(org.id, b.id), {theme: 'light'});
    assert.equal(await store().getPrefs(org.id, null), {shared: true});
    assert.is(await store().getPrefs(org2.id, a.id), null, 'prefs are per org');
    await store().setPrefs(org.id, a.id, {other: 'x'});
    assert.equal(await store().getPrefs(org.id, a.id), {other: 'x'}, 'setPrefs replaces');
    await store().setPrefs(org.id, a.id, null);
    assert.is(await store().getPrefs(org.id, a.id), null);
    assert.equal(await store().getPrefs(org.id, null), {shared: true}, 'clearing one user leaves the org-wide prefs');
    await store().setPrefs(org.id, null, null);
    assert.is(await store().getPrefs(org.id, null), null);
  });

  s(
    'listOrgsForUsers: org-, workspace- and doc-level entries each make the org listed, once, ordered by id',
    async () => {
      const owner = await newUser('owner@example.com');
      const orgUser = await newUser('orguser@example.com');
      const wsUser = await newUser('wsuser@example.com');
      const docUser = await newUser('docuser@example.com');
      const nobody = await newUser('nobody@example.com');
      const {org: o1} = await teamOrg(owner, 'o1');
      const {org: o2, home: h2} = await teamOrg(owner, 'o2');
      const {org: o3, home: h3} = await teamOrg(owner, 'o3');
      const {org: o4} = await teamOrg(owner, 'o4');
      await store().updateAcl('org', String(o1.id), [{userId: orgUser.id, role: 'members'}]);
      await store().updateAcl('ws', String(h2.id), [{userId: wsUser.id, role: 'viewers'}]);
      const d3 = await newDoc(h3, owner);
      await store().updateAcl('doc', d3.id, [{userId: docUser.id, role: 'editors'}]);

      assert.equal(ids(await store().listOrgsForUsers([orgUser.id])), [o1.id]);
      assert.equal(ids(await store().listOrgsForUsers([wsUser.id])), [o2.id]);
      assert.equal(ids(await store().listOrgsForUsers([docUser.id])), [o3.id]);
      assert.equal(await store().listOrgsForUsers([nobody.id]), []);
      assert.equal(await store().listOrgsForUsers([]), []);
      const all = await store().listOrgsForUsers([docUser.id, wsUser.id, orgUser.id, owner.id]);
      assert.equal(
        ids(all),
        sorted([o1.id, o2.id, o3.id, o4.id]).sort((x, y) => x - y),
        'each org once, ascending ids',
      );
      assert.equal(
        all.find((o) => o.id === o2.id),
        o2,
        'full org rows',
      );
      // A user with entries at every level in one org still sees it once.
      await store().updateAcl('org', String(o3.id), [{userId: docUser.id, role: 'viewers'}]);
      await store().updateAcl('ws', String(h3.id), [{userId: docUser.id, role: 'viewers'}]);
      assert.equal(ids(await store().listOrgsForUsers([docUser.id])), [o3.id]);
    },
  );

  s('deleteOrg returns every doc id and removes workspaces, docs, aliases, prefs and ACL entries', async () => {
    const owner = await newUser('owner@example.com');
    const guest = await newUser('guest@example.com');
    const {org, home} = await teamOrg(owner, 'doomed');
    const {org: keep, home: keepHome} = await teamOrg(owner, 'kept');
    const ws2 = await store().createWorkspace({orgId: org.id, name: 'Second', ownerUserId: owner.id});
    const d1 = await newDoc(home, owner, {urlId: 'doomed-doc'});
    const d2 = await newDoc(ws2, owner);
    const k1 = await newDoc(keepHome, owner, {urlId: 'kept-doc'});
    await store().updateAcl('org', String(org.id), [{userId: guest.id, role: 'viewers'}]);
    await store().updateAcl('ws', String(ws2.id), [{userId: guest.id, role: 'editors'}]);
    await store().updateAcl('doc', d2.id, [{userId: guest.id, role: 'editors'}]);
    await store().updateAcl('doc', k1.id, [{userId: guest.id, role: 'viewers'}]);
    await store().setPrefs(org.id, guest.id, {x: 1});
    await store().setPrefs(org.id, null, {y: 1});

    const {docIds} = await store().deleteOrg(org.id);
    assert.equal(sorted(docIds), sorted([d1.id, d2.id]));
    assert.is(await store().getOrg(org.id), null);
    assert.is(await store().getOrgByDomain('doomed'), null);
    assert.equal(await store().listWorkspaces(org.id), []);
    assert.is(await store().getWorkspace(home.id), null);
    assert.is(await store().getWorkspace(ws2.id), null);
    assert.is(await store().getDoc(d1.id), null);
    assert.is(await store().getDoc(d2.id), null);
    assert.is(await store().getDocByUrlId('doomed-doc', null), null);
    assert.equal(await store().getAcl('org', [String(org.id)]), []);
    assert.equal(await store().getAcl('ws', [String(home.id), String(ws2.id)]), []);
    assert.equal(await store().getAcl('doc', [d1.id, d2.id]), []);
    assert.is(await store().getPrefs(org.id, guest.id), null);
    assert.is(await store().getPrefs(org.id, null), null);
    assert.equal(ids(await store().listOrgsForUsers([guest.id])), [keep.id]);

    assert.ok(await store().getDoc(k1.id), 'the other org is untouched');
    assert.is((await store().getDocByUrlId('kept-doc', keep.id))?.id, k1.id);
    assert.equal(
      await store().getAcl('doc', [k1.id]).then(sortAcl),
      sortAcl([
        {kind: 'doc', resourceId: k1.id, userId: owner.id, role: 'owners'},
        {kind: 'doc', resourceId: k1.id, userId: guest.id, role: 'viewers'},
      ]),
    );
    const again = await store().createOrg({name: 'Again', domain: 'doomed', ownerUserId: owner.id, personal: false});
    assert.is.not(again.id, org.id);
  });

  // ------------------------------------------------------------------ workspaces

  s('workspaces: create with owners ACL, get, list in id order, update fields, delete', async () => {
    const owner = await newUser('owner@example.com');
    const other = await newUser('other@example.com');
    const {org, home} = await teamOrg(owner, 'wsorg');
    const {org: org2} = await teamOrg(owner, 'wsorg2');
    const ws = await store().createWorkspace({orgId: org.id, name: 'Projects', ownerUserId: other.id});
    assert.type(ws.id, 'number');
    assert.is(ws.orgId, org.id);
    assert.is(ws.name, 'Projects');
    assert.is(ws.maxInheritedRole, 'owners');
    assert.is(ws.removedAt, null);
    assert.match(ws.createdAt, ISO_RE);
    assert.equal(await store().getWorkspace(ws.id), ws);
    assert.is(await store().getWorkspace(ws.id + 1000), null);
    assert.equal(await store().getAcl('ws', [String(ws.id)]), [
      {kind: 'ws', resourceId: String(ws.id), userId: other.id, role: 'owners'},
    ]);
    const ws3 = await store().createWorkspace({orgId: org.id, name: 'Third', ownerUserId: owner.id});
    assert.equal(ids(await store().listWorkspaces(org.id)), [home.id, ws.id, ws3.id]);
    assert.equal(
      (await store().listWorkspaces(org2.id)).map((w) => w.name),
      ['Home'],
    );

    await sleep(5);
    await store().updateWorkspace(ws.id, {name: 'Renamed', maxInheritedRole: 'viewers'});
    let got = (await store().getWorkspace(ws.id))!;
    assert.is(got.name, 'Renamed');
    assert.is(got.maxInheritedRole, 'viewers');
    assert.ok(Date.parse(got.updatedAt) > Date.parse(ws.updatedAt), 'updatedAt moves forward');
    const removedAt = '2024-05-06T07:08:09.123Z';
    await store().updateWorkspace(ws.id, {removedAt});
    got = (await store().getWorkspace(ws.id))!;
    assert.is(got.removedAt, removedAt);
    assert.is(got.name, 'Renamed', 'fields not in the patch stay');
    await store().updateWorkspace(ws.id, {removedAt: null, maxInheritedRole: null});
    got = (await store().getWorkspace(ws.id))!;
    assert.is(got.removedAt, null);
    assert.is(got.maxInheritedRole, null);
  });

  s('deleteWorkspace returns its doc ids and removes docs, aliases and ACL entries of the workspace only', async () => {
    const owner = await newUser('owner@example.com');
    const guest = await newUser('guest@example.com');
    const {org, home} = await teamOrg(owner, 'delws');
    const ws = await store().createWorkspace({orgId: org.id, name: 'Doomed', ownerUserId: owner.id});
    const d1 = await newDoc(ws, owner, {urlId: 'in-doomed'});
    const d2 = await newDoc(ws, owner);
    const keep = await newDoc(home, owner);
    await store().updateAcl('ws', String(ws.id), [{userId: guest.id, role: 'viewers'}]);
    await store().updateAcl('doc', d1.id, [{userId: guest.id, role: 'editors'}]);
    await store().updateAcl('ws', String(home.id), [{userId: guest.id, role: 'viewers'}]);

    const {docIds} = await store().deleteWorkspace(ws.id);
    assert.equal(sorted(docIds), sorted([d1.id, d2.id]));
    assert.is(await store().getWorkspace(ws.id), null);
    assert.is(await store().getDoc(d1.id), null);
    assert.is(await store().getDoc(d2.id), null);
    assert.is(await store().getDocByUrlId('in-doomed', org.id), null);
    assert.equal(await store().getAcl('ws', [String(ws.id)]), []);
    assert.equal(await store().getAcl('doc', [d1.id, d2.id]), []);
    assert.equal(ids(await store().listWorkspaces(org.id)), [home.id]);
    assert.ok(await store().getDoc(keep.id));
    assert.equal(sortAcl(await store().getAcl('ws', [String(home.id)])), [
      {kind: 'ws', resourceId: String(home.id), userId: guest.id, role: 'viewers'},
    ]);
    assert.equal(await store().getAcl('doc', [keep.id]), [
      {kind: 'doc', resourceId: keep.id, userId: owner.id, role: 'owners'},
    ]);
    assert.equal(ids(await store().listOrgsForUsers([guest.id])), [org.id]);
    assert.equal((await store().deleteWorkspace(home.id)).docIds, [keep.id]);
  });

  // ------------------------------------------------------------------ docs

  s('createDoc stores every field, gives the owner owners, and getDoc/listDocs find it', async () => {
    const owner = await newUser('owner@example.com');
    const {org, home} = await teamOrg(owner, 'docs');
    const ws2 = await store().createWorkspace({orgId: org.id, name: 'W2', ownerUserId: owner.id});
    const id = newDocId();
    const doc = await store().createDoc({
      id,
      workspaceId: home.id,
      name: 'Budget',
      urlId: 'budget',
      isPinned: true,
      options: {description: 'money', icon: null, nested: {a: [1, 'b']}},
      type: 'template',
      ownerUserId: owner.id,
    });
    assert.is(doc.id, id);
    assert.is(doc.workspaceId, home.id);
    assert.is(doc.name, 'Budget');
    assert.is(doc.urlId, 'budget');
    assert.is(doc.isPinned, true);
    assert.equal(doc.options, {description: 'money', icon: null, nested: {a: [1, 'b']}});
    assert.is(doc.type, 'template');
    assert.is(doc.maxInheritedRole, 'owners');
    assert.is(doc.createdBy, owner.id);
    assert.is(doc.removedAt, null);
    assert.match(doc.createdAt, ISO_RE);
    assert.match(doc.updatedAt, ISO_RE);
    assert.equal(await store().getDoc(id), doc);
    assert.is(await store().getDoc('missing'), null);
    assert.equal(await store().getAcl('doc', [id]), [{kind: 'doc', resourceId: id, userId: owner.id, role: 'owners'}]);

    const plain = await newDoc(home, owner, {name: 'Plain'});
    assert.is(plain.urlId, null);
    assert.is(plain.isPinned, false);
    assert.is(plain.options, null);
    assert.is(plain.type, null);
    const other = await newDoc(ws2, owner);

    assert.equal(sortedIds(await store().listDocs([home.id])), sorted([doc.id, plain.id]));
    assert.equal(sortedIds(await store().listDocs([home.id, ws2.id])), sorted([doc.id, plain.id, other.id]));
    assert.equal(await store().listDocs([]), []);
    assert.equal((await store().listDocs([ws2.id]))[0], other);
  });

  s('listDocs orders by creation time', async () => {
    const owner = await newUser('owner@example.com');
    const {home} = await teamOrg(owner, 'order');
    const made: Doc[] = [];
    for (const name of ['zeta', 'alpha', 'mid']) {
      made.push(
        await store().createDoc({
          id: `${name}${Math.random().toString(36).slice(2, 8)}`,
          workspaceId: home.id,
          name,
          urlId: null,
          ownerUserId: owner.id,
        }),
      );
      await sleep(3);
    }
    assert.equal(ids(await store().listDocs([home.id])), ids(made));
  });

  s('updateDoc changes each field in the patch and only those; updatedAt moves', async () => {
    const owner = await newUser('owner@example.com');
    const {org, home} = await teamOrg(owner, 'upd');
    const ws2 = await store().createWorkspace({orgId: org.id, name: 'W2', ownerUserId: owner.id});
    const doc = await newDoc(home, owner, {name: 'Before', urlId: 'before'});
    await sleep(5);
    await store().updateDoc(doc.id, {name: 'After'});
    let got = (await store().getDoc(doc.id))!;
    assert.is(got.name, 'After');
    assert.is(got.urlId, 'before', 'urlId untouched');
    assert.ok(Date.parse(got.updatedAt) > Date.parse(doc.updatedAt));
    assert.is(got.createdAt, doc.createdAt);

    const removedAt = '2023-01-02T03:04:05.678Z';
    await store().updateDoc(doc.id, {
      isPinned: true,
      options: {description: 'd'},
      type: 'tutorial',
      maxInheritedRole: 'editors',
      removedAt,
    });
    got = (await store().getDoc(doc.id))!;
    assert.is(got.isPinned, true);
    assert.equal(got.options, {description: 'd'});
    assert.is(got.type, 'tutorial');
    assert.is(got.maxInheritedRole, 'editors');
    assert.is(got.removedAt, removedAt);
    assert.is(got.name, 'After');

    await store().updateDoc(doc.id, {
      isPinned: false,
      options: null,
      type: null,
      maxInheritedRole: null,
      removedAt: null,
    });
    got = (await store().getDoc(doc.id))!;
    assert.is(got.isPinned, false);
    assert.is(got.options, null);
    assert.is(got.type, null);
    assert.is(got.maxInheritedRole, null);
    assert.is(got.removedAt, null);

    await store().updateDoc(doc.id, {workspaceId: ws2.id});
    got = (await store().getDoc(doc.id))!;
    assert.is(got.workspaceId, ws2.id);
    assert.equal(ids(await store().listDocs([ws2.id])), [doc.id]);
    assert.is((await store().getDocByUrlId('before', org.id))?.id, doc.id, 'a move inside the org keeps the urlId');
  });

  s('urlId: resolves in its org and with orgId null, not in another org', async () => {
    const owner = await newUser('owner@example.com');
    const {org, home} = await teamOrg(owner, 'u1');
    const {org: org2} = await teamOrg(owner, 'u2');
    const doc = await newDoc(home, owner, {urlId: 'sales'});
    assert.is((await store().getDocByUrlId('sales', org.id))?.id, doc.id);
    assert.is(await store().getDocByUrlId('sales', null), null, 'orgId null looks in personal orgs only');
    assert.is(await store().getDocByUrlId('sales', org2.id), null);
    assert.is(await store().getDocByUrlId('unknown', org.id), null);
    assert.is(await store().getDocByUrlId('unknown', null), null);
    assert.is(await store().getDocByUrlId(doc.id, org.id), null, 'a doc id is not a urlId');
  });

  s('urlId: an old alias keeps resolving after a change, until another doc takes it', async () => {
    const owner = await newUser('owner@example.com');
    const {org, home} = await teamOrg(owner, 'alias');
    const a = await newDoc(home, owner, {urlId: 'first'});
    await store().updateDoc(a.id, {urlId: 'second'});
    assert.is((await store().getDoc(a.id))!.urlId, 'second');
    assert.is((await store().getDocByUrlId('second', org.id))?.id, a.id);
    assert.is((await store().getDocByUrlId('first', org.id))?.id, a.id, 'the former urlId still resolves');

    await store().updateDoc(a.id, {urlId: null});
    assert.is((await store().getDoc(a.id))!.urlId, null);
    assert.is((await store().getDocByUrlId('second', org.id))?.id, a.id, 'clearing the urlId keeps the alias');

    assert.equal(
      (await store().listAliases(a.id)).map((x) => [x.orgId, x.urlId, x.docId]),
      [
        [org.id, 'first', a.id],
        [org.id, 'second', a.id],
      ],
      'listAliases: current and former, oldest first',
    );
    assert.match((await store().listAliases(a.id))[0].createdAt, /^\d{4}-\d\d-\d\dT/);

    const b = await newDoc(home, owner, {urlId: 'first'});
    assert.is(b.urlId, 'first', 'a former alias is free to take');
    assert.equal(
      (await store().listAliases(a.id)).map((x) => x.urlId),
      ['second'],
      'an alias taken over leaves the former holder',
    );
    assert.is((await store().getDocByUrlId('first', org.id))?.id, b.id, 'the alias now resolves to its new holder');
    assert.is((await store().getDocByUrlId('second', org.id))?.id, a.id);

    const c = await newDoc(home, owner);
    await store().updateDoc(c.id, {urlId: 'second'});
    assert.is((await store().getDocByUrlId('second', org.id))?.id, c.id, 'updateDoc can take a former alias too');

    // A doc may take back its own former alias.
    await store().updateDoc(a.id, {urlId: 'third'});
    await store().updateDoc(a.id, {urlId: 'fourth'});
    await store().updateDoc(a.id, {urlId: 'third'});
    assert.is((await store().getDoc(a.id))!.urlId, 'third');
    assert.is((await store().getDocByUrlId('third', org.id))?.id, a.id);
    // Setting a doc's current urlId again is not a conflict with itself.
    await store().updateDoc(a.id, {urlId: 'third', name: 'Same'});
    assert.is((await store().getDoc(a.id))!.name, 'Same');
  });

  s('urlId: Conflict(urlId) when another doc of the org holds it; the failed call changes nothing', async () => {
    const owner = await newUser('owner@example.com');
    const {org, home} = await teamOrg(owner, 'conf');
    const ws2 = await store().createWorkspace({orgId: org.id, name: 'W2', ownerUserId: owner.id});
    const a = await newDoc(home, owner, {urlId: 'taken'});
    const b = await newDoc(ws2, owner, {urlId: 'mine', name: 'B'});

    await expectConflict(store().updateDoc(b.id, {urlId: 'taken', name: 'Changed'}), 'urlId');
    const bAfter = (await store().getDoc(b.id))!;
    assert.is(bAfter.urlId, 'mine');
    assert.is(bAfter.name, 'B', 'other fields of the failed patch were not applied');
    assert.is((await store().getDocByUrlId('taken', org.id))?.id, a.id, 'the alias still points to the holder');

    const id = newDocId();
    await expectConflict(
      store().createDoc({id, workspaceId: ws2.id, name: 'C', urlId: 'taken', ownerUserId: owner.id}),
      'urlId',
    );
    assert.is(await store().getDoc(id), null, 'no doc row left by the failed createDoc');
    assert.equal(await store().getAcl('doc', [id]), [], 'no ACL entry left by the failed createDoc');
    assert.equal(sortedIds(await store().listDocs([home.id, ws2.id])), sorted([a.id, b.id]));
  });

  s('urlId: unique per org only', async () => {
    const owner = await newUser('owner@example.com');
    const {org: o1, home: h1} = await teamOrg(owner, 'per1');
    const {org: o2, home: h2} = await teamOrg(owner, 'per2');
    const d1 = await newDoc(h1, owner, {urlId: 'shared'});
    const d2 = await newDoc(h2, owner, {urlId: 'shared'});
    assert.is(d2.urlId, 'shared');
    assert.is((await store().getDocByUrlId('shared', o1.id))?.id, d1.id);
    assert.is((await store().getDocByUrlId('shared', o2.id))?.id, d2.id);
    const d3 = await newDoc(h2, owner);
    await expectConflict(store().updateDoc(d3.id, {urlId: 'shared'}), 'urlId');
    // listDocsByUrlId finds every org's holder, current and former aliases alike.
    assert.equal(sortedIds(await store().listDocsByUrlId('shared')), sorted([d1.id, d2.id]));
    await store().updateDoc(d1.id, {urlId: 'renamed'});
    assert.equal(sortedIds(await store().listDocsByUrlId('shared')), sorted([d1.id, d2.id]));
    assert.equal(sortedIds(await store().listDocsByUrlId('renamed')), [d1.id]);
    assert.equal(await store().listDocsByUrlId('unknown'), []);
  });

  s('urlId: unique across all personal orgs (the merged docs org); orgId null resolves there', async () => {
    const alice = await newUser('alice@example.com', true);
    const bob = await newUser('bob@example.com', true);
    const aHome = (await store().listWorkspaces((await store().getPersonalOrg(alice.id))!.id))[0];
    const bHome = (await store().listWorkspaces((await store().getPersonalOrg(bob.id))!.id))[0];
    const a = await newDoc(aHome, alice, {urlId: 'budget'});
    assert.is((await store().getDocByUrlId('budget', null))?.id, a.id);
    const b = await newDoc(bHome, bob);
    await expectConflict(store().updateDoc(b.id, {urlId: 'budget'}), 'urlId');
    await expectConflict(
      store().createDoc({id: newDocId(), workspaceId: bHome.id, name: 'X', urlId: 'budget', ownerUserId: bob.id}),
      'urlId',
    );
    assert.is((await store().getDoc(b.id))!.urlId, null);
    assert.is((await store().getDocByUrlId('budget', null))?.id, a.id, 'still the first holder');
    // A team site is a scope of its own.
    const {org: team, home: tHome} = await teamOrg(bob, 'bobteam');
    const t = await newDoc(tHome, bob, {urlId: 'budget'});
    assert.is((await store().getDocByUrlId('budget', team.id))?.id, t.id);
    assert.is((await store().getDocByUrlId('budget', null))?.id, a.id, 'team docs do not resolve with orgId null');
  });

  s("urlId: a former alias of another creator's doc is Conflict; of the same creator's, taken over", async () => {
    const alice = await newUser('alice@example.com', true);
    const bob = await newUser('bob@example.com', true);
    const {org, home} = await teamOrg(alice, 'former');
    await store().updateAcl('org', String(org.id), [{userId: bob.id, role: 'owners'}]);
    const a = await newDoc(home, alice, {urlId: 'old'});
    await store().updateDoc(a.id, {urlId: 'new'});
    const b = await newDoc(home, bob);
    await expectConflict(store().updateDoc(b.id, {urlId: 'old'}), 'urlId');
    await expectConflict(
      store().createDoc({id: newDocId(), workspaceId: home.id, name: 'X', urlId: 'old', ownerUserId: bob.id}),
      'urlId',
    );
    assert.is((await store().getDocByUrlId('old', org.id))?.id, a.id, 'the alias still leads to the first doc');
    const a2 = await newDoc(home, alice);
    await store().updateDoc(a2.id, {urlId: 'old'});
    assert.is((await store().getDocByUrlId('old', org.id))?.id, a2.id);
    // Across personal orgs the same holds.
    const aHome = (await store().listWorkspaces((await store().getPersonalOrg(alice.id))!.id))[0];
    const bHome = (await store().listWorkspaces((await store().getPersonalOrg(bob.id))!.id))[0];
    const p1 = await newDoc(aHome, alice, {urlId: 'mine'});
    await store().updateDoc(p1.id, {urlId: 'mine2'});
    await expectConflict(newDoc(bHome, bob, {urlId: 'mine'}), 'urlId');
    assert.is((await store().getDocByUrlId('mine', null))?.id, p1.id);
  });

  s('concurrent claims of one urlId in one org: exactly one doc gets it', async () => {
    const owner = await newUser('owner@example.com');
    const {org, home} = await teamOrg(owner, 'claims');
    const docs = await Promise.all([1, 2, 3, 4].map(() => newDoc(home, owner)));
    const results = await Promise.allSettled(docs.map((d) => store().updateDoc(d.id, {urlId: 'contested'})));
    assert.is(results.filter((r) => r.status === 'fulfilled').length, 1);
    for (const r of results) if (r.status === 'rejected') assert.is((r.reason as Conflict).what, 'urlId');
    const holders = (await store().listDocs([home.id])).filter((d) => d.urlId === 'contested');
    assert.is(holders.length, 1);
    assert.is((await store().getDocByUrlId('contested', org.id))?.id, holders[0].id, 'the alias points to the winner');
  });

  s('moveDoc inside an org keeps urlId and aliases; across orgs drops them', async () => {
    const owner = await newUser('owner@example.com');
    const {org: o1, home: h1} = await teamOrg(owner, 'mv1');
    const {org: o2, home: h2} = await teamOrg(owner, 'mv2');
    const w1b = await store().createWorkspace({orgId: o1.id, name: 'B', ownerUserId: owner.id});
    const doc = await newDoc(h1, owner, {urlId: 'old'});
    await store().updateDoc(doc.id, {urlId: 'cur'});

    await store().moveDoc(doc.id, w1b.id);
    let got = (await store().getDoc(doc.id))!;
    assert.is(got.workspaceId, w1b.id);
    assert.is(got.urlId, 'cur');
    assert.is((await store().getDocByUrlId('cur', o1.id))?.id, doc.id);
    assert.is((await store().getDocByUrlId('old', o1.id))?.id, doc.id);
    assert.equal(ids(await store().listDocs([h1.id])), []);
    assert.equal(ids(await store().listDocs([w1b.id])), [doc.id]);

    await store().moveDoc(doc.id, h2.id);
    got = (await store().getDoc(doc.id))!;
    assert.is(got.workspaceId, h2.id);
    assert.is(got.urlId, null, 'urlId dropped across orgs');
    assert.is(await store().getDocByUrlId('cur', o1.id), null);
    assert.is(await store().getDocByUrlId('old', o1.id), null);
    assert.is(await store().getDocByUrlId('cur', o2.id), null);
    assert.is(await store().getDocByUrlId('cur', null), null);
    assert.equal(await store().getAcl('doc', [doc.id]), [
      {kind: 'doc', resourceId: doc.id, userId: owner.id, role: 'owners'},
    ]);

    // The urlId is free again in the old org, and usable by the moved doc in its new org.
    const other = await newDoc(h1, owner, {urlId: 'cur'});
    assert.is((await store().getDocByUrlId('cur', o1.id))?.id, other.id);
    await store().updateDoc(doc.id, {urlId: 'cur'});
    assert.is((await store().getDocByUrlId('cur', o2.id))?.id, doc.id);
    assert.is((await store().getDocByUrlId('cur', o1.id))?.id, other.id);
  });

  s('moveDoc across orgs succeeds when the destination org has a doc with the same urlId', async () => {
    const owner = await newUser('owner@example.com');
    const {home: h1} = await teamOrg(owner, 'mvc1');
    const {org: o2, home: h2} = await teamOrg(owner, 'mvc2');
    const moving = await newDoc(h1, owner, {urlId: 'same'});
    const resident = await newDoc(h2, owner, {urlId: 'same'});
    await store().moveDoc(moving.id, h2.id);
    assert.is((await store().getDoc(moving.id))!.urlId, null);
    assert.is((await store().getDocByUrlId('same', o2.id))?.id, resident.id);
  });

  s('deleteDoc removes the doc, its aliases and its ACL entries only', async () => {
    const owner = await newUser('owner@example.com');
    const guest = await newUser('guest@example.com');
    const {org, home} = await teamOrg(owner, 'deldoc');
    const doc = await newDoc(home, owner, {urlId: 'a1'});
    await store().updateDoc(doc.id, {urlId: 'a2'});
    const keep = await newDoc(home, owner);
    await store().updateAcl('doc', doc.id, [{userId: guest.id, role: 'editors'}]);
    await store().updateAcl('doc', keep.id, [{userId: guest.id, role: 'viewers'}]);
    await store().deleteDoc(doc.id);
    assert.is(await store().getDoc(doc.id), null);
    assert.is(await store().getDocByUrlId('a1', org.id), null);
    assert.is(await store().getDocByUrlId('a2', null), null);
    assert.equal(await store().getAcl('doc', [doc.id]), []);
    assert.equal(ids(await store().listDocs([home.id])), [keep.id]);
    assert.equal(
      sortAcl(await store().getAcl('doc', [keep.id])),
      sortAcl([
        {kind: 'doc', resourceId: keep.id, userId: owner.id, role: 'owners'},
        {kind: 'doc', resourceId: keep.id, userId: guest.id, role: 'viewers'},
      ]),
    );
    // The doc id and urlId can be used again.
    const reborn = await store().createDoc({
      id: doc.id,
      workspaceId: home.id,
      name: 'Again',
      urlId: 'a2',
      ownerUserId: guest.id,
    });
    assert.is(reborn.createdBy, guest.id);
    assert.is((await store().getDocByUrlId('a2', org.id))?.id, doc.id);
    assert.equal(await store().getAcl('doc', [doc.id]), [
      {kind: 'doc', resourceId: doc.id, userId: guest.id, role: 'owners'},
    ]);
  });

  // ------------------------------------------------------------------ document API keys (issue 30)

  s('document API keys: create, find by hash, list, touch, delete; they go with their doc and creator', async () => {
    const owner = await newUser('keys-owner@example.com');
    const other = await newUser('keys-other@example.com');
    const {home} = await teamOrg(owner, 'keys');
    const doc = await newDoc(home, owner);
    const doc2 = await newDoc(home, owner);
    const a = await store().createDocApiKey({
      docId: doc.id,
      name: 'script',
      access: 'editors',
      createdBy: owner.id,
      expiresAt: null,
      keyHash: 'hash-a',
    });
    assert.equal(
      {...a, createdAt: 'x'},
      {
        id: a.id,
        docId: doc.id,
        name: 'script',
        access: 'editors',
        createdBy: owner.id,
        createdAt: 'x',
        expiresAt: null,
        lastUsedAt: null,
      },
    );
    assert.match(a.createdAt, ISO_RE);
    const expires = '2099-01-02T03:04:05.000Z';
    const b = await store().createDocApiKey({
      docId: doc.id,
      name: 'viewer',
      access: 'viewers',
      createdBy: other.id,
      expiresAt: expires,
      keyHash: 'hash-b',
    });
    assert.is(Date.parse(b.expiresAt!), Date.parse(expires));
    const c = await store().createDocApiKey({
      docId: doc2.id,
      name: 'elsewhere',
      access: 'viewers',
      createdBy: owner.id,
      expiresAt: null,
      keyHash: 'hash-c',
    });
    assert.equal(ids(await store().listDocApiKeys(doc.id)), [a.id, b.id]);
    assert.is((await store().getDocApiKeyByHash('hash-b'))?.id, b.id);
    assert.is(await store().getDocApiKeyByHash('nope'), null);
    await expectRejects(store().createDocApiKey({...a, keyHash: 'hash-a', expiresAt: null}), 'a taken hash is refused');
    const at = '2030-05-06T07:08:09.000Z';
    await store().touchDocApiKey(a.id, at);
    assert.is(Date.parse((await store().getDocApiKeyByHash('hash-a'))!.lastUsedAt!), Date.parse(at));
    // Deleting needs the key's own document.
    assert.is(await store().deleteDocApiKey(doc2.id, a.id), false);
    assert.is(await store().deleteDocApiKey(doc.id, a.id), true);
    assert.is(await store().getDocApiKeyByHash('hash-a'), null);
    assert.is(await store().deleteDocApiKey(doc.id, a.id), false);
    // A deleted creator takes their keys; a deleted document takes its keys.
    await store().deleteUser(other.id);
    assert.is(await store().getDocApiKeyByHash('hash-b'), null);
    await store().deleteDoc(doc2.id);
    assert.is(await store().getDocApiKeyByHash('hash-c'), null);
    assert.equal(await store().listDocApiKeys(doc2.id), []);
    assert.ok(c.id > b.id);
  });

  // ------------------------------------------------------------------ shares (issue 41)

  s(
    'shares: sync adds with a new key, keeps the key while the share exists, updates options, deletes the rest',
    async () => {
      const owner = await newUser('shares-owner@example.com');
      const {home} = await teamOrg(owner, 'shares');
      const doc = await newDoc(home, owner);
      const doc2 = await newDoc(home, owner);
      let n = 0;
      const makeKey = () => `key-${++n}`;
      await store().syncShares(
        doc.id,
        [
          {linkId: 'x', options: {publish: true}},
          {linkId: 'y', options: {}},
        ],
        makeKey,
      );
      await store().syncShares(doc2.id, [{linkId: 'x', options: {publish: true}}], makeKey);
      const first = await store().listShares(doc.id);
      assert.equal(
        first.map((r) => [r.linkId, r.options, r.docId]),
        [
          ['x', {publish: true}, doc.id],
          ['y', {}, doc.id],
        ],
      );
      const keyX = first[0].key;
      assert.ok(keyX !== first[1].key);
      // Another sync keeps x's key, changes its options, drops y.
      await store().syncShares(doc.id, [{linkId: 'x', options: {publish: false}}], makeKey);
      const second = await store().listShares(doc.id);
      assert.equal(
        second.map((r) => [r.linkId, r.key, r.options]),
        [['x', keyX, {publish: false}]],
      );
      assert.is((await store().getShareByKey(keyX))?.docId, doc.id);
      assert.is(await store().getShareByKey(first[1].key), null);
      assert.is(await store().getShareByKey('nope'), null);
      // The other document's share is untouched; an empty sync removes all; a deleted doc takes its shares.
      assert.is((await store().listShares(doc2.id)).length, 1);
      await store().syncShares(doc.id, [], makeKey);
      assert.equal(await store().listShares(doc.id), []);
      const key2 = (await store().listShares(doc2.id))[0].key;
      await store().deleteDoc(doc2.id);
      assert.is(await store().getShareByKey(key2), null);
    },
  );

  // ------------------------------------------------------------------ access lists

  s('getAcl filters by kind and resource ids', async () => {
    const owner = await newUser('owner@example.com');
    const u = await newUser('u@example.com');
    const {org, home} = await teamOrg(owner, 'acl');
    const {org: org2} = await teamOrg(owner, 'acl2');
    const id = String(org.id);
    // Entries of different kinds that share a resource id string must not mix.
    await store().updateAcl('ws', id, [{userId: u.id, role: 'viewers'}]);
    await store().updateAcl('doc', id, [{userId: u.id, role: 'editors'}]);
    assert.equal(await store().getAcl('org', [id]), [{kind: 'org', resourceId: id, userId: owner.id, role: 'owners'}]);
    assert.equal(await store().getAcl('ws', [id]), [{kind: 'ws', resourceId: id, userId: u.id, role: 'viewers'}]);
    assert.equal(await store().getAcl('doc', [id]), [{kind: 'doc', resourceId: id, userId: u.id, role: 'editors'}]);
    assert.equal(await store().getAcl('org', []), []);
    assert.equal(
      sortAcl(await store().getAcl('org', [String(org.id), String(org2.id), '999999'])),
      sortAcl([
        {kind: 'org', resourceId: String(org.id), userId: owner.id, role: 'owners'},
        {kind: 'org', resourceId: String(org2.id), userId: owner.id, role: 'owners'},
      ]),
    );
    assert.equal(await store().getAcl('ws', [String(home.id + 1000)]), []);
  });

  s('updateAcl: insert, upsert, remove, several changes at once', async () => {
    const owner = await newUser('owner@example.com');
    const a = await newUser('a@example.com');
    const b = await newUser('b@example.com');
    const {org} = await teamOrg(owner, 'upsert');
    const rid = String(org.id);
    await store().updateAcl('org', rid, [
      {userId: a.id, role: 'viewers'},
      {userId: b.id, role: 'members'},
    ]);
    assert.equal(
      sortAcl(await store().getAcl('org', [rid])),
      sortAcl([
        {kind: 'org', resourceId: rid, userId: owner.id, role: 'owners'},
        {kind: 'org', resourceId: rid, userId: a.id, role: 'viewers'},
        {kind: 'org', resourceId: rid, userId: b.id, role: 'members'},
      ]),
    );
    await store().updateAcl('org', rid, [
      {userId: a.id, role: 'editors'},
      {userId: b.id, role: null},
    ]);
    assert.equal(
      sortAcl(await store().getAcl('org', [rid])),
      sortAcl([
        {kind: 'org', resourceId: rid, userId: owner.id, role: 'owners'},
        {kind: 'org', resourceId: rid, userId: a.id, role: 'editors'},
      ]),
    );
    await store().updateAcl('org', rid, [{userId: b.id, role: null}]);
    assert.is((await store().getAcl('org', [rid])).length, 2, 'removing an absent entry is a no-op');
    await store().updateAcl('org', rid, []);
    assert.is((await store().getAcl('org', [rid])).length, 2);
  });

  s('updateAcl is atomic: a failing change undoes the earlier ones', async () => {
    const owner = await newUser('owner@example.com');
    const a = await newUser('a@example.com');
    const {org} = await teamOrg(owner, 'atomic');
    const rid = String(org.id);
    const before = sortAcl(await store().getAcl('org', [rid]));
    await expectRejects(
      store().updateAcl('org', rid, [
        {userId: a.id, role: 'editors'},
        {userId: owner.id, role: null},
        {userId: a.id + owner.id + 100000, role: 'viewers'}, // no such user
      ]),
      'a change for an unknown user fails',
    );
    assert.equal(sortAcl(await store().getAcl('org', [rid])), before);
  });

  s("updateAcl with cascade removes the user from the org's workspaces and docs; without, it does not", async () => {
    const owner = await newUser('owner@example.com');
    const a = await newUser('a@example.com');
    const b = await newUser('b@example.com');
    const {org, home} = await teamOrg(owner, 'casc');
    const {org: other, home: otherHome} = await teamOrg(owner, 'casc-other');
    const ws2 = await store().createWorkspace({orgId: org.id, name: 'W2', ownerUserId: owner.id});
    const d1 = await newDoc(home, owner);
    const d2 = await newDoc(ws2, owner);
    const od = await newDoc(otherHome, owner);
    for (const u of [a, b]) {
      await store().updateAcl('org', String(org.id), [{userId: u.id, role: 'viewers'}]);
      await store().updateAcl('ws', String(ws2.id), [{userId: u.id, role: 'editors'}]);
      await store().updateAcl('doc', d1.id, [{userId: u.id, role: 'editors'}]);
      await store().updateAcl('doc', d2.id, [{userId: u.id, role: 'viewers'}]);
    }
    await store().updateAcl('org', String(other.id), [{userId: a.id, role: 'viewers'}]);
    await store().updateAcl('doc', od.id, [{userId: a.id, role: 'editors'}]);

    // Without cascade only the org entry goes.
    await store().updateAcl('org', String(org.id), [{userId: b.id, role: null}]);
    const bLeft = sortAcl(await store().getAclInOrg(org.id, [b.id]));
    assert.equal(bLeft.map((e) => e.kind).sort(), ['doc', 'doc', 'ws']);

    await store().updateAcl('org', String(org.id), [{userId: a.id, role: null}], {cascade: true});
    assert.equal(await store().getAclInOrg(org.id, [a.id]), [], 'a is gone from the org and everything in it');
    assert.equal(
      sortAcl(await store().getAclInOrg(other.id, [a.id])),
      sortAcl([
        {kind: 'org', resourceId: String(other.id), userId: a.id, role: 'viewers'},
        {kind: 'doc', resourceId: od.id, userId: a.id, role: 'editors'},
      ]),
      'other orgs are untouched',
    );
    assert.equal(sortAcl(await store().getAclInOrg(org.id, [b.id])), bLeft, 'other users are untouched');
    assert.is((await store().getAclInOrg(org.id, [owner.id])).length, 4, 'the owner keeps org, ws2 and doc entries');

    // Cascade with a role (not a removal) removes nothing else.
    await store().updateAcl('org', String(org.id), [{userId: b.id, role: 'editors'}], {cascade: true});
    assert.is((await store().getAclInOrg(org.id, [b.id])).length, 4);
  });

  s('getAclInOrg: entries on the org, its workspaces and its docs; filtered by users when given', async () => {
    const owner = await newUser('owner@example.com');
    const a = await newUser('a@example.com');
    const b = await newUser('b@example.com');
    const {org, home} = await teamOrg(owner, 'inorg');
    const {org: other, home: otherHome} = await teamOrg(b, 'inorg-other');
    const doc = await newDoc(home, a);
    const otherDoc = await newDoc(otherHome, b);
    await store().updateAcl('ws', String(home.id), [{userId: b.id, role: 'viewers'}]);
    await store().updateAcl('doc', otherDoc.id, [{userId: a.id, role: 'viewers'}]);

    const expected = sortAcl([
      {kind: 'org', resourceId: String(org.id), userId: owner.id, role: 'owners'},
      {kind: 'ws', resourceId: String(home.id), userId: b.id, role: 'viewers'},
      {kind: 'doc', resourceId: doc.id, userId: a.id, role: 'owners'},
    ]);
    assert.equal(sortAcl(await store().getAclInOrg(org.id, null)), expected);
    assert.equal(
      sortAcl(await store().getAclInOrg(org.id, [a.id, b.id])),
      expected.filter((e) => e.userId !== owner.id),
    );
    assert.equal(sortAcl(await store().getAclInOrg(org.id, [a.id])), [
      {kind: 'doc', resourceId: doc.id, userId: a.id, role: 'owners'},
    ]);
    assert.equal(await store().getAclInOrg(org.id, []), []);
    assert.equal(
      sortAcl(await store().getAclInOrg(other.id, null)),
      sortAcl([
        {kind: 'org', resourceId: String(other.id), userId: b.id, role: 'owners'},
        {kind: 'doc', resourceId: otherDoc.id, userId: b.id, role: 'owners'},
        {kind: 'doc', resourceId: otherDoc.id, userId: a.id, role: 'viewers'},
      ]),
    );
    const ordered = await store().getAclInOrg(org.id, null);
    const userOrder = ordered.map((e) => e.userId);
    assert.equal(
      userOrder,
      [...userOrder].sort((x, y) => x - y),
      'ordered by user id',
    );
  });

  s('createOrg, createWorkspace and createDoc are atomic: an unknown owner leaves nothing behind', async () => {
    const owner = await newUser('owner@example.com');
    const {org, home} = await teamOrg(owner, 'atom');
    const ghost = owner.id + 100000;
    await expectRejects(
      store().createOrg({name: 'Ghost', domain: 'ghost', ownerUserId: ghost, personal: false}),
      'createOrg with an unknown owner fails',
    );
    assert.is(await store().getOrgByDomain('ghost'), null, 'no org row left behind');
    await store().createOrg({name: 'Ghost', domain: 'ghost', ownerUserId: owner.id, personal: false});

    await expectRejects(
      store().createWorkspace({orgId: org.id, name: 'Ghost', ownerUserId: ghost}),
      'createWorkspace with an unknown owner fails',
    );
    assert.equal(ids(await store().listWorkspaces(org.id)), [home.id], 'no workspace row left behind');

    const id = newDocId();
    await expectRejects(
      store().createDoc({id, workspaceId: home.id, name: 'Ghost', urlId: 'ghost-doc', ownerUserId: ghost}),
      'createDoc with an unknown owner fails',
    );
    assert.is(await store().getDoc(id), null, 'no doc row left behind');
    assert.is(await store().getDocByUrlId('ghost-doc', org.id), null, 'no alias left behind');
  });

  // ------------------------------------------------------------------ answers built on the store

  // Grist's document query marks the caller's role on the workspace (HomeDBManager `_doc` ->
  // `_applyLimit(["docs", "workspaces", "orgs"])`); HomeService builds it from the store's ACLs.
  s("getDoc's workspace carries the caller's role on it (a document share makes a guest: viewers)", async () => {
    const home = await HomeService.create(store());
    const owner = await newUser('wa-owner@example.com');
    const guest = await newUser('wa-guest@example.com');
    const {home: ws} = await teamOrg(owner, 'wsaccess');
    const doc = await newDoc(ws, owner);
    const asOwner = home.principalFor(owner, true);
    const asGuest = home.principalFor(guest, true);
    const described = async (p: typeof asOwner) => {
      const d = await home.getDoc(doc.id, p, null, false);
      return [d.access, d.workspace.access, d.workspace.org.access];
    };
    assert.equal(await described(asOwner), ['owners', 'owners', 'owners']);
    await home.updateAccess('doc', {doc: doc.id}, asOwner, null, {delta: {users: {[guest.email]: 'editors'}}});
    assert.equal(await described(asGuest), ['editors', 'viewers', 'viewers']);
    await home.updateAccess('ws', {wid: ws.id}, asOwner, null, {delta: {users: {[guest.email]: 'editors'}}});
    assert.equal(await described(asGuest), ['editors', 'editors', 'viewers']);
  });

  // ------------------------------------------------------------------ lifecycle

  s('close releases the store: later calls reject', async () => {
    const u = await newUser('c@example.com');
    await store().close();
    closed = true;
    await expectRejects(store().getUser(u.id), 'a closed store rejects calls');
  });

  s.run();
}
