/** Users: profile, API keys, deleting a user (SPEC §15, decision 2). */
import {existsSync} from 'node:fs';
import * as assert from 'uvu/assert';
import {areaSuite, isError, isErrorLike, keys, ok, useWorld, type Target} from './world.js';

export function usersSuite(target: Target): void {
  const s = areaSuite(target, 'users');
  const world = useWorld(s, target);

  s('GET /api/profile/user describes the caller; anonymous gets the Anonymous user', async () => {
    const {api, chimpy} = world();
    assert.equal(ok(await api.get('/api/profile/user', chimpy.as)).body, {
      id: chimpy.id,
      email: chimpy.email,
      name: 'Chimpy',
      picture: null,
      ref: chimpy.ref,
      allowGoogleLogin: true,
    });
    const anon = ok(await api.get('/api/profile/user')).body;
    assert.equal([anon.email, anon.name, anon.anonymous], ['anon@getgrist.com', 'Anonymous', true]);
    // Grist gives everyone allowGoogleLogin, the anonymous user included (issue 24).
    assert.equal(keys(anon), ['allowGoogleLogin', 'anonymous', 'email', 'id', 'name', 'picture', 'ref']);
    assert.is(anon.allowGoogleLogin, true);
    // Case-insensitive path.
    assert.is(ok(await api.get('/api/Profile/User', chimpy.as)).body.id, chimpy.id);
  });

  s('POST /api/profile/user/name renames the caller', async () => {
    const {api, chimpy} = world();
    const res = ok(await api.post('/api/profile/user/name', {name: 'Chimpy II'}, chimpy.as));
    assert.is(res.text, 'OK');
    assert.is(ok(await api.get('/api/profile/user', chimpy.as)).body.name, 'Chimpy II');
    ok(await api.post('/api/profile/user/name', {name: 'Chimpy'}, chimpy.as));
    isError(await api.post('/api/profile/user/name', {}, chimpy.as), 400, 'Name expected in the body');
    isError(await api.post('/api/profile/user/name', {name: 'Anon'}), 401, 'user not authorized');
  });

  s('GET /api/profile/apikey shows only a masked key, as text', async () => {
    const {api, chimpy} = world();
    for (const path of ['/api/profile/apikey', '/api/profile/apiKey']) {
      const res = ok(await api.get(path, chimpy.as));
      assert.match(res.headers['content-type'] ?? '', /^text\//);
      assert.is(res.text, `${chimpy.key.slice(0, 4)}...`);
    }
  });

  s('POST /api/profile/apikey: refuses to replace without force; force replaces; old key dies', async () => {
    const {api} = world();
    const user = await world().newUser('keys@example.com', 'Keys');
    isErrorLike(
      await api.post('/api/profile/apikey', {}, user.as),
      400,
      /^An apikey is already set, use `\{force: true\}` to override it\.$/,
    );
    isErrorLike(await api.call('POST', '/api/profile/apikey', user.as), 400, /apikey is already set/);
    const res = ok(await api.post('/api/profile/apikey', {force: true}, user.as));
    assert.match(res.text, /^[0-9a-f]{40}$/);
    assert.match(res.headers['content-type'] ?? '', /^text\//);
    isError(await api.get('/api/orgs', user.as), 401, 'Bad request: invalid API key');
    const fresh = {key: res.text};
    assert.is(ok(await api.get('/api/profile/user', fresh)).body.id, user.id);
    assert.is(ok(await api.get('/api/profile/apikey', fresh)).text, `${res.text.slice(0, 4)}...`);
    isError(await api.post('/api/profile/apikey', {}), 401, 'user not authorized');
    isError(await api.post('/api/profile/apikey', {force: true}), 401, 'user not authorized');
  });

  s('DELETE /api/profile/apikey removes the key', async () => {
    const {api} = world();
    const user = await world().newUser('nokey@example.com', 'No Key');
    const res = ok(await api.del('/api/profile/apikey', user.as));
    assert.is(res.text, 'OK');
    isError(await api.get('/api/orgs', user.as), 401, 'Bad request: invalid API key');
    assert.is((await world().engine.store.getUser(user.id))!.apiKeyPrefix, null);
    isError(
      await api.del('/api/profile/apikey', {headers: {'x-requested-with': 'XMLHttpRequest'}}),
      401,
      'user not authorized',
    );
    // The user can be given a key again (no force needed when none is set).
    const key = await world().engine.home.setApiKey(user.id);
    assert.is(ok(await api.get('/api/profile/user', {key})).body.id, user.id);
  });

  s('DELETE /api/users/{id}: name confirmation, only oneself, removes personal org and files', async () => {
    const {api, chimpy, kiwi} = world();
    const meep = await world().newUser('meep@example.com', 'Meep');
    const home = await world().homeWs(meep);
    const doc = await world().newDoc(meep, home, 'Mine');
    const orgId = await world().personalOrgId(meep);
    // A share given to Kiwi on Meep's doc, and Meep's share on Chimpy's team site.
    await world().share(meep, `/api/docs/${doc}`, {[kiwi.email]: 'viewers'});
    const team = await world().newOrg(chimpy, 'Team', 'team');
    await world().share(chimpy, `/api/orgs/${team}`, {[meep.email]: 'editors'});
    assert.ok(existsSync(world().docPath(doc)));

    isErrorLike(await api.del(`/api/users/${meep.id}`, meep.as), 400, /provide their name/);
    isError(
      await api.call('DELETE', `/api/users/${meep.id}`, {...meep.as, json: {}}),
      400,
      'to confirm deletion of a user, provide their name',
    );
    isError(
      await api.call('DELETE', `/api/users/${meep.id}`, {...chimpy.as, json: {name: 'Meep'}}),
      403,
      'not permitted to delete this user',
    );
    isError(
      await api.call('DELETE', `/api/users/${meep.id}`, {json: {name: 'Meep'}}),
      403,
      'not permitted to delete this user',
    );
    isError(
      await api.call('DELETE', `/api/users/${meep.id}`, {...meep.as, json: {name: 'Moop'}}),
      400,
      "user name did not match ('Moop' vs 'Meep')",
    );
    // Any id but one's own is refused alike, as Grist does: unknown, or not a number.
    isError(
      await api.call('DELETE', '/api/users/999999', {...meep.as, json: {name: 'Meep'}}),
      403,
      'not permitted to delete this user',
    );
    isError(
      await api.call('DELETE', '/api/users/abc', {...meep.as, json: {name: 'Meep'}}),
      403,
      'not permitted to delete this user',
    );

    const res = ok(await api.call('DELETE', `/api/users/${meep.id}`, {...meep.as, json: {name: 'Meep'}}));
    assert.is(res.body, null);
    assert.is(await world().engine.store.getUser(meep.id), null);
    assert.is(await world().engine.store.getOrg(orgId), null);
    assert.not.ok(existsSync(world().docPath(doc)), 'the personal docs files are gone');
    isError(await api.get(`/api/docs/${doc}`, kiwi.as), 404, 'document not found');
    isError(await api.get('/api/profile/user', meep.as), 401, 'Bad request: invalid API key');
    const access = ok(await api.get(`/api/orgs/${team}/access`, chimpy.as)).body.users;
    assert.not.ok(
      access.some((u: any) => u.email === meep.email),
      'no trace left in other orgs',
    );
    // The email can be used again, for a brand-new user (ids are never reused).
    const again = await world().newUser('meep@example.com', 'Meep');
    assert.is(ok(await api.get('/api/profile/user', again.as)).body.email, 'meep@example.com');
    assert.is.not(again.id, meep.id);
  });

  s('DELETE /api/users/{id} with name "" skips the name check', async () => {
    const {api} = world();
    const blank = await world().newUser('blank@example.com', '');
    ok(await api.call('DELETE', `/api/users/${blank.id}`, {...blank.as, json: {name: ''}}));
    assert.is(await world().engine.store.getUser(blank.id), null);
  });

  s.run();
}
