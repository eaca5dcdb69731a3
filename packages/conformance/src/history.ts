/**
 * The action history through every adapter (issue 42 §1, D120): each write extends `/states`;
 * `/compare/{doc2}?detail=1` and `/compare?left=&right=` answer Grist's ActionSummary as Grist's
 * own tests expect (grist-core test/server/lib/docapi/DocApiDocuments.ts); bad refs and
 * parameters are 400; comparisons need access to the whole document (403 `insufficient access`).
 */
import * as assert from 'uvu/assert';
import {tablePath} from './docdata.js';
import {areaSuite, isError, ok, useWorld, type Target} from './world.js';

const empty = {tableRenames: [], tableDeltas: {}};

export function historySuite(target: Target): void {
  const s = areaSuite(target, 'history');
  const world = useWorld(s, target);

  s('each write extends the states; compare/{doc2}?detail=1 gives the changes of each side', async () => {
    const {api, chimpy} = world();
    const ws = await world().homeWs(chimpy);
    const d1 = await world().newDoc(chimpy, ws, 'history1');
    const d2 = await world().newDoc(chimpy, ws, 'history2');
    const states = async (d: string) => ok(await api.get(`/api/docs/${d}/states`, chimpy.as)).body.states;
    const cmp = async (q = '') => ok(await api.get(`/api/docs/${d1}/compare/${d2}${q}`, chimpy.as)).body;
    const add = (d: string, A: unknown) =>
      api.post(`${tablePath(d)}/records`, {records: [{fields: {A}}]}, chimpy.as).then(ok);
    await add(d2, 0);
    const s2 = await states(d2);
    assert.equal(
      s2.map((x: {n: number}) => x.n),
      [2, 1],
      'the first write comes after the empty first action, as in Grist',
    );
    ok(await api.post(`/api/docs/${d1}/replace`, {sourceDocId: d2}, chimpy.as));
    let comp = await cmp();
    assert.equal([comp.summary, comp.left, comp.details], ['same', s2[0], undefined]);
    assert.equal((await cmp('?detail=1')).details, {leftChanges: empty, rightChanges: empty});
    await add(d1, 1);
    comp = await cmp('?detail=1');
    assert.equal([comp.summary, comp.left.n, comp.right.n], ['left', 3, 2]);
    const addA1 = {
      tableRenames: [],
      tableDeltas: {
        Table1: {
          updateRows: [],
          removeRows: [],
          addRows: [2],
          columnDeltas: {A: {2: [null, [1]]}, manualSort: {2: [null, [2]]}},
          columnRenames: [],
        },
      },
    };
    assert.equal(comp.details, {leftChanges: addA1, rightChanges: empty});
    await add(d2, 1);
    comp = await cmp('?detail=1');
    assert.equal([comp.summary, comp.parent.n], ['both', 2]);
    assert.equal(comp.details, {leftChanges: addA1, rightChanges: addA1});
    // maxRows bounds the cells kept per bulk change; null keeps them all.
    ok(await api.post(`/api/docs/${d1}/replace`, {sourceDocId: d2}, chimpy.as));
    const many = Array.from({length: 98}, (_, i) => ({fields: {A: i + 2}}));
    ok(await api.post(`${tablePath(d2)}/records`, {records: many}, chimpy.as));
    comp = await cmp('?detail=1');
    const cut = comp.details.rightChanges.tableDeltas.Table1;
    assert.is(cut.mayBeIncomplete, true);
    assert.equal(Object.keys(cut.columnDeltas.A).map(Number), [3, 4, 5, 6, 7, 8, 9, 10, 11, 100]);
    for (const q of ['&maxRows=100', '&maxRows=null']) {
      const full = (await cmp(`?detail=1${q}`)).details.rightChanges.tableDeltas.Table1;
      assert.is(Object.keys(full.columnDeltas.A).length, 98, q);
      assert.is(full.mayBeIncomplete, undefined, q);
    }
    isError(
      await api.get(`/api/docs/${d1}/compare/${d2}?detail=1&maxRows=0`, chimpy.as),
      400,
      'maxRows parameter is invalid: 0',
    );
  });

  s('compare?left=&right= within a document: HEAD, hashes, ~ and ^; bad refs are 400', async () => {
    const {api, chimpy} = world();
    const d = await world().newDoc(chimpy, await world().homeWs(chimpy), 'versions');
    const path = `/api/docs/${d}/compare`;
    ok(await api.post(`${tablePath(d)}/records`, {records: [{fields: {A: 'a1', B: 'b1'}}]}, chimpy.as));
    ok(await api.post(`${tablePath(d)}/records`, {records: [{fields: {A: 'a2', B: 'b2'}}]}, chimpy.as));
    ok(await api.patch(`${tablePath(d)}/records`, {records: [{id: 1, fields: {A: 'A1'}}]}, chimpy.as));
    const comp = ok(await api.get(`${path}?left=HEAD~&right=HEAD`, chimpy.as)).body;
    assert.equal([comp.summary, comp.left.n, comp.right.n], ['right', 3, 4]);
    assert.equal(comp.parent, comp.left);
    assert.equal(comp.details.rightChanges, {
      tableRenames: [],
      tableDeltas: {
        Table1: {
          updateRows: [1],
          removeRows: [],
          addRows: [],
          columnDeltas: {A: {1: [['a1'], ['A1']]}},
          columnRenames: [],
        },
      },
    });
    const byHash = ok(await api.get(`${path}?left=${comp.left.h}&right=${comp.right.h}`, chimpy.as)).body;
    assert.equal(byHash, comp);
    const same = ok(await api.get(path, chimpy.as)).body;
    assert.equal([same.summary, same.details.rightChanges], ['same', empty]);
    const two = ok(await api.get(`${path}?left=HEAD^^`, chimpy.as)).body;
    assert.equal(Object.keys(two.details.rightChanges.tableDeltas.Table1.columnDeltas).sort(), [
      'A',
      'B',
      'manualSort',
    ]);
    isError(await api.get(`${path}?left=0123abcd`, chimpy.as), 400, 'Cannot read hash');
    isError(await api.get(`${path}?left=HEAD~9`, chimpy.as), 400, 'Cannot read hash');
    isError(await api.get(`${path}?left=HEAD^2`, chimpy.as), 400, 'cannot parse hash');
    isError(
      await api.get(`${path}?left=HEAD&right=HEAD~`, chimpy.as),
      400,
      'Comparisons currently require left to be an ancestor of right',
    );
    isError(await api.get(`${path}?maxRows=-1`, chimpy.as), 400, 'maxRows parameter is invalid: -1');
    isError(
      await api.get(`${path}?maxRows=x`, chimpy.as),
      400,
      'maxRows parameter cannot be understood as an integer: x',
    );
  });

  s('comparisons read the whole document: a rule hiding anything refuses them (403)', async () => {
    const {api, chimpy, kiwi} = world();
    const d = await world().newDoc(chimpy, await world().homeWs(chimpy), 'hidden');
    ok(await api.post(`${tablePath(d)}/records`, {records: [{fields: {A: 'secret'}}]}, chimpy.as));
    await world().share(chimpy, `/api/docs/${d}`, {[kiwi.email]: 'viewers'});
    // States hold no user content: viewers see them, as in Grist.
    assert.ok(ok(await api.get(`/api/docs/${d}/states`, kiwi.as)).body.states.length >= 2);
    ok(await api.get(`/api/docs/${d}/compare?left=HEAD~`, kiwi.as));
    await world().addTableRule(chimpy, d, 'Table1', 'user.Access != OWNER');
    isError(await api.get(`/api/docs/${d}/compare?left=HEAD~`, kiwi.as), 403, 'insufficient access');
    isError(await api.get(`/api/docs/${d}/compare/${d}?detail=1`, kiwi.as), 403, 'insufficient access');
    ok(await api.get(`/api/docs/${d}/compare?left=HEAD~`, chimpy.as));
  });

  s('table and record history: who, when, each cell before and after, newest first, a page at a time', async () => {
    const {api, chimpy, kiwi} = world();
    const d = await world().newDoc(chimpy, await world().homeWs(chimpy), 'changes');
    const t = tablePath(d);
    ok(await api.post(`${t}/records`, {records: [{fields: {A: 'a', B: 1}}, {fields: {A: 'b', B: 2}}]}, chimpy.as));
    await world().share(chimpy, `/api/docs/${d}`, {[kiwi.email]: 'editors'});
    ok(await api.patch(`${t}/records`, {records: [{id: 1, fields: {A: 'a2'}}]}, kiwi.as));
    ok(await api.post(`/api/docs/${d}/apply`, [['RenameColumn', 'Table1', 'A', 'Name']], chimpy.as));
    ok(await api.post(`/api/docs/${d}/apply`, [['RemoveRecord', 'Table1', 2]], chimpy.as));
    const all = ok(await api.get(`${t}/history`, chimpy.as)).body;
    assert.is(all.next, null);
    assert.equal(
      all.changes.map((c: any) => [c.rowId, c.type, c.user]),
      [
        [2, 'remove', chimpy.email],
        [1, 'update', kiwi.email],
        [1, 'add', chimpy.email],
        [2, 'add', chimpy.email],
      ],
    );
    // Columns are named as they are now (A was renamed Name); helper columns are left out.
    assert.equal(all.changes[1].cells, {Name: {before: 'a', after: 'a2'}});
    // A removed row's cells that held their column's default are not in the undo Grist records
    // (its BulkRemoveRecord leaves them out; D120), so C (empty) is not listed.
    assert.equal(all.changes[0].cells, {Name: {before: 'b'}, B: {before: 2}});
    assert.equal(all.changes[2].cells, {Name: {after: 'a'}, B: {after: 1}});
    assert.ok(all.changes.every((c: any) => !Number.isNaN(Date.parse(c.time)) && /^[0-9a-f]{64}$/.test(c.actionHash)));
    const states = ok(await api.get(`/api/docs/${d}/states`, chimpy.as)).body.states;
    assert.is(all.changes[0].actionNum, states[0].n);
    // One record.
    const one = ok(await api.get(`${t}/records/1/history`, chimpy.as)).body.changes;
    assert.equal(
      one.map((c: any) => c.type),
      ['update', 'add'],
    );
    // Pages: the cursor of one leads to the next, and the pages add up to the whole.
    const seen: unknown[] = [];
    let url = `${t}/history?limit=1`;
    for (let i = 0; i < 10; i++) {
      const page = ok(await api.get(url, chimpy.as)).body;
      seen.push(...page.changes);
      if (!page.next) break;
      url = `${t}/history?limit=1&cursor=${page.next}`;
    }
    assert.equal(seen, all.changes);
    // Bad input: 400, an unknown table 404.
    isError(
      await api.get(`${t}/history?cursor=nope`, chimpy.as),
      400,
      'Invalid cursor: follow the Link of the previous page with the same query',
    );
    const first = ok(await api.get(`${t}/history?limit=1`, chimpy.as)).body.next;
    isError(
      await api.get(`${t}/records/1/history?cursor=${first}`, chimpy.as),
      400,
      'Invalid cursor: follow the Link of the previous page with the same query',
    );
    isError(await api.get(`${t}/history?limit=0`, chimpy.as), 400, 'limit must be an integer from 1 to 1000');
    isError(await api.get(`${t}/history?limit=5000`, chimpy.as), 400, 'limit must be an integer from 1 to 1000');
    isError(await api.get(`${t}/history?limit=x`, chimpy.as), 400, 'limit must be a positive integer, got "x"');
    isError(await api.get(`${t}/records/0/history`, chimpy.as), 400, 'Invalid row id "0"');
    isError(await api.get(`/api/docs/${d}/tables/Nope/history`, chimpy.as), 404, 'Table not found "Nope"');
  });

  s('history under access rules: a hidden table, a hidden column, a row rule, a censored cell', async () => {
    const {api, chimpy, kiwi} = world();
    const d = await world().newDoc(chimpy, await world().homeWs(chimpy), 'guarded');
    const t = tablePath(d);
    ok(
      await api.post(
        `/api/docs/${d}/apply`,
        [
          ['AddTable', 'Secret', [{id: 'S', type: 'Text'}]],
          ['AddRecord', 'Secret', null, {S: 'hush'}],
          ['ModifyColumn', 'Table1', 'A', {type: 'Text', isFormula: false}],
          ['ModifyColumn', 'Table1', 'B', {type: 'Text', isFormula: false}],
          ['ModifyColumn', 'Table1', 'C', {type: 'Text', isFormula: false}],
        ],
        chimpy.as,
      ),
    );
    ok(
      await api.post(
        `${t}/records`,
        {
          records: [
            {fields: {A: 'public', B: 'b1', C: 'c1'}},
            {fields: {A: 'private', B: 'b2', C: 'c2'}},
            {fields: {A: 'public', B: 'b3', C: 'shh'}},
          ],
        },
        chimpy.as,
      ),
    );
    ok(await api.patch(`${t}/records`, {records: [{id: 3, fields: {C: 'shh2'}}]}, chimpy.as));
    await world().share(chimpy, `/api/docs/${d}`, {[kiwi.email]: 'viewers'});
    ok(
      await api.post(
        `/api/docs/${d}/apply`,
        [
          ['AddRecord', '_grist_ACLResources', -1, {tableId: 'Table1', colIds: '*'}],
          ['AddRecord', '_grist_ACLResources', -2, {tableId: 'Table1', colIds: 'B'}],
          ['AddRecord', '_grist_ACLResources', -3, {tableId: 'Table1', colIds: 'C'}],
          ['AddRecord', '_grist_ACLResources', -4, {tableId: 'Secret', colIds: '*'}],
          [
            'AddRecord',
            '_grist_ACLRules',
            null,
            {resource: -2, aclFormula: 'user.Access != OWNER', permissionsText: '-R'},
          ],
          [
            'AddRecord',
            '_grist_ACLRules',
            null,
            {resource: -3, aclFormula: 'user.Access != OWNER and rec.C != "c1"', permissionsText: '-R'},
          ],
          [
            'AddRecord',
            '_grist_ACLRules',
            null,
            {resource: -1, aclFormula: 'user.Access != OWNER and rec.A == "private"', permissionsText: '-R'},
          ],
          [
            'AddRecord',
            '_grist_ACLRules',
            null,
            {resource: -4, aclFormula: 'user.Access != OWNER', permissionsText: '-R'},
          ],
        ],
        chimpy.as,
      ),
    );
    const mine = ok(await api.get(`${t}/history`, chimpy.as)).body.changes;
    assert.equal(
      mine.map((c: any) => [c.rowId, c.type]),
      [
        [3, 'update'],
        [1, 'add'],
        [2, 'add'],
        [3, 'add'],
      ],
      'the owner sees everything',
    );
    const theirs = ok(await api.get(`${t}/history`, kiwi.as)).body.changes;
    // Row 2 (private) never appears; column B never appears; C is censored where the rule hides it.
    assert.equal(
      theirs.map((c: any) => [c.rowId, c.type]),
      [
        [3, 'update'],
        [1, 'add'],
        [3, 'add'],
      ],
    );
    assert.equal(theirs[0].cells, {C: {before: ['C'], after: ['C']}});
    assert.equal(theirs[1].cells, {A: {after: 'public'}, C: {after: 'c1'}});
    assert.equal(theirs[2].cells, {A: {after: 'public'}, C: {after: ['C']}});
    assert.equal(ok(await api.get(`${t}/records/2/history`, kiwi.as)).body, {changes: [], next: null});
    isError(await api.get(`/api/docs/${d}/tables/Secret/history`, kiwi.as), 404, 'Table not found "Secret"');
    assert.is(ok(await api.get(`/api/docs/${d}/tables/Secret/history`, chimpy.as)).body.changes.length, 1);
  });

  s.run();
}
