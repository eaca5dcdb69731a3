/**
 * Shares and published forms (issue 41): publishing with the user actions Grist's client sends,
 * the owners' listing of keys (beyond Grist, D95), a form read and submitted anonymously through
 * `/api/s/<key>/...`, what a share refuses, unpublishing, rules that test `user.ShareRef`, and the
 * bounds on anonymous callers (D99).
 *
 * Mirrors Grist 1.7.17's test/server/lib/docapi/DocApiForms.ts ("GET /s/{key}/forms/{vsid}": every
 * case) and DocApiMisc.ts ("handles /s/ variants for shares", "SELF_HYPERLINK uses correct URL when
 * doc first opened via share link"); Grist's tests read the key from its home database, these ask
 * `GET /api/docs/{doc}/shares`.
 */
import * as assert from 'uvu/assert';
import {multipart} from './attachments.js';
import type {ApiResponse} from './client.js';
import {areaSuite, ok, useWorld, type Target, type TestUser} from './world.js';

/** A refusal: its status and Grist's `error` (denials by rules also carry `details.memos`). */
function isError(res: ApiResponse, status: number, message: string): void {
  assert.equal([res.status, res.body?.error], [status, message], res.text);
}

const NOT_FOUND = {error: 'Form not found', details: {code: 'FormNotFound'}};
const NOT_PUBLISHED = {error: 'Form not published', details: {code: 'FormNotPublished'}};
/** Requests a minute through one share key in this area's server (GRISTLITE_SHARE_RATE_LIMIT). */
const RATE = 30;

