/**
 * Granular access rules (docs/access-rules.md) as every transport carries them: the body of a
 * denial (`details.memos`), recovery mode, attachments under a document-wide deny, and the rule
 * tables as Grist stores them. The full behaviour is tested in packages/http/test/access-rules.test.ts.
 */
import * as assert from 'uvu/assert';
import {areaSuite, isError, ok, useWorld, type Target} from './world.js';

export function accessRulesSuite(target: Target): void {
  const s = areaSuite(target, 'access-rules');
  const world = useWorld(s, target);

  // Grist's AccessCheck (GranularAccess.ts:3031-3039) always sends `details.memos`: strings in
  // 1.7.17 (ApiError.ts:36), an empty list when no rule has a memo (test/server/lib/GranularAccess.ts:904-952).
  s('a denial carries details.memos, an empty list when no rule has a memo', async () => {
    const {api, chimpy, kiwi} = world();
    const doc = await world().newDoc(chimpy, await world().homeWs(chimpy), 'Memos');
    const d = `/api/docs/${doc}`;
    await world().share(chimpy, d, {[kiwi.email]: 'editors'});
    ok(
      await api.post(
        `${d}/apply`,
        [
          ['AddRecord', 'Table1', null, {A: 'keep'}],
          ['AddTable', 'Secret', [{id: 'X'}]],
          ['AddRecord', '_grist_ACLResources', -1, {tableId: 'Table1', colIds: '*'}],
          ['AddRecord', '_grist_ACLResources', -2, {tableId: 'Secret', colIds: '*'}],
          [
            'AddRecord',
            '_grist_ACLRules',
            null,
            {resource: -1, aclFormula: 'rec.A == "keep"', permissionsText: '-D', memo: 'Keep it'},
          ],
          [
            'AddRecord',
            '_grist_ACLRules',
            null,
            {resource: -2, aclFormula: 'user.Access != OWNER', permissionsText: '-R'},
          ],
        ],
        chimpy.as,
      ),
    );
    const del = await api.post(`${d}/tables/Table1/records/delete`, [1], kiwi.as);
    assert.equal(
      [del.status, del.body],
      [403, {error: 'Blocked by row delete access rules', details: {memos: ['Keep it']}}],
    );
    const read = await api.get(`${d}/tables/Secret/records`, kiwi.as);
    assert.equal([read.status, read.body], [403, {error: 'Blocked by table read access rules', details: {memos: []}}]);
  });

  // Grist lists attachments by fetching `_grist_Attachments` (DocApi.ts:347-354), and every fetch
  // checks the table's read access first (ActiveDoc.ts:1406-1409): a document-wide deny refuses it.
  s('a document-wide deny hides attachments too: 403 with the rule memo', async () => {
    const {api, chimpy, kiwi} = world();
    const doc = await world().newDoc(chimpy, await world().homeWs(chimpy), 'Files');
    const d = `/api/docs/${doc}`;
    await world().share(chimpy, d, {[kiwi.email]: 'editors'});
    const boundary = 'b0undary';
    const body = new TextEncoder().encode(
      `--${boundary}\r\nContent-Disposition: form-data; name="upload"; filename="a.txt"\r\n` +
        `Content-Type: text/plain\r\n\r\nhello\r\n--${boundary}--\r\n`,
    );
    const headers = {'Content-Type': `multipart/form-data; boundary=${boundary}`};
    ok(await api.call('POST', `${d}/attachments`, {key: chimpy.key, body, headers}));
    ok(
      await api.post(
        `${d}/apply`,
        [
          ['AddRecord', '_grist_ACLResources', -1, {tableId: '*', colIds: '*'}],
          [
            'AddRecord',
            '_grist_ACLRules',
            null,
            {resource: -1, aclFormula: 'user.Access != OWNER', permissionsText: '-R', memo: 'Owners only'},
          ],
        ],
        chimpy.as,
      ),
    );
    const denied = {error: 'Blocked by table read access rules', details: {memos: ['Owners only']}};
    for (const path of [`${d}/attachments`, `${d}/tables/_grist_Attachments/records`]) {
      const res = await api.get(path, kiwi.as);
      assert.equal([res.status, res.body], [403, denied], path);
    }
    assert.is(ok(await api.get(`${d}/attachments`, chimpy.as)).body.records.length, 1, 'the owner still lists them');
  });

  // Grist's engine gives rules added without a position places after the others (the default
  // rule keeps null): test/server/lib/GranularAccess.ts:4300-4322. Removing a resource sets the
  // rules' `resource` to 0 (sandbox/grist/useractions.py:1258-1276), and the rule set then names
  // resource 0 (app/common/ACLRulesReader.ts:173-177).
  s('rulePos as Grist stores it; a rule of a removed resource names resource 0', async () => {
    const {api, chimpy} = world();
    const doc = await world().newDoc(chimpy, await world().homeWs(chimpy), 'RulePos');
    const d = `/api/docs/${doc}`;
    ok(
      await api.post(
        `${d}/apply`,
        [
          ['AddRecord', '_grist_ACLResources', -1, {tableId: 'Table1', colIds: 'A,B'}],
          ['AddRecord', '_grist_ACLResources', -2, {tableId: '*', colIds: '*'}],
          ['AddRecord', '_grist_ACLRules', null, {resource: -1, aclFormula: 'True', permissionsText: '+R'}],
          ['AddRecord', '_grist_ACLRules', null, {resource: -2, aclFormula: 'True', permissionsText: '-U'}],
        ],
        chimpy.as,
      ),
    );
    const rules = ok(await api.get(`${d}/tables/_grist_ACLRules/data`, chimpy.as)).body;
    assert.equal(
      [rules.id, rules.resource, rules.rulePos],
      [
        [1, 2, 3],
        [1, 2, 3],
        [null, 1, 2],
      ],
    );
    const removed = await api.post(`${d}/apply`, [['RemoveRecord', '_grist_ACLResources', 2]], chimpy.as);
    assert.equal([removed.status, removed.body], [400, {error: 'ACLRule 2 refers to an invalid ACLResource 0'}]);
    // Grist's check of a rule set a write leaves (GranularAccess.ts:645-668): a duplicate is refused.
    const dup = await api.post(
      `${d}/apply`,
      [['AddRecord', '_grist_ACLResources', null, {tableId: 'Table1', colIds: 'A,B'}]],
      chimpy.as,
    );
    assert.equal(
      [dup.status, dup.body],
      [400, {error: 'Duplicate ACLResource 4: an ACLResource with the same tableId and colIds already exists'}],
    );
  });

  // Grist's POST /recover (DocApi.ts:886-895) and what recovery mode changes: rules Grist refuses
  // give way to its emergency rules, owners all and others none (ACLRuleCollection.ts:113-129,
  // GranularAccess.ts:397-401), and rule writes go unchecked (GranularAccess.ts:637-640).
  // test/server/lib/GranularAccess.ts:4462-4471 "can recover from certain bad access rules".
  s('recovery mode: owners switch it; broken rules then give owners everything and others nothing', async () => {
    const {api, chimpy, kiwi, charon} = world();
    const doc = await world().newDoc(chimpy, await world().homeWs(chimpy), 'Recover');
    const d = `/api/docs/${doc}`;
    await world().share(chimpy, d, {[kiwi.email]: 'editors', [charon.email]: 'viewers'});
    const recover = (as: typeof chimpy, body: unknown) => api.post(`${d}/recover`, body, as.as);
    assert.equal((await recover(chimpy, {recoveryMode: true})).body, {recoveryMode: true});
    // Unchecked in recovery mode: two resources for one table, which Grist refuses otherwise.
    const dup = [
      ['AddRecord', '_grist_ACLResources', -1, {tableId: 'Table1', colIds: '*'}],
      ['AddRecord', '_grist_ACLResources', -2, {tableId: 'Table1', colIds: '*'}],
      ['AddRecord', '_grist_ACLRules', null, {resource: -2, aclFormula: '', permissionsText: '-R'}],
    ];
    ok(await api.post(`${d}/apply`, dup, chimpy.as));
    assert.equal((await recover(chimpy, {recoveryMode: false})).body, {recoveryMode: false});
    const broken = {error: 'Duplicate ACLResource 3: an ACLResource with the same tableId and colIds already exists'};
    const records = `${d}/tables/Table1/records`;
    for (const u of [chimpy, kiwi]) {
      const res = await api.get(records, u.as);
      assert.equal([res.status, res.body], [400, broken], u.email);
    }
    // Switched on without a body (Grist's default): the owner reads, the editor is refused.
    assert.equal((await api.post(`${d}/recover`, {}, chimpy.as)).body, {recoveryMode: true});
    ok(await api.get(records, chimpy.as));
    const refused = await api.get(records, kiwi.as);
    assert.equal(
      [refused.status, refused.body],
      [403, {error: 'Blocked by table read access rules', details: {memos: []}}],
    );
    isError(await recover(kiwi, {recoveryMode: false}), 403, 'Only owners can control recovery mode');
    isError(await recover(charon, {recoveryMode: false}), 403, 'No write access');
    isError(await recover(chimpy, {recoveryMode: 'no'}), 400, 'recoveryMode must be a boolean');
    // Repaired, and out of recovery mode: the rules apply again.
    const fix = [
      ['RemoveRecord', '_grist_ACLRules', 2],
      ['RemoveRecord', '_grist_ACLResources', 3],
    ];
    ok(await api.post(`${d}/apply`, fix, chimpy.as));
    assert.equal((await recover(chimpy, {recoveryMode: false})).body, {recoveryMode: false});
    ok(await api.get(records, kiwi.as));
  });

  s.run();
}
