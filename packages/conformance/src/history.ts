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

  s.run();
}
