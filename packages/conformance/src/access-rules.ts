/**
 * Granular access rules (docs/access-rules.md) as every transport carries them: the body of a
 * denial (`details.memos`), recovery mode, attachments under a document-wide deny, and the rule
 * tables as Grist stores them. The full behaviour is tested in packages/http/test/access-rules.test.ts.
 */
import * as assert from 'uvu/assert';
import {areaSuite, ok, useWorld, type Target} from './world.js';

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

  s.run();
}
