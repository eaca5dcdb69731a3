/** Access lists: GET/PATCH on orgs, workspaces and docs; public sharing (SPEC §2, §3.6-7, §4.4-5, §5.4-5). */
import * as assert from 'uvu/assert';
import {areaSuite, isError, isErrorLike, ok, useWorld, type Target, type TestUser} from './world.js';

const EVERYONE = 'everyone@getgrist.com';
const ANON = 'anon@getgrist.com';

export function accessSuite(target: Target): void {
  const s = areaSuite(target, 'access');
  const world = useWorld(s, target);
  let org = 0;
  let ws = 0;
  let doc = '';
  let other = '';

  const entry = (u: TestUser, extra: Record<string, unknown>) => ({
    id: u.id,
    name: u.name,
    email: u.email,
    ref: u.ref,
    picture: null,
    ...extra,
  });

  s('setup: an org with a workspace and two docs', async () => {
    const {chimpy} = world();
    org = await world().newOrg(chimpy, 'Shared', 'shared');
    ws = await world().newWorkspace(chimpy, org, 'Private');
    doc = await world().newDoc(chimpy, ws, 'Timesheets');
    other = await world().newDoc(chimpy, ws, 'Appointments');
  });

  s('GET /api/orgs/{org}/access lists users with their org roles', async () => {
    const {api, chimpy, kiwi, charon} = world();
    assert.equal(ok(await api.get(`/api/orgs/${org}/access`, chimpy.as)).body, {
      users: [entry(chimpy, {access: 'owners', isMember: true})],
    });
    ok(
      await api.patch(
        `/api/orgs/${org}/access`,
        {delta: {users: {[kiwi.email]: 'editors', [charon.email]: 'viewers'}}},
        chimpy.as,
      ),
    );
    assert.equal(ok(await api.get(`/api/orgs/${org}/access`, chimpy.as)).body, {
      users: [
        entry(chimpy, {access: 'owners', isMember: true}),
        entry(kiwi, {access: 'editors', isMember: true}),
        entry(charon, {access: 'viewers', isMember: true}),
      ],
    });
    // Non-owners see only themselves.
    const mine = ok(await api.get(`/api/orgs/${org}/access`, kiwi.as)).body;
    assert.equal(Object.keys(mine).sort(), ['personal', 'public', 'users']);
    assert.is(mine.personal, true);
    assert.is(mine.public, false);
    assert.equal(
      mine.users.map((u: any) => [u.id, u.access]),
      [[kiwi.id, 'editors']],
    );
    isError(await api.get('/api/orgs/9999/access', chimpy.as), 404, 'organization not found');
    const stranger = await world().newUser('stranger@example.com', 'Stranger');
    isError(await api.get(`/api/orgs/${org}/access`, stranger.as), 403, 'access denied');
    isError(await api.get(`/api/orgs/${org}/access`), 403, 'access denied');
  });

  s('PATCH .../access validates the delta', async () => {
    const {api, chimpy} = world();
    const patch = (path: string, body: unknown) => api.patch(`${path}/access`, body, chimpy.as);
    for (const path of [`/api/orgs/${org}`, `/api/workspaces/${ws}`, `/api/docs/${doc}`]) {
      isError(await patch(path, {}), 400, 'Bad request: missing permission delta', path);
      isError(await patch(path, {delta: {}}), 400, 'Bad request: invalid permission delta', path);
      isError(
        await patch(path, {delta: {users: {[chimpy.email]: 'viewers'}}}),
        400,
        'Bad request: cannot update own permissions',
        path,
      );
      isError(
        await patch(path, {delta: {users: {'CHIMPY@getgrist.com': 'editors'}}}),
        400,
        'Bad request: cannot update own permissions',
        path,
      );
      isError(await patch(path, {delta: {users: {'x@example.com': 'foo'}}}), 400, 'Invalid user role foo', path);
      for (const email of ['', 'hello', 'foo@example.com\r\nBcc: victim@example.com', 'a b@example.com']) {
        isError(
          await patch(path, {delta: {users: {[email]: 'viewers'}}}),
          400,
          'Invalid email address included',
          `${path} ${JSON.stringify(email)}`,
        );
      }
      // Removing an invalid or unknown email is a silent no-op.
      ok(await patch(path, {delta: {users: {hello: null, 'unknown-person@example.com': null}}}), path);
    }
    isError(
      await patch(`/api/orgs/${org}`, {delta: {maxInheritedRole: null}}),
      400,
      'Bad request: invalid permission delta',
    );
    isError(
      await patch(`/api/orgs/${org}`, {delta: {users: {}, maxInheritedRole: 'viewers'}}),
      400,
      'Bad request: invalid permission delta',
    );
    isError(
      await patch(`/api/workspaces/${ws}`, {delta: {users: {'x@example.com': 'members'}}}),
      400,
      'Invalid user role members',
    );
    isError(
      await patch(`/api/docs/${doc}`, {delta: {users: {'x@example.com': 'members'}}}),
      400,
      'Invalid user role members',
    );
    isError(
      await patch(`/api/workspaces/${ws}`, {delta: {maxInheritedRole: 'members'}}),
      400,
      'Invalid maxInheritedRole members',
    );
    isError(await patch(`/api/docs/${doc}`, {delta: {maxInheritedRole: 'foo'}}), 400, 'Invalid maxInheritedRole foo');
    ok(await patch(`/api/orgs/${org}`, {delta: {users: {}}}));
    isError(await api.patch('/api/orgs/9999/access', {delta: {users: {}}}, chimpy.as), 404, 'organization not found');
    isError(
      await api.patch('/api/workspaces/99999/access', {delta: {users: {}}}, chimpy.as),
      404,
      'workspace not found',
    );
    isError(await api.patch('/api/docs/nosuchdoc/access', {delta: {users: {}}}, chimpy.as), 404, 'document not found');
  });

  s('PATCH .../access: unknown emails create users; case variants merge with the strongest role', async () => {
    const {api, chimpy, engine} = world();
    assert.is(await engine.store.getUserByEmail('newbie@example.com'), null);
    ok(
      await api.patch(
        `/api/docs/${doc}/access`,
        {delta: {users: {'Newbie@Example.com': 'viewers', 'newbie@example.com': 'editors'}}},
        chimpy.as,
      ),
    );
    const newbie = await engine.store.getUserByEmail('newbie@example.com');
    assert.ok(newbie, 'the invited user exists');
    assert.is(newbie!.email, 'Newbie@Example.com', 'first sorted spelling kept');
    assert.is(newbie!.name, '');
    assert.ok(await engine.store.getPersonalOrg(newbie!.id), 'invited users get a personal org');
    const users = ok(await api.get(`/api/docs/${doc}/access`, chimpy.as)).body.users;
    assert.is(users.find((u: any) => u.id === newbie!.id).access, 'editors');
    ok(await api.patch(`/api/docs/${doc}/access`, {delta: {users: {'NEWBIE@example.com': null}}}, chimpy.as));
    assert.not.ok(
      ok(await api.get(`/api/docs/${doc}/access`, chimpy.as)).body.users.some((u: any) => u.id === newbie!.id),
    );
  });

  s('PATCH .../access: non-owners may only remove themselves', async () => {
    const {api, chimpy, kiwi, charon} = world();
    // Kiwi (org editor) may not change others, nor themself except by removal.
    isError(
      await api.patch(`/api/orgs/${org}/access`, {delta: {users: {[charon.email]: null}}}, kiwi.as),
      403,
      'access denied',
    );
    isError(
      await api.patch(`/api/orgs/${org}/access`, {delta: {users: {[kiwi.email]: 'owners'}}}, kiwi.as),
      403,
      'access denied',
    );
    isError(
      await api.patch(`/api/workspaces/${ws}/access`, {delta: {maxInheritedRole: null}}, kiwi.as),
      403,
      'access denied',
    );
    const stranger = await world().newUser('outsider@example.com', 'Outsider');
    isError(
      await api.patch(`/api/docs/${doc}/access`, {delta: {users: {[stranger.email]: null}}}, stranger.as),
      403,
      'access denied',
    );
    // Charon (org viewer) removes themself.
    assert.is(
      ok(await api.patch(`/api/orgs/${org}/access`, {delta: {users: {[charon.email]: null}}}, charon.as)).body,
      null,
    );
    isError(await api.get(`/api/orgs/${org}`, charon.as), 403, 'access denied');
    // Self-removal from a doc shared directly.
    await world().share(chimpy, `/api/docs/${doc}`, {[charon.email]: 'editors'});
    ok(await api.patch(`/api/docs/${doc}/access`, {delta: {users: {[charon.email]: null}}}, charon.as));
    isError(await api.get(`/api/docs/${doc}`, charon.as), 403, 'access denied');
    // Self-removal from a workspace.
    await world().share(chimpy, `/api/workspaces/${ws}`, {[charon.email]: 'viewers'});
    ok(await api.patch(`/api/workspaces/${ws}/access`, {delta: {users: {[charon.email]: null}}}, charon.as));
    isError(await api.get(`/api/workspaces/${ws}`, charon.as), 403, 'access denied');
  });

  s('GET /api/workspaces/{wid}/access shows access, parentAccess and isMember', async () => {
    const {api, chimpy, kiwi, charon} = world();
    // Kiwi is an org editor (from above); Charon is nothing in the org.
    let res = ok(await api.get(`/api/workspaces/${ws}/access`, chimpy.as)).body;
    assert.equal(res, {
      maxInheritedRole: 'owners',
      users: [
        entry(chimpy, {access: 'owners', parentAccess: 'owners', isMember: true}),
        entry(kiwi, {access: null, parentAccess: 'editors', isMember: true}),
      ],
    });
    // A doc shared with Charon makes Charon a guest of the workspace (not a member of the org).
    await world().share(chimpy, `/api/docs/${other}`, {[charon.email]: 'viewers'});
    res = ok(await api.get(`/api/workspaces/${ws}/access`, chimpy.as)).body;
    assert.equal(
      res.users.find((u: any) => u.id === charon.id),
      entry(charon, {access: 'guests', parentAccess: null, isMember: false}),
    );
    const orgAccess = ok(await api.get(`/api/orgs/${org}/access`, chimpy.as)).body.users;
    assert.equal(
      orgAccess.find((u: any) => u.id === charon.id),
      entry(charon, {access: 'guests', isMember: false}),
    );
    // Non-owners get their own entry only, as Grist's UserAccessData: the role on the workspace
    // itself (none), what the org passes down, and org membership.
    const mine = ok(await api.get(`/api/workspaces/${ws}/access`, kiwi.as)).body;
    assert.equal([mine.personal, mine.public, mine.maxInheritedRole], [true, false, 'owners']);
    assert.equal(mine.users, [entry(kiwi, {access: null, parentAccess: 'editors', isMember: true})]);
    isError(await api.get('/api/workspaces/99999/access', chimpy.as), 404, 'workspace not found');
    const stranger = await world().newUser('stranger2@example.com', 'Stranger');
    isError(await api.get(`/api/workspaces/${ws}/access`, stranger.as), 403, 'access denied');
    await world().share(chimpy, `/api/docs/${other}`, {[charon.email]: null});
  });

  s('maxInheritedRole on a workspace caps inherited roles and makes the caller a direct owner', async () => {
    const {api, chimpy, kiwi} = world();
    // Kiwi is an org editor: renaming a workspace takes an owner (decision D1).
    isError(await api.patch(`/api/workspaces/${ws}`, {name: 'Private'}, kiwi.as), 403, 'access denied');
    ok(await api.patch(`/api/workspaces/${ws}/access`, {delta: {maxInheritedRole: 'viewers'}}, chimpy.as));
    isError(await api.patch(`/api/workspaces/${ws}`, {name: 'K'}, kiwi.as), 403, 'access denied');
    assert.is(ok(await api.get(`/api/workspaces/${ws}`, kiwi.as)).body.access, 'viewers');
    assert.is(ok(await api.get(`/api/docs/${doc}`, kiwi.as)).body.access, 'viewers');
    let res = ok(await api.get(`/api/workspaces/${ws}/access`, chimpy.as)).body;
    assert.is(res.maxInheritedRole, 'viewers');
    assert.equal(res.users.find((u: any) => u.id === chimpy.id).access, 'owners');
    // null cuts inheritance: Kiwi loses the workspace and its docs.
    ok(await api.patch(`/api/workspaces/${ws}/access`, {delta: {maxInheritedRole: null}}, chimpy.as));
    isError(await api.get(`/api/workspaces/${ws}`, kiwi.as), 403, 'access denied');
    isError(await api.get(`/api/docs/${doc}`, kiwi.as), 403, 'access denied');
    assert.not.ok(ok(await api.get(`/api/orgs/${org}/workspaces`, kiwi.as)).body.some((w: any) => w.id === ws));
    // A direct role survives the cap.
    ok(await api.patch(`/api/workspaces/${ws}/access`, {delta: {users: {[kiwi.email]: 'editors'}}}, chimpy.as));
    assert.is(ok(await api.get(`/api/workspaces/${ws}`, kiwi.as)).body.access, 'editors');
    res = ok(await api.get(`/api/workspaces/${ws}/access`, chimpy.as)).body;
    assert.equal(
      res.users.find((u: any) => u.id === kiwi.id),
      entry(kiwi, {access: 'editors', parentAccess: 'editors', isMember: true}),
    );
    ok(
      await api.patch(
        `/api/workspaces/${ws}/access`,
        {delta: {maxInheritedRole: 'owners', users: {[kiwi.email]: null}}},
        chimpy.as,
      ),
    );
    assert.is(ok(await api.get(`/api/workspaces/${ws}`, kiwi.as)).body.access, 'editors');
  });

  s('lowering maxInheritedRole makes the caller a direct owner, so they keep control', async () => {
    const {api, chimpy, charon} = world();
    // Charon becomes an org owner, with no direct role on the workspace Chimpy created.
    await world().share(chimpy, `/api/orgs/${org}`, {[charon.email]: 'owners'});
    let users = ok(await api.get(`/api/workspaces/${ws}/access`, charon.as)).body.users;
    assert.equal(
      users.find((u: any) => u.id === charon.id),
      entry(charon, {access: null, parentAccess: 'owners', isMember: true}),
    );
    ok(await api.patch(`/api/workspaces/${ws}/access`, {delta: {maxInheritedRole: null}}, charon.as));
    users = ok(await api.get(`/api/workspaces/${ws}/access`, charon.as)).body.users;
    assert.equal(users.find((u: any) => u.id === charon.id).access, 'owners');
    assert.is(ok(await api.get(`/api/workspaces/${ws}`, charon.as)).body.access, 'owners');
    // Restoring full inheritance adds nobody.
    ok(
      await api.patch(
        `/api/workspaces/${ws}/access`,
        {delta: {maxInheritedRole: 'owners', users: {[charon.email]: null}}},
        chimpy.as,
      ),
    );
    users = ok(await api.get(`/api/workspaces/${ws}/access`, chimpy.as)).body.users;
    assert.equal(
      users.find((u: any) => u.id === charon.id),
      entry(charon, {access: null, parentAccess: 'owners', isMember: true}),
    );
    await world().share(chimpy, `/api/orgs/${org}`, {[charon.email]: null});
  });

  s(
    'special users appear in access lists once shared (everyone@ on a workspace is inherited by its docs)',
    async () => {
      const {api, chimpy, engine} = world();
      const everyone = (await engine.store.getUserByEmail(EVERYONE))!;
      ok(await api.patch(`/api/workspaces/${ws}/access`, {delta: {users: {[EVERYONE]: 'viewers'}}}, chimpy.as));
      const wsUsers = ok(await api.get(`/api/workspaces/${ws}/access`, chimpy.as)).body.users;
      const onWs = wsUsers.find((u: any) => u.id === everyone.id);
      assert.equal([onWs?.email, onWs?.access, onWs?.parentAccess], [EVERYONE, 'viewers', null]);
      const docUsers = ok(await api.get(`/api/docs/${doc}/access`, chimpy.as)).body.users;
      const onDoc = docUsers.find((u: any) => u.id === everyone.id);
      assert.equal([onDoc?.access, onDoc?.parentAccess], [null, 'viewers']);
      // So anyone can open the workspace's docs.
      assert.is(ok(await api.get(`/api/docs/${doc}`)).body.access, 'viewers');
      ok(await api.patch(`/api/workspaces/${ws}/access`, {delta: {users: {[EVERYONE]: null}}}, chimpy.as));
      assert.not.ok(
        ok(await api.get(`/api/workspaces/${ws}/access`, chimpy.as)).body.users.some((u: any) => u.id === everyone.id),
      );
      isError(await api.get(`/api/docs/${doc}`), 403, 'access denied');
    },
  );

  s('GET/PATCH /api/docs/{doc}/access: roles, maxInheritedRole on docs, personal view', async () => {
    const {api, chimpy, kiwi, charon} = world();
    let res = ok(await api.get(`/api/docs/${doc}/access`, chimpy.as)).body;
    assert.equal(res, {
      maxInheritedRole: 'owners',
      users: [
        entry(chimpy, {access: 'owners', parentAccess: 'owners', isMember: true}),
        entry(kiwi, {access: null, parentAccess: 'editors', isMember: true}),
      ],
    });
    ok(
      await api.patch(
        `/api/docs/${doc}/access`,
        {delta: {maxInheritedRole: null, users: {[charon.email]: 'viewers'}}},
        chimpy.as,
      ),
    );
    isError(await api.get(`/api/docs/${doc}`, kiwi.as), 403, 'access denied');
    assert.is(ok(await api.get(`/api/docs/${doc}`, charon.as)).body.access, 'viewers');
    // Kiwi still sees the other doc of the workspace; this one, if listed at all, with no access.
    const listed = ok(await api.get(`/api/workspaces/${ws}`, kiwi.as)).body.docs;
    assert.equal(listed.find((d: any) => d.name === 'Appointments')?.access, 'editors');
    assert.ok(listed.every((d: any) => d.name !== 'Timesheets' || d.access === null));
    res = ok(await api.get(`/api/docs/${doc}/access`, chimpy.as)).body;
    assert.is(res.maxInheritedRole, null);
    assert.equal(
      res.users.find((u: any) => u.id === charon.id),
      entry(charon, {access: 'viewers', parentAccess: null, isMember: false}),
    );
    const mine = ok(await api.get(`/api/docs/${doc}/access`, charon.as)).body;
    assert.equal([mine.personal, mine.public], [true, false]);
    assert.equal(
      mine.users.map((u: any) => [u.id, u.access]),
      [[charon.id, 'viewers']],
    );
    ok(await api.patch(`/api/docs/${doc}/access`, {delta: {maxInheritedRole: 'viewers'}}, chimpy.as));
    assert.is(ok(await api.get(`/api/docs/${doc}`, kiwi.as)).body.access, 'viewers');
    isError(
      await api.patch(`/api/docs/${doc}/access`, {delta: {users: {[kiwi.email]: 'owners'}}}, charon.as),
      403,
      'access denied',
    );
    ok(
      await api.patch(
        `/api/docs/${doc}/access`,
        {delta: {maxInheritedRole: 'owners', users: {[charon.email]: null}}},
        chimpy.as,
      ),
    );
    isError(await api.get('/api/docs/nosuchdoc/access', chimpy.as), 404, 'document not found');
    isError(await api.get(`/api/docs/${doc}/access`, charon.as), 403, 'access denied');
  });

  s('public sharing: everyone@ opens a doc to anyone, anonymous included, without listing it', async () => {
    const {api, chimpy, charon} = world();
    isError(await api.get(`/api/docs/${doc}`), 403, 'access denied');
    ok(await api.patch(`/api/docs/${doc}/access`, {delta: {users: {[EVERYONE]: 'viewers'}}}, chimpy.as));
    const anon = ok(await api.get(`/api/docs/${doc}`)).body;
    assert.equal([anon.id, anon.access, anon.public], [doc, 'viewers', true]);
    assert.is(ok(await api.get(`/api/docs/${doc}`, chimpy.as)).body.public, true);
    assert.is(ok(await api.get(`/api/docs/${doc}`, charon.as)).body.access, 'viewers');
    // Not listed for those who have it only through everyone@.
    assert.not.ok(ok(await api.get('/api/orgs', charon.as)).body.some((o: any) => o.id === org));
    assert.equal(ok(await api.get('/api/orgs')).body, []);
    // Anonymous cannot write.
    isError(await api.patch(`/api/docs/${doc}`, {name: 'Anon'}), 403, 'access denied');
    // What the public sees of the access list: only the public flag (and themselves, if logged in).
    const seen = ok(await api.get(`/api/docs/${doc}/access`)).body;
    assert.equal([seen.personal, seen.public, seen.users], [true, true, []]);
    const charonSees = ok(await api.get(`/api/docs/${doc}/access`, charon.as)).body;
    // Grist lists the caller only when they hold a role of their own (they are in no group here).
    assert.equal([charonSees.personal, charonSees.public, charonSees.users], [true, true, []]);
    const listed = ok(await api.get(`/api/workspaces/${ws}`, chimpy.as)).body.docs.find((d: any) => d.id === doc);
    assert.is(listed.public, true);
    ok(await api.patch(`/api/docs/${doc}/access`, {delta: {users: {[EVERYONE]: null}}}, chimpy.as));
    isError(await api.get(`/api/docs/${doc}`), 403, 'access denied');
  });

  s('public sharing: everyone@ cannot be given an org; everyone@ with anon@ is refused', async () => {
    const {api, chimpy} = world();
    isError(
      await api.patch(`/api/orgs/${org}/access`, {delta: {users: {[EVERYONE]: 'viewers'}}}, chimpy.as),
      403,
      'This user cannot share with everyone at top level',
    );
    isErrorLike(
      await api.patch(
        `/api/docs/${doc}/access`,
        {delta: {users: {[EVERYONE]: 'viewers', [ANON]: 'viewers'}}},
        chimpy.as,
      ),
      400,
      /^this user cannot share with everyone and anonymous$/,
    );
  });

  s('public sharing: an org shared with anon@ is listed for anonymous callers in its own context', async () => {
    const {api, chimpy} = world();
    ok(await api.patch(`/api/orgs/${org}/access`, {delta: {users: {[ANON]: 'viewers'}}}, chimpy.as));
    const got = ok(await api.get(`/api/orgs/${org}`)).body;
    assert.equal([got.id, got.access], [org, 'viewers']);
    assert.equal(ok(await api.get('/api/orgs')).body, [], 'no org context: nothing listed');
    const listed = ok(await api.get('/o/shared/api/orgs')).body;
    assert.equal(
      listed.map((o: any) => [o.id, o.public]),
      [[org, true]],
    );
    // And the org's content inherits the public role.
    assert.is(ok(await api.get(`/api/docs/${doc}`)).body.access, 'viewers');
    const wss = ok(await api.get(`/api/orgs/${org}/workspaces`)).body;
    assert.ok(wss.some((w: any) => w.id === ws));
    // Anonymous still cannot create anything.
    isError(await api.post(`/api/orgs/${org}/workspaces`, {name: 'Anon'}), 403, 'access denied');
    ok(await api.patch(`/api/orgs/${org}/access`, {delta: {users: {[ANON]: null}}}, chimpy.as));
    isError(await api.get(`/api/orgs/${org}`), 403, 'access denied');
  });

  s('removing a user from an org removes them from every workspace and doc in it', async () => {
    const {api, chimpy, kiwi} = world();
    await world().share(chimpy, `/api/docs/${doc}`, {[kiwi.email]: 'editors'});
    await world().share(chimpy, `/api/workspaces/${ws}`, {[kiwi.email]: 'viewers'});
    await world().share(chimpy, `/api/orgs/${org}`, {[kiwi.email]: null});
    isError(await api.get(`/api/docs/${doc}`, kiwi.as), 403, 'access denied');
    isError(await api.get(`/api/workspaces/${ws}`, kiwi.as), 403, 'access denied');
    isError(await api.get(`/api/orgs/${org}`, kiwi.as), 403, 'access denied');
  });

  s.run();
}
