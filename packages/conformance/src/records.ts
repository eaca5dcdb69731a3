/**
 * Records (SPEC §7.3-§7.5, §10, §19 items 1-8 and 10-15): GET/POST/PATCH/PUT /records,
 * records/list, records/delete, filter/sort/limit (query and X-Sort/X-Limit), hidden,
 * cellFormat=typed, noparse, flat, add-or-update, and the exact error bodies.
 */
import * as assert from 'uvu/assert';
import {multipart} from './attachments.js';
import {TIMESHEETS, addFoo, filterQs, ids, newTimesheets, tablePath} from './docdata.js';
import {areaSuite, isError, isErrorLike, isInvalidPayload, ok, useWorld, type Target} from './world.js';

const NOT_A_CELL_VALUE =
  'Error: body.records[0] is not a NewRecord; body.records[0].fields.A is not a CellValue; ' +
  'body.records[0].fields.A is none of number, string, boolean, null, 1 more; ' +
  'body.records[0].fields.A[0] is not a GristObjCode; body.records[0].fields.A[0] is not a valid enum value';

export function recordsSuite(target: Target): void {
  const s = areaSuite(target, 'records');
  const world = useWorld(s, target);
  let doc = ''; // Timesheets, with Foo added
  let t = '';
  let up = ''; // a new doc for add-or-update

  s('GET records: Timesheets exactly, by tableId and tableRef; hidden adds manualSort (item 1)', async () => {
    const {api, chimpy} = world();
    doc = await newTimesheets(world());
    t = tablePath(doc);
    const res = ok(await api.get(`${t}/records`, chimpy.as));
    assert.match(res.headers['content-type'], /^application\/json/);
    assert.equal(res.body, {records: TIMESHEETS});
    assert.equal(ok(await api.get(`${tablePath(doc, '1')}/records`, chimpy.as)).body, {records: TIMESHEETS});
    const hidden = ok(await api.get(`${t}/records?hidden=true`, chimpy.as)).body.records;
    assert.equal(
      hidden,
      TIMESHEETS.map((r) => ({id: r.id, fields: {...r.fields, manualSort: r.id}})),
    );
    assert.equal(ok(await api.get(`${t}/records?hidden=0`, chimpy.as)).body, {records: TIMESHEETS}, 'hidden=0 is off');
  });

  s('GET records: unknown table, doc, bad cellFormat, no access', async () => {
    const {api, chimpy, kiwi} = world();
    isError(await api.get(`${tablePath(doc, 'Typo1')}/records`, chimpy.as), 404, 'Table not found "Typo1"');
    isError(await api.get(`${tablePath(doc, '99')}/records`, chimpy.as), 404, 'Table not found "99"');
    isError(await api.get(`${tablePath('nosuchdoc')}/records`, chimpy.as), 404, 'document not found');
    isError(
      await api.get(`${t}/records?cellFormat=odd`, chimpy.as),
      400,
      'cellFormat parameter odd should be one of normal,typed',
    );
    isError(await api.get(`${t}/records`, kiwi.as), 403, 'No view access');
    isError(await api.get(`${t}/records`), 403, 'No view access');
    // A viewer reads but does not write.
    await world().share(chimpy, `/api/docs/${doc}`, {[kiwi.email]: 'viewers'});
    assert.equal(ok(await api.get(`${t}/records`, kiwi.as)).body, {records: TIMESHEETS});
    isError(await api.post(`${t}/records`, {records: [{}]}, kiwi.as), 403, 'No write access');
    isError(await api.patch(`${t}/records`, {records: [{id: 1, fields: {A: 'x'}}]}, kiwi.as), 403, 'No write access');
    isError(
      await api.call('PUT', `${t}/records`, {...kiwi.as, json: {records: [{require: {A: 'x'}}]}}),
      403,
      'No write access',
    );
    isError(await api.post(`${t}/records/delete`, [1], kiwi.as), 403, 'No write access');
    await world().share(chimpy, `/api/docs/${doc}`, {[kiwi.email]: null});
    assert.equal(ok(await api.get(`${t}/records`, chimpy.as)).body, {records: TIMESHEETS}, 'nothing changed');
  });

  s('errors in cells: null plus an errors map in /records, raw in /data (item 2)', async () => {
    const {api, chimpy} = world();
    ok(
      await api.post(
        `/api/docs/${doc}/apply`,
        [
          [
            'AddTable',
            'Errs',
            [
              {id: 'A', type: 'Any', isFormula: false},
              {id: 'B', type: 'Text', isFormula: false},
              {id: 'C', type: 'Numeric', isFormula: false},
            ],
          ],
          ['AddRecord', 'Errs', null, {A: ['E', 'ZeroDivisionError'], B: 'Hi', C: 1}],
          // A hidden display helper (Grist removes one that no column uses, so B uses it).
          ['SetDisplayFormula', 'Errs', null, 'B', '$B'],
          ['ModifyColumn', 'Errs', 'A', {isFormula: true, formula: '1/0'}],
        ],
        chimpy.as,
      ),
    );
    const errs = tablePath(doc, 'Errs');
    assert.equal(ok(await api.get(`${errs}/records`, chimpy.as)).body, {
      records: [{id: 1, fields: {A: null, B: 'Hi', C: 1}, errors: {A: 'ZeroDivisionError'}}],
    });
    assert.equal(ok(await api.get(`${errs}/data`, chimpy.as)).body, {
      id: [1],
      manualSort: [1],
      A: [['E', 'ZeroDivisionError']],
      B: ['Hi'],
      C: [1],
      gristHelper_Display: ['Hi'],
    });
    assert.equal(ok(await api.get(`${errs}/records?hidden=1`, chimpy.as)).body.records[0].fields, {
      A: null,
      B: 'Hi',
      C: 1,
      manualSort: 1,
      gristHelper_Display: 'Hi',
    });
  });

  s('filter: /data, /records and records/list agree (item 3); bad filters are 400', async () => {
    const {api, chimpy} = world();
    const data = (f: unknown) => api.get(`${t}/data?${filterQs(f)}`, chimpy.as);
    assert.equal(ok(await data({B: ['world']})).body, {
      id: [2],
      A: [''],
      B: ['world'],
      C: [''],
      D: [null],
      E: [''],
      manualSort: [2],
    });
    assert.equal(ok(await data({B: [''], A: ['']})).body.id, [3, 4]);
    assert.equal(ok(await data({B: ['world'], C: ['Neptune']})).body, {
      id: [],
      A: [],
      B: [],
      C: [],
      D: [],
      E: [],
      manualSort: [],
    });
    assert.equal(ok(await data({A: ['hello', 'nope'], id: [1, 2]})).body.id, [1], 'AND across columns, OR within');
    assert.equal(ok(await data({})).body.id, [1, 2, 3, 4], 'an empty filter keeps every row');
    assert.equal(ok(await api.get(`${t}/records?${filterQs({B: ['world']})}`, chimpy.as)).body, {
      records: [TIMESHEETS[1]],
    });
    assert.equal(ok(await api.get(`${t}/records?${filterQs({B: ['zz']})}`, chimpy.as)).body, {records: []});
    isErrorLike(await data({BadCol: ['']}), 400, /BadCol/);
    isError(await data({B: 'world'}), 400, 'Invalid query: filter values must be arrays');
    // Decision 1: malformed JSON is a 400 naming the filter, not Grist's 500.
    isErrorLike(await api.get(`${t}/records?filter=%7Bnope`, chimpy.as), 400, /filter/);
    isErrorLike(await api.get(`${t}/records?filter=%5B1%5D`, chimpy.as), 400, /filter/);
    // POST records/list takes the same parameters in the body and answers the same.
    const list = (body: unknown) => api.post(`${t}/records/list`, body, chimpy.as);
    assert.equal(
      ok(await list({filter: {B: ['world']}})).body,
      ok(await api.get(`${t}/records?${filterQs({B: ['world']})}`, chimpy.as)).body,
    );
    assert.equal(ids(await list({sort: ['B', '-A'], limit: 3})), [1, 3, 4]);
    assert.equal(ok(await list({})).body, {records: TIMESHEETS});
    assert.equal(ok(await list({hidden: true})).body.records[0].fields.manualSort, 1);
    for (const bad of [{sort: 'A'}, {limit: 'abc'}, {filter: 'bad'}, {filter: {B: 'world'}}, {cellFormat: 'odd'}]) {
      const res = await list(bad);
      assert.is(res.status, 400, JSON.stringify(bad));
      assert.is(res.body.error, 'Invalid payload', JSON.stringify(bad));
    }
    isInvalidPayload(await list({sort: 'A'}), 'Error: body.sort is not an array');
    isInvalidPayload(await list({limit: 'abc'}), 'Error: body.limit is not a number');
    isErrorLike(await list({filter: {BadCol: [1]}}), 400, /BadCol/);
  });

  s('sort and limit, as query parameters or X-Sort/X-Limit headers (item 4)', async () => {
    const {api, chimpy} = world();
    const get = (qs: string, headers?: Record<string, string>) => api.get(`${t}/records${qs}`, {...chimpy.as, headers});
    assert.equal(ids(await get('?sort=A')), [2, 3, 4, 1]);
    assert.equal(ids(await get('?sort=-A')), [1, 2, 3, 4]);
    assert.equal(ids(await get('?sort=B,-A')), [1, 3, 4, 2]);
    assert.equal(ids(await get('?sort=-B,A&limit=2')), [2, 3]);
    assert.equal(ids(await get('?sort=-id&limit=2')), [4, 3]);
    assert.equal(ids(await get('?limit=1')), [1]);
    assert.equal(ids(await get('?limit=0')), [1, 2, 3, 4], 'limit 0 means none');
    assert.equal(ids(await get('?limit=-1')), [1, 2, 3], 'a negative limit drops rows from the end');
    assert.equal(ids(await get('', {'x-sort': 'A'})), [2, 3, 4, 1]);
    assert.equal(ids(await get('', {'x-sort': '-B,A', 'x-limit': '2'})), [2, 3]);
    assert.equal(ids(await get('', {'x-sort': '-id', 'x-limit': '2'})), [4, 3]);
    assert.equal(ids(await get('', {'x-limit': '1'})), [1]);
    assert.equal(ids(await get('?sort=A', {'x-sort': '-A'})), [2, 3, 4, 1], 'the query parameter wins');
    assert.equal(ids(await get('?limit=3', {'x-limit': '1'})), [1, 2, 3], 'the query parameter wins');
    assert.equal(ok(await api.get(`${t}/data?sort=-id&limit=2`, chimpy.as)).body.id, [4, 3]);
    assert.equal(
      ok(await api.get(`${t}/data`, {...chimpy.as, headers: {'x-sort': '-id', 'x-limit': '3'}})).body.id,
      [4, 3, 2],
    );
    // Decision 1: Grist's 500s are 400s here.
    isError(await get('?limit=abc'), 400, 'limit is not a number');
    isError(await get('', {'x-limit': 'abc'}), 400, 'limit is not a number');
    isErrorLike(await get('?sort=Nope'), 400, /Nope/);
    isErrorLike(await get('', {'x-sort': 'Nope'}), 400, /Nope/);
  });

  s('sort options: naturalSort, emptyLast, orderByChoice; ties by manualSort', async () => {
    const {api, chimpy} = world();
    ok(
      await api.post(
        `/api/docs/${doc}/tables`,
        {
          tables: [
            {
              id: 'Names',
              columns: [
                {id: 'N'},
                {id: 'Size', fields: {type: 'Choice', widgetOptions: JSON.stringify({choices: ['S', 'M', 'L']})}},
              ],
            },
          ],
        },
        chimpy.as,
      ),
    );
    const names = tablePath(doc, 'Names');
    ok(
      await api.post(
        `${names}/records`,
        {records: ['a11', '', 'a2', 'a1', 'b'].map((N, i) => ({fields: {N, Size: ['L', 'M', 'S', 'M', 'L'][i]}}))},
        chimpy.as,
      ),
    );
    const order = async (sort: string) =>
      ok(await api.get(`${names}/records?sort=${encodeURIComponent(sort)}`, chimpy.as)).body.records.map(
        (r: any) => r.fields.N,
      );
    assert.equal(await order('N'), ['', 'a1', 'a11', 'a2', 'b']);
    assert.equal(await order('N:naturalSort'), ['', 'a1', 'a2', 'a11', 'b']);
    assert.equal(await order('N:naturalSort;emptyLast'), ['a1', 'a2', 'a11', 'b', '']);
    assert.equal(await order('-N:emptyLast'), ['b', 'a2', 'a11', 'a1', '']);
    assert.equal(await order('Size:orderByChoice'), ['a2', '', 'a1', 'a11', 'b'], 'S, M, L; ties by row order');
    assert.equal(await order('Size'), ['a11', 'b', '', 'a1', 'a2'], 'alphabetical: L, M, S');
    // Ties follow manualSort, which need not follow the row ids.
    ok(await api.patch(`${names}/records`, {records: [{id: 1, fields: {manualSort: 10}}]}, chimpy.as));
    assert.equal(await order('Size'), ['b', 'a11', '', 'a1', 'a2']);
    // Mixed types in an Any column: numbers, then null, then strings (Grist's typed compare).
    ok(
      await api.post(
        `/api/docs/${doc}/apply`,
        [
          ['AddTable', 'Mixed', [{id: 'M', type: 'Any', isFormula: false}]],
          [
            'BulkAddRecord',
            'Mixed',
            [null, null, null, null, null, null, null, null],
            {M: ['red', 'green', 'white', 2.5, 1, null, 5, 'blue']},
          ],
        ],
        chimpy.as,
      ),
    );
    const mixed = ok(await api.get(`${tablePath(doc, 'Mixed')}/data?sort=M`, chimpy.as)).body;
    assert.equal(mixed.M, [1, 2.5, 5, null, 'blue', 'green', 'red', 'white']);
    assert.equal(mixed.id, [5, 4, 7, 6, 8, 2, 1, 3]);
  });

  s('cellFormat=typed re-encodes by column type and keeps errors inline (item 5)', async () => {
    const {api, chimpy} = world();
    ok(
      await api.post(
        `/api/docs/${doc}/tables`,
        {
          tables: [
            {
              id: 'Typed',
              columns: [
                {id: 'Date', fields: {type: 'Date'}},
                {id: 'DT', fields: {type: 'DateTime:America/New_York'}},
                {id: 'Ref', fields: {type: 'Ref:Typed'}},
                {id: 'RefList', fields: {type: 'RefList:Typed'}},
                {id: 'Att', fields: {type: 'Attachments'}},
                {id: 'CL', fields: {type: 'ChoiceList'}},
                {id: 'Int', fields: {type: 'Int'}},
                {id: 'Bool', fields: {type: 'Bool'}},
                {id: 'Text', fields: {type: 'Text'}},
                {id: 'Err', fields: {type: 'Any'}},
              ],
            },
          ],
        },
        chimpy.as,
      ),
    );
    const typed = tablePath(doc, 'Typed');
    ok(
      await api.post(
        `${typed}/records`,
        {
          records: [
            {
              fields: {
                Date: 1707868800,
                DT: 1707868800,
                Ref: 1,
                RefList: ['L', 2, 1],
                Att: ['L', 1, 2],
                CL: ['L', 'a', 'b'],
                Int: 5,
                Bool: true,
                Text: 'x',
                Err: ['E', 'ValueError'],
              },
            },
          ],
        },
        chimpy.as,
      ),
    );
    ok(await api.post(`${typed}/records`, {records: [{}]}, chimpy.as));
    const normal = ok(await api.get(`${typed}/records`, chimpy.as)).body.records;
    assert.equal(normal, [
      {
        id: 1,
        fields: {
          Date: 1707868800,
          DT: 1707868800,
          Ref: 1,
          RefList: ['L', 2, 1],
          Att: ['L', 1, 2],
          CL: ['L', 'a', 'b'],
          Int: 5,
          Bool: true,
          Text: 'x',
          Err: null,
        },
        errors: {Err: 'ValueError'},
      },
      {
        id: 2,
        fields: {
          Date: null,
          DT: null,
          Ref: 0,
          RefList: null,
          Att: null,
          CL: null,
          Int: 0,
          Bool: false,
          Text: '',
          Err: null,
        },
      },
    ]);
    const expected = [
      {
        id: 1,
        fields: {
          Date: ['d', 1707868800],
          DT: ['D', 1707868800, 'America/New_York'],
          Ref: ['R', 'Typed', 1],
          RefList: ['r', 'Typed', [2, 1]],
          Att: ['r', '_grist_Attachments', [1, 2]],
          CL: ['L', 'a', 'b'],
          Int: 5,
          Bool: true,
          Text: 'x',
          Err: ['E', 'ValueError'],
        },
      },
      {
        id: 2,
        fields: {
          Date: null,
          DT: null,
          Ref: ['R', 'Typed', 0],
          RefList: ['r', 'Typed', []],
          Att: ['r', '_grist_Attachments', []],
          CL: ['L'],
          Int: 0,
          Bool: false,
          Text: '',
          Err: null,
        },
      },
    ];
    assert.equal(ok(await api.get(`${typed}/records?cellFormat=typed`, chimpy.as)).body.records, expected);
    assert.equal(ok(await api.post(`${typed}/records/list`, {cellFormat: 'typed'}, chimpy.as)).body.records, expected);
    const cols = ok(await api.get(`${typed}/data?cellFormat=typed`, chimpy.as)).body;
    assert.equal(cols.Ref, [
      ['R', 'Typed', 1],
      ['R', 'Typed', 0],
    ]);
    assert.equal(cols.Err, [['E', 'ValueError'], null]);
    // Filters compare stored values with Python equality: true == 1 and 5 == 5.0.
    assert.equal(ids(await api.get(`${typed}/records?${filterQs({Bool: [true]})}`, chimpy.as)), [1]);
    assert.equal(ids(await api.get(`${typed}/records?${filterQs({Bool: [1]})}`, chimpy.as)), [1]);
    assert.equal(ids(await api.get(`${typed}/records?${filterQs({Bool: [false]})}`, chimpy.as)), [2]);
    assert.equal(ids(await api.get(`${typed}/records?${filterQs({Int: [5.0], Ref: [1]})}`, chimpy.as)), [1]);
  });

  s('formulas returning attachment records: typed and normal as Grist (its DocApiRecords "ALL" column)', async () => {
    const {api, chimpy} = world();
    const d = await world().newDoc(chimpy, await world().homeWs(chimpy), 'AttachmentFormulas');
    const {body, headers} = multipart([
      {name: 'hello.doc', content: 'foobar'},
      {name: 'world.jpg', content: '123456'},
    ]);
    assert.equal(
      ok(await api.call('POST', `/api/docs/${d}/attachments`, {key: chimpy.key, body, headers})).body,
      [1, 2],
    );
    ok(
      await api.post(
        `/api/docs/${d}/apply`,
        [
          ['AddColumn', 'Table1', 'Att', {type: 'Attachments'}],
          ['AddColumn', 'Table1', 'DT', {type: 'DateTime:America/New_York'}],
          ['AddColumn', 'Table1', 'ALL', {type: 'Any', isFormula: true, formula: '[$Att, $DT, $A]'}],
          ['AddColumn', 'Table1', 'Files', {type: 'Any', isFormula: true, formula: '$Att'}],
          ['AddColumn', 'Table1', 'First', {type: 'Any', isFormula: true, formula: '$Att[0] if $Att else None'}],
          ['AddColumn', 'Table1', 'Names', {type: 'Any', isFormula: true, formula: '$Att.fileName'}],
          ['AddRecord', 'Table1', null, {Att: ['L', 1, 2], DT: 1707868800, A: 'x'}],
          ['AddRecord', 'Table1', null, {}],
        ],
        chimpy.as,
      ),
    );
    const fields = (records: any[]) =>
      records.map((r) => [r.fields.ALL, r.fields.Files, r.fields.First, r.fields.Names]);
    // An Any column holds the records themselves, whatever the cell format.
    const expected = [
      [
        ['L', ['r', '_grist_Attachments', [1, 2]], ['D', 1707868800, 'America/New_York'], 'x'],
        ['r', '_grist_Attachments', [1, 2]],
        ['R', '_grist_Attachments', 1],
        ['L', 'hello.doc', 'world.jpg'],
      ],
      [['L', ['r', '_grist_Attachments', []], null, ''], ['r', '_grist_Attachments', []], null, ['L']],
    ];
    const t = tablePath(d);
    assert.equal(fields(ok(await api.get(`${t}/records?cellFormat=typed`, chimpy.as)).body.records), expected);
    assert.equal(fields(ok(await api.get(`${t}/records`, chimpy.as)).body.records), expected);
    const cols = ok(await api.get(`${t}/data?cellFormat=typed`, chimpy.as)).body;
    assert.equal(cols.Files, [
      ['r', '_grist_Attachments', [1, 2]],
      ['r', '_grist_Attachments', []],
    ]);
    assert.equal(cols.Att, cols.Files);
    // An upload is a write (Grist's AddAttachments): formulas over attachments follow it at once.
    ok(
      await api.post(
        `/api/docs/${d}/apply`,
        [['AddColumn', 'Table1', 'Count', {formula: 'len(_grist_Attachments.all)'}]],
        chimpy.as,
      ),
    );
    const third = multipart([{name: 'third.txt', content: 'abc'}]);
    assert.equal(ok(await api.call('POST', `/api/docs/${d}/attachments`, {key: chimpy.key, ...third})).body, [3]);
    assert.equal(ok(await api.get(`${t}/data`, chimpy.as)).body.Count, [3, 3]);
    ok(await api.patch(`${t}/records`, {records: [{id: 2, fields: {Att: ['L', 3]}}]}, chimpy.as));
    assert.equal(ok(await api.get(`${t}/data`, chimpy.as)).body.Names, [
      ['L', 'hello.doc', 'world.jpg'],
      ['L', 'third.txt'],
    ]);
  });

  s('POST records: ids, values read back as stored, blank rows, flat, ids ignored (item 6)', async () => {
    const {api, chimpy} = world();
    await addFoo(world(), doc);
    const foo = tablePath(doc, 'Foo');
    const res = ok(
      await api.post(
        `${foo}/records`,
        {records: [{fields: {A: 'John', B: 55}}, {fields: {A: 'Jane', B: 0}}]},
        chimpy.as,
      ),
    );
    assert.equal(res.body, {records: [{id: 5}, {id: 6}]});
    const got = ok(await api.get(`${foo}/records?${filterQs({id: [5, 6]})}`, chimpy.as)).body.records;
    assert.equal(got, [
      {id: 5, fields: {A: 'John', B: '55'}},
      {id: 6, fields: {A: 'Jane', B: '0'}},
    ]);
    // A record missing a key gets null for that column (not the type default).
    assert.equal(
      ok(await api.post(`${foo}/records`, {records: [{fields: {A: 'x'}}, {fields: {B: 'y'}}]}, chimpy.as)).body,
      {records: [{id: 7}, {id: 8}]},
    );
    assert.equal(ok(await api.get(`${foo}/data?${filterQs({id: [7, 8]})}`, chimpy.as)).body, {
      id: [7, 8],
      manualSort: [7, 8],
      A: ['x', null],
      B: [null, 'y'],
    });
    // An `id` key is ignored; flat takes a bare array.
    assert.equal(ok(await api.post(`${foo}/records`, {records: [{id: 99, fields: {A: 'i'}}]}, chimpy.as)).body, {
      records: [{id: 9}],
    });
    const flat = ok(
      await api.post(`${foo}/records?flat=1`, [{A: 'f1', B: 'b1', id: 77}, {fields: {A: 'f2'}}], chimpy.as),
    );
    assert.equal(flat.body, {records: [{id: 10}, {id: 11}]});
    assert.equal(ok(await api.get(`${foo}/data?${filterQs({id: [10, 11]})}`, chimpy.as)).body, {
      id: [10, 11],
      manualSort: [10, 11],
      A: ['f1', 'f2'],
      B: ['b1', null],
    });
    isInvalidPayload(
      await api.post(`${foo}/records`, [{A: 'x'}], chimpy.as),
      'Error: body.records is missing',
      'bare array without flat',
    );
    ok(await api.post(`${foo}/records/delete`, [7, 8, 9, 10, 11], chimpy.as));
    // On a new doc, {} and {fields: {}} each add a blank row.
    const fresh = await world().newDoc(chimpy, await world().homeWs(chimpy), 'Fresh');
    assert.equal(ok(await api.post(`${tablePath(fresh)}/records`, {records: [{}, {fields: {}}]}, chimpy.as)).body, {
      records: [{id: 1}, {id: 2}],
    });
    assert.equal(ok(await api.get(`${tablePath(fresh)}/records`, chimpy.as)).body, {
      records: [
        {id: 1, fields: {A: null, B: null, C: null}},
        {id: 2, fields: {A: null, B: null, C: null}},
      ],
    });
  });

  s('POST records: type guessing for empty columns, string parsing and noparse (§7.4, §7.5)', async () => {
    const {api, chimpy} = world();
    const wid = await world().homeWs(chimpy);
    const d1 = await world().newDoc(chimpy, wid, 'Guess');
    ok(await api.post(`${tablePath(d1)}/records`, {records: [{fields: {A: 1}}, {fields: {B: 2}}, {}]}, chimpy.as));
    assert.equal(ok(await api.get(`${tablePath(d1)}/data`, chimpy.as)).body, {
      id: [1, 2, 3],
      manualSort: [1, 2, 3],
      A: [1, null, null],
      B: [null, 2, null],
      C: [null, null, null],
    });
    const types = ok(await api.get(`${tablePath(d1)}/columns`, chimpy.as)).body.columns.map((c: any) => [
      c.id,
      c.fields.type,
      c.fields.isFormula,
    ]);
    assert.equal(types, [
      ['A', 'Numeric', false],
      ['B', 'Numeric', false],
      ['C', 'Any', true],
    ]);
    const d2 = await world().newDoc(chimpy, wid, 'Guess2');
    ok(
      await api.post(
        `${tablePath(d2)}/records`,
        {records: [{fields: {A: '1970-01-02', B: 'true', C: '1.2'}}]},
        chimpy.as,
      ),
    );
    assert.equal(ok(await api.get(`${tablePath(d2)}/records`, chimpy.as)).body.records, [
      {id: 1, fields: {A: 86400, B: true, C: 1.2}},
    ]);
    const types2 = ok(await api.get(`${tablePath(d2)}/columns`, chimpy.as)).body.columns.map((c: any) => c.fields.type);
    assert.equal(types2, ['Date', 'Bool', 'Numeric']);
    // Parsing by column type, and what noparse leaves to the engine's own conversion.
    ok(
      await api.post(
        `/api/docs/${doc}/tables`,
        {
          tables: [
            {
              id: 'Nums',
              columns: [
                {id: 'N', fields: {type: 'Numeric'}},
                {id: 'I', fields: {type: 'Int'}},
                {id: 'T', fields: {type: 'Text'}},
                {id: 'Bo', fields: {type: 'Bool'}},
              ],
            },
          ],
        },
        chimpy.as,
      ),
    );
    const nums = tablePath(doc, 'Nums');
    ok(
      await api.post(
        `${nums}/records`,
        {records: [{fields: {N: '$4', I: '12', T: true, Bo: null}}, {fields: {N: '12', I: 1.7, T: 2.0, Bo: 'yes'}}]},
        chimpy.as,
      ),
    );
    ok(
      await api.post(
        `${nums}/records?noparse=1`,
        {records: [{fields: {N: '$55', I: -2.5, T: 2.5, Bo: 'maybe'}}, {fields: {N: '1e3', I: '12', T: 'x', Bo: 0}}]},
        chimpy.as,
      ),
    );
    assert.equal(ok(await api.get(`${nums}/data`, chimpy.as)).body, {
      id: [1, 2, 3, 4],
      manualSort: [1, 2, 3, 4],
      N: [4, 12, '$55', 1000],
      I: [12, 1, -2, 12],
      T: ['True', '2', '2.5', 'x'],
      Bo: [false, true, 'maybe', false],
    });
  });

  s(
    "numbers written to Text, Choice and ChoiceList cells read back as Python's str of what Grist's engine receives",
    async () => {
      const {api, chimpy} = world();
      const d = await world().newDoc(chimpy, await world().homeWs(chimpy), 'Numbers as text');
      ok(
        await api.post(
          `/api/docs/${d}/tables`,
          {
            tables: [
              {
                id: 'T',
                columns: [
                  {id: 'Tx', fields: {type: 'Text'}},
                  {id: 'Ch', fields: {type: 'Choice'}},
                  {id: 'CL', fields: {type: 'ChoiceList'}},
                  {id: 'I', fields: {type: 'Int'}},
                ],
              },
            ],
          },
          chimpy.as,
        ),
      );
      // Grist's marshal sends 32-bit integers as Python ints and every other number as a float;
      // Text prints a float as an integer below 2**53, else with "%.15g"; str() of a float is repr.
      // Sent as JSON text, in the forms a client may write them (JSON.stringify would turn -0.0 into 0).
      const values = [
        '1e20',
        '1e16',
        '1e-7',
        '0.1',
        '123456789012345680000',
        '-0.0',
        '5.0',
        '3000000000',
        '9007199254740994',
      ];
      const records = values.map((x) => `{"fields": {"Tx": ${x}, "Ch": ${x}, "CL": ["L", ${x}], "I": ${x}}}`);
      ok(
        await api.call('POST', `${tablePath(d, 'T')}/records?noparse=1`, {
          ...chimpy.as,
          headers: {'content-type': 'application/json'},
          body: `{"records": [${records.join(', ')}]}`,
        }),
      );
      const got = ok(await api.get(`${tablePath(d, 'T')}/data`, chimpy.as)).body;
      const text = [
        '1e+20',
        '1e+16',
        '1e-07',
        '0.1',
        '1.23456789012346e+20',
        '0',
        '5',
        '3000000000',
        '9.00719925474099e+15',
      ];
      assert.equal(got.Tx, text);
      assert.equal(got.Ch, text);
      assert.equal(
        got.CL,
        [
          '1e+20',
          '1e+16',
          '1e-07',
          '0.1',
          '1.2345678901234568e+20',
          '-0.0',
          '5',
          '3000000000.0',
          '9007199254740994.0',
        ].map((x) => ['L', x]),
      );
      // Int: out of 32 bits is alt-text, str() of the float; in range, truncated.
      assert.equal(got.I, [
        '1e+20',
        '1e+16',
        0,
        0,
        '1.2345678901234568e+20',
        0,
        5,
        '3000000000.0',
        '9007199254740994.0',
      ]);
    },
  );

  s('POST records: validation with exact bodies; unknown table, column, formula column (item 7)', async () => {
    const {api, chimpy} = world();
    const foo = tablePath(doc, 'Foo');
    const post = (body: unknown) => api.post(`${foo}/records`, body, chimpy.as);
    isInvalidPayload(await post({}), 'Error: body.records is missing');
    isInvalidPayload(await post({records: 1}), 'Error: body.records is not an array');
    isInvalidPayload(await post({records: 'hi'}), 'Error: body.records is not an array');
    isInvalidPayload(await post({records: [{fields: {A: []}}]}), NOT_A_CELL_VALUE);
    isInvalidPayload(await post({records: [{fields: {A: ['ZZ']}}]}), NOT_A_CELL_VALUE);
    const empty = await post({records: []});
    assert.is(empty.status, 400);
    assert.is(empty.body.error, 'Invalid payload');
    isError(await post({records: [{fields: {X: 1}}]}), 400, 'Invalid column "X"');
    isError(
      await api.post(`${tablePath(doc, 'NoTable')}/records`, {records: [{}]}, chimpy.as),
      404,
      'Table not found "NoTable"',
    );
    isError(
      await api.post(`${t}/records`, {records: [{fields: {E: 'x'}}]}, chimpy.as),
      400,
      "Error manipulating data: [Sandbox] ValueError Can't save value to formula column E",
    );
    assert.equal(ids(await api.get(`${foo}/records`, chimpy.as)), [1, 2, 3, 4, 5, 6], 'nothing was added');
    // Every cell-value code passes validation (Grist's test: `[code]` alone, into a new doc's A).
    const codes = await world().newDoc(chimpy, await world().homeWs(chimpy), 'PostTest');
    for (const v of [
      1,
      1.2,
      'string',
      true,
      false,
      null,
      ...['L', 'O', 'D', 'd', 'S', 'C', 'R', 'r', 'E', 'P', 'U', 'V'].map((c) => [c]),
    ]) {
      ok(
        await api.post(`${tablePath(codes)}/records`, {records: [{fields: {A: v}}]}, chimpy.as),
        `POST ${JSON.stringify(v)}`,
      );
      ok(
        await api.patch(`${tablePath(codes)}/records`, {records: [{id: 1, fields: {A: v}}]}, chimpy.as),
        `PATCH ${JSON.stringify(v)}`,
      );
    }
    const patchBad = await api.patch(`${foo}/records`, {records: [{id: 1, fields: {A: ['ZZ']}}]}, chimpy.as);
    isInvalidPayload(patchBad, NOT_A_CELL_VALUE.replace('a NewRecord', 'a Record'));
  });

  s('PATCH records: one cell changes; same fields required; atomic; exact schema errors (item 8)', async () => {
    const {api, chimpy} = world();
    const patch = (body: unknown) => api.patch(`${t}/records`, body, chimpy.as);
    const res = ok(await patch({records: [{id: 1, fields: {A: 'Father Christmas'}}]}));
    assert.is(res.body, null);
    const after = ok(await api.get(`${t}/records`, chimpy.as)).body.records;
    // E is the formula $A.upper(): it follows in the same write.
    assert.equal(after, [
      {id: 1, fields: {...TIMESHEETS[0].fields, A: 'Father Christmas', E: 'FATHER CHRISTMAS'}},
      ...TIMESHEETS.slice(1),
    ]);
    isError(
      await patch({
        records: [
          {id: 1, fields: {A: 'x'}},
          {id: 2, fields: {B: 'y'}},
        ],
      }),
      400,
      'PATCH requires all records to have same fields',
    );
    isInvalidPayload(await patch({}), 'Error: body.records is missing');
    isInvalidPayload(await patch({records: 1}), 'Error: body.records is not an array');
    isInvalidPayload(
      await patch({records: []}),
      'Error: body.records[0] is not a Record; body.records[0] is not an object',
    );
    isInvalidPayload(
      await patch({records: [{}]}),
      'Error: body.records[0] is not a Record\n    body.records[0].id is missing\n    body.records[0].fields is missing',
    );
    isInvalidPayload(
      await patch({records: [{id: '1'}]}),
      'Error: body.records[0] is not a Record\n    body.records[0].id is not a number\n    body.records[0].fields is missing',
    );
    // Unknown row ids and columns: 400, and nothing is applied.
    isError(
      await patch({
        records: [
          {id: 1, fields: {A: 'changed'}},
          {id: 5, fields: {A: 'x'}},
        ],
      }),
      400,
      'Invalid row id 5',
    );
    isError(await patch({records: [{id: 1, fields: {X: 'x'}}]}), 400, 'Invalid column "X"');
    isError(
      await api.patch(`${tablePath(doc, 'Nope')}/records`, {records: [{id: 1, fields: {A: 'x'}}]}, chimpy.as),
      404,
      'Table not found "Nope"',
    );
    assert.equal(ok(await api.get(`${t}/records`, chimpy.as)).body.records, after, 'unchanged');
    // Duplicate ids: the later value wins. noparse is honoured.
    ok(
      await patch({
        records: [
          {id: 2, fields: {B: 'eleven'}},
          {id: 2, fields: {B: 'twelve'}},
        ],
      }),
    );
    assert.is(ok(await api.get(`${t}/records?${filterQs({id: [2]})}`, chimpy.as)).body.records[0].fields.B, 'twelve');
    ok(
      await api.patch(
        `${tablePath(doc, 'Nums')}/records?noparse=1`,
        {records: [{id: 1, fields: {N: '$7'}}]},
        chimpy.as,
      ),
    );
    ok(await api.patch(`${tablePath(doc, 'Nums')}/records`, {records: [{id: 2, fields: {N: '$7'}}]}, chimpy.as));
    assert.equal(ok(await api.get(`${tablePath(doc, 'Nums')}/data`, chimpy.as)).body.N.slice(0, 2), ['$7', 7]);
    // Restore Timesheets for the suites' later checks.
    ok(
      await patch({
        records: [
          {id: 1, fields: {A: 'hello'}},
          {id: 2, fields: {A: ''}},
        ],
      }),
    );
    ok(await patch({records: [{id: 2, fields: {B: 'world'}}]}));
    assert.equal(ok(await api.get(`${t}/records`, chimpy.as)).body, {records: TIMESHEETS});
  });

  s('records/delete: null, ids reused, unknown ids ignored; no DELETE route (item 10)', async () => {
    const {api, chimpy} = world();
    const foo = tablePath(doc, 'Foo');
    assert.equal(ok(await api.get(`${foo}/data`, chimpy.as)).body.id, [1, 2, 3, 4, 5, 6]);
    assert.is(ok(await api.post(`${foo}/records/delete`, [3, 4, 5, 6], chimpy.as)).body, null);
    assert.equal(ok(await api.get(`${foo}/data`, chimpy.as)).body, {
      id: [1, 2],
      manualSort: [1, 2],
      A: ['Santa', 'Bob'],
      B: ['1', '11'],
    });
    assert.equal(
      ok(await api.post(`${foo}/records`, {records: [{fields: {A: 'Alice'}}, {fields: {A: 'Felix'}}]}, chimpy.as)).body,
      {records: [{id: 3}, {id: 4}]},
    );
    assert.is(ok(await api.post(`${foo}/records/delete`, [], chimpy.as)).body, null);
    assert.is(ok(await api.post(`${foo}/records/delete`, [999, 1000], chimpy.as)).body, null);
    assert.equal(ok(await api.get(`${foo}/data`, chimpy.as)).body.id, [1, 2, 3, 4]);
    isErrorLike(await api.post(`${foo}/records/delete`, ['x'], chimpy.as), 400, /^Error manipulating data: /);
    isError(await api.post(`${tablePath(doc, 'Nope')}/records/delete`, [1], chimpy.as), 404, 'Table not found "Nope"');
    isError(await api.del(`${foo}/records`, chimpy.as), 404, `not found: ${foo}/records`);
    // Deleting rows clears references to them.
    const typed = tablePath(doc, 'Typed');
    ok(await api.post(`${typed}/records/delete`, [2], chimpy.as));
    const row1 = ok(await api.get(`${typed}/records`, chimpy.as)).body.records[0].fields;
    assert.equal([row1.Ref, row1.RefList], [1, ['L', 1]]);
    ok(await api.post(`${typed}/records/delete`, [1], chimpy.as));
    assert.equal(ok(await api.get(`${typed}/records`, chimpy.as)).body, {records: []});
  });

  s("PUT records (upsert): Grist's sequence on a new doc (items 11-14)", async () => {
    const {api, chimpy} = world();
    up = await world().newDoc(chimpy, await world().homeWs(chimpy), 'BlankTest');
    const u = tablePath(up);
    // Like Grist's test: PUT, then the table without manualSort and C.
    const table = async () => {
      const {manualSort: _m, C: _c, ...rest} = ok(await api.get(`${u}/data`, chimpy.as)).body;
      return rest;
    };
    const check = async (records: unknown[], expected: Record<string, unknown[]>, qs = '') => {
      ok(await api.call('PUT', `${u}/records${qs}`, {...chimpy.as, json: {records}}), JSON.stringify(records));
      assert.equal(await table(), expected, JSON.stringify(records));
    };
    const put = (records: unknown[], qs = '') => api.call('PUT', `${u}/records${qs}`, {...chimpy.as, json: {records}});
    const add = ok(
      await put([{require: {A: 1}}, {require: {A: 2}, fields: {A: 3}}, {require: {A: 4}, fields: {B: 5}}]),
    );
    assert.equal(add.body, {recordIds: [[1], [2], [3]], addRecordIds: [1, 2, 3], updateRecordIds: []});
    // Rows 1-2 were added while B was still an empty column; B turning Numeric gives them its default.
    assert.equal(await table(), {id: [1, 2, 3], A: [1, 3, 4], B: [0, 0, 5]});
    const upd = ok(
      await put([{require: {A: 1}}, {require: {A: 3}, fields: {A: 33}}, {require: {A: 4}, fields: {B: 6}}]),
    );
    assert.equal(upd.body, {recordIds: [[1], [2], [3]], addRecordIds: [], updateRecordIds: [[1], [2], [3]]});
    assert.equal(await table(), {id: [1, 2, 3], A: [1, 33, 4], B: [0, 0, 6]});
    assert.equal(ok(await put([{require: {A: 100}}], '?noadd=1')).body, {
      recordIds: [[]],
      addRecordIds: [],
      updateRecordIds: [],
    });
    await check([{require: {A: 100}}], {id: [1, 2, 3], A: [1, 33, 4], B: [0, 0, 6]}, '?noadd=1');
    assert.equal(ok(await put([{require: {A: 1}, fields: {A: 11}}], '?noupdate=1')).body, {
      recordIds: [[]],
      addRecordIds: [],
      updateRecordIds: [],
    });
    await check([{require: {A: 1}, fields: {A: 11}}], {id: [1, 2, 3], A: [1, 33, 4], B: [0, 0, 6]}, '?noupdate=1');
    assert.equal(ok(await put([{require: {B: 0}, fields: {B: 1}}], '?onmany=all')).body, {
      recordIds: [[1, 2]],
      addRecordIds: [],
      updateRecordIds: [[1, 2]],
    });
    assert.equal(await table(), {id: [1, 2, 3], A: [1, 33, 4], B: [1, 1, 6]});
    await check([{require: {B: 1}, fields: {B: 2}}], {id: [1, 2, 3], A: [1, 33, 4], B: [2, 1, 6]});
    await check([{require: {A: '$4'}, fields: {A: '$44'}}], {id: [1, 2, 3], A: [1, 33, 44], B: [2, 1, 6]});
    await check(
      [{require: {A: 44}, fields: {A: '$55'}}],
      {id: [1, 2, 3], A: [1, 33, '$55'], B: [2, 1, 6]},
      '?noparse=1',
    );
    await check(
      [{require: {A: 1}}, {require: {A: 33}}, {require: {A: '$55'}}, {require: {A: '$33'}}],
      {id: [1, 2, 3, 4], A: [1, 33, '$55', '$33'], B: [2, 1, 6, 0]},
      '?noparse=1',
    );
    await check([{require: {id: 3}, fields: {A: '66'}}], {id: [1, 2, 3, 4], A: [1, 33, 66, '$33'], B: [2, 1, 6, 0]});
    await check(
      [
        {require: {A: 1}, fields: {A: 111}},
        {require: {A: 33}, fields: {A: 222, B: 444}},
        {require: {id: 3}, fields: {A: 555, B: 666}},
      ],
      {id: [1, 2, 3, 4], A: [111, 222, 555, '$33'], B: [2, 444, 666, 0]},
    );
    isError(
      await put([{require: {}, fields: {A: 99}}]),
      400,
      "Error manipulating data: [Sandbox] ValueError require is empty but allow_empty_require isn't set",
    );
    await check(
      [{require: {}, fields: {A: 99, B: 99}}],
      {id: [1, 2, 3, 4], A: [99, 99, 99, 99], B: [99, 99, 99, 99]},
      '?allow_empty_require=1&onmany=all',
    );
  });

  s('PUT records (upsert): onmany none/first, require.id creating rows, fields over require', async () => {
    const {api, chimpy} = world();
    const u = tablePath(up);
    const put = (records: unknown[], qs = '') => api.call('PUT', `${u}/records${qs}`, {...chimpy.as, json: {records}});
    const col = async (c: string) => ok(await api.get(`${u}/data`, chimpy.as)).body[c];
    assert.equal(ok(await put([{require: {B: 99}, fields: {B: 3}}], '?onmany=none')).body, {
      recordIds: [[]],
      addRecordIds: [],
      updateRecordIds: [],
    });
    assert.equal(await col('B'), [99, 99, 99, 99], 'onmany=none neither updates nor adds');
    assert.equal(
      ok(await put([{require: {B: 99}, fields: {B: 1}}])).body,
      {recordIds: [[1]], addRecordIds: [], updateRecordIds: [[1]]},
      'first: lowest row id',
    );
    assert.equal(
      ok(await put([{require: {}, fields: {B: 2}}], '?allow_empty_require=1')).body.recordIds,
      [[1]],
      'empty require, first row only',
    );
    assert.equal(await col('B'), [2, 99, 99, 99]);
    isError(await put([{require: {B: 1}}], '?onmany=foo'), 400, 'onmany parameter foo should be one of first,none,all');
    // noupdate still adds; noadd still updates.
    assert.equal(ok(await put([{require: {A: 7}}], '?noupdate=1')).body, {
      recordIds: [[5]],
      addRecordIds: [5],
      updateRecordIds: [],
    });
    assert.equal(ok(await put([{require: {A: 7}, fields: {B: 70}}], '?noadd=1')).body, {
      recordIds: [[5]],
      addRecordIds: [],
      updateRecordIds: [[5]],
    });
    // require.id creates a row with that id when missing; too high is refused.
    assert.equal(ok(await put([{require: {id: 50}, fields: {A: 50}}])).body, {
      recordIds: [[50]],
      addRecordIds: [50],
      updateRecordIds: [],
    });
    isErrorLike(await put([{require: {id: 2000000}}]), 400, /Row ID too high/);
    // fields win over require on insert; a record with no fields still counts as updated.
    assert.equal(ok(await put([{require: {A: 8}, fields: {A: 9}}])).body.addRecordIds, [51]);
    assert.equal(ok(await put([{require: {A: 9}}])).body, {
      recordIds: [[51]],
      addRecordIds: [],
      updateRecordIds: [[51]],
    });
    assert.equal(await col('A'), [99, 99, 99, 99, 7, 50, 9]);
    isErrorLike(await put([{require: {A: 5}}, {require: {A: 5}}]), 400, /require values must be unique/);
    assert.equal(await col('id'), [1, 2, 3, 4, 5, 50, 51], 'failed requests added nothing');
  });

  s('PUT records (upsert): errors (item 15)', async () => {
    const {api, chimpy} = world();
    const put = (path: string, body: unknown) => api.call('PUT', `${path}/records`, {...chimpy.as, json: body});
    isError(await put(tablePath(doc, 'Table2'), {records: [{require: {A: 1}}]}), 404, 'Table not found "Table2"');
    isError(await put(t, {records: [{require: {NoColumn: 1}}]}), 400, 'Invalid column "NoColumn"');
    isError(
      await put(t, {records: [{require: {A: 'hello'}, fields: {NoColumn: 1}}]}),
      400,
      'Invalid column "NoColumn"',
    );
    isInvalidPayload(await put(t, {}), 'Error: body.records is missing');
    isInvalidPayload(
      await put(t, {records: [{fields: {}}]}),
      'Error: body.records[0] is not a AddOrUpdateRecord; body.records[0].require is missing',
    );
    isInvalidPayload(
      await put(t, {records: [{require: {id: '1'}}]}),
      'Error: body.records[0] is not a AddOrUpdateRecord; body.records[0].require.id is not a number',
    );
    assert.equal(ok(await api.get(`${t}/records`, chimpy.as)).body, {records: TIMESHEETS}, 'nothing changed');
  });

  // Beyond Grist (issue 40 §4, D88). Each display text is held to the CSV download of the same
  // table, which Grist's own export formatting writes: one formatter for both.
  s('display=true: the text Grist shows beside each formatted value, the CSV export cell for cell', async () => {
    const {api, chimpy} = world();
    const d = await world().newDoc(chimpy, await world().homeWs(chimpy), 'Display');
    ok(
      await api.post(
        `/api/docs/${d}/apply`,
        [
          ['AddTable', 'People', [{id: 'Name'}]],
          ['BulkAddRecord', 'People', [null, null], {Name: ['Ada, Countess', 'Bob']}],
          [
            'AddTable',
            'Shown',
            [
              {id: 'Text', type: 'Text'},
              {id: 'Price', type: 'Numeric', widgetOptions: '{"numMode": "currency", "decimals": 2}'},
              {id: 'Share', type: 'Numeric', widgetOptions: '{"numMode": "percent"}'},
              {id: 'Plain', type: 'Numeric'},
              {id: 'Day', type: 'Date', widgetOptions: '{"dateFormat": "MMMM D, YYYY"}'},
              {
                id: 'At',
                type: 'DateTime:Europe/Paris',
                widgetOptions: '{"dateFormat": "YYYY-MM-DD", "timeFormat": "HH:mm"}',
              },
              {id: 'Who', type: 'Ref:People'},
              {id: 'Team', type: 'RefList:People'},
              {id: 'Tags', type: 'ChoiceList'},
              {id: 'Done', type: 'Bool'},
              {id: 'Inv', type: 'Any', isFormula: true, formula: '1 / $Plain'},
            ],
          ],
          [
            'BulkAddRecord',
            'Shown',
            [null, null, null],
            {
              Text: ['a, "quoted" text', '', 'x'],
              Price: [1234.5, 0, null],
              Share: [0.256, null, 1],
              Plain: [2, 0, 1.5],
              Day: [1700006400, null, 0],
              At: [1700000000, null, 0],
              Who: [1, 0, 2],
              Team: [['L', 1, 2], null, ['L', 2]],
              Tags: [['L', 'red', 'blue'], null, ['L', 'x']],
              Done: [true, false, false],
            },
          ],
        ],
        chimpy.as,
      ),
    );
    // The references show People's Name.
    const cols = ok(await api.get(`${tablePath(d, 'People')}/columns`, chimpy.as)).body.columns;
    const nameRef = cols.find((c: {id: string}) => c.id === 'Name').fields.colRef;
    ok(
      await api.patch(
        `${tablePath(d, 'Shown')}/columns`,
        {
          columns: [
            {id: 'Who', fields: {visibleCol: nameRef}},
            {id: 'Team', fields: {visibleCol: nameRef}},
          ],
        },
        chimpy.as,
      ),
    );
    const plain = ok(await api.get(`${tablePath(d, 'Shown')}/records`, chimpy.as)).body.records;
    const shown = ok(await api.get(`${tablePath(d, 'Shown')}/records?display=true`, chimpy.as)).body.records;
    assert.equal(
      shown.map(({display: _, ...r}: {display?: unknown}) => r),
      plain,
      'fields and errors are as without display',
    );
    assert.equal(
      [shown[0].display.Who, shown[0].display.Day, shown[0].display.Price === undefined],
      ['Ada, Countess', 'November 15, 2023', false],
    );
    assert.not.ok('Text' in shown[0].display, 'a text shown as it is has no display text');
    assert.is(shown[1].display.Inv, '#DIV/0!', 'an error cell shows as Grist shows it');
    // Every cell: the display text, or the value as JSON writes it, is the CSV export's cell.
    const csv = parseCsv(ok(await api.get(`/api/docs/${d}/download/csv?tableId=Shown&header=colId`, chimpy.as)).text);
    const header = csv[0];
    shown.forEach((r: {fields: Record<string, unknown>; display?: Record<string, string>}, i: number) => {
      header.forEach((colId, j) => {
        const v = r.fields[colId];
        const text = r.display?.[colId] ?? (v === null ? '' : String(v));
        assert.is(text, csv[i + 1][j], `row ${i + 1} ${colId}`);
      });
    });
    // The same through records/list, includeDisplay=1, and a cursor page.
    assert.equal(
      ok(await api.post(`${tablePath(d, 'Shown')}/records/list`, {display: true}, chimpy.as)).body.records,
      shown,
    );
    assert.equal(ok(await api.get(`${tablePath(d, 'Shown')}/records?includeDisplay=1`, chimpy.as)).body.records, shown);
    const page = ok(await api.get(`${tablePath(d, 'Shown')}/records?display=true&limit=2`, chimpy.as));
    assert.equal(page.body.records, shown.slice(0, 2));
    const next = /<([^>]+)>; rel="next"/.exec(page.headers.link)![1];
    assert.equal(ok(await api.get(next, chimpy.as)).body.records, shown.slice(2));
    isError(
      await api.get(`${tablePath(d, 'Shown')}/records?display=true&cellFormat=typed`, chimpy.as),
      400,
      'display cannot be combined with cellFormat=typed',
    );
  });

  s.run();
}

/** RFC 4180 rows (quoted fields, doubled quotes), for comparing with a CSV download. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(cell);
      cell = '';
    } else if (c === '\n') {
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
    } else if (c !== '\r') cell += c;
  }
  return rows;
}
