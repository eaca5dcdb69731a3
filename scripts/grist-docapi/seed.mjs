#!/usr/bin/env node
// Seeds a gristlite data directory with the part of Grist's test seed (grist-core
// test/gen-server/seed.ts) that Grist's REST tests (test/server/lib/docapi) rely on, so that they
// can run against `gristlite serve` (docs/grist-docapi.md):
//   node scripts/grist-docapi/seed.mjs --data DIR --fixtures DIR
// --fixtures holds the documents the tests' own harness copies (sampledocid_13.grist,
// sampledocid_6.grist, sampledocid_7.grist). Users get Grist's test keys (`api_key_for_<name>`).
import {copyFileSync, existsSync, mkdirSync} from 'node:fs';
import {join} from 'node:path';
import {parseArgs} from 'node:util';
import {Engine, SqliteHomeStore} from '../../packages/core/dist/src/internal.js';

const {values} = parseArgs({options: {data: {type: 'string'}, fixtures: {type: 'string'}}});
if (!values.data || !values.fixtures) {
  console.error('usage: seed.mjs --data DIR --fixtures DIR');
  process.exit(2);
}

// Grist's seed makes its users in this order, before the anonymous and everyone users: Chimpy is
// user 1, and the tests name his personal org `docs-1`. So the users are made on the bare home
// store, before the engine (which adds those two) opens it.
const NAMES = ['Chimpy', 'Kiwi', 'Charon', 'Ham', 'Support'];
mkdirSync(values.data, {recursive: true, mode: 0o700});
const bare = new SqliteHomeStore(join(values.data, 'home.sqlite3'));
try {
  for (const name of NAMES) {
    const user = await bare.createUser({email: `${name.toLowerCase()}@getgrist.com`, name, personalOrg: true});
    if (name === 'Chimpy' && user.id !== 1) throw new Error(`${values.data} was not empty: Chimpy is user ${user.id}`);
  }
} finally {
  await bare.close();
}

const engine = await Engine.open({dataDir: values.data, env: {}});
const {store, home} = engine;
try {
  const users = {};
  for (const name of NAMES) {
    const user = await store.getUserByEmail(`${name.toLowerCase()}@getgrist.com`);
    await home.setApiKey(user.id, `api_key_for_${name.toLowerCase()}`);
    users[name] = user;
  }
  const {Chimpy, Kiwi, Charon} = users;

  /** The org's workspaces named as in Grist's seed: the first one created with the org is renamed. */
  async function workspaces(orgId, names) {
    const [first] = await store.listWorkspaces(orgId);
    const out = {};
    for (const [i, name] of names.entries()) {
      if (i === 0) {
        await store.updateWorkspace(first.id, {name});
        out[name] = first.id;
      } else {
        out[name] = (await store.createWorkspace({orgId, name, ownerUserId: Chimpy.id})).id;
      }
    }
    return out;
  }
  /** A fixture document under its Grist test id. */
  async function doc(id, name, workspaceId) {
    const file = join(values.fixtures, `${id}.grist`);
    if (!existsSync(file)) throw new Error(`missing fixture ${file}`);
    copyFileSync(file, engine.docPath(id));
    await store.createDoc({id, workspaceId, name, urlId: null, ownerUserId: Chimpy.id});
  }

  // Chimpyland: Chimpy's personal org (Private, Public), Charon a viewer.
  const chimpyland = await store.getPersonalOrg(Chimpy.id);
  await store.updateOrg(chimpyland.id, {name: 'Chimpyland'});
  const cws = await workspaces(chimpyland.id, ['Private', 'Public']);
  await doc('sampledocid_13', 'Timesheets', cws.Private);
  await store.updateAcl('org', String(chimpyland.id), [{userId: Charon.id, role: 'viewers'}]);

  // Kiwiland and Charonland: personal orgs; Kiwiland has no workspace in Grist's seed.
  const kiwiland = await store.getPersonalOrg(Kiwi.id);
  await store.updateOrg(kiwiland.id, {name: 'Kiwiland'});
  for (const ws of await store.listWorkspaces(kiwiland.id)) await store.deleteWorkspace(ws.id);
  const charonland = await store.getPersonalOrg(Charon.id);
  await store.updateOrg(charonland.id, {name: 'Charonland'});

  // NASA: Chimpy an owner.
  const nasa = await store.createOrg({name: 'NASA', domain: 'nasa', ownerUserId: Chimpy.id, personal: false});
  await workspaces(nasa.id, ['Horizon', 'Rovers']);

  // Primately: nobody owns it; Chimpy a guest who views the Fruit workspace, Kiwi a viewer.
  const pr = await store.createOrg({name: 'Primately', domain: 'pr', ownerUserId: Chimpy.id, personal: false});
  const pws = await workspaces(pr.id, ['Fruit', 'Trees']);
  await doc('sampledocid_6', 'Bananas', pws.Fruit);
  await doc('sampledocid_7', 'Apples', pws.Fruit);
  for (const id of ['sampledocid_6', 'sampledocid_7'])
    await store.updateAcl('doc', id, [{userId: Chimpy.id, role: null}]);
  for (const wid of Object.values(pws)) await store.updateAcl('ws', String(wid), [{userId: Chimpy.id, role: null}]);
  await store.updateAcl('ws', String(pws.Fruit), [{userId: Chimpy.id, role: 'viewers'}]);
  await store.updateAcl('org', String(pr.id), [
    {userId: Chimpy.id, role: 'guests'},
    {userId: Kiwi.id, role: 'viewers'},
  ]);

  // Fish: Chimpy an owner, Kiwi an editor, Charon a viewer.
  const fish = await store.createOrg({name: 'Fish', domain: 'fish', ownerUserId: Chimpy.id, personal: false});
  await workspaces(fish.id, ['Big', 'Small']);
  await store.updateAcl('org', String(fish.id), [
    {userId: Kiwi.id, role: 'editors'},
    {userId: Charon.id, role: 'viewers'},
  ]);
  console.log(`seeded ${values.data}`);
} finally {
  await engine.close();
}
