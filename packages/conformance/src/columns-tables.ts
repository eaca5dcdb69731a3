/**
 * Tables and columns (SPEC §8, §9, §18 quirks 1-3, §19 items 16-19): GET/POST/PATCH /tables,
 * GET/POST/PATCH/PUT /columns, DELETE a column, renames, type conversions, the tableRef form.
 */
import * as assert from 'uvu/assert';
import {withFixtures} from '@gristlite/core/testing';
import {TIMESHEETS, importFixture, newTimesheets, tablePath} from './docdata.js';
import {areaSuite, isError, isErrorLike, isInvalidPayload, ok, useWorld, type Target} from './world.js';

/** A column's fields as Grist reports them for a plain column (SPEC §19 item 16). */
function col(colRef: number, parentPos: number, extra: Record<string, unknown>) {
  return {
    colRef,
    parentId: 1,
    parentPos,
    type: 'Text',
    widgetOptions: '',
    isFormula: false,
    formula: '',
    label: '',
    description: '',
    untieColIdFromLabel: false,
    summarySourceCol: 0,
    displayCol: 0,
    visibleCol: 0,
    rules: null,
    recalcWhen: 0,
    recalcDeps: null,
    reverseCol: 0,
    ...extra,
  };
}

/** GET /columns of Grist's Timesheets, literally (D's parentPos 3 is in the real file). */
const TIMESHEETS_COLUMNS = [
  {id: 'A', fields: col(2, 1, {label: 'A'})},
  {id: 'B', fields: col(3, 2, {label: 'B'})},
  {id: 'C', fields: col(4, 3, {label: 'C'})},
  {id: 'D', fields: col(5, 3, {label: 'D', type: 'Any', isFormula: true})},
  {id: 'E', fields: col(6, 4, {label: 'E', type: 'Any', isFormula: true, formula: '$A.upper()'})},
];

