/**
 * The deprecated column-oriented `/data` endpoints (SPEC §11, §19 items 9-10) and
 * `POST /apply` with the user actions that Grist clients send (§10.7, §17).
 */
import * as assert from 'uvu/assert';
import {TIMESHEETS, addFoo, filterQs, newTimesheets, tablePath} from './docdata.js';
import {areaSuite, isError, isErrorLike, ok, useWorld, type Target} from './world.js';

const FOO = {
  id: [1, 2, 3, 4],
  A: ['Santa', 'Bob', 'Alice', 'Felix'],
  B: ['1', '11', '2', '22'],
  manualSort: [1, 2, 3, 4],
};

export function dataSuite(target: Target): void {
  const s = areaSuite(target, 'data');
  const world = useWorld(s, target);
  let doc = '';
  let foo = '';

  s('GET /data: column-major, by tableId and tableRef; errors', async () => {
    const {api, chimpy, kiwi} = world();
    doc = await newTimesheets(world());
    const data = {
      id: [1, 2, 3, 4],
      A: ['hello', '', '', ''],
      B: ['', 'world', '', ''],
      C: ['', '', '', ''],
      D: [null, null, null, null],
      E: ['HELLO', '', '', ''],
      manualSort: [1, 2, 3, 4],
    };
    assert.equal(ok(await api.get(`${tablePath(doc)}/data`, chimpy.as)).body, data);
    assert.equal(ok(await api.get(`${tablePath(doc, '1')}/data`, chimpy.as)).body, data);
    assert.equal(ok(await api.get(`${tablePath(doc)}/data?hidden=0`, chimpy.as)).body, data, 'hidden has no effect');
    assert.equal(ok(await api.get(`${tablePath(doc)}/data?${filterQs({id: [1]})}`, chimpy.as)).body, {
      id: [1],
      A: ['hello'],
      B: [''],
      C: [''],
      D: [null],
      E: ['HELLO'],
      manualSort: [1],
    });
    assert.equal(ok(await api.get(`${tablePath(doc)}/data?sort=B&limit=2`, chimpy.as)).body.id, [1, 3]);
    assert.equal(ok(await api.get(`${tablePath(doc)}/data?sort=-B&limit=2`, chimpy.as)).body.id, [2, 1]);
    assert.equal(ok(await api.get(`${tablePath(doc)}/data?limit=2`, chimpy.as)).body.id, [1, 2]);
    isErrorLike(await api.get(`${tablePath('typotypotypo')}/data`, chimpy.as), 404, /document not found/i);
    isError(await api.get(`${tablePath(doc, 'Typo1')}/data`, chimpy.as), 404, 'Table not found "Typo1"');
    isError(await api.get(`${tablePath(doc, 'Bad_Foo_')}/data`, chimpy.as), 404, 'Table not found "Bad_Foo_"');
    isError(await api.get(`${tablePath(doc)}/data`, kiwi.as), 403, 'No view access');
    isError(
      await api.get(`${tablePath(doc)}/data?cellFormat=x`, chimpy.as),
      400,
      'cellFormat parameter x should be one of normal,typed',
    );
    // Metadata tables are readable through the same endpoint.
    const tables = ok(await api.get(`${tablePath(doc, '_grist_Tables')}/data`, chimpy.as)).body;
    assert.equal([tables.id, tables.tableId], [[1], ['Table1']]);
  });

  s('POST /data adds rows and returns ids; PATCH /data updates (items 9-10)', async () => {
    const {api, chimpy} = world();
    await addFoo(world(), doc);
    foo = tablePath(doc, 'Foo');
    assert.equal(ok(await api.get(`${foo}/data`, chimpy.as)).body, FOO);
    assert.equal(ok(await api.post(`${foo}/data`, {A: ['John', 'Jane'], B: [55, 0]}, chimpy.as)).body, [5, 6]);
    assert.equal(ok(await api.get(`${foo}/data?${filterQs({id: [5, 6]})}`, chimpy.as)).body, {
      id: [5, 6],
      A: ['John', 'Jane'],
      B: ['55', '0'],
      manualSort: [5, 6],
    });
    assert.is(ok(await api.patch(`${foo}/data`, {id: [1], A: ['Santa Klaus']}, chimpy.as)).body, null);
    const patched = {
      ...FOO,
      id: [1, 2, 3, 4, 5, 6],
      A: ['Santa Klaus', 'Bob', 'Alice', 'Felix', 'John', 'Jane'],
      B: [...FOO.B, '55', '0'],
      manualSort: [1, 2, 3, 4, 5, 6],
    };
    assert.equal(ok(await api.get(`${foo}/data`, chimpy.as)).body, patched);
    // Invalid ids or columns: 400, and the table is unchanged.
    isErrorLike(
      await api.patch(`${foo}/data`, {id: [1, 9], A: ['Alice', 'Felix']}, chimpy.as),
      400,
      /Invalid row id 9/,
    );
    isErrorLike(
      await api.patch(`${foo}/data`, {id: [1, 7], A: ['Alice', 'Felix']}, chimpy.as),
      400,
      /Invalid row id 7/,
    );
    isErrorLike(
      await api.patch(`${foo}/data`, {id: [10, 7], A: ['Alice', 'Felix']}, chimpy.as),
      400,
      /Invalid row id 10/,
    );
    isError(
      await api.patch(`${foo}/data`, {id: [1], A: ['Alice'], X: ['mystery']}, chimpy.as),
      400,
      'Invalid column "X"',
    );
    isError(await api.post(`${foo}/data`, {A: ['x'], X: ['mystery']}, chimpy.as), 400, 'Invalid column "X"');
    assert.equal(ok(await api.get(`${foo}/data`, chimpy.as)).body, patched);
    // Decision 1: Grist answers 500 to an empty POST body; here it is a 400.
    const empty = await api.post(`${foo}/data`, {}, chimpy.as);
    assert.is(empty.status, 400, `POST /data {} gives ${empty.status} ${empty.text}`);
    assert.type(empty.body.error, 'string');
    isErrorLike(await api.post(`${foo}/data`, {A: 'x'}, chimpy.as), 400, /Invalid payload|array/);
    isErrorLike(await api.patch(`${foo}/data`, {A: ['x']}, chimpy.as), 400, /id/);
    isError(await api.post(`${tablePath(doc, 'Nope')}/data`, {A: ['x']}, chimpy.as), 404, 'Table not found "Nope"');
    // noparse applies to /data writes too.
    ok(
      await api.post(
        `/api/docs/${doc}/tables`,
        {tables: [{id: 'Money', columns: [{id: 'N', fields: {type: 'Numeric'}}]}]},
        chimpy.as,
      ),
    );
    assert.equal(ok(await api.post(`${tablePath(doc, 'Money')}/data`, {N: ['$4']}, chimpy.as)).body, [1]);
    assert.equal(ok(await api.post(`${tablePath(doc, 'Money')}/data?noparse=1`, {N: ['$5']}, chimpy.as)).body, [2]);
    ok(await api.patch(`${tablePath(doc, 'Money')}/data`, {id: [2], N: ['$6']}, chimpy.as));
    assert.equal(ok(await api.get(`${tablePath(doc, 'Money')}/data`, chimpy.as)).body.N, [4, 6]);
    ok(await api.patch(`${tablePath(doc, 'Money')}/data?noparse=1`, {id: [1], N: ['$7']}, chimpy.as));
    assert.equal(ok(await api.get(`${tablePath(doc, 'Money')}/data`, chimpy.as)).body.N, ['$7', 6]);
  });

  s('data/delete and records/delete: null; ids reused (item 10)', async () => {
    const {api, chimpy} = world();
    for (const form of ['data', 'records']) {
      assert.is(ok(await api.post(`${foo}/${form}/delete`, [3, 4, 5, 6], chimpy.as)).body, null, form);
      assert.equal(
        ok(await api.get(`${foo}/data`, chimpy.as)).body,
        {id: [1, 2], A: ['Santa Klaus', 'Bob'], B: ['1', '11'], manualSort: [1, 2]},
        form,
      );
      assert.equal(
        ok(await api.post(`${foo}/data`, {A: ['Alice', 'Felix'], B: [2, 22]}, chimpy.as)).body,
        [3, 4],
        form,
      );
      assert.equal(
        ok(await api.get(`${foo}/data`, chimpy.as)).body,
        {...FOO, A: ['Santa Klaus', 'Bob', 'Alice', 'Felix']},
        form,
      );
      ok(await api.post(`${foo}/data`, {A: ['x', 'y']}, chimpy.as));
    }
    isError(await api.post(`${tablePath(doc, 'Nope')}/data/delete`, [1], chimpy.as), 404, 'Table not found "Nope"');
    isError(await api.post(`${foo}/data/delete`, [1], world().kiwi.as), 403, 'No view access');
  });

  s('POST /apply: record actions, response shape, isModification', async () => {
    const {api, chimpy} = world();
    const d = await world().newDoc(chimpy, await world().homeWs(chimpy), 'Apply');
    const apply = (actions: unknown) => api.post(`/api/docs/${d}/apply`, actions, chimpy.as);
    const res = ok(
      await apply([
        ['AddTable', 'Foo', [{id: 'A'}, {id: 'B'}]],
        ['BulkAddRecord', 'Foo', [1, 2], {A: ['Santa', 'Bob'], B: [1, 11]}],
      ]),
    );
    assert.equal(Object.keys(res.body).sort(), ['actionHash', 'actionNum', 'isModification', 'retValues']);
    assert.type(res.body.actionNum, 'number');
    assert.type(res.body.actionHash, 'string');
    assert.is(res.body.isModification, true);
    assert.equal(res.body.retValues[1], [1, 2]);
    assert.equal(res.body.retValues[0].table_id, 'Foo');
    assert.equal(ok(await api.get(`${tablePath(d, 'Foo')}/data`, chimpy.as)).body, {
      id: [1, 2],
      A: ['Santa', 'Bob'],
      B: ['1', '11'],
      manualSort: [1, 2],
    });
    const next = ok(
      await apply([
        ['AddRecord', 'Foo', null, {A: 'Alice', B: '2'}],
        ['UpdateRecord', 'Foo', 1, {A: 'Santa Klaus'}],
        ['BulkUpdateRecord', 'Foo', [2, 3], {B: ['111', '222']}],
        ['AddRecord', 'Foo', 10, {A: 'Ten'}],
      ]),
    ).body;
    assert.equal(next.retValues, [3, null, null, 10]);
    assert.ok(next.actionNum > res.body.actionNum, 'actionNum grows');
    assert.equal(ok(await api.get(`${tablePath(d, 'Foo')}/data`, chimpy.as)).body, {
      id: [1, 2, 3, 10],
      A: ['Santa Klaus', 'Bob', 'Alice', 'Ten'],
      B: ['1', '111', '222', ''],
      manualSort: [1, 2, 3, 10],
    });
    assert.equal(
      ok(
        await apply([
          ['RemoveRecord', 'Foo', 10],
          ['BulkRemoveRecord', 'Foo', [2, 3]],
        ]),
      ).body.retValues,
      [null, null],
    );
    assert.equal(ok(await api.get(`${tablePath(d, 'Foo')}/data`, chimpy.as)).body.id, [1]);
    assert.is(ok(await apply([])).body.isModification, false);
    // noparse on /apply.
    ok(await apply([['AddTable', 'Money', [{id: 'N', type: 'Numeric'}]]]));
    ok(await apply([['AddRecord', 'Money', null, {N: '$4'}]]));
    ok(await api.post(`/api/docs/${d}/apply?noparse=1`, [['AddRecord', 'Money', null, {N: '$5'}]], chimpy.as));
    assert.equal(ok(await api.get(`${tablePath(d, 'Money')}/data`, chimpy.as)).body.N, [4, '$5']);
  });

  s('POST /apply: table and column actions', async () => {
    const {api, chimpy} = world();
    const d = await world().newDoc(chimpy, await world().homeWs(chimpy), 'Apply2');
    const apply = (actions: unknown) => api.post(`/api/docs/${d}/apply`, actions, chimpy.as);
    ok(
      await apply([
        ['AddTable', 'People', [{id: 'Name', type: 'Text', isFormula: false}]],
        ['AddColumn', 'People', 'Age', {type: 'Int', isFormula: false}],
        ['AddRecord', 'People', null, {Name: 'Ann', Age: 30}],
      ]),
    );
    const colIds = async (t: string) =>
      ok(await api.get(`${tablePath(d, t)}/columns`, chimpy.as)).body.columns.map((c: any) => c.id);
    assert.equal(await colIds('People'), ['Name', 'Age']);
    assert.equal(ok(await apply([['RenameColumn', 'People', 'Age', 'Years']])).body.retValues, ['Years']);
    ok(await apply([['ModifyColumn', 'People', 'Years', {type: 'Text'}]]));
    const years = ok(await api.get(`${tablePath(d, 'People')}/columns`, chimpy.as)).body.columns[1];
    assert.equal([years.id, years.fields.type], ['Years', 'Text']);
    assert.equal(ok(await api.get(`${tablePath(d, 'People')}/records`, chimpy.as)).body.records, [
      {id: 1, fields: {Name: 'Ann', Years: '30'}},
    ]);
    ok(await apply([['RemoveColumn', 'People', 'Years']]));
    assert.equal(await colIds('People'), ['Name']);
    const renamed = ok(await apply([['RenameTable', 'People', 'Staff']])).body.retValues;
    assert.equal(renamed, ['Staff']);
    assert.equal(
      ok(await api.get(`/api/docs/${d}/tables`, chimpy.as)).body.tables.map((t: any) => t.id),
      ['Table1', 'Staff'],
    );
    ok(await apply([['RemoveTable', 'Staff']]));
    assert.equal(
      ok(await api.get(`/api/docs/${d}/tables`, chimpy.as)).body.tables.map((t: any) => t.id),
      ['Table1'],
    );
    isError(await api.get(`${tablePath(d, 'Staff')}/records`, chimpy.as), 404, 'Table not found "Staff"');
  });

  s('POST /apply: unsupported actions name themselves; a failing bundle changes nothing; access', async () => {
    const {api, chimpy, kiwi} = world();
    const apply = (actions: unknown, as = chimpy.as) => api.post(`/api/docs/${doc}/apply`, actions, as);
    isErrorLike(await apply([['FrobnicateTable', 'Table1']]), 400, /FrobnicateTable/);
    isErrorLike(
      await apply([
        ['AddRecord', 'Table1', null, {A: 'x'}],
        ['CreateViewSection', 1, 0, 'record', [99999], null],
      ]),
      400,
      /Invalid column requested/,
    );
    isErrorLike(
      await apply([
        ['AddRecord', 'Table1', null, {A: 'x'}],
        ['AddRecord', 'NoTable', null, {}],
      ]),
      400,
      /NoTable/,
    );
    isErrorLike(
      await apply([
        ['AddRecord', 'Table1', null, {A: 'x'}],
        ['UpdateRecord', 'Table1', 99, {A: 'y'}],
      ]),
      400,
      /99/,
    );
    isErrorLike(await apply([['AddRecord', 'Table1', null, {Nope: 'x'}]]), 400, /Nope/);
    assert.equal(
      ok(await api.get(`${tablePath(doc)}/records`, chimpy.as)).body,
      {records: TIMESHEETS},
      'nothing was applied',
    );
    const notList = await apply({actions: []});
    assert.is(notList.status, 400);
    isError(await apply([['AddTable', 'FooBar', [{id: 'A'}]]], kiwi.as), 403, 'No view access');
    await world().share(chimpy, `/api/docs/${doc}`, {[kiwi.email]: 'viewers'});
    isError(await apply([['AddTable', 'FooBar', [{id: 'A'}]]], kiwi.as), 403, 'No write access');
    await world().share(chimpy, `/api/docs/${doc}`, {[kiwi.email]: null});
    isError(await api.get(`${tablePath(doc, 'FooBar')}/data`, chimpy.as), 404, 'Table not found "FooBar"');
  });

  s('POST /data with uneven columns: short columns get their type default, as Grist does (issue 15)', async () => {
    const {api, chimpy} = world();
    const d = await world().newDoc(chimpy, await world().homeWs(chimpy), 'Uneven');
    ok(
      await api.post(
        `/api/docs/${d}/tables`,
        {
          tables: [
            {
              id: 'T',
              columns: [
                {id: 'Name', fields: {type: 'Text'}},
                {id: 'N', fields: {type: 'Int'}},
                {id: 'X', fields: {type: 'Numeric'}},
                {id: 'B', fields: {type: 'Bool'}},
                {id: 'Dt', fields: {type: 'Date'}},
                {id: 'R', fields: {type: 'Ref:T'}},
              ],
            },
          ],
        },
        chimpy.as,
      ),
    );
    assert.equal(
      ok(
        await api.post(
          `${tablePath(d, 'T')}/data`,
          {Name: ['a', 'b', 'c'], N: [5], X: [], B: [true], Dt: [1], R: [1, 2]},
          chimpy.as,
        ),
      ).body,
      [1, 2, 3],
    );
    const data = ok(await api.get(`${tablePath(d, 'T')}/data`, chimpy.as)).body;
    assert.equal(
      [data.Name, data.N, data.X, data.B, data.Dt, data.R],
      [
        ['a', 'b', 'c'],
        [5, 0, 0],
        [0, 0, 0],
        [true, false, false],
        [1, null, null],
        [1, 2, 0],
      ],
    );
    // The first column sets the row count; longer columns are cut to it.
    assert.equal(ok(await api.post(`${tablePath(d, 'T')}/data`, {N: [7], Name: ['x', 'y']}, chimpy.as)).body, [4]);
    assert.equal(
      ok(await api.get(`${tablePath(d, 'T')}/records?filter=${encodeURIComponent('{"id":[4]}')}`, chimpy.as)).body
        .records[0].fields.Name,
      'x',
    );
  });

  s(
    "sorting an Any column follows Grist's typedCompare: booleans < numbers < null < lists < strings (issue 15)",
    async () => {
      const {api, chimpy} = world();
      const d = await world().newDoc(chimpy, await world().homeWs(chimpy), 'AnySort');
      ok(
        await api.post(
          `/api/docs/${d}/tables`,
          {tables: [{id: 'T', columns: [{id: 'V', fields: {type: 'Any'}}]}]},
          chimpy.as,
        ),
      );
      const values = ['abc', true, 5, null, ['L', 1, 2], false, 2.5, 'Abd'];
      ok(await api.post(`/api/docs/${d}/tables/T/records`, {records: values.map((V) => ({fields: {V}}))}, chimpy.as));
      const sorted = async (sort: string) =>
        ok(await api.get(`/api/docs/${d}/tables/T/records?sort=${sort}`, chimpy.as)).body.records.map(
          (r: any) => r.fields.V,
        );
      const asc = [false, true, 2.5, 5, null, ['L', 1, 2], 'abc', 'Abd'];
      assert.equal(await sorted('V'), asc);
      assert.equal(await sorted('-V'), [...asc].reverse());
    },
  );

  s.run();
}