export function sharesSuite(target: Target): void {
  const s = areaSuite(target, 'shares');
  const world = useWorld(s, target, {
    GRISTLITE_SHARE_RATE_LIMIT: String(RATE),
    GRISTLITE_SHARE_MAX_BODY_BYTES: '4096',
    GRISTLITE_SHARE_MAX_UPLOAD_BYTES: '8192',
  });
  const anon = {};

  /** Table1's page section (not its raw or record-card one). */
  async function pageSection(u: TestUser, docId: string, tableId = 'Table1'): Promise<number> {
    const {api} = world();
    const d = `/api/docs/${docId}`;
    const tables = ok(await api.get(`${d}/tables/_grist_Tables/records`, u.as)).body.records;
    const t = tables.find((r: any) => r.fields.tableId === tableId);
    const sections = ok(await api.get(`${d}/tables/_grist_Views_section/records`, u.as)).body.records;
    return sections.find(
      (r: any) =>
        r.fields.tableRef === t.id && r.id !== t.fields.rawViewSectionRef && r.id !== t.fields.recordCardViewSectionRef,
    ).id;
  }

  /** The page showing a section. */
  async function pageOf(u: TestUser, docId: string, sectionId: number): Promise<number> {
    const {api} = world();
    const d = `/api/docs/${docId}`;
    const section = ok(await api.get(`${d}/tables/_grist_Views_section/records`, u.as)).body.records.find(
      (r: any) => r.id === sectionId,
    );
    return ok(await api.get(`${d}/tables/_grist_Pages/records`, u.as)).body.records.find(
      (r: any) => r.fields.viewRef === section.fields.parentId,
    ).id;
  }

  /** The key of a share, from the owners' listing. */
  async function keyOf(u: TestUser, docId: string, linkId: string): Promise<string> {
    const shares = ok(await world().api.get(`/api/docs/${docId}/shares`, u.as)).body.shares;
    const found = shares.find((x: any) => x.linkId === linkId);
    assert.ok(found, `a share with linkId ${linkId}`);
    return found.key;
  }

  /** Publishes a section as a form the way Grist's client does (share "x" on its page). */
  async function publish(
    u: TestUser,
    docId: string,
    sectionId: number,
    opts: {section?: string; share?: string; linkPage?: boolean} = {},
  ): Promise<string> {
    const actions: unknown[] = [
      ['AddRecord', '_grist_Shares', null, {linkId: 'x', options: opts.share ?? '{"publish": true}'}],
      [
        'UpdateRecord',
        '_grist_Views_section',
        sectionId,
        {parentKey: 'form', shareOptions: opts.section ?? '{"publish": true, "form": true}'},
      ],
    ];
    if (opts.linkPage !== false) {
      actions.push(['UpdateRecord', '_grist_Pages', await pageOf(u, docId, sectionId), {shareRef: 1}]);
    }
    ok(await world().api.post(`/api/docs/${docId}/apply`, actions, u.as));
    return keyOf(u, docId, 'x');
  }

  async function newDoc(name: string): Promise<string> {
    const {chimpy} = world();
    return world().newDoc(chimpy, await world().homeWs(chimpy), name);
  }

  const colIds = (body: any) => Object.values(body.formFieldsById).map((f: any) => f.colId);
  const choices = (body: any, colId: string) =>
    (Object.values(body.formFieldsById).find((f: any) => f.colId === colId) as any).refValues.map(
      ([, v]: [number, unknown]) => v,
    );

  s('publishing makes a share with a stable, unguessable key; owners list it with its URLs', async () => {
    const {api, chimpy, kiwi} = world();
    const docId = await newDoc('SharesPublish');
    await world().share(chimpy, `/api/docs/${docId}`, {[kiwi.email]: 'editors'});
    assert.equal(ok(await api.get(`/api/docs/${docId}/shares`, chimpy.as)).body, {shares: []});
    const sectionId = await pageSection(chimpy, docId);
    const key = await publish(chimpy, docId, sectionId);
    assert.match(key, /^[1-9a-km-zA-HJ-NP-Z]{22}$/);
    const listed = ok(await api.get(`/api/docs/${docId}/shares`, chimpy.as)).body.shares;
    assert.is(listed.length, 1);
    assert.equal([listed[0].linkId, listed[0].options], ['x', {publish: true}]);
    assert.match(listed[0].url, new RegExp(`/o/docs/api/s/${key}$`));
    assert.equal(
      listed[0].forms.map((f: any) => f.sectionId),
      [sectionId],
    );
    assert.match(listed[0].forms[0].url, new RegExp(`/o/docs/forms/${key}/${sectionId}$`));
    assert.match(listed[0].forms[0].apiUrl, new RegExp(`/o/docs/api/s/${key}/forms/${sectionId}$`));
    // Other writes keep the key; changing the options keeps it too.
    ok(
      await api.post(
        `/api/docs/${docId}/apply`,
        [['UpdateRecord', '_grist_Shares', 1, {options: '{"publish": true, "access": "editors"}'}]],
        chimpy.as,
      ),
    );
    assert.is(await keyOf(chimpy, docId, 'x'), key);
    const again = ok(await api.get(`/api/docs/${docId}/shares`, chimpy.as)).body.shares[0];
    assert.equal(again.options, {publish: true, access: 'editors'});
    // Owners only (gristlite's listing); editors cannot write _grist_Shares either (D25).
    isError(await api.get(`/api/docs/${docId}/shares`, kiwi.as), 403, 'No owner access');
    const byEditor = await api.post(
      `/api/docs/${docId}/apply`,
      [['AddRecord', '_grist_Shares', null, {linkId: 'y', options: '{"publish": true}'}]],
      kiwi.as,
    );
    assert.is(byEditor.status, 403);
  });

  s(
    'a published form reads anonymously through /api/s/<key> (also /o/<org>/api/s/ and /api/docs/s.<key>)',
    async () => {
      const {api, chimpy} = world();
      const docId = await newDoc('SharesRead');
      const sectionId = await pageSection(chimpy, docId);
      const key = await publish(chimpy, docId, sectionId);
      // DocApiForms "returns 200 when the form is published".
      const form = ok(await api.get(`/api/s/${key}/forms/${sectionId}`, anon)).body;
      assert.is(form.formTableId, 'Table1');
      assert.equal(colIds(form).sort(), ['A', 'B', 'C']);
      ok(await api.get(`/o/docs/api/s/${key}/forms/${sectionId}`, anon));
      // DocApiMisc "handles /s/ variants for shares" (whoever calls, the share decides).
      ok(await api.get(`/api/s/${key}/tables/Table1/records`, chimpy.as));
      ok(await api.get(`/api/docs/s.${key}/tables/Table1/records`, chimpy.as));
      assert.is((await api.get(`/api/docs/${key}/tables/Table1/records`, chimpy.as)).status, 404);
      isError(await api.get(`/api/s/${key}xxx/tables/Table1/records`, chimpy.as), 404, 'Share not known');
    },
  );

  s(
    'the form errors of DocApiForms: unpublished section or share, not a form, unknown, unlinked, another share',
    async () => {
      const {api, chimpy} = world();
      const cases: Array<[string, {section?: string; share?: string; linkPage?: boolean}, unknown, number?]> = [
        ['section unpublished', {section: '{"publish": false, "form": true}'}, NOT_PUBLISHED],
        ['share unpublished', {share: '{"publish": false}'}, NOT_PUBLISHED],
        ['not a form', {section: '{"publish": true, "form": false}'}, NOT_FOUND],
        ['unknown section', {}, NOT_FOUND, 99999],
        ['page not linked', {linkPage: false}, NOT_FOUND],
      ];
      for (const [what, opts, expected, offset] of cases) {
        const docId = await newDoc(`SharesErr ${what}`);
        const sectionId = await pageSection(chimpy, docId);
        const key = await publish(chimpy, docId, sectionId, opts);
        const res = await api.get(`/api/s/${key}/forms/${sectionId + (offset ?? 0)}`, anon);
        assert.equal([res.status, res.body], [404, expected], what);
      }
      // "returns 404 when the share key belongs to a different form".
      const docId = await newDoc('SharesOtherShare');
      const sectionId = await pageSection(chimpy, docId);
      ok(
        await api.post(
          `/api/docs/${docId}/apply`,
          [
            ['AddRecord', '_grist_Shares', null, {linkId: 'x', options: '{"publish": true}'}],
            ['AddRecord', '_grist_Shares', null, {linkId: 'y', options: '{"publish": true}'}],
            [
              'UpdateRecord',
              '_grist_Views_section',
              sectionId,
              {parentKey: 'form', shareOptions: '{"publish": true, "form": true}'},
            ],
            ['UpdateRecord', '_grist_Pages', await pageOf(chimpy, docId, sectionId), {shareRef: 2}],
          ],
          chimpy.as,
        ),
      );
      const res = await api.get(`/api/s/${await keyOf(chimpy, docId, 'x')}/forms/${sectionId}`, anon);
      assert.equal([res.status, res.body], [404, NOT_FOUND]);
      ok(await api.get(`/api/s/${await keyOf(chimpy, docId, 'y')}/forms/${sectionId}`, anon));
    },
  );

  s('Reference choices and fields the document rules hide from viewers are read through the share', async () => {
    const {api, chimpy} = world();
    for (const restrict of ['betaRow', 'displayColumn', 'hiddenField'] as const) {
      const docId = await newDoc(`SharesRefs ${restrict}`);
      const d = `/api/docs/${docId}`;
      ok(
        await api.post(
          `${d}/apply`,
          [
            ['BulkAddRecord', 'Table1', [1, 2, 3], {A: ['Alpha', 'Beta', 'Gamma']}],
            [
              'AddTable',
              'FormT',
              [
                {id: 'Pick', type: 'Ref:Table1'},
                {id: 'Many', type: 'RefList:Table1'},
                {id: 'Note', type: 'Text'},
              ],
            ],
          ],
          chimpy.as,
        ),
      );
      const cols = ok(await api.get(`${d}/tables/_grist_Tables_column/records`, chimpy.as)).body.records;
      const aRef = cols.find((c: any) => c.fields.colId === 'A' && c.fields.parentId === 1).id;
      const rule =
        restrict === 'betaRow'
          ? {tableId: 'Table1', colIds: '*', aclFormula: 'user.Access != OWNER and rec.A == "Beta"'}
          : restrict === 'displayColumn'
            ? {tableId: 'Table1', colIds: 'A', aclFormula: 'user.Access != OWNER'}
            : {tableId: 'FormT', colIds: 'Note', aclFormula: 'user.Access != OWNER'};
      ok(
        await api.post(
          `${d}/apply`,
          [
            ['ModifyColumn', 'FormT', 'Pick', {visibleCol: aRef}],
            ['ModifyColumn', 'FormT', 'Many', {visibleCol: aRef}],
            ['AddRecord', '_grist_ACLResources', -1, {tableId: rule.tableId, colIds: rule.colIds}],
            ['AddRecord', '_grist_ACLRules', null, {resource: -1, aclFormula: rule.aclFormula, permissionsText: '-R'}],
          ],
          chimpy.as,
        ),
      );
      const sectionId = await pageSection(chimpy, docId, 'FormT');
      const key = await publish(chimpy, docId, sectionId);
      const form = ok(await api.get(`/api/s/${key}/forms/${sectionId}`, anon)).body;
      assert.equal(colIds(form).sort(), ['Many', 'Note', 'Pick'], restrict);
      assert.equal(choices(form, 'Pick').sort(), ['Alpha', 'Beta', 'Gamma'], restrict);
      assert.equal(choices(form, 'Many').sort(), ['Alpha', 'Beta', 'Gamma'], restrict);
      // The share reads the shown column only, and no record of the form's table.
      const shown = ok(await api.get(`/api/s/${key}/tables/Table1/records`, anon)).body.records;
      assert.equal(
        shown.map((r: any) => [r.id, Object.keys(r.fields)]),
        [
          [1, ['A']],
          [2, ['A']],
          [3, ['A']],
        ],
        restrict,
      );
    }
  });

  s('submitting adds a record with the form fields only; what a share refuses', async () => {
    const {api, chimpy} = world();
    const docId = await newDoc('SharesSubmit');
    const d = `/api/docs/${docId}`;
    ok(
      await api.post(
        `${d}/apply`,
        [
          ['AddTable', 'Other', [{id: 'X', type: 'Text'}]],
          ['BulkAddRecord', 'Other', [1], {X: ['private']}],
          ['BulkAddRecord', 'Table1', [1], {A: ['existing']}],
        ],
        chimpy.as,
      ),
    );
    const sectionId = await pageSection(chimpy, docId);
    // Field C leaves the form.
    const fields = ok(await api.get(`${d}/tables/_grist_Views_section_field/records`, chimpy.as)).body.records;
    const cols = ok(await api.get(`${d}/tables/_grist_Tables_column/records`, chimpy.as)).body.records;
    const cRef = cols.find((c: any) => c.fields.colId === 'C' && c.fields.parentId === 1).id;
    const cField = fields.find((f: any) => f.fields.parentId === sectionId && f.fields.colRef === cRef).id;
    ok(await api.post(`${d}/apply`, [['RemoveRecord', '_grist_Views_section_field', cField]], chimpy.as));
    const key = await publish(chimpy, docId, sectionId);
    const sd = `/api/s/${key}`;
    const added = ok(
      await api.post(`${sd}/tables/Table1/records`, {records: [{fields: {A: 'from the form', B: 7}}]}, anon),
    );
    assert.equal(added.body, {records: [{id: 2}]});
    const rows = ok(await api.get(`${d}/tables/Table1/records`, chimpy.as)).body.records;
    assert.equal(
      rows.map((r: any) => [r.id, r.fields.A]),
      [
        [1, 'existing'],
        [2, 'from the form'],
      ],
    );
    // A column the form does not ask (D96); a table the share does not publish (Grist's rules).
    isError(
      await api.post(`${sd}/tables/Table1/records`, {records: [{fields: {A: 'x', C: 1}}]}, anon),
      403,
      'Blocked by share: column "C" is not a field of the published form',
    );
    isError(
      await api.post(`${sd}/tables/Other/records`, {records: [{fields: {X: 'x'}}]}, anon),
      403,
      'Blocked by table create access rules',
    );
    // Reads: no record of the form's table, nothing of another table.
    assert.equal(ok(await api.get(`${sd}/tables/Table1/records`, anon)).body, {records: []});
    isError(await api.get(`${sd}/tables/Other/records`, anon), 403, 'Blocked by table read access rules');
    const tables = ok(await api.get(`${sd}/tables`, anon)).body.tables.map((t: any) => t.id);
    assert.ok(!tables.includes('Other'), 'a table the share does not reach is not listed');
    // Updates and removals are the table's to refuse; other routes are not reached at all (D98).
    isError(
      await api.patch(`${sd}/tables/Table1/records`, {records: [{id: 1, fields: {A: 'changed'}}]}, anon),
      403,
      'This endpoint is not available through a share link',
    );
    for (const [method, path, body] of [
      ['POST', `${sd}/apply`, [['UpdateRecord', 'Table1', 1, {A: 'changed'}]]],
      ['POST', `${sd}/tables/Table1/records/delete`, [1]],
      ['GET', `${sd}/sql?q=select%201`, undefined],
      ['GET', `${sd}/download`, undefined],
      ['GET', `${sd}/webhooks`, undefined],
      ['GET', `${sd}/shares`, undefined],
      ['GET', `${sd}/attachments`, undefined],
      ['POST', `${sd}/tables/_grist_Cells/records`, {records: [{fields: {tableRef: 1, colRef: 2, rowId: 1}}]}],
      ['POST', `${sd}/tables/_grist_Views_section/records`, {records: [{fields: {title: 'mine'}}]}],
    ] as const) {
      const res = method === 'GET' ? await api.get(path, anon) : await api.post(path, body, anon);
      assert.equal([res.status, res.body], [403, {error: 'This endpoint is not available through a share link'}], path);
    }
    // Writing through /data goes through the same checks.
    isError(
      await api.post(`${sd}/tables/Table1/data`, {A: ['x'], C: [2]}, anon),
      403,
      'Blocked by share: column "C" is not a field of the published form',
    );
    ok(await api.post(`${sd}/tables/Table1/data`, {A: ['by data']}, anon));
    assert.equal(
      ok(await api.get(`${d}/tables/Table1/records`, chimpy.as)).body.records.map((r: any) => r.fields.A),
      ['existing', 'from the form', 'by data'],
    );
    // Nothing was changed by the refused writes.
    assert.equal(ok(await api.get(`${d}/tables/Other/records`, chimpy.as)).body.records.length, 1);
  });

  s(
    "a form's files: uploaded through a share whose form asks for attachments, then submitted (FormView1)",
    async () => {
      const {api, chimpy} = world();
      const docId = await newDoc('SharesFiles');
      const d = `/api/docs/${docId}`;
      ok(
        await api.post(
          `${d}/apply`,
          [
            [
              'AddTable',
              'Files',
              [
                {id: 'Name', type: 'Text'},
                {id: 'D', type: 'Attachments'},
              ],
            ],
          ],
          chimpy.as,
        ),
      );
      const sectionId = await pageSection(chimpy, docId, 'Files');
      const key = await publish(chimpy, docId, sectionId);
      const up = (parts: Array<{name: string; content: string}>) => {
        const {body, headers} = multipart(parts);
        // Grist's form page sends X-Requested-With (an anonymous multipart POST needs it).
        return api.call('POST', `/api/s/${key}/attachments`, {
          body,
          headers: {...headers, 'x-requested-with': 'XMLHttpRequest'},
        });
      };
      // Grist's FormView1 "can submit a form with file input": two files, then the record.
      const ids = ok(
        await up([
          {name: 'grist.png', content: 'png bytes'},
          {name: 'names.json', content: '[]'},
        ]),
      ).body;
      assert.equal(ids, [1, 2]);
      ok(
        await api.post(
          `/api/s/${key}/tables/Files/records`,
          {records: [{fields: {Name: 'x', D: ['L', ...ids]}}]},
          anon,
        ),
      );
      assert.equal(ok(await api.get(`${d}/tables/Files/records`, chimpy.as)).body.records[0].fields.D, ['L', 1, 2]);
      const listed = ok(await api.get(`${d}/attachments`, chimpy.as)).body.records.map((r: any) => r.fields.fileName);
      assert.equal(listed, ['grist.png', 'names.json']);
      // The share cannot list or read them; a file over the share's upload limit is refused.
      isError(
        await api.get(`/api/s/${key}/attachments`, anon),
        403,
        'This endpoint is not available through a share link',
      );
      const big = await up([{name: 'big.bin', content: 'x'.repeat(9000)}]);
      assert.is(big.status, 413);
      // A share whose form asks for no attachments takes no files (D101).
      const other = await newDoc('SharesNoFiles');
      const otherKey = await publish(chimpy, other, await pageSection(chimpy, other));
      const {body, headers} = multipart([{name: 'a.txt', content: 'a'}]);
      isError(
        await api.call('POST', `/api/s/${otherKey}/attachments`, {
          body,
          headers: {...headers, 'x-requested-with': 'XMLHttpRequest'},
        }),
        403,
        'Blocked by share: the published form asks for no attachments',
      );
      assert.equal(ok(await api.get(`/api/docs/${other}/attachments`, chimpy.as)).body.records, []);
    },
  );

  s('unpublishing: the form is refused, then a removed share is not known and is no longer listed', async () => {
    const {api, chimpy} = world();
    const docId = await newDoc('SharesUnpublish');
    const sectionId = await pageSection(chimpy, docId);
    const key = await publish(chimpy, docId, sectionId);
    const sd = `/api/s/${key}`;
    ok(await api.get(`${sd}/forms/${sectionId}`, anon));
    // Grist's client unpublishes by setting the share's options.
    ok(
      await api.post(
        `/api/docs/${docId}/apply`,
        [['UpdateRecord', '_grist_Shares', 1, {options: '{"publish": false}'}]],
        chimpy.as,
      ),
    );
    const res = await api.get(`${sd}/forms/${sectionId}`, anon);
    assert.equal([res.status, res.body], [404, NOT_PUBLISHED]);
    isError(
      await api.post(`${sd}/tables/Table1/records`, {records: [{fields: {A: 'late'}}]}, anon),
      403,
      'Blocked by table create access rules',
    );
    isError(await api.get(`${sd}/tables/Table1/records`, anon), 403, 'Blocked by table read access rules');
    // Published again: the same key works again.
    ok(
      await api.post(
        `/api/docs/${docId}/apply`,
        [['UpdateRecord', '_grist_Shares', 1, {options: '{"publish": true}'}]],
        chimpy.as,
      ),
    );
    assert.is(await keyOf(chimpy, docId, 'x'), key);
    ok(await api.post(`${sd}/tables/Table1/records`, {records: [{fields: {A: 'again'}}]}, anon));
    // A document in the trash shares nothing (Grist's lookup skips removed documents); restored, it does.
    ok(await api.post(`/api/docs/${docId}/remove`, null, chimpy.as));
    isError(await api.get(`${sd}/forms/${sectionId}`, anon), 404, 'Share not known');
    ok(await api.post(`/api/docs/${docId}/unremove`, null, chimpy.as));
    ok(await api.get(`${sd}/forms/${sectionId}`, anon));
    // Removed: the key is gone from the home store.
    ok(await api.post(`/api/docs/${docId}/apply`, [['RemoveRecord', '_grist_Shares', 1]], chimpy.as));
    isError(await api.get(`${sd}/forms/${sectionId}`, anon), 404, 'Share not known');
    assert.equal(ok(await api.get(`/api/docs/${docId}/shares`, chimpy.as)).body, {shares: []});
  });

  s(
    'rules testing user.ShareRef: None for members, the share rules (not the document rules) for share callers',
    async () => {
      const {api, chimpy, kiwi} = world();
      const docId = await newDoc('SharesShareRef');
      const d = `/api/docs/${docId}`;
      await world().share(chimpy, d, {[kiwi.email]: 'editors'});
      ok(await api.post(`${d}/apply`, [['BulkAddRecord', 'Table1', [1, 2], {A: ['one', 'two']}]], chimpy.as));
      const sectionId = await pageSection(chimpy, docId);
      const key = await publish(chimpy, docId, sectionId);
      // Members (ShareRef None) who are not owners read no rows; rules with ShareRef are accepted.
      await world().addTableRule(
        chimpy,
        docId,
        'Table1',
        'user.ShareRef is None and user.Access != OWNER and rec.A == "two"',
        '-R',
      );
      assert.equal(
        ok(await api.get(`${d}/tables/Table1/records`, kiwi.as)).body.records.map((r: any) => r.fields.A),
        ['one'],
      );
      assert.is(ok(await api.get(`${d}/tables/Table1/records`, chimpy.as)).body.records.length, 2);
      // A rule that would refuse share callers does not apply to them: Grist turns every rule of the
      // document off in a share (ACLRulesReader's `user.ShareRef is None and (...)`).
      ok(
        await api.post(
          `${d}/apply`,
          [
            ['AddRecord', '_grist_ACLResources', -1, {tableId: '*', colIds: '*'}],
            [
              'AddRecord',
              '_grist_ACLRules',
              null,
              {resource: -1, aclFormula: 'user.ShareRef is not None', permissionsText: '-C'},
            ],
          ],
          chimpy.as,
        ),
      );
      ok(await api.post(`/api/s/${key}/tables/Table1/records`, {records: [{fields: {A: 'shared'}}]}, anon));
      ok(await api.get(`/api/s/${key}/forms/${sectionId}`, anon));
      // Members are judged by the document's rules: `user.ShareRef is not None` is false for them.
      ok(await api.post(`${d}/tables/Table1/records`, {records: [{fields: {A: 'member'}}]}, kiwi.as));
      assert.equal(
        ok(await api.get(`${d}/tables/Table1/records`, chimpy.as)).body.records.map((r: any) => r.fields.A),
        ['one', 'two', 'shared', 'member'],
      );
    },
  );

  s('SELF_HYPERLINK never names the share key, even when the share opens the document first', async () => {
    const {api, chimpy} = world();
    const docId = await newDoc('SharesHyperlink');
    const d = `/api/docs/${docId}`;
    ok(
      await api.post(
        `${d}/apply`,
        [
          ['AddColumn', 'Table1', 'Link', {isFormula: true, formula: 'SELF_HYPERLINK()'}],
          ['AddRecord', 'Table1', null, {}],
        ],
        chimpy.as,
      ),
    );
    const sectionId = await pageSection(chimpy, docId);
    const key = await publish(chimpy, docId, sectionId);
    ok(await api.post(`${d}/force-reload`, null, chimpy.as));
    ok(await api.post(`/api/s/${key}/tables/Table1/records`, {records: [{fields: {A: 'via share'}}]}, anon));
    for (const r of ok(await api.get(`${d}/tables/Table1/records`, chimpy.as)).body.records) {
      assert.ok(!String(r.fields.Link).includes(key), `link ${r.fields.Link}`);
      assert.ok(!String(r.fields.Link).includes('s.'), `link ${r.fields.Link}`);
    }
  });

  s('anonymous callers are bounded: a body over the share limit is 413, a flood on one key 429', async () => {
    const {api, chimpy} = world();
    const docId = await newDoc('SharesFlood');
    const sectionId = await pageSection(chimpy, docId);
    const key = await publish(chimpy, docId, sectionId);
    const big = await api.post(
      `/api/s/${key}/tables/Table1/records`,
      {records: [{fields: {A: 'x'.repeat(5000)}}]},
      anon,
    );
    assert.equal(
      [big.status, big.body],
      [413, {error: 'request entity too large (over 4096 bytes: GRISTLITE_SHARE_MAX_BODY_BYTES)'}],
    );
    const statuses: number[] = [];
    for (let i = 0; i < RATE + 5; i++) {
      statuses.push(
        (await api.post(`/api/s/${key}/tables/Table1/records`, {records: [{fields: {A: `n${i}`}}]}, anon)).status,
      );
    }
    const refused = statuses.filter((st) => st === 429).length;
    assert.ok(refused >= 5, `429s: ${refused} of ${statuses.length}`);
    assert.ok(
      statuses.slice(0, RATE - 2).every((st) => st === 200),
      statuses.join(' '),
    );
    const last = await api.get(`/api/s/${key}/forms/${sectionId}`, anon);
    assert.equal(
      [last.status, last.body],
      [429, {error: 'Too many requests through this share link - try again later'}],
    );
    // The owner is not limited by the share's bucket; the rows added are those accepted.
    const n = ok(await api.get(`/api/docs/${docId}/tables/Table1/records`, chimpy.as)).body.records.length;
    assert.is(n, statuses.filter((st) => st === 200).length);
  });

  s.run();
}
