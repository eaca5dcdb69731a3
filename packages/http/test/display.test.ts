// GET /records?display=true (issue 40 §4, D88) on every read path: built whole and streamed (both
// sides of GRISTLITE_STREAM_MIN_CELLS), without rules and under a row rule and a row-dependent
// column rule (records built in JS from a snapshot). Each answer is compared with the texts worked
// out here from the data, so a path that drops `display`, shows a hidden row or names a reference
// by a stale value fails.
import {mkdtempSync, rmSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {Engine} from '@gristlite/core/internal';
import {createApiHandler} from '../src/index.js';
import {readAnswer} from './helpers.js';

const ROWS = 300;
const KIWI = 'kiwi@example.com';
const ownerOf = (i: number) => (i % 4 === 1 ? KIWI : 'ada@example.com');
const nameOf = (p: number) => `Person ${p}`;

async function world(env: Record<string, string>) {
  const dir = mkdtempSync(join(tmpdir(), 'gl-display-'));
  const engine = await Engine.open({dataDir: dir, resumeWebhooks: false, env});
  const handle = createApiHandler(engine, {
    env,
    onError: (e) => {
      throw e;
    },
  });
  const keys: Record<string, string> = {};
  for (const name of ['ada', 'kiwi']) {
    const s = await engine.forUser(`${name}@example.com`, name);
    keys[name] = await engine.home.setApiKey(s.principal.user.id);
  }
  const adaS = await engine.forUser('ada@example.com');
  const docId = await adaS.createDoc((await adaS.personalWorkspace()).id, {name: 'Display'});
  await adaS.updateDocAccess(docId, {users: {[KIWI]: 'editors'}});
  const ada = await adaS.doc(docId);
  await ada.addTables([
    {id: 'People', columns: [{id: 'Name', fields: {type: 'Text'}}]},
    {
      id: 'S',
      columns: [
        {id: 'Owner', fields: {type: 'Text'}},
        {id: 'Who', fields: {type: 'Ref:People'}},
        {id: 'Price', fields: {type: 'Numeric', widgetOptions: '{"numMode": "currency", "decimals": 2}'}},
      ],
    },
  ]);
  await ada.addRecords(
    'People',
    Array.from({length: 10}, (_, i) => ({Name: nameOf(i + 1)})),
  );
  const nameCol = (await ada.listColumns('People')).find((c) => c.id === 'Name')!.fields.colRef;
  await ada.applyUserActions([['ModifyColumn', 'S', 'Who', {visibleCol: nameCol}]]);
  await ada.addRecords(
    'S',
    Array.from({length: ROWS}, (_, k) => ({Owner: ownerOf(k + 1), Who: (k % 10) + 1, Price: k + 0.5})),
  );
  await ada.applyUserActions([
    ['AddRecord', '_grist_ACLResources', -1, {tableId: 'S', colIds: '*'}],
    ['AddRecord', '_grist_ACLResources', -2, {tableId: 'S', colIds: 'Price'}],
    [
      'AddRecord',
      '_grist_ACLRules',
      null,
      {resource: -2, aclFormula: 'user.Access != OWNER and rec.id % 3 == 0', permissionsText: '-R'},
    ],
    [
      'AddRecord',
      '_grist_ACLRules',
      null,
      {resource: -1, aclFormula: 'user.Access != OWNER and rec.Owner != user.Email', permissionsText: '-R'},
    ],
  ]);
  const get = async (who: 'ada' | 'kiwi', url: string) => {
    const res = await handle({method: 'GET', url, headers: {authorization: `Bearer ${keys[who]}`}});
    const {json, streamed} = await readAnswer(res.body);
    assert.is(res.status, 200, JSON.stringify(json));
    return {records: (json as {records: any[]}).records, streamed};
  };
  return {
    ada,
    docId,
    get,
    close: async () => {
      await engine.close();
      rmSync(dir, {recursive: true, force: true});
    },
  };
}

/** What `who` must read with display=true, worked out from the data. */
function expected(who: 'ada' | 'kiwi', renamed: boolean) {
  const out = [];
  for (let i = 1; i <= ROWS; i++) {
    if (who === 'kiwi' && ownerOf(i) !== KIWI) continue;
    const who_ = ((i - 1) % 10) + 1;
    const censored = who === 'kiwi' && i % 3 === 0;
    const price = i - 1 + 0.5;
    const name = renamed && who_ === 1 ? 'Renamed' : nameOf(who_);
    out.push({
      id: i,
      fields: {Owner: ownerOf(i), Who: who_, Price: censored ? ['C'] : price},
      display: {Who: name, Price: censored ? 'CENSORED' : `$${price.toFixed(2)}`},
    });
  }
  return out;
}

for (const [label, env] of [
  ['built whole', {}],
  ['streamed', {GRISTLITE_STREAM_MIN_CELLS: '100'}],
] as const) {
  test(`display=true, ${label}: every record's texts, for the owner and under rules`, async () => {
    const w = await world(env);
    try {
      const url = `/api/docs/${w.docId}/tables/S/records?display=true`;
      for (const who of ['ada', 'kiwi'] as const) {
        const {records, streamed} = await w.get(who, url);
        assert.is(streamed, label === 'streamed', 'the path under test');
        assert.equal(records, expected(who, false), who);
      }
      // A reference's text follows a rename of the row it points to (no stale helper value).
      await w.ada.updateRecords('People', [{id: 1, fields: {Name: 'Renamed'}}]);
      assert.equal((await w.get('kiwi', url)).records, expected('kiwi', true));
      // Sorted and paged reads carry it too.
      const page = await w.get('ada', `/api/docs/${w.docId}/tables/S/records?display=true&sort=-id&limit=5`);
      assert.equal(page.records, expected('ada', true).reverse().slice(0, 5));
    } finally {
      await w.close();
    }
  });
}

test.run();
