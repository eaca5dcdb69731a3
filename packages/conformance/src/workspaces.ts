/** Workspaces: get, rename, delete, soft delete, and who sees what in listings (SPEC §3.8, §4). */
import {existsSync} from 'node:fs';
import * as assert from 'uvu/assert';
import {areaSuite, ISO_DATE, isError, keys, ok, useWorld, type Target} from './world.js';

export function workspacesSuite(target: Target): void {
  const s = areaSuite(target, 'workspaces');
  const world = useWorld(s, target);
  let org = 0;
  let reports = 0;
  let q1 = '';

  s('GET /api/workspaces/{wid} describes the workspace, its docs and its org', async () => {
    const {api, chimpy} = world();
    org = await world().newOrg(chimpy, 'Testy', 'testy');
    reports = await world().newWorkspace(chimpy, org, 'Reports');
    q1 = await world().newDoc(chimpy, reports, 'Q1');
    const q2 = await world().newDoc(chimpy, reports, 'Q2');
    const ws = ok(await api.get(`/api/workspaces/${reports}`, chimpy.as)).body;
    assert.equal(keys(ws), ['access', 'createdAt', 'docs', 'id', 'isSupportWorkspace', 'name', 'org', 'updatedAt']);
    assert.equal([ws.id, ws.name, ws.access, ws.isSupportWorkspace], [reports, 'Reports', 'owners', false]);
    assert.match(ws.createdAt, ISO_DATE);
    assert.equal(
      ws.docs.map((d: any) => d.id),
      [q1, q2],
      'docs in creation order',
    );
    assert.equal(keys(ws.org), ['createdAt', 'domain', 'host', 'id', 'name', 'owner', 'updatedAt']);
    assert.equal(
      [ws.org.id, ws.org.name, ws.org.domain, ws.org.host, ws.org.owner],
      [org, 'Testy', 'testy', null, null],
    );
    // A personal workspace names its owner on the org.
    const home = ok(await api.get(`/api/workspaces/${await world().homeWs(chimpy)}`, chimpy.as)).body;
    assert.equal([home.org.domain, home.org.owner.id, home.org.owner.name], [`docs-${chimpy.id}`, chimpy.id, 'Chimpy']);
  });

  s('GET /api/workspaces/{wid}: 400 for a non-integer id, 404 unknown, 403 without access', async () => {
    const {api, chimpy, kiwi} = world();
    isError(
      await api.get('/api/workspaces/abc', chimpy.as),
      400,
      'wid parameter cannot be understood as an integer: abc',
    );
    isError(await api.get('/api/workspaces/99999', chimpy.as), 404, 'workspace not found');
    isError(await api.get(`/api/workspaces/${reports}`, kiwi.as), 403, 'access denied');
    isError(await api.get(`/api/workspaces/${reports}`), 403, 'access denied');
  });

  s('PATCH /api/workspaces/{wid} renames; unknown keys 400; non-editors 403; unknown 404', async () => {
    const {api, chimpy, kiwi, charon} = world();
    const res = ok(await api.patch(`/api/workspaces/${reports}`, {name: 'Reports 2'}, chimpy.as));
    assert.is(res.body, reports);
    assert.is(ok(await api.get(`/api/workspaces/${reports}`, chimpy.as)).body.name, 'Reports 2');
    isError(await api.patch(`/api/workspaces/${reports}`, {x: 1}, chimpy.as), 400, 'unrecognized property x');
    isError(await api.patch(`/api/workspaces/${reports}`, {name: 'K'}, kiwi.as), 403, 'access denied');
    isError(await api.patch('/api/workspaces/99999', {name: 'K'}, chimpy.as), 404, 'workspace not found');
    // Org viewers and editors may not rename: owners only (decision D1, recorded from Grist 1.7.17).
    await world().share(chimpy, `/api/orgs/${org}`, {[charon.email]: 'viewers'});
    isError(await api.patch(`/api/workspaces/${reports}`, {name: 'C'}, charon.as), 403, 'access denied');
    await world().share(chimpy, `/api/orgs/${org}`, {[charon.email]: 'editors'});
    isError(await api.patch(`/api/workspaces/${reports}`, {name: 'C'}, charon.as), 403, 'access denied');
    await world().share(chimpy, `/api/orgs/${org}`, {[charon.email]: 'owners'});
    assert.is(ok(await api.patch(`/api/workspaces/${reports}`, {name: 'Reports'}, charon.as)).body, reports);
    await world().share(chimpy, `/api/orgs/${org}`, {[charon.email]: null});
  });

  s('soft delete hides a workspace; showRemoved shows only removed things; unremove restores', async () => {
    const {api, chimpy} = world();
    const trash = await world().newWorkspace(chimpy, org, 'Trash');
    const t1 = await world().newDoc(chimpy, trash, 'T1');
    const res = ok(await api.post(`/api/workspaces/${trash}/remove`, {}, chimpy.as));
    assert.is(res.body, null);
    const names = async (q = '') =>
      ok(await api.get(`/api/orgs/${org}/workspaces${q}`, chimpy.as)).body.map((w: any) => w.name);
    assert.equal(await names(), ['Home', 'Reports']);
    isError(await api.get(`/api/workspaces/${trash}`, chimpy.as), 404, 'workspace not found');
    isError(await api.get(`/api/docs/${t1}`, chimpy.as), 404, 'document not found');
    const removed = ok(await api.get(`/api/orgs/${org}/workspaces?showRemoved=1`, chimpy.as)).body;
    assert.equal(
      removed.map((w: any) => w.name),
      ['Trash'],
    );
    assert.match(removed[0].removedAt, ISO_DATE);
    assert.equal(
      removed[0].docs.map((d: any) => d.name),
      ['T1'],
    );
    const ws = ok(await api.get(`/api/workspaces/${trash}?showRemoved=1`, chimpy.as)).body;
    assert.equal([ws.name, ws.docs.length], ['Trash', 1]);
    // A live workspace with nothing removed in it has no "removed" view.
    isError(await api.get(`/api/workspaces/${reports}?showRemoved=1`, chimpy.as), 404, 'workspace not found');
    assert.is(ok(await api.post(`/api/workspaces/${trash}/unremove`, {}, chimpy.as)).body, null);
    assert.equal(await names(), ['Home', 'Reports', 'Trash']);
    assert.equal(await names('?showRemoved=1'), []);
    // A workspace soft-deleted can still be deleted for good, with its files.
    ok(await api.post(`/api/workspaces/${trash}/remove`, {}, chimpy.as));
    assert.is(ok(await api.del(`/api/workspaces/${trash}`, chimpy.as)).body, trash);
    assert.not.ok(existsSync(world().docPath(t1)));
  });

  s('POST /api/workspaces/{wid}/remove?permanent=1 deletes for good', async () => {
    const {api, chimpy} = world();
    const wid = await world().newWorkspace(chimpy, org, 'Gone');
    const doc = await world().newDoc(chimpy, wid, 'G');
    assert.is(ok(await api.post(`/api/workspaces/${wid}/remove?permanent=1`, {}, chimpy.as)).body, null);
    isError(await api.get(`/api/workspaces/${wid}?showRemoved=1`, chimpy.as), 404, 'workspace not found');
    assert.not.ok(existsSync(world().docPath(doc)));
  });

  s('DELETE /api/workspaces/{wid}: owners only; removes docs and files; 404 after', async () => {
    const {api, chimpy, kiwi, charon} = world();
    const wid = await world().newWorkspace(chimpy, org, 'Scratch');
    const doc = await world().newDoc(chimpy, wid, 'S1');
    assert.ok(existsSync(world().docPath(doc)));
    isError(await api.del(`/api/workspaces/${wid}`, kiwi.as), 403, 'access denied');
    await world().share(chimpy, `/api/workspaces/${wid}`, {[charon.email]: 'editors'});
    isError(await api.del(`/api/workspaces/${wid}`, charon.as), 403, 'access denied');
    isError(await api.post(`/api/workspaces/${wid}/remove`, {}, charon.as), 403, 'access denied');
    isError(await api.del('/api/workspaces/99999', chimpy.as), 404, 'workspace not found');
    assert.is(ok(await api.del(`/api/workspaces/${wid}`, chimpy.as)).body, wid);
    isError(await api.get(`/api/workspaces/${wid}`, chimpy.as), 404, 'workspace not found');
    isError(await api.get(`/api/docs/${doc}`, chimpy.as), 404, 'document not found');
    assert.not.ok(existsSync(world().docPath(doc)));
    // Charon was only a guest through that workspace: the org is no longer listed for them.
    const orgs = ok(await api.get('/api/orgs', charon.as)).body;
    assert.not.ok(orgs.some((o: any) => o.id === org));
  });

  s('listing: a guest of one doc sees the org, its workspace and only that doc', async () => {
    const {api, chimpy, kiwi} = world();
    const q2 = await world().newDoc(chimpy, reports, 'Private');
    await world().share(chimpy, `/api/docs/${q1}`, {[kiwi.email]: 'viewers'});
    const orgs = ok(await api.get('/api/orgs', kiwi.as)).body;
    const entry = orgs.find((o: any) => o.id === org);
    assert.ok(entry, 'the org is listed for its guest');
    // Grist names the role from permission bits: a guest holds the viewers' bits.
    assert.is(entry.access, 'viewers');
    assert.is(ok(await api.get(`/api/orgs/${org}`, kiwi.as)).body.access, 'viewers');
    const wss = ok(await api.get(`/api/orgs/${org}/workspaces`, kiwi.as)).body;
    assert.equal(
      wss.map((w: any) => w.name),
      ['Reports'],
    );
    assert.equal(
      wss[0].docs.map((d: any) => [d.id, d.access]),
      [[q1, 'viewers']],
    );
    const ws = ok(await api.get(`/api/workspaces/${reports}`, kiwi.as)).body;
    assert.equal(
      ws.docs.map((d: any) => d.id),
      [q1],
    );
    isError(await api.get(`/api/docs/${q2}`, kiwi.as), 403, 'access denied');
    // Removing the share removes the guest rights.
    await world().share(chimpy, `/api/docs/${q1}`, {[kiwi.email]: null});
    isError(await api.get(`/api/orgs/${org}`, kiwi.as), 403, 'access denied');
    isError(await api.get(`/api/workspaces/${reports}`, kiwi.as), 403, 'access denied');
    assert.not.ok(ok(await api.get('/api/orgs', kiwi.as)).body.some((o: any) => o.id === org));
  });

  s('listing: org members see the org but no workspace unless shared; viewers see everything', async () => {
    const {api, chimpy, kiwi, charon} = world();
    await world().share(chimpy, `/api/orgs/${org}`, {[kiwi.email]: 'members', [charon.email]: 'viewers'});
    assert.is(ok(await api.get(`/api/orgs/${org}`, kiwi.as)).body.access, 'viewers');
    assert.equal(ok(await api.get(`/api/orgs/${org}/workspaces`, kiwi.as)).body, []);
    isError(await api.get(`/api/workspaces/${reports}`, kiwi.as), 403, 'access denied');
    isError(await api.get(`/api/docs/${q1}`, kiwi.as), 403, 'access denied');
    const wss = ok(await api.get(`/api/orgs/${org}/workspaces`, charon.as)).body;
    assert.equal(
      wss.map((w: any) => [w.name, w.access]),
      [
        ['Home', 'viewers'],
        ['Reports', 'viewers'],
      ],
    );
    assert.ok(wss[1].docs.every((d: any) => d.access === 'viewers'));
    // A workspace shared with a member shows up for them, with its docs.
    await world().share(chimpy, `/api/workspaces/${reports}`, {[kiwi.email]: 'editors'});
    const kiwiWss = ok(await api.get(`/api/orgs/${org}/workspaces`, kiwi.as)).body;
    assert.equal(
      kiwiWss.map((w: any) => [w.name, w.access]),
      [['Reports', 'editors']],
    );
    assert.ok(kiwiWss[0].docs.length >= 2 && kiwiWss[0].docs.every((d: any) => d.access === 'editors'));
    await world().share(chimpy, `/api/orgs/${org}`, {[kiwi.email]: null, [charon.email]: null});
    // Removing a user from the org removes them from everything inside it.
    isError(await api.get(`/api/workspaces/${reports}`, kiwi.as), 403, 'access denied');
  });

  s.run();
}
