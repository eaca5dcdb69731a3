// Install-wide org settings under Grist's names (home/settings.ts): parsing, defaults and their
// chain, and what the embedding Session does with them. The REST behaviour is conformance `org-flags`.
import {mkdtempSync, rmSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {ApiError} from '../src/base/errors.js';
import {orgSettingsFromEnv} from '../src/home/settings.js';
import {Engine} from '../src/internal.js';

test('defaults: anyone creates team sites, personal orgs exist, the support user is admin', () => {
  assert.equal(orgSettingsFromEnv({}), {
    orgCreationAnyone: true,
    personalOrgs: true,
    adminEmail: 'support@getgrist.com',
  });
});

test("booleans as Grist's isAffirmative reads them: only 1/on/true/yes (any case) are true", () => {
  for (const v of ['1', 'on', 'TRUE', 'Yes']) {
    assert.is(orgSettingsFromEnv({GRIST_ORG_CREATION_ANYONE: v}).orgCreationAnyone, true, v);
  }
  for (const v of ['0', 'false', 'off', 'no', '', 'maybe']) {
    assert.is(orgSettingsFromEnv({GRIST_ORG_CREATION_ANYONE: v}).orgCreationAnyone, false, v);
  }
});

test('GRIST_PERSONAL_ORGS defaults to GRIST_ORG_CREATION_ANYONE, and overrides it when set', () => {
  assert.is(orgSettingsFromEnv({GRIST_ORG_CREATION_ANYONE: 'false'}).personalOrgs, false);
  assert.is(orgSettingsFromEnv({GRIST_ORG_CREATION_ANYONE: 'false', GRIST_PERSONAL_ORGS: 'true'}).personalOrgs, true);
  assert.is(orgSettingsFromEnv({GRIST_PERSONAL_ORGS: 'false'}).personalOrgs, false);
  assert.is(orgSettingsFromEnv({GRIST_PERSONAL_ORGS: 'false'}).orgCreationAnyone, true);
});

test('the admin: GRIST_ADMIN_EMAIL, else GRIST_DEFAULT_EMAIL, else GRIST_SUPPORT_EMAIL; empty falls through', () => {
  const all = {GRIST_ADMIN_EMAIL: 'A@x.com', GRIST_DEFAULT_EMAIL: 'd@x.com', GRIST_SUPPORT_EMAIL: 's@x.com'};
  assert.is(orgSettingsFromEnv(all).adminEmail, 'a@x.com');
  assert.is(orgSettingsFromEnv({...all, GRIST_ADMIN_EMAIL: ''}).adminEmail, 'd@x.com');
  assert.is(orgSettingsFromEnv({GRIST_SUPPORT_EMAIL: 'S@x.com'}).adminEmail, 's@x.com');
  // gristlite's own default user (D141) is not the admin.
  assert.is(orgSettingsFromEnv({GRISTLITE_DEFAULT_EMAIL: 'me@x.com'}).adminEmail, 'support@getgrist.com');
});

test('Session: with personal orgs off, forUser makes none and personalOrg() is 404', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gl-orgsettings-'));
  const engine = await Engine.open({dataDir: dir, env: {GRIST_PERSONAL_ORGS: 'false'}});
  try {
    const ada = await engine.forUser('ada@example.com', 'Ada');
    assert.is(await engine.store.getPersonalOrg(ada.principal.user.id), null);
    // One made before the setting was turned off is not handed out either.
    const old = await engine.store.createUser({email: 'old@example.com', name: 'Old', personalOrg: true});
    assert.ok(await engine.store.getPersonalOrg(old.id));
    const oldSession = await engine.forUser('old@example.com', 'Old');
    for (const s of [ada, oldSession]) {
      try {
        await s.personalWorkspace();
        assert.unreachable('personalWorkspace() answered');
      } catch (e) {
        assert.instance(e, ApiError);
        assert.equal([(e as ApiError).status, (e as Error).message], [404, 'Personal orgs are disabled']);
      }
    }
  } finally {
    await engine.close();
    rmSync(dir, {recursive: true, force: true});
  }
});

test('Engine options override the environment', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gl-orgsettings-'));
  const orgs = {orgCreationAnyone: true, personalOrgs: false, adminEmail: 'a@x.com'};
  const engine = await Engine.open({dataDir: dir, env: {GRIST_PERSONAL_ORGS: 'true'}, orgs});
  try {
    const ada = await engine.forUser('ada@example.com', 'Ada');
    assert.is(await engine.store.getPersonalOrg(ada.principal.user.id), null);
  } finally {
    await engine.close();
    rmSync(dir, {recursive: true, force: true});
  }
});

test.run();
