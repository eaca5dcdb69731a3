/**
 * Home answers shaped as Grist's, checked against grist-core's HomeDBManager and its ApiServer,
 * ApiSession and ApiServerAccess tests (issue 15): billing accounts on org answers, owners'
 * createdAt, where `forks` appears, what each caller sees of access lists and listings, user
 * deletion refusals and numeric document names. Decisions H1-H3 in docs/decisions.md.
 */
import * as assert from 'uvu/assert';
import {areaSuite, BASE_DOMAIN, ISO_DATE, isError, keys, ok, useWorld, type Target, type TestUser} from './world.js';

/** Self-hosted Grist's product: GRIST_DEFAULT_PRODUCT=Free, created first (id 1). */
const FREE = {id: 1, name: 'Free', features: {workspaces: true, vanityDomain: true}};

/** A billing account as GET /api/orgs/{org} shows it to `isManager`. */
const billing = (id: number, individual: boolean, isManager: boolean) => ({
  id,
  individual,
  inGoodStanding: true,
  status: null,
  externalId: null,
  externalOptions: null,
  paymentLink: null,
  isManager,
  paid: false,
  features: null,
  stripePlanId: null,
  product: FREE,
});

export function homeParitySuite(target: Target): void {
  const s = areaSuite(target, 'home-parity');
  const world = useWorld(s, target);
  let team = 0;
  let ws = 0;
  let doc = '';

  const entry = (u: TestUser, extra: Record<string, unknown>) => ({
    id: u.id,
    name: u.name,
    email: u.email,
    ref: u.ref,
    picture: null,
    ...extra,
  });

  s.before(async () => {
    const {chimpy} = world();
    team = await world().newOrg(chimpy, 'Parity', 'parity');
    ws = await world().newWorkspace(chimpy, team, 'Plans');
    doc = await world().newDoc(chimpy, ws, 'Roadmap');
  });

  s('GET /api/orgs/{org} and /o/<domain>/api/orgs/current carry the billing account (Free product)', async () => {
    const {api, chimpy, kiwi} = world();
    const org = ok(await api.get(`/api/orgs/${team}`, chimpy.as)).body;
    assert.equal(org.billingAccount, billing(team, false, true));
    assert.equal(keys(org), [
      'access',
      'billingAccount',
      'createdAt',
      'domain',
      'host',
      'id',
      'name',
      'owner',
      'updatedAt',
    ]);
    assert.equal(
      ok(await api.get('/o/parity/api/orgs/current', chimpy.as)).body.billingAccount,
      billing(team, false, true),
    );
    const host = {...chimpy.as, headers: {host: `parity.${BASE_DOMAIN}`}};
    assert.equal(ok(await api.get('/api/orgs/current', host)).body.billingAccount, billing(team, false, true));
    // A personal org's account is individual; a viewer is no manager.
    const personal = await world().personalOrgId(chimpy);
    assert.equal(
      ok(await api.get(`/api/orgs/${personal}`, chimpy.as)).body.billingAccount,
      billing(personal, true, true),
    );
    await world().share(chimpy, `/api/orgs/${team}`, {[kiwi.email]: 'viewers'});
    assert.equal(ok(await api.get(`/api/orgs/${team}`, kiwi.as)).body.billingAccount, billing(team, false, false));
    await world().share(chimpy, `/api/orgs/${team}`, {[kiwi.email]: null});
    // The list does not load billing accounts.
    assert.ok(ok(await api.get('/api/orgs', chimpy.as)).body.every((o: any) => !('billingAccount' in o)));
    // The anonymous `docs` org is Grist's virtual one.
    const anon = ok(await api.get('/api/orgs/docs')).body;
    assert.equal(
      [anon.billingAccount.id, anon.billingAccount.product.name, anon.billingAccount.isManager, anon.owner.anonymous],
      [0, 'anonymous', false, true],
    );
  });

  s(
    "a document's embedded org carries the billing account; a workspace's does not (Grist loads it only for docs)",
    async () => {
      const {api, chimpy} = world();
      const got = ok(await api.get(`/api/docs/${doc}`, chimpy.as)).body;
      const {isManager, paid, ...docBilling} = billing(team, false, true);
      assert.equal([isManager, paid], [true, false]);
      assert.equal(got.workspace.org.billingAccount, docBilling);
      assert.not.ok('billingAccount' in ok(await api.get(`/api/workspaces/${ws}`, chimpy.as)).body.org);
    },
  );

  s("a document's embedded org carries the caller's access to the org (guests see viewers)", async () => {
    const {api, chimpy, kiwi} = world();
    const got = ok(await api.get(`/api/docs/${doc}`, chimpy.as)).body;
    assert.equal(keys(got.workspace.org), [
      'access',
      'billingAccount',
      'createdAt',
      'domain',
      'host',
      'id',
      'name',
      'owner',
      'updatedAt',
    ]);
    assert.is(got.workspace.org.access, 'owners');
    await world().share(chimpy, `/api/docs/${doc}`, {[kiwi.email]: 'editors'});
    const asGuest = ok(await api.get(`/api/docs/${doc}`, kiwi.as)).body;
    assert.equal(
      [asGuest.access, asGuest.workspace.access, asGuest.workspace.org.access],
      ['editors', 'viewers', 'viewers'],
    );
    // A role on the workspace shows there, and the document inherits it.
    await world().share(chimpy, `/api/workspaces/${ws}`, {[kiwi.email]: 'editors'});
    const wsEditor = ok(await api.get(`/api/docs/${doc}`, kiwi.as)).body;
    assert.equal([wsEditor.workspace.access, wsEditor.workspace.org.access], ['editors', 'viewers']);
    await world().share(chimpy, `/api/workspaces/${ws}`, {[kiwi.email]: null});
    await world().share(chimpy, `/api/docs/${doc}`, {[kiwi.email]: null});
    const personal = ok(
      await api.get(`/api/docs/${await world().newDoc(chimpy, await world().homeWs(chimpy), 'P')}`, chimpy.as),
    ).body;
    assert.is(personal.workspace.org.access, 'owners');
    assert.not.ok('access' in ok(await api.get(`/api/workspaces/${ws}`, chimpy.as)).body.org);
  });

  s("domain checks in Grist's words; a new personal org carries userOrgPrefs (issue 24)", async () => {
    const {api, chimpy} = world();
    const refused = async (domain: unknown, reason: string) => {
      isError(await api.post('/api/orgs', {name: 'D', domain}, chimpy.as), 400, `Domain is not permitted: ${reason}`);
      isError(await api.patch(`/api/orgs/${team}`, {domain}, chimpy.as), 400, `Domain is not permitted: ${reason}`);
    };
    await refused('Bad_Domain', 'Domain must include lower-case letters, numbers, and dashes only.');
    await refused('-x-y', 'Domain must include lower-case letters, numbers, and dashes only.');
    await refused('docs-12', 'Domain cannot use reserved prefix "docs-".');
    await refused('o-12', 'Domain cannot use reserved prefix "o-".');
    await refused('v1-site', 'Domain cannot use reserved prefix "v1-".');
    await refused('ab', 'Domain must contain more than 2 characters.');
    await refused('a'.repeat(64), 'Domain must contain less than 64 characters.');
    await refused('www', 'Invalid domain value.');
    await refused('google', 'Invalid domain value.');
    await refused({toString: 1}, 'must be a string');
    // Grist sets {showGristTour: true} for the user of a personal org it has just made.
    const newcomer = await world().newUser('newcomer@example.com', 'Newcomer');
    const personal = ok(await api.get(`/api/orgs/docs-${newcomer.id}`, newcomer.as)).body;
    assert.equal(personal.userOrgPrefs, {showGristTour: true});
    assert.equal(ok(await api.get('/api/orgs/docs', newcomer.as)).body.userOrgPrefs, {showGristTour: true});
  });

  s('owner objects carry createdAt: org listings, workspace listings, embedded orgs', async () => {
    const {api, chimpy} = world();
    const mine = ok(await api.get('/api/orgs', chimpy.as)).body.find((o: any) => o.owner?.id === chimpy.id);
    assert.equal(keys(mine.owner), ['createdAt', 'id', 'name', 'picture', 'ref', 'type']);
    assert.match(mine.owner.createdAt, ISO_DATE);
    const home = ok(await api.get(`/api/orgs/docs-${chimpy.id}/workspaces`, chimpy.as)).body[0];
    assert.is(home.owner.createdAt, mine.owner.createdAt);
    const personalDoc = await world().newDoc(chimpy, home.id, 'Mine');
    const got = ok(await api.get(`/api/docs/${personalDoc}`, chimpy.as)).body;
    assert.is(got.workspace.org.owner.createdAt, mine.owner.createdAt);
  });

  s(
    'forks: listed on GET /api/docs/{doc} and org workspace lists for signed-in callers only; never on GET /api/workspaces/{wid}',
    async () => {
      const {api, chimpy} = world();
      const wsDocs = ok(await api.get(`/api/workspaces/${ws}`, chimpy.as)).body.docs;
      assert.equal(
        wsDocs.map((d: any) => [d.id, 'forks' in d]),
        [[doc, false]],
      );
      const listed = ok(await api.get(`/api/orgs/${team}/workspaces`, chimpy.as)).body.find((w: any) => w.id === ws);
      assert.equal(
        listed.docs.map((d: any) => d.forks),
        [[]],
      );
      assert.equal(ok(await api.get(`/api/docs/${doc}`, chimpy.as)).body.forks, []);
      await world().share(chimpy, `/api/docs/${doc}`, {'everyone@getgrist.com': 'viewers'});
      assert.not.ok('forks' in ok(await api.get(`/api/docs/${doc}`)).body);
      await world().share(chimpy, `/api/docs/${doc}`, {'everyone@getgrist.com': null});
    },
  );

  s(
    "listings name roles from permission bits: a guest's workspace and org, and a member's org, show viewers",
    async () => {
      const {api, chimpy, kiwi, charon} = world();
      await world().share(chimpy, `/api/docs/${doc}`, {[kiwi.email]: 'editors'});
      await world().share(chimpy, `/api/orgs/${team}`, {[charon.email]: 'members'});
      const wss = ok(await api.get(`/api/orgs/${team}/workspaces`, kiwi.as)).body;
      assert.equal(
        wss.map((w: any) => [w.id, w.access, w.docs.map((d: any) => d.access)]),
        [[ws, 'viewers', ['editors']]],
      );
      assert.is(ok(await api.get(`/api/workspaces/${ws}`, kiwi.as)).body.access, 'viewers');
      assert.is(ok(await api.get(`/api/orgs/${team}`, kiwi.as)).body.access, 'viewers');
      assert.is(ok(await api.get(`/api/orgs/${team}`, charon.as)).body.access, 'viewers');
      assert.is(ok(await api.get('/api/orgs', charon.as)).body.find((o: any) => o.id === team).access, 'viewers');
      // Access lists keep the roles themselves, and isMember says who belongs to the org.
      const users = ok(await api.get(`/api/orgs/${team}/access`, chimpy.as)).body.users;
      assert.equal(
        users.find((u: any) => u.id === kiwi.id),
        entry(kiwi, {access: 'guests', isMember: false}),
      );
      assert.equal(
        users.find((u: any) => u.id === charon.id),
        entry(charon, {access: 'members', isMember: true}),
      );
      await world().share(chimpy, `/api/docs/${doc}`, {[kiwi.email]: null});
      await world().share(chimpy, `/api/orgs/${team}`, {[charon.email]: null});
    },
  );

  s(
    "a document's access list: a viewer sees their own role and what they inherit; an editor sees who can view the doc",
    async () => {
      const {api, chimpy, kiwi, charon} = world();
      const stranger = await world().newUser('parity-stranger@example.com', 'Stranger');
      await world().share(chimpy, `/api/docs/${doc}`, {[kiwi.email]: 'viewers'});
      await world().share(chimpy, `/api/orgs/${team}`, {[charon.email]: 'viewers', [stranger.email]: 'members'});
      const kiwiSees = ok(await api.get(`/api/docs/${doc}/access`, kiwi.as)).body;
      assert.equal(kiwiSees, {
        personal: true,
        public: false,
        maxInheritedRole: 'owners',
        users: [entry(kiwi, {access: 'viewers', parentAccess: null, isMember: false})],
      });
      const charonSees = ok(await api.get(`/api/docs/${doc}/access`, charon.as)).body;
      assert.equal(charonSees.users, [entry(charon, {access: null, parentAccess: 'viewers', isMember: true})]);
      // An editor of the doc: everyone who can view it (not the org member without access), personal.
      await world().share(chimpy, `/api/docs/${doc}`, {[kiwi.email]: 'editors'});
      const editorSees = ok(await api.get(`/api/docs/${doc}/access`, kiwi.as)).body;
      assert.equal([editorSees.personal, editorSees.public, editorSees.maxInheritedRole], [true, false, 'owners']);
      assert.equal(editorSees.users.map((u: any) => u.id).sort(), [chimpy.id, kiwi.id, charon.id].sort());
      // The owner sees all of the org's users, the member without access included.
      const ownerSees = ok(await api.get(`/api/docs/${doc}/access`, chimpy.as)).body;
      assert.ok(!('personal' in ownerSees));
      assert.equal(
        ownerSees.users.find((u: any) => u.id === stranger.id),
        entry(stranger, {access: null, parentAccess: null, isMember: true}),
      );
      await world().share(chimpy, `/api/docs/${doc}`, {[kiwi.email]: null});
      await world().share(chimpy, `/api/orgs/${team}`, {[charon.email]: null, [stranger.email]: null});
    },
  );

  s(
    'DELETE /api/users/{id}: an unknown, already deleted or non-numeric id is 403; a null name skips the check',
    async () => {
      const {api, kiwi} = world();
      const gone = await world().newUser('parity-gone@example.com', 'Gone');
      ok(await api.call('DELETE', `/api/users/${gone.id}`, {...gone.as, json: {name: null}}));
      for (const id of [String(gone.id), '987654', 'x1', '1.5e3']) {
        isError(
          await api.call('DELETE', `/api/users/${id}`, {...kiwi.as, json: {name: 'Gone'}}),
          403,
          'not permitted to delete this user',
          id,
        );
      }
      isError(
        await api.call('DELETE', '/api/users/abc', {...kiwi.as, json: {}}),
        400,
        'to confirm deletion of a user, provide their name',
      );
    },
  );

  s('a numeric name on document create or rename is taken as its text, as Grist stores it', async () => {
    const {api, chimpy} = world();
    const id = ok(await api.post(`/api/workspaces/${ws}/docs`, {name: 2024}, chimpy.as)).body;
    assert.is(ok(await api.get(`/api/docs/${id}`, chimpy.as)).body.name, '2024');
    ok(await api.patch(`/api/docs/${id}`, {name: 7.5}, chimpy.as));
    assert.is(ok(await api.get(`/api/docs/${id}`, chimpy.as)).body.name, '7.5');
    isError(await api.post(`/api/workspaces/${ws}/docs`, {name: 0}, chimpy.as), 400, 'Bad request: name required');
    isError(await api.post(`/api/workspaces/${ws}/docs`, {name: ['x']}, chimpy.as), 400, 'Bad request: name required');
    ok(await api.del(`/api/docs/${id}`, chimpy.as));
  });

  s.run();
}
