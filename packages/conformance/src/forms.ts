/**
 * `GET /api/docs/{doc}/forms/{vsId}` (issue 29), from Grist's DocApiForms tests: a form section's
 * fields, layout, table and title, read under the caller's access rules. Shares (published forms
 * through `/s/{key}`) are not supported (D58).
 */
import * as assert from 'uvu/assert';
import {areaSuite, isError, ok, useWorld, type Target, type TestUser} from './world.js';

/** Grist's answer for a section that is not a form (or that the caller cannot see). */
const NOT_FOUND = {error: 'Form not found', details: {code: 'FormNotFound'}};

export function formsSuite(target: Target): void {
  const s = areaSuite(target, 'forms');
  const world = useWorld(s, target);

  /** The page section of a table (not its raw or record-card section), made a form. */
  async function formSection(u: TestUser, docId: string, tableId: string): Promise<number> {
    const {api} = world();
    const d = `/api/docs/${docId}`;
    const tables = ok(await api.get(`${d}/tables/_grist_Tables/records`, u.as)).body.records;
    const t = tables.find((r: any) => r.fields.tableId === tableId);
    const sections = ok(await api.get(`${d}/tables/_grist_Views_section/records`, u.as)).body.records;
    const section = sections.find(
      (r: any) =>
        r.fields.tableRef === t.id && r.id !== t.fields.rawViewSectionRef && r.id !== t.fields.recordCardViewSectionRef,
    );
    ok(await api.post(`${d}/apply`, [['UpdateRecord', '_grist_Views_section', section.id, {parentKey: 'form'}]], u.as));
    return section.id;
  }

  const colIds = (body: any) => Object.values(body.formFieldsById).map((f: any) => f.colId);
  const choices = (body: any, colId: string) =>
    (Object.values(body.formFieldsById).find((f: any) => f.colId === colId) as any).refValues.map(
      ([, v]: [number, unknown]) => v,
    );

  s('a form section answers its fields, layout, table and title; other sections 404 FormNotFound', async () => {
    const {api, chimpy} = world();
    const docId = await world().newDoc(chimpy, await world().homeWs(chimpy), 'FormsServe');
    const table1 = await formSection(chimpy, docId, 'Table1');
    const res = ok(await api.get(`/api/docs/${docId}/forms/${table1}`, chimpy.as)).body;
    assert.is(res.formTableId, 'Table1');
    assert.equal(colIds(res).sort(), ['A', 'B', 'C']);
    assert.type(res.formLayoutSpec, 'string');
    assert.equal(JSON.parse(res.formLayoutSpec).type, 'Layout');
    assert.type(res.formTitle, 'string');
    const a = Object.values(res.formFieldsById).find((f: any) => f.colId === 'A') as any;
    assert.equal([a.question, a.type, a.refValues], ['A', 'Any', null]);
    // The raw section is no form.
    const tables = ok(await api.get(`/api/docs/${docId}/tables/_grist_Tables/records`, chimpy.as)).body.records;
    const raw = tables.find((r: any) => r.fields.tableId === 'Table1').fields.rawViewSectionRef;
    for (const id of [raw, 9999]) {
      const missing = await api.get(`/api/docs/${docId}/forms/${id}`, chimpy.as);
      assert.equal([missing.status, missing.body], [404, NOT_FOUND]);
    }
    isError(
      await api.get(`/api/docs/${docId}/forms/abc`, chimpy.as),
      400,
      'vsId parameter cannot be understood as an integer: abc',
    );
  });

  s('access rules: a hidden table is no form, a hidden column is not asked, choices are readable rows', async () => {
    const {api, chimpy, kiwi} = world();
    const ws = await world().homeWs(chimpy);
    const docId = await world().newDoc(chimpy, ws, 'FormsRules');
    await world().share(chimpy, `/api/docs/${docId}`, {[kiwi.email]: 'viewers'});
    ok(
      await api.post(
        `/api/docs/${docId}/apply`,
        [
          ['BulkAddRecord', 'Table1', [1, 2, 3], {A: ['Alpha', 'Beta', 'Gamma']}],
          [
            'AddTable',
            'FormT',
            [
              {id: 'Pick', type: 'Ref:Table1'},
              {id: 'Many', type: 'RefList:Table1'},
            ],
          ],
          ['AddTable', 'Secret', [{id: 'S', type: 'Text'}]],
        ],
        chimpy.as,
      ),
    );
    // Choices show Table1.A.
    const cols = ok(await api.get(`/api/docs/${docId}/tables/_grist_Tables_column/records`, chimpy.as)).body.records;
    const aRef = cols.find((c: any) => c.fields.colId === 'A' && c.fields.parentId === 1).id;
    ok(
      await api.post(
        `/api/docs/${docId}/apply`,
        [
          ['ModifyColumn', 'FormT', 'Pick', {visibleCol: aRef}],
          ['ModifyColumn', 'FormT', 'Many', {visibleCol: aRef}],
        ],
        chimpy.as,
      ),
    );
    const formT = await formSection(chimpy, docId, 'FormT');
    const secret = await formSection(chimpy, docId, 'Secret');
    const table1 = await formSection(chimpy, docId, 'Table1');
    ok(
      await api.post(
        `/api/docs/${docId}/apply`,
        [
          ['AddRecord', '_grist_ACLResources', -1, {tableId: 'Table1', colIds: '*'}],
          ['AddRecord', '_grist_ACLResources', -2, {tableId: 'Table1', colIds: 'B'}],
          ['AddRecord', '_grist_ACLResources', -3, {tableId: 'Secret', colIds: '*'}],
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
            {resource: -3, aclFormula: 'user.Access != OWNER', permissionsText: '-R'},
          ],
          [
            'AddRecord',
            '_grist_ACLRules',
            null,
            {resource: -1, aclFormula: 'user.Access != OWNER and rec.A == "Beta"', permissionsText: '-R'},
          ],
        ],
        chimpy.as,
      ),
    );
    // The owner: everything.
    const mine = ok(await api.get(`/api/docs/${docId}/forms/${formT}`, chimpy.as)).body;
    assert.equal(choices(mine, 'Pick').sort(), ['Alpha', 'Beta', 'Gamma']);
    assert.equal(choices(mine, 'Many').sort(), ['Alpha', 'Beta', 'Gamma']);
    assert.equal(colIds(ok(await api.get(`/api/docs/${docId}/forms/${table1}`, chimpy.as)).body).sort(), [
      'A',
      'B',
      'C',
    ]);
    ok(await api.get(`/api/docs/${docId}/forms/${secret}`, chimpy.as));
    // The viewer: no Beta among the choices, no column B, no form on the hidden table.
    const theirs = ok(await api.get(`/api/docs/${docId}/forms/${formT}`, kiwi.as)).body;
    assert.equal(choices(theirs, 'Pick').sort(), ['Alpha', 'Gamma']);
    assert.equal(choices(theirs, 'Many').sort(), ['Alpha', 'Gamma']);
    assert.equal(colIds(ok(await api.get(`/api/docs/${docId}/forms/${table1}`, kiwi.as)).body).sort(), ['A', 'C']);
    const hidden = await api.get(`/api/docs/${docId}/forms/${secret}`, kiwi.as);
    assert.equal([hidden.status, hidden.body], [404, NOT_FOUND], 'nothing of the form leaks');
  });

  s.run();
}