export function columnsTablesSuite(target: Target): void {
  const s = areaSuite(target, 'columns-tables');
  const world = useWorld(s, target);
  let doc = ''; // Timesheets built through the API

  withFixtures(s)(
    "GET columns: Grist's Timesheets file exactly, by tableId and tableRef; hidden (item 16)",
    async () => {
      const {api, chimpy} = world();
      const hello = await importFixture(world(), 'Hello.grist');
      assert.equal(ok(await api.get(`${tablePath(hello)}/columns`, chimpy.as)).body, {columns: TIMESHEETS_COLUMNS});
      assert.equal(ok(await api.get(`${tablePath(hello, '1')}/columns`, chimpy.as)).body, {
        columns: TIMESHEETS_COLUMNS,
      });
      const hidden = ok(await api.get(`${tablePath(hello)}/columns?hidden=true`, chimpy.as)).body.columns;
      assert.equal(
        hidden.map((c: any) => c.id),
        ['manualSort', 'A', 'B', 'C', 'D', 'E'],
      );
      assert.equal(hidden[0].fields, col(1, 0, {label: 'manualSort', type: 'ManualSortPos'}));
      isError(await api.get(`${tablePath(hello, 'Typo1')}/columns`, chimpy.as), 404, 'Table not found "Typo1"');
      isError(await api.get(`${tablePath('typotypotypo')}/columns`, chimpy.as), 404, 'document not found');
      isError(await api.get(`${tablePath(hello)}/columns`, world().kiwi.as), 403, 'No view access');
    },
  );

  s('GET columns of Timesheets built through the API: the same fields, positions appended', async () => {
    const {api, chimpy} = world();
    doc = await newTimesheets(world());
    const cols = ok(await api.get(`${tablePath(doc)}/columns`, chimpy.as)).body.columns;
    // Current Grist numbers a new table's columns from 1 with manualSort first (see the newer
    // fixtures, e.g. GridWithAllFields.grist), so A is at 2; D and E are appended after C.
    const expected = TIMESHEETS_COLUMNS.map((c, i) => ({id: c.id, fields: {...c.fields, parentPos: i + 2}}));
    assert.equal(cols, expected);
  });

  s('GET /tables: fields, expand=column; bad expand is 400', async () => {
    const {api, chimpy} = world();
    const tables = ok(await api.get(`/api/docs/${doc}/tables`, chimpy.as)).body;
    assert.equal(tables, {
      tables: [
        {
          id: 'Table1',
          fields: {
            tableRef: 1,
            primaryViewId: 1,
            summarySourceTable: 0,
            onDemand: false,
            rawViewSectionRef: 2,
            recordCardViewSectionRef: 3,
          },
        },
      ],
    });
    const expanded = ok(await api.get(`/api/docs/${doc}/tables?expand=column`, chimpy.as)).body.tables;
    assert.equal(expanded[0].columns, ok(await api.get(`${tablePath(doc)}/columns`, chimpy.as)).body.columns);
    const bad = await api.get(`/api/docs/${doc}/tables?expand=rows`, chimpy.as);
    assert.is(bad.status, 400, 'decision 1: a bad expand is a 400, never a 500');
    isError(await api.get('/api/docs/nosuchdoc/tables', chimpy.as), 404, 'document not found');
  });

  s('POST /tables and /columns de-duplicate ids; PATCH renames; 404s (item 19)', async () => {
    const {api, chimpy} = world();
    let res = ok(
      await api.post(
        `/api/docs/${doc}/tables`,
        {
          tables: [
            {columns: [{}]},
            {id: '', columns: [{id: ''}]},
            {id: 'NewTable1', columns: [{id: 'NewCol1', fields: {}}]},
            {
              id: 'NewTable2',
              columns: [
                {id: 'NewCol2', fields: {label: 'Label2'}},
                {id: 'NewCol3', fields: {label: 'Label3'}},
                {id: 'NewCol3', fields: {label: 'Label3'}},
              ],
            },
            {
              id: 'NewTable2',
              columns: [
                {id: 'NewCol2', fields: {label: 'Label2'}},
                {id: 'NewCol3', fields: {label: 'Label3'}},
              ],
            },
          ],
        },
        chimpy.as,
      ),
    );
    assert.equal(res.body, {
      tables: [{id: 'Table2'}, {id: 'Table3'}, {id: 'NewTable1'}, {id: 'NewTable2'}, {id: 'NewTable2_2'}],
    });
    res = ok(
      await api.post(
        `${tablePath(doc, 'NewTable2')}/columns`,
        {
          columns: [
            {},
            {id: ''},
            {id: 'NewCol4', fields: {}},
            {id: 'NewCol4', fields: {}},
            {id: 'NewCol5', fields: {label: 'Label5'}},
          ],
        },
        chimpy.as,
      ),
    );
    assert.equal(res.body, {columns: [{id: 'A'}, {id: 'B'}, {id: 'NewCol4'}, {id: 'NewCol4_2'}, {id: 'NewCol5'}]});
    assert.equal(
      ok(await api.post(`${tablePath(doc, '5')}/columns`, {columns: [{id: 'NewCol6', fields: {}}]}, chimpy.as)).body,
      {columns: [{id: 'NewCol6'}]},
    );
    isError(
      await api.post(`${tablePath(doc, 'NoSuchTable')}/columns`, {columns: [{}]}, chimpy.as),
      404,
      'Table not found "NoSuchTable"',
    );
    assert.is(
      ok(
        await api.patch(
          `/api/docs/${doc}/tables`,
          {tables: [{id: 'Table3', fields: {tableId: 'Table3_Renamed'}}]},
          chimpy.as,
        ),
      ).body,
      null,
    );
    isError(
      await api.patch(
        `/api/docs/${doc}/tables`,
        {tables: [{id: 'Table3', fields: {tableId: 'Table3_Renamed'}}]},
        chimpy.as,
      ),
      404,
      'Table not found "Table3"',
    );
    assert.is(
      ok(
        await api.patch(
          `${tablePath(doc, 'Table2')}/columns`,
          {columns: [{id: 'A', fields: {colId: 'A_Renamed'}}]},
          chimpy.as,
        ),
      ).body,
      null,
    );
    isError(
      await api.patch(
        `${tablePath(doc, 'Table2')}/columns`,
        {columns: [{id: 'A', fields: {colId: 'A_Renamed'}}]},
        chimpy.as,
      ),
      404,
      'Column not found "A"',
    );
    isError(
      await api.patch(
        `${tablePath(doc, 'Table222')}/columns`,
        {columns: [{id: 'A', fields: {colId: 'A_Renamed'}}]},
        chimpy.as,
      ),
      404,
      'Table not found "Table222"',
    );
    ok(
      await api.patch(
        `${tablePath(doc, 'NewTable2')}/columns`,
        {columns: [{id: 'A', fields: {colId: 'B'}}]},
        chimpy.as,
      ),
    );
    const tables = ok(await api.get(`/api/docs/${doc}/tables`, chimpy.as)).body.tables;
    const field = (tableRef: number, primaryViewId: number, raw: number) => ({
      rawViewSectionRef: raw,
      recordCardViewSectionRef: raw + 1,
      primaryViewId,
      onDemand: false,
      summarySourceTable: 0,
      tableRef,
    });
    assert.equal(tables, [
      {id: 'Table1', fields: field(1, 1, 2)},
      {id: 'Table2', fields: field(2, 2, 5)},
      {id: 'Table3_Renamed', fields: field(3, 3, 8)},
      {id: 'NewTable1', fields: field(4, 4, 11)},
      {id: 'NewTable2', fields: field(5, 5, 14)},
      {id: 'NewTable2_2', fields: field(6, 6, 17)},
    ]);
    const labels = async (tableId: string) =>
      ok(await api.get(`${tablePath(doc, tableId)}/columns`, chimpy.as)).body.columns.map((c: any) => ({
        colId: c.id,
        label: c.fields.label,
      }));
    assert.equal(await labels('Table2'), [{colId: 'A_Renamed', label: 'A'}]);
    assert.equal(await labels('Table3_Renamed'), [{colId: 'A', label: 'A'}]);
    assert.equal(await labels('NewTable1'), [{colId: 'NewCol1', label: 'NewCol1'}]);
    assert.equal(await labels('NewTable2'), [
      {colId: 'NewCol2', label: 'Label2'},
      {colId: 'NewCol3', label: 'Label3'},
      {colId: 'NewCol3_2', label: 'Label3'},
      {colId: 'B2', label: 'A'},
      {colId: 'B', label: 'B'},
      {colId: 'NewCol4', label: 'NewCol4'},
      {colId: 'NewCol4_2', label: 'NewCol4_2'},
      {colId: 'NewCol5', label: 'Label5'},
      {colId: 'NewCol6', label: 'NewCol6'},
    ]);
    // POST /tables makes Text data columns; POST /columns makes empty Any columns (quirk 1).
    const t1 = ok(await api.get(`${tablePath(doc, 'NewTable1')}/columns`, chimpy.as)).body.columns[0].fields;
    assert.equal([t1.type, t1.isFormula, t1.formula], ['Text', false, '']);
    const c4 = ok(await api.get(`${tablePath(doc, 'NewTable2')}/columns`, chimpy.as)).body.columns.find(
      (c: any) => c.id === 'NewCol4',
    ).fields;
    assert.equal([c4.type, c4.isFormula, c4.formula], ['Any', true, '']);
    // Tables go by deleting rows of _grist_Tables (there is no DELETE /tables).
    assert.is(
      ok(await api.post(`${tablePath(doc, '_grist_Tables')}/data/delete`, [2, 3, 4, 5, 6], chimpy.as)).body,
      null,
    );
    assert.equal(
      ok(await api.get(`/api/docs/${doc}/tables`, chimpy.as)).body.tables.map((t: any) => t.id),
      ['Table1'],
    );
    isError(await api.get(`${tablePath(doc, 'NewTable1')}/records`, chimpy.as), 404, 'Table not found "NewTable1"');
    assert.equal(ok(await api.get(`${tablePath(doc)}/records`, chimpy.as)).body, {records: TIMESHEETS});
  });

  s(
    "bodies of /tables and /columns are refused in Grist's words: the path, each named type that failed, the reason",
    async () => {
      const {api, chimpy} = world();
      const tables = `/api/docs/${doc}/tables`;
      const columns = `${tablePath(doc)}/columns`;
      const cases: Array<[string, string, unknown, string]> = [
        [
          'POST',
          tables,
          {tables: [{id: 'X'}]},
          'Error: body.tables[0] is not a TablePost; body.tables[0].columns is missing',
        ],
        ['POST', tables, {tables: []}, 'Error: body.tables[0] is not a TablePost; body.tables[0] is not an object'],
        [
          'POST',
          tables,
          {tables: [{columns: []}]},
          'Error: body.tables[0] is not a TablePost; body.tables[0].columns[0] is not a NewRecordWithStringId; ' +
            'body.tables[0].columns[0] is not an object',
        ],
        ['POST', tables, {tables: 'x'}, 'Error: body.tables is not an array'],
        [
          'PATCH',
          tables,
          {tables: [{id: 1, fields: {}}]},
          'Error: body.tables[0] is not a RecordWithStringId; body.tables[0].id is not a string',
        ],
        // widgetOptions as an object is not a CellValue (Grist takes its JSON text).
        [
          'POST',
          columns,
          {columns: [{id: 'W', fields: {widgetOptions: {alignment: 'left'}}}]},
          'Error: body.columns[0] is not a NewRecordWithStringId; body.columns[0].fields.widgetOptions is not a CellValue; ' +
            'body.columns[0].fields.widgetOptions is none of number, string, boolean, null, 1 more',
        ],
        // Several failures of one record: one indented line each.
        [
          'PATCH',
          columns,
          {columns: [{}]},
          'Error: body.columns[0] is not a RecordWithStringId\n    body.columns[0].id is missing\n    body.columns[0].fields is missing',
        ],
      ];
      for (const [method, path, json, userError] of cases) {
        isInvalidPayload(
          await api.call(method, path, {...chimpy.as, json}),
          userError,
          `${method} ${JSON.stringify(json)}`,
        );
      }
    },
  );

  s(
    "a column type Grist does not know is refused (D42); Grist's own types, old spellings included, are taken",
    async () => {
      const {api, chimpy} = world();
      const columns = `${tablePath(doc)}/columns`;
      isErrorLike(
        await api.post(columns, {columns: [{id: 'Bad', fields: {type: 'Foo'}}]}, chimpy.as),
        400,
        /Invalid column type "Foo": not a Grist type/,
      );
      isErrorLike(
        await api.post(columns, {columns: [{id: 'Bad', fields: {type: 'Ref'}}]}, chimpy.as),
        400,
        /Invalid column type "Ref": Ref needs a table/,
      );
      isErrorLike(
        await api.post(`/api/docs/${doc}/apply`, [['AddColumn', 'Table1', 'Bad', {type: 'Numbers'}]], chimpy.as),
        400,
        /Invalid column type "Numbers"/,
      );
      isErrorLike(
        await api.patch(columns, {columns: [{id: 'A', fields: {type: 'Decimal'}}]}, chimpy.as),
        400,
        /Invalid column type "Decimal"/,
      );
      // Nothing was added or changed by the refused writes.
      const after = ok(await api.get(columns, chimpy.as)).body.columns as Array<{id: string; fields: {type: string}}>;
      assert.not.ok(after.some((c) => c.id === 'Bad'));
      ok(
        await api.post(
          columns,
          {
            columns: [
              {id: 'Good1', fields: {type: 'Reference:Table1'}},
              {id: 'Good2', fields: {type: 'DateTime:Europe/Paris'}},
            ],
          },
          chimpy.as,
        ),
      );
      const types = Object.fromEntries(
        (ok(await api.get(columns, chimpy.as)).body.columns as Array<{id: string; fields: {type: string}}>).map((c) => [
          c.id,
          c.fields.type,
        ]),
      );
      assert.is(types.Good1, 'Reference:Table1');
      assert.is(types.Good2, 'DateTime:Europe/Paris');
      ok(
        await api.post(
          `/api/docs/${doc}/apply`,
          [
            ['RemoveColumn', 'Table1', 'Good1'],
            ['RemoveColumn', 'Table1', 'Good2'],
          ],
          chimpy.as,
        ),
      );
    },
  );

  s('POST /tables and /columns: validation, normalised ids, access', async () => {
    const {api, chimpy, kiwi} = world();
    const post = (body: unknown) => api.post(`/api/docs/${doc}/tables`, body, chimpy.as);
    for (const body of [{}, {tables: []}, {tables: [{id: 'X'}]}, {tables: [{id: 'X', columns: []}]}, {tables: 'x'}]) {
      const res = await post(body);
      assert.is(res.status, 400, JSON.stringify(body));
      assert.is(res.body.error, 'Invalid payload', JSON.stringify(body));
    }
    isInvalidPayload(await post({}), 'Error: body.tables is missing');
    const made = ok(
      await post({
        tables: [
          {id: 'foo bar', columns: [{id: 'class'}, {id: '_foo bar'}, {id: 'id'}, {id: '1abc'}]},
          {id: '123', columns: [{id: 'X'}]},
          {id: 'FOO_BAR', columns: [{id: 'X'}]},
        ],
      }),
    ).body;
    assert.equal(made, {tables: [{id: 'Foo_bar'}, {id: 'T123'}, {id: 'FOO_BAR2'}]});
    const ids = ok(await api.get(`${tablePath(doc, 'Foo_bar')}/columns`, chimpy.as)).body.columns.map((c: any) => c.id);
    assert.equal(ids, ['cclass', 'foo_bar', 'id2', 'c1abc']);
    // A label does not choose the colId on creation; it stays as given.
    const added = ok(
      await api.post(`${tablePath(doc, 'Foo_bar')}/columns`, {columns: [{fields: {label: 'Some label'}}]}, chimpy.as),
    ).body;
    assert.equal(added, {columns: [{id: 'A'}]});
    assert.is(
      ok(await api.get(`${tablePath(doc, 'Foo_bar')}/columns`, chimpy.as)).body.columns[4].fields.label,
      'Some label',
    );
    isInvalidPayload(
      await api.post(`${tablePath(doc, 'Foo_bar')}/columns`, {}, chimpy.as),
      'Error: body.columns is missing',
    );
    await world().share(chimpy, `/api/docs/${doc}`, {[kiwi.email]: 'viewers'});
    isError(await api.post(`/api/docs/${doc}/tables`, {tables: [{columns: [{}]}]}, kiwi.as), 403, 'No write access');
    isError(await api.post(`${tablePath(doc)}/columns`, {columns: [{}]}, kiwi.as), 403, 'No write access');
    isError(
      await api.patch(`${tablePath(doc)}/columns`, {columns: [{id: 'A', fields: {label: 'X'}}]}, kiwi.as),
      403,
      'No write access',
    );
    isError(
      await api.patch(`/api/docs/${doc}/tables`, {tables: [{id: 'Table1', fields: {tableId: 'X'}}]}, kiwi.as),
      403,
      'No write access',
    );
    await world().share(chimpy, `/api/docs/${doc}`, {[kiwi.email]: null});
    ok(await api.post(`${tablePath(doc, '_grist_Tables')}/data/delete`, [2, 3, 4], chimpy.as));
  });

  s('PUT columns: add, update, noadd, noupdate, replaceall; 404; viewers 403 (item 17)', async () => {
    const {api, chimpy, kiwi} = world();
    const wid = await world().homeWs(chimpy);
    const ADD = {id: 'Foo', fields: {type: 'Text', label: 'FooLabel'}};
    const UPDATE = {id: 'A', fields: {type: 'Numeric', colId: 'NewA'}};
    const checkPut = async (
      columns: unknown[],
      qs: string,
      expected: Record<string, Record<string, unknown>>,
      getQs = '',
    ) => {
      const d = await world().newDoc(chimpy, wid, 'ColumnsPut');
      const res = ok(await api.call('PUT', `${tablePath(d)}/columns${qs}`, {...chimpy.as, json: {columns}}), qs);
      assert.is(res.body, null);
      const got = ok(await api.get(`${tablePath(d)}/columns${getQs}`, chimpy.as)).body.columns;
      assert.equal(
        got.map((c: any) => c.id),
        Object.keys(expected),
        `columns after PUT${qs}`,
      );
      for (const c of got) {
        for (const [k, v] of Object.entries(expected[c.id])) assert.equal(c.fields[k], v, `${qs} ${c.id}.${k}`);
      }
      return d;
    };
    await checkPut([ADD], '', {A: {}, B: {}, C: {}, Foo: ADD.fields});
    await checkPut([ADD, UPDATE], '', {NewA: {type: 'Numeric', label: 'A'}, B: {}, C: {}, Foo: ADD.fields});
    await checkPut([ADD, UPDATE], '?noadd=1', {NewA: {type: 'Numeric'}, B: {}, C: {}});
    await checkPut([ADD, UPDATE], '?noupdate=1', {A: {type: 'Any'}, B: {}, C: {}, Foo: ADD.fields});
    await checkPut([ADD, UPDATE], '?replaceall=1', {NewA: {type: 'Numeric'}, Foo: ADD.fields});
    const d = await checkPut(
      [ADD, UPDATE],
      '?replaceall=1',
      {manualSort: {type: 'ManualSortPos'}, NewA: {type: 'Numeric'}, Foo: ADD.fields},
      '?hidden=true',
    );
    isError(
      await api.call('PUT', `${tablePath(d, 'NonExistingTable')}/columns`, {...chimpy.as, json: {columns: [ADD]}}),
      404,
      'Table not found "NonExistingTable"',
    );
    isInvalidPayload(
      await api.call('PUT', `${tablePath(d)}/columns`, {...chimpy.as, json: {}}),
      'Error: value.columns is missing',
    );
    await world().share(chimpy, `/api/docs/${d}`, {[kiwi.email]: 'viewers'});
    isError(
      await api.call('PUT', `${tablePath(d)}/columns`, {...kiwi.as, json: {columns: [ADD]}}),
      403,
      'No write access',
    );
  });

  for (const how of ['RemoveTable', '_grist_Tables/data/delete'] as const) {
    s(`removing a table (${how}) converts the references to it as Grist does, keeping their data`, async () => {
      const {api, chimpy} = world();
      const d = await world().newDoc(chimpy, await world().homeWs(chimpy), 'RefsToRemoved');
      const apply = async (actions: unknown[]) => ok(await api.post(`/api/docs/${d}/apply`, actions, chimpy.as));
      const colsOf = async (tableId: string) =>
        ok(await api.get(`${tablePath(d, tableId)}/columns?hidden=true`, chimpy.as)).body.columns as Array<{
          id: string;
          fields: Record<string, any>;
        }>;
      await apply([
        [
          'AddTable',
          'Address',
          [
            {id: 'city', type: 'Text'},
            {id: 'since', type: 'Date'},
          ],
        ],
        ['BulkAddRecord', 'Address', [1, 2, 3], {city: ['Albany', 'Bedford', 'Buffalo'], since: [0, 86400, null]}],
      ]);
      const ref = (id: string) => async () => (await colsOf('Address')).find((c) => c.id === id)!.fields.colRef;
      const [cityRef, sinceRef] = [await ref('city')(), await ref('since')()];
      const dateOpts = JSON.stringify({dateFormat: 'DD/MM/YYYY'});
      await apply([
        ['ModifyColumn', 'Address', 'since', {widgetOptions: dateOpts}],
        [
          'AddTable',
          'People',
          [
            {id: 'name', type: 'Text'},
            {id: 'address', type: 'Ref:Address'},
            {id: 'addresses', type: 'RefList:Address'},
            {
              id: 'address2',
              type: 'Ref:Address',
              isFormula: true,
              formula: '$address',
            },
            {id: 'shown', type: 'Ref:Address'},
            {id: 'shownDate', type: 'Ref:Address'},
            {id: 'shownList', type: 'RefList:Address'},
          ],
        ],
        ['ModifyColumn', 'People', 'shown', {visibleCol: cityRef}],
        ['ModifyColumn', 'People', 'shownDate', {visibleCol: sinceRef}],
        ['ModifyColumn', 'People', 'shownList', {visibleCol: cityRef}],
        ['SetDisplayFormula', 'People', null, 'shown', '$shown.city'],
        ['SetDisplayFormula', 'People', null, 'shownDate', '$shownDate.since'],
        ['SetDisplayFormula', 'People', null, 'shownList', '$shownList.city'],
        [
          'BulkAddRecord',
          'People',
          [1, 2, 3],
          {
            name: ['Alice', 'Bob', 'Carol'],
            address: [1, 2, 0],
            addresses: [['L', 1, 2], ['L', 3], null],
            shown: [1, 3, 0],
            shownDate: [2, 1, 3],
            shownList: [['L', 3, 1], ['L'], null],
          },
        ],
      ]);
      if (how === 'RemoveTable') {
        await apply([['RemoveTable', 'Address']]);
      } else {
        const tableRef = ok(await api.get(`/api/docs/${d}/tables`, chimpy.as)).body.tables.find(
          (t: any) => t.id === 'Address',
        ).fields.tableRef;
        ok(await api.post(`${tablePath(d, '_grist_Tables')}/data/delete`, [tableRef], chimpy.as));
      }
      assert.equal(
        ok(await api.get(`/api/docs/${d}/tables`, chimpy.as)).body.tables.map((t: any) => t.id),
        ['Table1', 'People'],
      );
      // (by position: removed helpers reorder Grist's in-memory column list, D49)
      const cols = (await colsOf('People')).sort((a, b) => a.fields.parentPos - b.fields.parentPos);
      // The display helpers go with the references they served.
      assert.equal(
        cols.map((c) => [c.id, c.fields.type, c.fields.isFormula, c.fields.visibleCol, c.fields.displayCol]),
        [
          ['manualSort', 'ManualSortPos', false, 0, 0],
          ['name', 'Text', false, 0, 0],
          ['address', 'Int', false, 0, 0],
          ['addresses', 'Text', false, 0, 0],
          ['address2', 'Any', true, 0, 0],
          ['shown', 'Text', false, 0, 0],
          ['shownDate', 'Date', false, 0, 0],
          ['shownList', 'Text', false, 0, 0],
        ],
      );
      assert.is(cols.find((c) => c.id === 'shownDate')!.fields.widgetOptions, dateOpts);
      const records = ok(await api.get(`${tablePath(d, 'People')}/records`, chimpy.as)).body.records;
      assert.equal(records, [
        {
          id: 1,
          fields: {
            name: 'Alice',
            address: 1,
            addresses: '1,2',
            address2: 1,
            shown: 'Albany',
            shownDate: 86400,
            shownList: 'Buffalo, Albany',
          },
        },
        {
          id: 2,
          fields: {
            name: 'Bob',
            address: 2,
            addresses: '3',
            address2: 2,
            shown: 'Buffalo',
            shownDate: 0,
            shownList: '',
          },
        },
        {
          id: 3,
          fields: {
            name: 'Carol',
            address: 0,
            addresses: '',
            address2: 0,
            shown: '',
            shownDate: null,
            shownList: '',
          },
        },
      ]);
    });
  }

  s('DELETE column: 200, the rest stay; Grist\'s "table or column" 404s; viewers 403 (item 18)', async () => {
    const {api, chimpy, kiwi} = world();
    const d = await world().newDoc(chimpy, await world().homeWs(chimpy), 'ColumnDelete');
    const url = `${tablePath(d)}/columns`;
    assert.is(ok(await api.del(`${url}/A`, chimpy.as)).body, null);
    assert.equal(
      ok(await api.get(`${url}?hidden=true`, chimpy.as))
        .body.columns.map((c: any) => c.id)
        .sort(),
      ['B', 'C', 'manualSort'],
    );
    isError(
      await api.del(`${tablePath(d, 'NonExistingTable')}/columns/A`, chimpy.as),
      404,
      'Table or column not found "NonExistingTable.A"',
    );
    isError(
      await api.del(`${url}/NonExistingColId`, chimpy.as),
      404,
      'Table or column not found "Table1.NonExistingColId"',
    );
    await world().share(chimpy, `/api/docs/${d}`, {[kiwi.email]: 'viewers'});
    isError(await api.del(`${url}/B`, kiwi.as), 403, 'No write access');
    // Through the tableRef, and the column's data goes with it.
    ok(await api.post(`${tablePath(d)}/records`, {records: [{fields: {B: 'b', C: 'c'}}]}, chimpy.as));
    assert.is(ok(await api.del(`${tablePath(d, '1')}/columns/B`, chimpy.as)).body, null);
    assert.equal(ok(await api.get(`${tablePath(d)}/records`, chimpy.as)).body, {records: [{id: 1, fields: {C: 'c'}}]});
    isError(
      await api.post(`${tablePath(d)}/records`, {records: [{fields: {B: 'x'}}]}, chimpy.as),
      400,
      'Invalid column "B"',
    );
  });

  s(
    "column order follows Grist's in-memory column records: a removed column's place goes to the last one (D49)",
    async () => {
      const {api, chimpy} = world();
      const d = await world().newDoc(chimpy, await world().homeWs(chimpy), 'ColumnOrder');
      const url = `${tablePath(d)}/columns`;
      const order = async (qs = '?hidden=1') =>
        ok(await api.get(`${url}${qs}`, chimpy.as)).body.columns.map((c: any) => c.id);
      ok(await api.post(url, {columns: [{id: 'D'}, {id: 'E'}]}, chimpy.as));
      assert.equal(await order(), ['manualSort', 'A', 'B', 'C', 'D', 'E']);
      ok(await api.del(`${url}/B`, chimpy.as));
      assert.equal(await order(), ['manualSort', 'A', 'E', 'C', 'D'], 'E takes the place of B');
      // PUT: updates, then additions (appended), then removal of the columns listed before the PUT.
      ok(
        await api.call('PUT', `${url}?replaceall=1`, {
          ...chimpy.as,
          json: {
            columns: [
              {id: 'Foo', fields: {type: 'Text'}},
              {id: 'A', fields: {colId: 'NewA'}},
              {id: 'D', fields: {}},
            ],
          },
        }),
      );
      assert.equal(await order(), ['manualSort', 'NewA', 'Foo', 'D'], 'Foo takes the place of E, then C goes');
      assert.equal(await order(''), ['NewA', 'Foo', 'D']);
      const expanded = ok(await api.get(`/api/docs/${d}/tables?expand=column`, chimpy.as)).body.tables;
      assert.equal(
        expanded[0].columns.map((c: any) => c.id),
        ['NewA', 'Foo', 'D'],
      );
    },
  );

  s('PATCH columns: label renames the colId unless untied; formulas follow renames; same fields', async () => {
    const {api, chimpy} = world();
    const d = await newTimesheets(world(), chimpy, 'Renames');
    const cols = async () =>
      ok(await api.get(`${tablePath(d)}/columns`, chimpy.as)).body.columns.map((c: any) => [c.id, c.fields.label]);
    ok(await api.patch(`${tablePath(d)}/columns`, {columns: [{id: 'B', fields: {label: 'My Label!'}}]}, chimpy.as));
    assert.equal((await cols())[1], ['My_Label_', 'My Label!']);
    ok(
      await api.patch(
        `${tablePath(d)}/columns`,
        {columns: [{id: 'C', fields: {label: 'Kept', untieColIdFromLabel: true}}]},
        chimpy.as,
      ),
    );
    assert.equal((await cols())[2], ['C', 'Kept']);
    ok(
      await api.patch(
        `${tablePath(d)}/columns`,
        {columns: [{id: 'My_Label_', fields: {label: 'Other', colId: 'Explicit'}}]},
        chimpy.as,
      ),
    );
    assert.equal((await cols())[1], ['Explicit', 'Other']);
    isError(
      await api.patch(
        `${tablePath(d)}/columns`,
        {
          columns: [
            {id: 'A', fields: {label: 'x'}},
            {id: 'C', fields: {type: 'Text'}},
          ],
        },
        chimpy.as,
      ),
      400,
      'PATCH requires all records to have same fields',
    );
    isInvalidPayload(await api.patch(`${tablePath(d)}/columns`, {}, chimpy.as), 'Error: body.columns is missing');
    // Renaming A rewrites E's formula `$A.upper()`; the data moves with the column.
    ok(await api.patch(`${tablePath(d)}/columns`, {columns: [{id: 'A', fields: {colId: 'Name'}}]}, chimpy.as));
    const e = ok(await api.get(`${tablePath(d)}/columns`, chimpy.as)).body.columns.find(
      (c: any) => c.id === 'E',
    ).fields;
    assert.is(e.formula, '$Name.upper()');
    assert.equal(ok(await api.get(`${tablePath(d)}/records?limit=1`, chimpy.as)).body.records[0].fields, {
      Name: 'hello',
      Explicit: '',
      C: '',
      D: null,
      E: 'HELLO',
    });
  });

  s('PATCH columns: type changes convert stored values; what cannot convert is kept', async () => {
    const {api, chimpy} = world();
    ok(
      await api.post(
        `/api/docs/${doc}/tables`,
        {
          tables: [
            {
              id: 'Conv',
              columns: [{id: 'T2N'}, {id: 'N2T', fields: {type: 'Numeric'}}, {id: 'T2I'}, {id: 'T2D'}, {id: 'T2B'}],
            },
          ],
        },
        chimpy.as,
      ),
    );
    const conv = tablePath(doc, 'Conv');
    ok(
      await api.post(
        `${conv}/records?noparse=1`,
        {
          records: [
            {fields: {T2N: '12', N2T: 12, T2I: '7', T2D: '2024-02-14', T2B: 'true'}},
            {fields: {T2N: 'abc', N2T: 2.5, T2I: 'x', T2D: 'someday', T2B: 'no'}},
          ],
        },
        chimpy.as,
      ),
    );
    const types = {T2N: 'Numeric', N2T: 'Text', T2I: 'Int', T2D: 'Date', T2B: 'Bool'};
    for (const [id, type] of Object.entries(types)) {
      ok(await api.patch(`${conv}/columns`, {columns: [{id, fields: {type}}]}, chimpy.as), `${id} to ${type}`);
    }
    const {id: _id, manualSort: _m, ...data} = ok(await api.get(`${conv}/data`, chimpy.as)).body;
    assert.equal(data, {
      T2N: [12, 'abc'],
      N2T: ['12', '2.5'],
      T2I: [7, 'x'],
      T2D: [1707868800, 'someday'],
      T2B: [true, false],
    });
    const got = ok(await api.get(`${conv}/columns`, chimpy.as)).body.columns.map((c: any) => c.fields.type);
    assert.equal(got, Object.values(types));
    // Ref columns: a type naming another table, and SQL sees the converted storage.
    ok(await api.patch(`${conv}/columns`, {columns: [{id: 'T2I', fields: {type: 'Ref:Conv'}}]}, chimpy.as));
    assert.equal(ok(await api.get(`${conv}/data`, chimpy.as)).body.T2I, [7, 'x']);
    isErrorLike(
      await api.patch(`${conv}/columns`, {columns: [{id: 'Nope', fields: {type: 'Text'}}]}, chimpy.as),
      404,
      /Column not found "Nope"/,
    );
    ok(await api.post(`${tablePath(doc, '_grist_Tables')}/data/delete`, [2], chimpy.as));
  });

  s('PATCH tables: rename normalises the id and moves references; data stays', async () => {
    const {api, chimpy} = world();
    ok(
      await api.post(
        `/api/docs/${doc}/tables`,
        {tables: [{id: 'People', columns: [{id: 'Name'}, {id: 'Boss', fields: {type: 'Ref:People'}}]}]},
        chimpy.as,
      ),
    );
    ok(
      await api.post(
        `${tablePath(doc, 'People')}/records`,
        {records: [{fields: {Name: 'Ann'}}, {fields: {Name: 'Bo', Boss: 1}}]},
        chimpy.as,
      ),
    );
    assert.is(
      ok(
        await api.patch(
          `/api/docs/${doc}/tables`,
          {tables: [{id: 'People', fields: {tableId: 'my staff'}}]},
          chimpy.as,
        ),
      ).body,
      null,
    );
    const ids = ok(await api.get(`/api/docs/${doc}/tables`, chimpy.as)).body.tables.map((t: any) => t.id);
    assert.equal(ids, ['Table1', 'My_staff']);
    isError(await api.get(`${tablePath(doc, 'People')}/records`, chimpy.as), 404, 'Table not found "People"');
    assert.equal(ok(await api.get(`${tablePath(doc, 'My_staff')}/records`, chimpy.as)).body.records, [
      {id: 1, fields: {Name: 'Ann', Boss: 0}},
      {id: 2, fields: {Name: 'Bo', Boss: 1}},
    ]);
    const boss = ok(await api.get(`${tablePath(doc, 'My_staff')}/columns`, chimpy.as)).body.columns[1].fields.type;
    assert.is(boss, 'Ref:My_staff');
    // A rename onto an existing id is de-duplicated (case-insensitively).
    ok(
      await api.patch(`/api/docs/${doc}/tables`, {tables: [{id: 'My_staff', fields: {tableId: 'TABLE1'}}]}, chimpy.as),
    );
    assert.equal(
      ok(await api.get(`/api/docs/${doc}/tables`, chimpy.as)).body.tables.map((t: any) => t.id),
      ['Table1', 'TABLE1_2'],
    );
    isInvalidPayload(await api.patch(`/api/docs/${doc}/tables`, {}, chimpy.as), 'Error: body.tables is missing');
    ok(await api.post(`${tablePath(doc, '_grist_Tables')}/data/delete`, [2], chimpy.as));
  });

  s.run();
}
