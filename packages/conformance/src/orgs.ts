/** Orgs: list, merged, get by every key form, org context, create, patch, delete (SPEC §1.1, §3). */
import * as assert from 'uvu/assert';
import {areaSuite, BASE_DOMAIN, ISO_DATE, isError, isErrorLike, keys, ok, useWorld, type Target} from './world.js';

export function orgsSuite(target: Target): void {
  const s = areaSuite(target, 'orgs');
  const world = useWorld(s, target);
  let nasa = 0;
  let primately = 0;
  let bare = 0;

  s('POST /api/orgs creates team sites, each with a Home workspace', async () => {
    const {api, chimpy} = world();
    const res = ok(await api.post('/api/orgs', {name: 'NASA', domain: 'nasa'}, chimpy.as));
    assert.type(res.body, 'number');
    nasa = res.body;
    primately = await world().newOrg(chimpy, 'Primately', 'primately');
    bare = await world().newOrg(chimpy, 'Bare');
    const wss = ok(await api.get(`/api/orgs/${nasa}/workspaces`, chimpy.as)).body;
    assert.is(wss.length, 1);
    assert.is(wss[0].name, 'Home');
    assert.is(wss[0].access, 'owners');
    assert.equal(wss[0].docs, []);
    // A team site with no domain is shown as o-<id>.
    assert.is(ok(await api.get(`/api/orgs/${bare}`, chimpy.as)).body.domain, `o-${bare}`);
  });

  s('POST /api/orgs rejects a missing name, bad or taken domains, and anonymous callers', async () => {
    const {api, chimpy} = world();
    isError(await api.post('/api/orgs', {}, chimpy.as), 400, 'Bad request: name required');
    isError(await api.post('/api/orgs', {name: 'Dup', domain: 'nasa'}, chimpy.as), 400, 'Domain already in use');
    for (const domain of ['Upper', 'ab', 'docs-5', 'o-12', 'www', 'api', 'has space', '-dash', 'x'.repeat(64)]) {
      isErrorLike(
        await api.post('/api/orgs', {name: 'Bad', domain}, chimpy.as),
        400,
        /^Domain is not permitted: /,
        domain,
      );
    }
    isError(await api.post('/api/orgs', {name: 'Anon'}), 401, 'user not authorized');
  });

  s("GET /api/orgs lists the caller's orgs: own personal org first, then by name", async () => {
    const {api, chimpy, kiwi} = world();
    const orgs = ok(await api.get('/api/orgs', chimpy.as)).body;
    assert.equal(
      orgs.map((o: any) => o.name),
      ['Personal', 'Bare', 'NASA', 'Primately'],
    );
    const personal = orgs[0];
    assert.equal(keys(personal), ['access', 'createdAt', 'domain', 'host', 'id', 'name', 'owner', 'updatedAt']);
    assert.is(personal.id, await world().personalOrgId(chimpy));
    assert.is(personal.domain, `docs-${chimpy.id}`);
    assert.is(personal.access, 'owners');
    assert.is(personal.host, null);
    // The owner is Grist's user entity, its createdAt included.
    assert.equal(personal.owner, {
      id: chimpy.id,
      ref: chimpy.ref,
      name: 'Chimpy',
      picture: null,
      type: 'login',
      createdAt: personal.owner.createdAt,
    });
    assert.match(personal.owner.createdAt, ISO_DATE);
    assert.match(personal.createdAt, ISO_DATE);
    assert.match(personal.updatedAt, ISO_DATE);
    const team = orgs.find((o: any) => o.id === nasa);
    assert.equal(team, {...team, name: 'NASA', domain: 'nasa', owner: null, access: 'owners', host: null});
    assert.not.ok('billingAccount' in team);
    // Kiwi sees only Kiwi's own personal org.
    const kiwiOrgs = ok(await api.get('/api/orgs', kiwi.as)).body;
    assert.equal(
      kiwiOrgs.map((o: any) => o.domain),
      [`docs-${kiwi.id}`],
    );
  });

  s('GET /api/orgs?merged=1 folds personal orgs into one "docs" entry with id 0', async () => {
    const {api, chimpy} = world();
    const orgs = ok(await api.get('/api/orgs?merged=1', chimpy.as)).body;
    assert.equal(
      orgs.map((o: any) => [o.id, o.domain]),
      [
        [0, 'docs'],
        [bare, `o-${bare}`],
        [nasa, 'nasa'],
        [primately, 'primately'],
      ],
    );
    assert.is(orgs[0].owner.id, chimpy.id);
    assert.is(orgs[0].access, 'owners');
  });

  s('GET /api/orgs as anonymous gives []', async () => {
    const res = ok(await world().api.get('/api/orgs'));
    assert.equal(res.body, []);
  });

  s('GET /api/orgs/{org} by id, domain, o-<id>, docs, docs-<uid> and personal id', async () => {
    const {api, chimpy} = world();
    for (const key of [String(nasa), 'nasa', `o-${nasa}`]) {
      const org = ok(await api.get(`/api/orgs/${key}`, chimpy.as), key).body;
      assert.equal(
        {id: org.id, name: org.name, domain: org.domain, access: org.access, owner: org.owner, host: org.host},
        {id: nasa, name: 'NASA', domain: 'nasa', access: 'owners', owner: null, host: null},
        key,
      );
    }
    const personalId = await world().personalOrgId(chimpy);
    const merged = ok(await api.get('/api/orgs/docs', chimpy.as)).body;
    assert.equal([merged.id, merged.domain, merged.name, merged.owner.id], [0, 'docs', 'Personal', chimpy.id]);
    for (const key of [`docs-${chimpy.id}`, String(personalId)]) {
      const org = ok(await api.get(`/api/orgs/${key}`, chimpy.as), key).body;
      assert.equal([org.id, org.domain, org.access], [personalId, `docs-${chimpy.id}`, 'owners'], key);
    }
  });

  s('GET /api/orgs/{org}: 404 for unknown orgs, 403 without access, 400 for current without context', async () => {
    const {api, chimpy, kiwi} = world();
    isError(await api.get('/api/orgs/9999', chimpy.as), 404, 'organization not found');
    isError(await api.get('/api/orgs/nosuchorg', chimpy.as), 404, 'organization not found');
    isError(await api.get('/api/orgs/o-9999', chimpy.as), 404, 'organization not found');
    isError(await api.get(`/api/orgs/docs-99999`, chimpy.as), 404, 'organization not found');
    isError(await api.get(`/api/orgs/${nasa}`, kiwi.as), 403, 'access denied');
    isError(await api.get(`/api/orgs/docs-${chimpy.id}`, kiwi.as), 403, 'access denied');
    isError(await api.get(`/api/orgs/${nasa}`), 403, 'access denied');
    isError(await api.get('/api/orgs/current', chimpy.as), 400, 'No organization chosen');
  });

  s('GET /api/orgs/docs as anonymous gives the synthetic Anonymous org', async () => {
    const org = ok(await world().api.get('/api/orgs/docs')).body;
    assert.equal(
      {id: org.id, name: org.name, domain: org.domain, access: org.access},
      {id: 0, name: 'Anonymous', domain: 'docs', access: 'viewers'},
    );
  });

  s('current is the org of the /o/<org>/ prefix or of the Host subdomain; a mismatch is 400', async () => {
    const {api, chimpy} = world();
    const viaPath = ok(await api.get('/o/nasa/api/orgs/current', chimpy.as)).body;
    assert.is(viaPath.id, nasa);
    const host = {...chimpy.as, headers: {host: `nasa.${BASE_DOMAIN}`}};
    assert.is(ok(await api.get('/api/orgs/current', host)).body.id, nasa);
    assert.is(ok(await api.get('/o/nasa/api/orgs/current', host)).body.id, nasa);
    isError(
      await api.get('/o/primately/api/orgs/current', host),
      400,
      "Wrong org for this domain: 'primately' does not match 'nasa'",
    );
    const other = {...chimpy.as, headers: {host: `primately.${BASE_DOMAIN}`}};
    assert.is(ok(await api.get('/api/orgs/current', other)).body.id, primately);
    // The base domain itself and unrelated hosts name no org.
    isError(
      await api.get('/api/orgs/current', {...chimpy.as, headers: {host: BASE_DOMAIN}}),
      400,
      'No organization chosen',
    );
    isError(await api.get('/o/nosuchorg/api/orgs/current', chimpy.as), 404, 'organization not found');
    const docs = ok(await api.get('/o/docs/api/orgs/current', chimpy.as)).body;
    assert.equal([docs.id, docs.domain], [0, 'docs']);
    // Other routes work under the prefix too.
    assert.ok(Array.isArray(ok(await api.get('/o/nasa/api/orgs', chimpy.as)).body));
  });

  s('PATCH /api/orgs/{org}: rename, change domain, prefs; unknown keys and bad domains are 400', async () => {
    const {api, chimpy} = world();
    isError(await api.patch(`/api/orgs/${nasa}`, {x: 1}, chimpy.as), 400, 'unrecognized property x');
    const res = ok(await api.patch(`/api/orgs/${nasa}`, {name: 'NASA 2'}, chimpy.as));
    assert.is(res.body, null);
    assert.is(ok(await api.get(`/api/orgs/${nasa}`, chimpy.as)).body.name, 'NASA 2');
    ok(await api.patch(`/api/orgs/${nasa}`, {domain: 'nasa2'}, chimpy.as));
    assert.is(ok(await api.get('/api/orgs/nasa2', chimpy.as)).body.id, nasa);
    isError(await api.get('/api/orgs/nasa', chimpy.as), 404, 'organization not found');
    ok(await api.patch('/api/orgs/nasa2', {name: 'NASA', domain: 'nasa'}, chimpy.as));
    assert.equal(ok(await api.get(`/api/orgs/${nasa}`, chimpy.as)).body.name, 'NASA');
    isErrorLike(await api.patch(`/api/orgs/${nasa}`, {domain: 'Not OK'}, chimpy.as), 400, /^Domain is not permitted: /);
    isError(await api.patch(`/api/orgs/${nasa}`, {domain: 'primately'}, chimpy.as), 400, 'Domain already in use');
    isError(
      await api.patch(`/api/orgs/docs-${chimpy.id}`, {domain: 'chimpyland'}, chimpy.as),
      400,
      'Cannot set a domain for a personal organization',
    );
    isError(await api.patch('/api/orgs/9999', {name: 'X'}, chimpy.as), 404, 'organization not found');
    ok(await api.patch(`/api/orgs/${nasa}`, {orgPrefs: {customLogoUrl: null}}, chimpy.as));
    assert.equal(ok(await api.get(`/api/orgs/${nasa}`, chimpy.as)).body.orgPrefs, {customLogoUrl: null});
  });

  s('PATCH /api/orgs/{org}: non-owners are refused; a viewer may set only their own prefs', async () => {
    const {api, chimpy, kiwi, charon} = world();
    isError(await api.patch(`/api/orgs/${nasa}`, {name: 'Kiwi'}, kiwi.as), 403, 'access denied');
    await world().share(chimpy, `/api/orgs/${nasa}`, {[charon.email]: 'viewers'});
    isError(await api.patch(`/api/orgs/${nasa}`, {name: 'Charon'}, charon.as), 403, 'access denied');
    ok(await api.patch(`/api/orgs/${nasa}`, {userOrgPrefs: {seen: true}}, charon.as));
    assert.equal(ok(await api.get(`/api/orgs/${nasa}`, charon.as)).body.userOrgPrefs, {seen: true});
    assert.not.ok('userOrgPrefs' in ok(await api.get(`/api/orgs/${nasa}`, chimpy.as)).body);
    const org = ok(await api.get(`/api/orgs/${nasa}`, charon.as)).body;
    assert.equal([org.name, org.access], ['NASA', 'viewers']);
  });

  s("a guest of a doc in someone's personal org sees that org after their own; merged view folds it in", async () => {
    const {api, chimpy, kiwi} = world();
    const home = ok(await api.get(`/api/orgs/docs-${chimpy.id}/workspaces`, chimpy.as)).body[0].id;
    const shared = await world().newDoc(chimpy, home, 'Shared with Kiwi');
    await world().newDoc(chimpy, home, 'Not shared');
    await world().share(chimpy, `/api/docs/${shared}`, {[kiwi.email]: 'editors'});
    const orgs = ok(await api.get('/api/orgs', kiwi.as)).body;
    assert.equal(
      orgs.map((o: any) => [o.domain, o.access, o.owner?.id]),
      [
        [`docs-${kiwi.id}`, 'owners', kiwi.id],
        // Grist names the role from permission bits: a guest holds the viewers' bits.
        [`docs-${chimpy.id}`, 'viewers', chimpy.id],
      ],
    );
    const merged = ok(await api.get('/api/orgs?merged=1', kiwi.as)).body;
    assert.equal(
      merged.map((o: any) => [o.id, o.domain, o.owner?.id]),
      [[0, 'docs', kiwi.id]],
    );
    const wss = ok(await api.get('/api/orgs/docs/workspaces', kiwi.as)).body;
    const byOwner = wss
      .map((w: any) => [w.name, w.owner?.id, w.docs.map((d: any) => d.name)])
      .sort((a: any, b: any) => a[1] - b[1]);
    assert.equal(byOwner, [
      ['Home', chimpy.id, ['Shared with Kiwi']],
      ['Home', kiwi.id, []],
    ]);
    await world().share(chimpy, `/api/docs/${shared}`, {[kiwi.email]: null});
    assert.equal(ok(await api.get('/api/orgs', kiwi.as)).body.length, 1);
  });

  s('GET /api/orgs/{org}/workspaces lists workspaces sorted by name, with their docs', async () => {
    const {api, chimpy, kiwi} = world();
    const beta = await world().newWorkspace(chimpy, nasa, 'Beta');
    const alpha = await world().newWorkspace(chimpy, 'nasa', 'Alpha');
    const doc = await world().newDoc(chimpy, beta, 'Rockets');
    const wss = ok(await api.get(`/api/orgs/${nasa}/workspaces`, chimpy.as)).body;
    assert.equal(
      wss.map((w: any) => w.name),
      ['Alpha', 'Beta', 'Home'],
    );
    const ws = wss[1];
    assert.equal(keys(ws), [
      'access',
      'createdAt',
      'docs',
      'id',
      'isSupportWorkspace',
      'name',
      'orgDomain',
      'owner',
      'updatedAt',
    ]);
    assert.equal(
      {
        id: ws.id,
        access: ws.access,
        isSupportWorkspace: ws.isSupportWorkspace,
        owner: ws.owner,
        orgDomain: ws.orgDomain,
      },
      {id: beta, access: 'owners', isSupportWorkspace: false, owner: null, orgDomain: 'nasa'},
    );
    assert.is(wss[0].id, alpha);
    assert.equal(keys(ws.docs[0]), [
      'access',
      'createdAt',
      'forks',
      'id',
      'isPinned',
      'name',
      'trunkId',
      'type',
      'updatedAt',
      'urlId',
    ]);
    assert.equal(
      {...ws.docs[0], createdAt: 0, updatedAt: 0},
      {
        id: doc,
        name: 'Rockets',
        access: 'owners',
        isPinned: false,
        urlId: doc.slice(0, 12),
        trunkId: null,
        type: null,
        forks: [],
        createdAt: 0,
        updatedAt: 0,
      },
    );
    isError(await api.get(`/api/orgs/${nasa}/workspaces`, kiwi.as), 403, 'access denied');
    isError(await api.get('/api/orgs/9999/workspaces', chimpy.as), 404, 'organization not found');
    // The merged personal org lists the caller's personal workspaces, with their owner.
    const mine = ok(await api.get('/api/orgs/docs/workspaces', chimpy.as)).body;
    assert.equal(
      mine.map((w: any) => [w.name, w.owner?.id, w.orgDomain]),
      [['Home', chimpy.id, `docs-${chimpy.id}`]],
    );
  });

  s('POST /api/orgs/{org}/workspaces: name required, unknown keys refused, needs editor', async () => {
    const {api, chimpy, kiwi, charon} = world();
    isError(await api.post(`/api/orgs/${nasa}/workspaces`, {}, chimpy.as), 400, 'Bad request: name required');
    isError(await api.post(`/api/orgs/${nasa}/workspaces`, {x: 1}, chimpy.as), 400, 'Bad request: name required');
    isError(
      await api.post(`/api/orgs/${nasa}/workspaces`, {name: 'W', x: 1}, chimpy.as),
      400,
      'unrecognized property x',
    );
    isError(await api.post(`/api/orgs/${nasa}/workspaces`, {name: 'W'}, kiwi.as), 403, 'access denied');
    isError(await api.post(`/api/orgs/${nasa}/workspaces`, {name: 'W'}, charon.as), 403, 'access denied');
    isError(await api.post('/api/orgs/9999/workspaces', {name: 'W'}, chimpy.as), 404, 'organization not found');
    // An org editor may add a workspace, and becomes its direct owner.
    await world().share(chimpy, `/api/orgs/${nasa}`, {[kiwi.email]: 'editors'});
    const wid = ok(await api.post(`/api/orgs/${nasa}/workspaces`, {name: 'Kiwi space'}, kiwi.as)).body;
    assert.type(wid, 'number');
    const access = ok(await api.get(`/api/workspaces/${wid}/access`, kiwi.as)).body;
    const kiwiEntry = access.users.find((u: any) => u.id === kiwi.id);
    assert.equal([kiwiEntry.access, kiwiEntry.parentAccess], ['owners', 'editors']);
    await world().share(chimpy, `/api/orgs/${nasa}`, {[kiwi.email]: null});
  });

  s('DELETE /api/orgs/{org} is gone (410); DELETE /api/orgs/{org}/{name} confirms the name', async () => {
    const {api, chimpy, kiwi, charon} = world();
    isError(
      await api.del(`/api/orgs/${nasa}`, chimpy.as),
      410,
      'This endpoint is no longer supported. Use DELETE /api/orgs/:oid/:name instead.',
    );
    const doomed = await world().newOrg(chimpy, 'Doomed', 'doomed');
    const wid = await world().newWorkspace(chimpy, doomed, 'Stuff');
    const doc = await world().newDoc(chimpy, wid, 'Plans');
    const {existsSync} = await import('node:fs');
    assert.ok(existsSync(world().docPath(doc)));
    isError(await api.del(`/api/orgs/${doomed}/wrong`, chimpy.as), 400, 'Name does not match organization');
    isError(await api.del(`/api/orgs/${doomed}/doomed`, kiwi.as), 403, 'access denied');
    await world().share(chimpy, `/api/orgs/${doomed}`, {[charon.email]: 'editors'});
    isError(await api.del(`/api/orgs/${doomed}/doomed`, charon.as), 403, 'access denied');
    isError(await api.del('/api/orgs/9999/doomed', chimpy.as), 404, 'organization not found');
    const res = ok(await api.del(`/api/orgs/doomed/doomed`, chimpy.as));
    assert.is(res.body, doomed);
    isError(await api.get(`/api/orgs/${doomed}`, chimpy.as), 404, 'organization not found');
    isError(await api.get(`/api/workspaces/${wid}`, chimpy.as), 404, 'workspace not found');
    isError(await api.get(`/api/docs/${doc}`, chimpy.as), 404, 'document not found');
    assert.not.ok(existsSync(world().docPath(doc)), 'doc file removed with its org');
    // By name, and with force-delete.
    const two = await world().newOrg(chimpy, 'Doomed Two', 'doomed-two');
    assert.is(ok(await api.del(`/api/orgs/${two}/Doomed%20Two`, chimpy.as)).body, two);
    const three = await world().newOrg(chimpy, 'Doomed Three');
    assert.is(ok(await api.del(`/api/orgs/${three}/force-delete`, chimpy.as)).body, three);
    // The domain is free again.
    assert.type(ok(await api.post('/api/orgs', {name: 'Reborn', domain: 'doomed'}, chimpy.as)).body, 'number');
  });

  s.run();
}
