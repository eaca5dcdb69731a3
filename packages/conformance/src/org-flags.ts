/**
 * Install-wide org settings, as Grist 1.7.17 reads them (SPEC §1.1, §3.4): GRIST_PERSONAL_ORGS=false
 * (personal orgs treated as not existing; none made for new users) and GRIST_ORG_CREATION_ANYONE=false
 * (only the install admin, GRIST_ADMIN_EMAIL / GRIST_DEFAULT_EMAIL / GRIST_SUPPORT_EMAIL, creates
 * team sites; personal orgs then default to off). Grist's DocApiOrgLimitFlags tests the same.
 */
import * as assert from 'uvu/assert';
import {areaSuite, isError, ok, useWorld, type Target, type TestUser, type World} from './world.js';

export function orgFlagsSuite(target: Target): void {
  const s = areaSuite(target, 'org-flags');
  const noPersonal = useWorld(s, target, {GRIST_PERSONAL_ORGS: 'false'});
  const adminOnly = useWorld(s, target, {GRIST_ORG_CREATION_ANYONE: 'false'});
  const named = useWorld(s, target, {
    GRIST_ORG_CREATION_ANYONE: 'false',
    GRIST_PERSONAL_ORGS: 'yes',
    GRIST_ADMIN_EMAIL: 'Kiwi@GetGrist.com',
    GRIST_DEFAULT_EMAIL: 'charon@getgrist.com',
  });

  /** A user whose personal org was made before the setting was turned off, with a document in it. */
  async function oldTimer(w: World): Promise<{u: TestUser; orgId: number; wsId: number; docId: string}> {
    const user = await w.engine.store.createUser({email: 'old@getgrist.com', name: 'Old', personalOrg: true});
    const key = await w.engine.home.setApiKey(user.id);
    const u: TestUser = {id: user.id, email: user.email, name: user.name, ref: user.ref, key, as: {key}};
    const org = (await w.engine.store.getPersonalOrg(user.id))!;
    const [ws] = await w.engine.store.listWorkspaces(org.id);
    // Grist's workspace lookup by id does not filter personal orgs: documents can still be added.
    const docId = await w.newDoc(u, ws.id, 'Kept');
    return {u, orgId: org.id, wsId: ws.id, docId};
  }
  let old: Awaited<ReturnType<typeof oldTimer>>;

  s('GRIST_PERSONAL_ORGS=false: new users, logins and invitations get no personal org', async () => {
    const w = noPersonal();
    for (const u of [w.chimpy, w.kiwi]) assert.is(await w.engine.store.getPersonalOrg(u.id), null, u.email);
    const you = (await w.engine.store.getUserByEmail('you@example.com'))!;
    assert.is(await w.engine.store.getPersonalOrg(you.id), null, 'the default user');
    // Team sites are still created by anyone (GRIST_ORG_CREATION_ANYONE defaults to true).
    const team = await w.newOrg(w.chimpy, 'Team', 'team');
    await w.share(w.chimpy, `/api/orgs/${team}`, {'invited@getgrist.com': 'editors'});
    const invited = (await w.engine.store.getUserByEmail('invited@getgrist.com'))!;
    assert.is(await w.engine.store.getPersonalOrg(invited.id), null, 'an invited user');
    const orgs = ok(await w.api.get('/api/orgs', w.chimpy.as)).body;
    assert.equal(
      orgs.map((o: any) => [o.name, o.owner]),
      [['Team', null]],
    );
    // The profile is unchanged (Grist's /api/profile/user does not look at orgs).
    assert.is(ok(await w.api.get('/api/profile/user', w.chimpy.as)).body.id, w.chimpy.id);
  });

  s('GRIST_PERSONAL_ORGS=false: an existing personal org is neither listed nor found', async () => {
    const w = noPersonal();
    old = await oldTimer(w);
    const {u, orgId} = old;
    await w.share(w.chimpy, `/api/orgs/${await w.newOrg(w.chimpy, 'Shared')}`, {[u.email]: 'viewers'});
    for (const q of ['', '?merged=1']) {
      const orgs = ok(await w.api.get(`/api/orgs${q}`, u.as)).body;
      assert.equal(
        orgs.map((o: any) => [o.name, o.owner]),
        [['Shared', null]],
        q,
      );
    }
    const all = ok(await w.api.get('/api/session/access/all', u.as)).body;
    assert.equal(
      all.orgs.map((o: any) => o.name),
      ['Shared'],
    );
    isError(await w.api.get('/api/orgs/docs', u.as), 404, 'Personal orgs are disabled');
    isError(await w.api.get('/api/orgs/0', u.as), 404, 'Personal orgs are disabled');
    for (const key of [String(orgId), `docs-${u.id}`, `o-${orgId}`]) {
      isError(await w.api.get(`/api/orgs/${key}`, u.as), 404, 'organization not found', key);
    }
    isError(await w.api.get('/o/docs/api/orgs/current', u.as), 404, 'organization not found');
  });

  s('GRIST_PERSONAL_ORGS=false: org endpoints of a personal org answer 404, by id and by name', async () => {
    const w = noPersonal();
    const {u, orgId} = old;
    for (const key of [String(orgId), `docs-${u.id}`, 'docs']) {
      const what = `org ${key}`;
      isError(await w.api.get(`/api/orgs/${key}/workspaces`, u.as), 404, 'organization not found', what);
      isError(await w.api.post(`/api/orgs/${key}/workspaces`, {name: 'W'}, u.as), 404, 'organization not found', what);
      isError(await w.api.patch(`/api/orgs/${key}`, {name: 'Renamed'}, u.as), 404, 'organization not found', what);
      isError(await w.api.get(`/api/orgs/${key}/access`, u.as), 404, 'organization not found', what);
      isError(await w.api.del(`/api/orgs/${key}/force-delete`, u.as), 404, 'organization not found', what);
    }
    // Nothing was changed or removed.
    const org = (await w.engine.store.getOrg(orgId))!;
    assert.is(org.name, 'Personal');
    assert.is((await w.engine.store.listWorkspaces(orgId)).length, 1);
  });

  s('GRIST_PERSONAL_ORGS=false: its workspaces and documents are still reached by id, as in Grist', async () => {
    const w = noPersonal();
    const {u, wsId, docId} = old;
    const ws = ok(await w.api.get(`/api/workspaces/${wsId}`, u.as)).body;
    assert.is(ws.name, 'Home');
    assert.equal(
      ws.docs.map((d: any) => d.id),
      [docId],
    );
    assert.is(ok(await w.api.get(`/api/docs/${docId}`, u.as)).body.name, 'Kept');
    // Grist's document lookup limits to the context's org without the personal-org filter.
    assert.is(ok(await w.api.get(`/o/docs-${u.id}/api/docs/${docId}`, u.as)).body.name, 'Kept');
    isError(await w.api.get(`/o/docs-${u.id}/api/orgs/current`, u.as), 404, 'organization not found');
    assert.ok(ok(await w.api.get(`/api/docs/${docId}/tables`, u.as)).body.tables.length > 0);
    // Others still get no access to them.
    isError(await w.api.get(`/api/docs/${docId}`, w.kiwi.as), 403, 'access denied');
  });

  s(
    'GRIST_ORG_CREATION_ANYONE=false: only the install admin (GRIST_SUPPORT_EMAIL by default) creates team sites',
    async () => {
      const w = adminOnly();
      const refused = 'Only admins can create new teams';
      isError(await w.api.post('/api/orgs', {name: 'Nope'}, w.chimpy.as), 403, refused);
      // Grist asks for an admin before anything else: anonymous callers and bad bodies hear 403 too.
      isError(await w.api.post('/api/orgs', {name: 'Nope'}), 403, refused);
      isError(await w.api.post('/api/orgs', {}, w.chimpy.as), 403, refused);
      assert.equal(ok(await w.api.get('/api/orgs', w.chimpy.as)).body, [], 'nothing was created');
      const support = await w.newUser('support@getgrist.com', 'Support');
      const id = ok(await w.api.post('/api/orgs', {name: 'By admin', domain: 'byadmin'}, support.as)).body;
      assert.type(id, 'number');
      // Validation still applies to the admin.
      isError(await w.api.post('/api/orgs', {}, support.as), 400, 'Bad request: name required');
      // Personal orgs default to the same value: none for users, `docs` not found.
      assert.is(await w.engine.store.getPersonalOrg(w.chimpy.id), null);
      isError(await w.api.get('/api/orgs/docs', w.chimpy.as), 404, 'Personal orgs are disabled');
    },
  );

  s(
    'GRIST_ADMIN_EMAIL names the admin (any case), before GRIST_DEFAULT_EMAIL; GRIST_PERSONAL_ORGS overrides',
    async () => {
      const w = named();
      const refused = 'Only admins can create new teams';
      ok(await w.api.post('/api/orgs', {name: 'By Kiwi'}, w.kiwi.as));
      isError(await w.api.post('/api/orgs', {name: 'By Charon'}, w.charon.as), 403, refused);
      isError(await w.api.post('/api/orgs', {name: 'By Chimpy'}, w.chimpy.as), 403, refused);
      // A document API key of the admin opens its document only: it creates no team site.
      const docId = await w.newDoc(w.kiwi, await w.homeWs(w.kiwi), 'Keyed');
      const made = ok(await w.api.post(`/api/docs/${docId}/apikeys`, {name: 'k', access: 'editors'}, w.kiwi.as)).body;
      isError(
        await w.api.post('/api/orgs', {name: 'By key'}, {key: made.key}),
        403,
        "A document API key opens only its document's /api/docs/{doc}/... routes",
      );
      assert.equal(
        ok(await w.api.get('/api/orgs', w.kiwi.as)).body.map((o: any) => o.name),
        ['Personal', 'By Kiwi'],
      );
      // GRIST_PERSONAL_ORGS=yes (Grist's isAffirmative) keeps personal orgs despite the default.
      assert.ok(await w.engine.store.getPersonalOrg(w.chimpy.id));
      assert.is(ok(await w.api.get('/api/orgs/docs', w.chimpy.as)).body.id, 0);
    },
  );

  s.run();
}
