/**
 * Beyond Grist (issue 30 §2): document API keys. `POST /api/docs/{doc}/apikeys` (owners and
 * editors, never owners' access), `GET` (owners, no secrets), `DELETE .../{id}` (owners or the
 * creator). A key reaches only its document's `/api/docs/{doc}/...` routes, with the lesser of its
 * access and its creator's current role, and is 401 once revoked or expired.
 */
import * as assert from 'uvu/assert';
import {tablePath} from './docdata.js';
import {areaSuite, isError, ok, useWorld, type Target} from './world.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function apiKeysSuite(target: Target): void {
  const s = areaSuite(target, 'apikeys');
  const world = useWorld(s, target);
  let doc = '';
  let other = '';
  let t = '';
  const keys = () => `/api/docs/${doc}/apikeys`;
  const as = (key: string) => ({key});

  s('owners and editors create keys up to editors; owners list them without secrets', async () => {
    const {api, chimpy, kiwi, charon} = world();
    const ws = await world().homeWs(chimpy);
    doc = await world().newDoc(chimpy, ws, 'Keyed');
    other = await world().newDoc(chimpy, ws, 'Other');
    t = tablePath(doc);
    await world().share(chimpy, `/api/docs/${doc}`, {[kiwi.email]: 'editors', [charon.email]: 'viewers'});
    const made = ok(await api.post(keys(), {name: 'etl', access: 'editors'}, chimpy.as)).body;
    assert.equal(Object.keys(made).sort(), ['id', 'key']);
    assert.match(made.key, /^gld_[0-9a-f]{40}$/);
    const byEditor = ok(await api.post(keys(), {name: 'kiwi-script', access: 'viewers'}, kiwi.as)).body;
    isError(
      await api.post(keys(), {name: 'x', access: 'owners'}, chimpy.as),
      403,
      "A key cannot have owners' access (at most editors)",
    );
    isError(await api.post(keys(), {name: 'x', access: 'viewers'}, charon.as), 403, 'No write access');
    isError(
      await api.post(keys(), {name: '', access: 'viewers'}, chimpy.as),
      400,
      'name must be a non-empty string of at most 255 characters',
    );
    isError(
      await api.post(keys(), {name: 'x', access: 'viewers', expiresAt: 'tomorrow'}, chimpy.as),
      400,
      'expiresAt must be an ISO 8601 date and time',
    );
    isError(
      await api.post(keys(), {name: 'x', access: 'viewers', expiresAt: '2001-01-01T00:00:00Z'}, chimpy.as),
      400,
      'expiresAt must be in the future',
    );
    const listed = ok(await api.get(keys(), chimpy.as)).body.apikeys;
    assert.equal(
      listed.map((k: Record<string, unknown>) => [k.id, k.name, k.access, k.createdBy, k.expiresAt, k.lastUsedAt]),
      [
        [made.id, 'etl', 'editors', chimpy.id, null, null],
        [byEditor.id, 'kiwi-script', 'viewers', kiwi.id, null, null],
      ],
    );
    assert.equal(Object.keys(listed[0]).sort(), [
      'access',
      'createdAt',
      'createdBy',
      'expiresAt',
      'id',
      'lastUsedAt',
      'name',
    ]);
    assert.not.ok(JSON.stringify(listed).includes(made.key.slice(4)), 'no secret listed');
    isError(await api.get(keys(), kiwi.as), 403, 'No owner access');
  });

  s('a key opens its document only, with its access; it cannot manage keys', async () => {
    const {api, chimpy} = world();
    const editorKey = ok(await api.post(keys(), {name: 'rw', access: 'editors'}, chimpy.as)).body.key;
    const viewerKey = ok(await api.post(keys(), {name: 'ro', access: 'viewers'}, chimpy.as)).body.key;
    ok(await api.post(`${t}/records`, {records: [{fields: {A: 'by key'}}]}, as(editorKey)));
    assert.equal(ok(await api.get(`${t}/records`, as(viewerKey))).body.records[0].fields.A, 'by key');
    ok(await api.get(`/api/docs/${doc}`, as(viewerKey)));
    isError(await api.post(`${t}/records`, {records: [{}]}, as(viewerKey)), 403, 'No write access');
    // Another document, or anything outside /api/docs/{doc}: refused.
    isError(await api.get(`${tablePath(other)}/records`, as(editorKey)), 403, 'This API key opens another document');
    for (const path of ['/api/orgs', '/api/profile/user', `/api/workspaces/${await world().homeWs(chimpy)}`]) {
      isError(
        await api.get(path, as(editorKey)),
        403,
        "A document API key opens only its document's /api/docs/{doc}/... routes",
      );
    }
    // Nor a copy, which would make a document in the creator's workspace.
    isError(
      await api.post(
        `/api/docs/${doc}/copy`,
        {workspaceId: await world().homeWs(chimpy), documentName: 'C'},
        as(editorKey),
      ),
      403,
      "A document API key opens only its document's /api/docs/{doc}/... routes",
    );
    isError(
      await api.post(keys(), {name: 'more', access: 'viewers'}, as(editorKey)),
      403,
      'A document API key cannot manage API keys',
    );
    // Owners' routes stay closed: a key is at most an editor.
    isError(await api.get(keys(), as(editorKey)), 403, 'A document API key cannot manage API keys');
    const delta = {delta: {users: {'someone@example.com': 'viewers'}}};
    assert.is((await api.patch(`/api/docs/${doc}/access`, delta, as(editorKey))).status, 403);
    // Used: lastUsedAt is set.
    const used = ok(await api.get(keys(), chimpy.as)).body.apikeys.find((k: {name: string}) => k.name === 'rw');
    assert.type(used.lastUsedAt, 'string');
  });

  s("a key follows its creator's current access: demoted narrows it, removed stops it", async () => {
    const {api, chimpy, kiwi} = world();
    const key = ok(await api.post(keys(), {name: 'kiwi-rw', access: 'editors'}, kiwi.as)).body.key;
    ok(await api.post(`${t}/records`, {records: [{}]}, as(key)));
    await world().share(chimpy, `/api/docs/${doc}`, {[kiwi.email]: 'viewers'});
    isError(await api.post(`${t}/records`, {records: [{}]}, as(key)), 403, 'No write access');
    ok(await api.get(`${t}/records`, as(key)));
    await world().share(chimpy, `/api/docs/${doc}`, {[kiwi.email]: null});
    isError(await api.get(`${t}/records`, as(key)), 403, 'No view access');
    await world().share(chimpy, `/api/docs/${doc}`, {[kiwi.email]: 'editors'});
    ok(await api.post(`${t}/records`, {records: [{}]}, as(key)));
  });

  s('revoked (by an owner or the creator) or expired: 401 at once', async () => {
    const {api, chimpy, kiwi, charon} = world();
    const mine = ok(await api.post(keys(), {name: 'kiwi-ro', access: 'viewers'}, kiwi.as)).body;
    const theirs = ok(await api.post(keys(), {name: 'chimpy-ro', access: 'viewers'}, chimpy.as)).body;
    ok(await api.get(`${t}/records`, as(mine.key)));
    isError(await api.del(`${keys()}/${theirs.id}`, kiwi.as), 403, 'Only owners and its creator may delete an API key');
    isError(
      await api.del(`${keys()}/${theirs.id}`, charon.as),
      403,
      'Only owners and its creator may delete an API key',
    );
    ok(await api.del(`${keys()}/${mine.id}`, kiwi.as));
    isError(await api.get(`${t}/records`, as(mine.key)), 401, 'Bad request: invalid API key');
    ok(await api.del(`${keys()}/${theirs.id}`, chimpy.as));
    isError(await api.get(`${t}/records`, as(theirs.key)), 401, 'Bad request: invalid API key');
    isError(await api.del(`${keys()}/${theirs.id}`, chimpy.as), 404, 'API key not found');
    isError(await api.del(`${keys()}/abc`, chimpy.as), 400, 'Invalid API key id');
    const soon = new Date(Date.now() + 1500).toISOString();
    const brief = ok(await api.post(keys(), {name: 'brief', access: 'viewers', expiresAt: soon}, chimpy.as)).body;
    ok(await api.get(`${t}/records`, as(brief.key)));
    const deadline = Date.now() + 30_000;
    let res = await api.get(`${t}/records`, as(brief.key));
    while (res.status === 200 && Date.now() < deadline) {
      await sleep(200);
      res = await api.get(`${t}/records`, as(brief.key));
    }
    isError(res, 401, 'Bad request: invalid API key');
    assert.ok(Date.now() >= Date.parse(soon));
  });

  s.run();
}
