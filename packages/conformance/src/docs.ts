/** Docs (metadata): create, get, patch, move, pin, delete, soft delete (SPEC §1.1, §4.6, §5). */
import {existsSync} from 'node:fs';
import Database from 'better-sqlite3';
import * as assert from 'uvu/assert';
import {areaSuite, ISO_DATE, isError, keys, ok, useWorld, type Target} from './world.js';

export function docsSuite(target: Target): void {
  const s = areaSuite(target, 'docs');
  const world = useWorld(s, target);
  let home = 0;
  let doc = '';
  let team = 0;
  let teamWs = 0;

  s('POST /api/workspaces/{wid}/docs writes a real .grist file with Table1 (A, B, C)', async () => {
    const {api, chimpy} = world();
    home = await world().homeWs(chimpy);
    const res = ok(await api.post(`/api/workspaces/${home}/docs`, {name: 'Timesheets'}, chimpy.as));
    assert.type(res.body, 'string');
    doc = res.body;
    assert.match(doc, /^[0-9A-Za-z]{22}$/);
    const path = world().docPath(doc);
    assert.ok(path.startsWith(world().engine.dataDir), 'the file lives in the data directory');
    assert.ok(existsSync(path));
    const db = new Database(path, {readonly: true, fileMustExist: true});
    try {
      const tables = db.prepare('SELECT tableId FROM _grist_Tables ORDER BY id').all() as {tableId: string}[];
      assert.equal(
        tables.map((t) => t.tableId),
        ['Table1'],
      );
      const cols = db.prepare(`SELECT name FROM pragma_table_info('Table1')`).all() as {name: string}[];
      assert.equal(
        cols.map((c) => c.name),
        ['id', 'manualSort', 'A', 'B', 'C'],
      );
      const meta = db
        .prepare(
          `SELECT colId, type, isFormula, formula FROM _grist_Tables_column WHERE parentId = 1 ORDER BY parentPos`,
        )
        .all();
      assert.equal(meta, [
        {colId: 'manualSort', type: 'ManualSortPos', isFormula: 0, formula: ''},
        {colId: 'A', type: 'Any', isFormula: 1, formula: ''},
        {colId: 'B', type: 'Any', isFormula: 1, formula: ''},
        {colId: 'C', type: 'Any', isFormula: 1, formula: ''},
      ]);
      assert.is(
        (db.prepare('SELECT schemaVersion FROM _grist_DocInfo').get() as {schemaVersion: number}).schemaVersion,
        46,
      );
    } finally {
      db.close();
    }
  });

  s('GET /api/docs/{doc} by id and by urlId', async () => {
    const {api, chimpy} = world();
    const got = ok(await api.get(`/api/docs/${doc}`, chimpy.as)).body;
    assert.equal(keys(got), [
      'access',
      'aliases',
      'createdAt',
      'forks',
      'id',
      'isPinned',
      'name',
      'trunkId',
      'type',
      'updatedAt',
      'urlId',
      'workspace',
    ]);
    assert.equal(
      [got.id, got.name, got.access, got.isPinned, got.urlId, got.trunkId, got.type, got.forks],
      [doc, 'Timesheets', 'owners', false, doc.slice(0, 12), null, null, []],
    );
    assert.match(got.createdAt, ISO_DATE);
    // Grist's document query marks the caller's role on the workspace too (HomeDBManager.ts:4370-4374,
    // `_applyLimit` over docs, workspaces and orgs; `_normalizeQueryResults` turns it into `access`).
    assert.equal(keys(got.workspace), [
      'access',
      'createdAt',
      'id',
      'isSupportWorkspace',
      'name',
      'org',
      'owner',
      'updatedAt',
    ]);
    assert.equal(
      [got.workspace.id, got.workspace.name, got.workspace.isSupportWorkspace, got.workspace.access],
      [home, 'Home', false, 'owners'],
    );
    assert.is(got.workspace.owner.id, chimpy.id);
    assert.equal([got.workspace.org.domain, got.workspace.org.owner.id], [`docs-${chimpy.id}`, chimpy.id]);
    // Its urlIds, current and former (Grist's `aliases` join).
    const personal = got.workspace.org.id;
    assert.equal(
      got.aliases.map((a: any) => [a.orgId, a.urlId, a.docId]),
      [[personal, doc.slice(0, 12), doc]],
    );
    assert.match(got.aliases[0].createdAt, ISO_DATE);
    const byUrlId = ok(await api.get(`/api/docs/${doc.slice(0, 12)}`, chimpy.as)).body;
    assert.is(byUrlId.id, doc);
    // Case-insensitive paths find the same doc.
    assert.is(ok(await api.get(`/api/Docs/${doc}/`, chimpy.as)).body.id, doc);
  });

  s('GET /api/docs/{doc}: 404 unknown, 403 no access, 404 outside the org context', async () => {
    const {api, chimpy, kiwi} = world();
    isError(await api.get('/api/docs/nosuchdoc', chimpy.as), 404, 'document not found');
    isError(await api.get(`/api/docs/${doc}`, kiwi.as), 403, 'access denied');
    isError(await api.get(`/api/docs/${doc}`), 403, 'access denied');
    team = await world().newOrg(chimpy, 'Team', 'team');
    teamWs = await world().newWorkspace(chimpy, team, 'Work');
    isError(await api.get(`/o/team/api/docs/${doc}`, chimpy.as), 404, 'document not found');
    assert.is(ok(await api.get(`/o/docs/api/docs/${doc}`, chimpy.as)).body.id, doc);
    assert.is(ok(await api.get(`/o/docs/api/docs/${doc.slice(0, 12)}`, chimpy.as)).body.id, doc);
    const teamDoc = await world().newDoc(chimpy, teamWs, 'TeamDoc');
    assert.is(ok(await api.get(`/o/team/api/docs/${teamDoc.slice(0, 12)}`, chimpy.as)).body.id, teamDoc);
    // From the merged personal org, a team doc is reachable by id but not by urlId.
    assert.is(ok(await api.get(`/o/docs/api/docs/${teamDoc}`, chimpy.as)).body.id, teamDoc);
    isError(await api.get(`/o/docs/api/docs/${teamDoc.slice(0, 12)}`, chimpy.as), 404, 'document not found');
  });

  s('a team doc by its urlId without the site prefix: among reachable docs, own shares first (D48)', async () => {
    const {api, chimpy, kiwi} = world();
    const mine = await world().newDoc(chimpy, teamWs, 'Shared Name', {urlId: 'shared-name'});
    assert.is(ok(await api.get('/api/docs/shared-name', chimpy.as)).body.id, mine);
    ok(await api.post('/api/docs/shared-name/tables/Table1/records', {records: [{fields: {A: 1}}]}, chimpy.as));
    assert.is(ok(await api.get('/api/docs/shared-name/tables/Table1/records', chimpy.as)).body.records.length, 1);
    isError(await api.get('/api/docs/shared-name', kiwi.as), 404, 'document not found');
    // Another team site may hold the same urlId; a public share of it does not take the name over.
    const kiwiOrg = await world().newOrg(kiwi, 'KiwiTeam', 'kiwiteam');
    const kiwiWs = await world().newWorkspace(kiwi, kiwiOrg, 'K');
    const theirs = await world().newDoc(kiwi, kiwiWs, 'Same Name', {urlId: 'shared-name'});
    await world().share(kiwi, `/api/docs/${theirs}`, {'everyone@getgrist.com': 'viewers'});
    assert.is(ok(await api.get('/api/docs/shared-name', chimpy.as)).body.id, mine);
    assert.is(ok(await api.get('/api/docs/shared-name', kiwi.as)).body.id, theirs);
    assert.is(ok(await api.get('/o/kiwiteam/api/docs/shared-name', chimpy.as)).body.id, theirs);
    // Two documents shared with the caller under one urlId: Grist's "ambiguous document request".
    await world().share(kiwi, `/api/docs/${theirs}`, {[chimpy.email]: 'viewers'});
    isError(await api.get('/api/docs/shared-name', chimpy.as), 400, 'ambiguous document request');
    isError(await api.get('/api/docs/shared-name/tables/Table1/records', chimpy.as), 400, 'ambiguous document request');
    assert.is(ok(await api.get('/o/team/api/docs/shared-name', chimpy.as)).body.id, mine);
    await world().share(kiwi, `/api/docs/${theirs}`, {[chimpy.email]: null, 'everyone@getgrist.com': null});
  });

  s('POST /api/workspaces/{wid}/docs: name required, unknown keys, urlIds, access, deleted workspace', async () => {
    const {api, chimpy, kiwi, charon} = world();
    isError(await api.post(`/api/workspaces/${home}/docs`, {}, chimpy.as), 400, 'Bad request: name required');
    isError(
      await api.post(`/api/workspaces/${home}/docs`, {name: 'X', x: 1}, chimpy.as),
      400,
      'unrecognized property x',
    );
    isError(
      await api.post(`/api/workspaces/${home}/docs`, {name: 'X', urlId: 'bad id!'}, chimpy.as),
      400,
      'invalid urlId',
    );
    isError(await api.post(`/api/workspaces/${home}/docs`, {name: 'X', urlId: 'new'}, chimpy.as), 400, 'invalid urlId');
    const custom = await world().newDoc(chimpy, home, 'Custom', {urlId: 'my-sheet'});
    assert.is(ok(await api.get('/api/docs/my-sheet', chimpy.as)).body.id, custom);
    isError(
      await api.post(`/api/workspaces/${home}/docs`, {name: 'X', urlId: 'my-sheet'}, chimpy.as),
      400,
      'urlId already in use',
    );
    isError(await api.post(`/api/workspaces/${home}/docs`, {name: 'X'}, kiwi.as), 403, 'access denied');
    isError(await api.post('/api/workspaces/99999/docs', {name: 'X'}, chimpy.as), 404, 'workspace not found');
    await world().share(chimpy, `/api/workspaces/${home}`, {[charon.email]: 'viewers'});
    isError(await api.post(`/api/workspaces/${home}/docs`, {name: 'X'}, charon.as), 403, 'access denied');
    // A workspace editor may add a doc, and becomes its direct owner.
    await world().share(chimpy, `/api/workspaces/${home}`, {[charon.email]: 'editors'});
    const made = await world().newDoc(charon, home, 'By Charon');
    assert.is(ok(await api.get(`/api/docs/${made}`, charon.as)).body.access, 'owners');
    const users = ok(await api.get(`/api/docs/${made}/access`, charon.as)).body.users;
    assert.equal(users.find((u: any) => u.id === charon.id)?.access, 'owners');
    ok(await api.del(`/api/docs/${made}`, charon.as));
    await world().share(chimpy, `/api/workspaces/${home}`, {[charon.email]: null});
    const gone = await world().newWorkspace(chimpy, team, 'Gone');
    ok(await api.post(`/api/workspaces/${gone}/remove`, {}, chimpy.as));
    isError(
      await api.post(`/api/workspaces/${gone}/docs`, {name: 'X'}, chimpy.as),
      400,
      'Cannot add document to a deleted workspace',
    );
  });

  s('PATCH /api/docs/{doc}: name, urlId (with aliases), options, type, and their validation', async () => {
    const {api, chimpy} = world();
    const res = ok(await api.patch(`/api/docs/${doc}`, {name: 'Hours'}, chimpy.as));
    assert.is(res.body, doc);
    assert.is(ok(await api.get(`/api/docs/${doc}`, chimpy.as)).body.name, 'Hours');
    isError(await api.patch(`/api/docs/${doc}`, {x: 1}, chimpy.as), 400, 'unrecognized property x');
    // type: checked before anything else, exact message, no details.
    const bad = await api.patch(`/api/docs/${doc}`, {type: 'foo', x: 1}, chimpy.as);
    isError(bad, 400, "Bad Request. 'type' key authorized values : 'template', 'tutorial' or null");
    ok(await api.patch(`/api/docs/${doc}`, {type: 'template'}, chimpy.as));
    assert.is(ok(await api.get(`/api/docs/${doc}`, chimpy.as)).body.type, 'template');
    ok(await api.patch(`/api/docs/${doc}`, {type: null}, chimpy.as));
    assert.is(ok(await api.get(`/api/docs/${doc}`, chimpy.as)).body.type, null);
    // urlId
    const oldUrlId = doc.slice(0, 12);
    ok(await api.patch(`/api/docs/${doc}`, {urlId: 'hours'}, chimpy.as));
    assert.is(ok(await api.get('/api/docs/hours', chimpy.as)).body.urlId, 'hours');
    assert.is(ok(await api.get(`/api/docs/${oldUrlId}`, chimpy.as)).body.id, doc, 'old urlIds keep resolving');
    for (const urlId of ['', 'new', 'has space', 'sl/ash', 5]) {
      isError(await api.patch(`/api/docs/${doc}`, {urlId}, chimpy.as), 400, 'invalid urlId', String(urlId));
    }
    isError(await api.patch(`/api/docs/${doc}`, {urlId: 'my-sheet'}, chimpy.as), 400, 'urlId already in use');
    ok(await api.patch(`/api/docs/${doc}`, {urlId: null}, chimpy.as));
    assert.is(ok(await api.get(`/api/docs/${doc}`, chimpy.as)).body.urlId, null);
    // options merge key by key; null deletes a key; options: null wipes them.
    ok(await api.patch(`/api/docs/${doc}`, {options: {description: 'Work hours', openMode: 'view'}}, chimpy.as));
    ok(await api.patch(`/api/docs/${doc}`, {options: {openMode: null, externalId: 'e1'}}, chimpy.as));
    assert.equal(ok(await api.get(`/api/docs/${doc}`, chimpy.as)).body.options, {
      description: 'Work hours',
      externalId: 'e1',
    });
    ok(await api.patch(`/api/docs/${doc}`, {options: null}, chimpy.as));
    assert.not.ok('options' in ok(await api.get(`/api/docs/${doc}`, chimpy.as)).body);
    isError(await api.patch('/api/docs/nosuchdoc', {name: 'X'}, chimpy.as), 404, 'document not found');
  });

  s('PATCH /api/docs/{doc} needs owners: editors, viewers and strangers get 403', async () => {
    const {api, chimpy, kiwi, charon} = world();
    await world().share(chimpy, `/api/docs/${doc}`, {[kiwi.email]: 'editors', [charon.email]: 'viewers'});
    isError(await api.patch(`/api/docs/${doc}`, {name: 'K'}, kiwi.as), 403, 'access denied');
    isError(await api.patch(`/api/docs/${doc}`, {name: 'C'}, charon.as), 403, 'access denied');
    const stranger = await world().newUser('stranger@example.com', 'Stranger');
    isError(await api.patch(`/api/docs/${doc}`, {name: 'S'}, stranger.as), 403, 'access denied');
    assert.is(ok(await api.get(`/api/docs/${doc}`, kiwi.as)).body.access, 'editors');
    assert.is(ok(await api.get(`/api/docs/${doc}`, charon.as)).body.access, 'viewers');
    await world().share(chimpy, `/api/docs/${doc}`, {[kiwi.email]: null, [charon.email]: null});
  });

  s('PATCH /api/docs/{doc}/pin and /unpin: org editors only', async () => {
    const {api, chimpy, kiwi} = world();
    assert.is(ok(await api.patch(`/api/docs/${doc}/pin`, {}, chimpy.as)).body, null);
    assert.is(ok(await api.get(`/api/docs/${doc}`, chimpy.as)).body.isPinned, true);
    ok(await api.patch(`/api/docs/${doc}/pin`, {}, chimpy.as));
    isError(await api.patch(`/api/docs/${doc}/unpin`, {}, kiwi.as), 403, 'access denied');
    // A doc owner who is not an org editor cannot pin either.
    await world().share(chimpy, `/api/docs/${doc}`, {[kiwi.email]: 'owners'});
    isError(await api.patch(`/api/docs/${doc}/unpin`, {}, kiwi.as), 403, 'access denied');
    await world().share(chimpy, `/api/docs/${doc}`, {[kiwi.email]: null});
    assert.is(ok(await api.patch(`/api/docs/${doc}/unpin`, {}, chimpy.as)).body, null);
    assert.is(ok(await api.get(`/api/docs/${doc}`, chimpy.as)).body.isPinned, false);
    isError(await api.patch('/api/docs/nosuchdoc/pin', {}, chimpy.as), 404, 'document not found');
  });

  s('PATCH /api/docs/{doc}/move: within and across orgs; errors', async () => {
    const {api, chimpy, kiwi} = world();
    const d = await world().newDoc(chimpy, home, 'Mover', {urlId: 'mover'});
    const other = await world().newWorkspace(chimpy, `docs-${chimpy.id}`, 'Other');
    isError(
      await api.patch(`/api/docs/${d}/move`, {}, chimpy.as),
      400,
      'workspace parameter cannot be understood as an integer: undefined',
    );
    isError(
      await api.patch(`/api/docs/${d}/move`, {workspace: 'abc'}, chimpy.as),
      400,
      'workspace parameter cannot be understood as an integer: abc',
    );
    isError(
      await api.patch(`/api/docs/${d}/move`, {workspace: home}, chimpy.as),
      400,
      'Bad request: doc is already in destination workspace',
    );
    isError(await api.patch(`/api/docs/${d}/move`, {workspace: 99999}, chimpy.as), 404, 'workspace not found');
    isError(await api.patch('/api/docs/nosuchdoc/move', {workspace: other}, chimpy.as), 404, 'document not found');
    isError(await api.patch(`/api/docs/${d}/move`, {workspace: other}, kiwi.as), 403, 'access denied');
    // Owner of the doc but no ADD on the destination: 403.
    const kiwiHome = await world().homeWs(kiwi);
    isError(await api.patch(`/api/docs/${d}/move`, {workspace: kiwiHome}, chimpy.as), 403, 'access denied');
    assert.is(ok(await api.patch(`/api/docs/${d}/move`, {workspace: String(other)}, chimpy.as)).body, d);
    let got = ok(await api.get(`/api/docs/${d}`, chimpy.as)).body;
    assert.equal([got.workspace.id, got.urlId], [other, 'mover'], 'same org keeps the urlId');
    // Direct shares travel with the doc; inheritance follows the new workspace.
    await world().share(chimpy, `/api/docs/${d}`, {[kiwi.email]: 'viewers'});
    assert.is(ok(await api.patch(`/api/docs/${d}/move`, {workspace: teamWs}, chimpy.as)).body, d);
    assert.is(ok(await api.get(`/api/docs/${d}`, kiwi.as)).body.access, 'viewers');
    assert.ok(
      ok(await api.get('/api/orgs', kiwi.as)).body.some((o: any) => o.id === team),
      'Kiwi is now a guest of the team site',
    );
    got = ok(await api.get(`/api/docs/${d}`, chimpy.as)).body;
    assert.equal(
      [got.workspace.id, got.workspace.org.id, got.urlId],
      [teamWs, team, null],
      'across orgs drops the urlId',
    );
    isError(await api.get('/api/docs/mover', chimpy.as), 404, 'document not found');
    assert.ok(existsSync(world().docPath(d)), 'the file stays');
  });

  s('soft delete: POST /remove hides a doc, showRemoved finds it, /unremove restores', async () => {
    const {api, chimpy} = world();
    const d = await world().newDoc(chimpy, home, 'Soft');
    assert.is(ok(await api.post(`/api/docs/${d}/remove`, {}, chimpy.as)).body, null);
    isError(await api.get(`/api/docs/${d}`, chimpy.as), 404, 'document not found');
    const got = ok(await api.get(`/api/docs/${d}?showRemoved=1`, chimpy.as)).body;
    assert.match(got.removedAt, ISO_DATE);
    const listed = ok(await api.get(`/api/workspaces/${home}`, chimpy.as)).body.docs.map((x: any) => x.id);
    assert.not.ok(listed.includes(d));
    const removed = ok(await api.get(`/api/workspaces/${home}?showRemoved=1`, chimpy.as)).body.docs.map(
      (x: any) => x.id,
    );
    assert.equal(removed, [d]);
    isError(await api.get(`/api/docs/${doc}?showRemoved=1`, chimpy.as), 404, 'document not found');
    assert.ok(existsSync(world().docPath(d)), 'soft delete keeps the file');
    assert.is(ok(await api.post(`/api/docs/${d}/unremove`, {}, chimpy.as)).body, null);
    assert.not.ok('removedAt' in ok(await api.get(`/api/docs/${d}`, chimpy.as)).body);
    // A soft-deleted doc can still be deleted for good.
    ok(await api.post(`/api/docs/${d}/remove`, {}, chimpy.as));
    assert.is(ok(await api.del(`/api/docs/${d}`, chimpy.as)).body, d);
    assert.not.ok(existsSync(world().docPath(d)));
    const p = await world().newDoc(chimpy, home, 'Perm');
    assert.is(ok(await api.post(`/api/docs/${p}/remove?permanent=1`, {}, chimpy.as)).body, null);
    isError(await api.get(`/api/docs/${p}?showRemoved=1`, chimpy.as), 404, 'document not found');
    assert.not.ok(existsSync(world().docPath(p)));
  });

  s('DELETE /api/docs/{doc}: owners only; removes the file', async () => {
    const {api, chimpy, kiwi, charon} = world();
    const d = await world().newDoc(chimpy, home, 'Doomed');
    await world().share(chimpy, `/api/docs/${d}`, {[kiwi.email]: 'editors', [charon.email]: 'viewers'});
    isError(await api.del(`/api/docs/${d}`, kiwi.as), 403, 'access denied');
    isError(await api.del(`/api/docs/${d}`, charon.as), 403, 'No write access');
    const stranger = await world().newUser('nobody@example.com', 'Nobody');
    isError(await api.del(`/api/docs/${d}`, stranger.as), 403, 'No view access');
    isError(await api.del('/api/docs/nosuchdoc', chimpy.as), 404, 'document not found');
    assert.ok(existsSync(world().docPath(d)));
    const res = ok(await api.del(`/api/docs/${d}`, chimpy.as));
    assert.is(res.body, d);
    assert.not.ok(existsSync(world().docPath(d)));
    isError(await api.get(`/api/docs/${d}`, chimpy.as), 404, 'document not found');
    // Kiwi was a guest through that doc only: Chimpy's personal org is no longer visible to Kiwi.
    isError(await api.get(`/api/orgs/docs-${chimpy.id}`, kiwi.as), 403, 'access denied');
  });

  s.run();
}
