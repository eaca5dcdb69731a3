/**
 * Beyond Grist (issue 40 §1-§3, docs/queries.md): `where` conditions in Grist's formula language
 * on GET /records, GET /data and POST /records/list, `count=true`, and updates and removals by
 * condition; under access rules (a hidden column is an unknown column, censored cells match
 * nothing, rows the caller cannot read never match, a row they may not update fails the whole
 * write); bad input (malformed, unknown column, oversized, too slow, too many rows) is a 400 that
 * writes nothing.
 */
import ExcelJS from 'exceljs';
import * as assert from 'uvu/assert';
import {nextOf} from './paging.js';
import {areaSuite, isErrorLike, ok, useWorld, type Target} from './world.js';

const PEOPLE = ['a@b.c', 'x@y.z'];
// Name, Price, Status, Due (days after 2024-01-01, null: none), Owner, Tags, Team, Notes, Secret
const ITEMS: Array<
  [string, number | string | null, string, number | null, number, string[] | null, string, string, string]
> = [
  ['Apple', 12, 'Open', 0, 1, ['red', 'blue'], 'blue', 'n1', 's1'],
  ['banana', 5, 'Late', null, 2, null, 'blue', 'n2', 's2'],
  ['Avocado', null, 'Done', 400, 0, ['green'], 'red', 'n3', 's3'],
  ['', 'n/a', 'Open', null, 1, [], 'blue', 'n4', 's4'],
  ['Cherry', 150, 'Late', -10, 2, ['red'], 'blue', 'n5', 's5'],
  ['apricot', 30, 'Done', 5, 1, ['blue'], 'blue', 'n6', 's6'],
];
const D2024 = 19723 * 86400;

/**
 * Access rules on the Items table of the where and aggregate areas: Secret hidden from all but
 * owners, Notes censored where Price is 150, rows of the red team unreadable.
 */
export const ITEMS_READ_RULES: unknown[][] = [
  ['AddRecord', '_grist_ACLResources', -1, {tableId: 'Items', colIds: 'Secret'}],
  ['AddRecord', '_grist_ACLResources', -2, {tableId: 'Items', colIds: 'Notes'}],
  ['AddRecord', '_grist_ACLResources', -3, {tableId: 'Items', colIds: '*'}],
  ['AddRecord', '_grist_ACLRules', null, {resource: -1, aclFormula: 'user.Access != OWNER', permissionsText: '-R'}],
  [
    'AddRecord',
    '_grist_ACLRules',
    null,
    {resource: -2, aclFormula: 'user.Access != OWNER and rec.Price == 150', permissionsText: '-R'},
  ],
  [
    'AddRecord',
    '_grist_ACLRules',
    null,
    {resource: -3, aclFormula: 'user.Access != OWNER and rec.Team == "red"', permissionsText: '-R'},
  ],
];

export function whereSuite(target: Target): void {
  const s = areaSuite(target, 'where');
  const world = useWorld(s, target, {
    GRISTLITE_WHERE_MAX_CHARS: '300',
    GRISTLITE_WHERE_MAX_ROWS: '4',
    GRISTLITE_FORMULA_CELL_MSEC: '100',
    GRISTLITE_FORMULA_RECALC_MSEC: '300',
  });
  let doc = '';
  const items = () => `/api/docs/${doc}/tables/Items`;
  const ids = (res: {body: {records: Array<{id: number}>}}) => res.body.records.map((r) => r.id);
  const q = (w: string) => `where=${encodeURIComponent(w)}`;

  s('setup', async () => {
    const {api, chimpy, kiwi} = world();
    doc = await world().newDoc(chimpy, await world().homeWs(chimpy), 'Where');
    await world().share(chimpy, `/api/docs/${doc}`, {[kiwi.email]: 'editors'});
    ok(
      await api.post(
        `/api/docs/${doc}/tables`,
        {
          tables: [
            {id: 'People', columns: [{id: 'Email', fields: {type: 'Text'}}]},
            {
              id: 'Items',
              columns: [
                {id: 'Name', fields: {type: 'Text'}},
                {id: 'Price', fields: {type: 'Numeric'}},
                {id: 'Status', fields: {type: 'Choice'}},
                {id: 'Due', fields: {type: 'Date'}},
                {id: 'Owner', fields: {type: 'Ref:People'}},
                {id: 'Tags', fields: {type: 'ChoiceList'}},
                {id: 'Team', fields: {type: 'Text'}},
                {id: 'Notes', fields: {type: 'Text'}},
                {id: 'Secret', fields: {type: 'Text'}},
              ],
            },
          ],
        },
        chimpy.as,
      ),
    );
    ok(
      await api.post(
        `/api/docs/${doc}/tables/People/records`,
        {records: PEOPLE.map((Email) => ({fields: {Email}}))},
        chimpy.as,
      ),
    );
    const records = ITEMS.map(([Name, Price, Status, Due, Owner, Tags, Team, Notes, Secret]) => ({
      fields: {
        Name,
        Price,
        Status,
        Due: Due === null ? null : D2024 + Due * 86400,
        Owner,
        Tags: Tags ? ['L', ...Tags] : null,
        Team,
        Notes,
        Secret,
      },
    }));
    ok(await api.post(`${items()}/records`, {records}, chimpy.as));
  });

  s('GET /records?where: the rows where a formula column holding the condition is true', async () => {
    const {api, chimpy} = world();
    const cases: Array<[string, number[]]> = [
      ['$Price > 10 and $Status in ("Open", "Late")', [1, 5]],
      ['not $Due or $Due < DATE(2024, 1, 1)', [2, 4, 5]],
      ['$Owner.Email == "a@b.c"', [1, 4, 6]],
      ['$Name.startswith("A")', [1, 3]],
      ['$Tags and "red" in $Tags', [1, 5]],
      // None and text in a Numeric column raise in `>` (TypeError): those rows do not match, even negated.
      ['not ($Price > 10)', [2]],
      ['$Price is None or $Price == "n/a"', [3]],
      ['len($Name) == 6', [2, 5]],
      ['True', [1, 2, 3, 4, 5, 6]],
    ];
    for (const [cond, want] of cases) {
      assert.equal(ids(ok(await api.get(`${items()}/records?${q(cond)}`, chimpy.as))), want, cond);
    }
  });

  s('where combines with filter, sort, limit, the cursor and hidden; GET /data; POST /records/list', async () => {
    const {api, chimpy} = world();
    const cond = '$Price > 1';
    const f = encodeURIComponent(JSON.stringify({Status: ['Late', 'Done']}));
    assert.equal(ids(ok(await api.get(`${items()}/records?${q(cond)}&filter=${f}`, chimpy.as))), [2, 5, 6]);
    assert.equal(ids(ok(await api.get(`${items()}/records?${q(cond)}&sort=-Price`, chimpy.as))), [5, 6, 1, 2]);
    const first = ok(await api.get(`${items()}/records?${q(cond)}&sort=-Price&limit=3`, chimpy.as));
    assert.equal(ids(first), [5, 6, 1]);
    const next = nextOf(first);
    assert.ok(next, 'a Link to the next page');
    assert.equal(ids(ok(await api.get(next!, chimpy.as))), [2]);
    // The cursor is bound to the condition.
    const other = next!.replace(/where=[^&]*/, q('$Price > 2'));
    isErrorLike(await api.get(other, chimpy.as), 400, /Invalid cursor/);
    const hidden = ok(await api.get(`${items()}/records?${q(cond)}&hidden=true&limit=1`, chimpy.as));
    assert.ok('manualSort' in hidden.body.records[0].fields, 'hidden columns shown');
    const data = ok(await api.get(`/api/docs/${doc}/tables/Items/data?${q(cond)}`, chimpy.as));
    assert.equal(data.body.id, [1, 2, 5, 6]);
    assert.equal(data.body.Price, [12, 5, 150, 30]);
    const list = ok(await api.post(`${items()}/records/list`, {where: cond, sort: ['Price']}, chimpy.as));
    assert.equal(ids(list), [2, 1, 6, 5]);
    assert.equal(ids(ok(await api.post(`${items()}/records/list`, {where: cond, limit: 2}, chimpy.as))), [1, 2]);
    // A limit is a whole number (a fraction used to answer 500).
    isErrorLike(
      await api.post(`${items()}/records/list`, {where: cond, limit: 2.5}, chimpy.as),
      400,
      /Invalid payload/,
    );
  });

  s('count=true: how many rows match, without them', async () => {
    const {api, chimpy} = world();
    assert.equal(ok(await api.get(`${items()}/records?${q('$Price > 1')}&count=true`, chimpy.as)).body, {count: 4});
    assert.equal(ok(await api.get(`${items()}/records?count=true`, chimpy.as)).body, {count: 6});
    const f = encodeURIComponent(JSON.stringify({Team: ['red']}));
    assert.equal(ok(await api.get(`${items()}/records?filter=${f}&count=1`, chimpy.as)).body, {count: 1});
    assert.equal(
      ok(await api.post(`${items()}/records/list`, {where: 'len($Name) > 5', count: true}, chimpy.as)).body,
      {count: 4},
    );
  });

  s("bad conditions: 400 in the formula's words, nothing read or written", async () => {
    const {api, chimpy} = world();
    isErrorLike(
      await api.get(`${items()}/records?${q('$Price >')}`, chimpy.as),
      400,
      /^Invalid where condition: SyntaxError: invalid syntax on line 1 col 9$/,
    );
    isErrorLike(
      await api.get(`${items()}/records?${q('$Nope == 1')}`, chimpy.as),
      400,
      /^Invalid where condition: AttributeError: Table 'Items' has no column 'Nope'$/,
    );
    isErrorLike(
      await api.get(`${items()}/records?${q('$Owner.Nope == 1')}`, chimpy.as),
      400,
      /AttributeError: Table 'People' has no column 'Nope'/,
    );
    isErrorLike(
      await api.get(`${items()}/records?${q('Foo($Name)')}`, chimpy.as),
      400,
      /NameError: name 'Foo' is not defined/,
    );
    isErrorLike(
      await api.get(`${items()}/records?${q(`$Name == "${'x'.repeat(400)}"`)}`, chimpy.as),
      400,
      /GRISTLITE_WHERE_MAX_CHARS/,
    );
    const slow = 'len([x for x in range(10**8)]) > 0';
    isErrorLike(await api.get(`${items()}/records?${q(slow)}`, chimpy.as), 400, /TimeoutError|MemoryError/);
    isErrorLike(await api.get(`${items()}/records?${q(slow)}&count=true`, chimpy.as), 400, /TimeoutError|MemoryError/);
    const before = ok(await api.get(`${items()}/records`, chimpy.as)).body;
    isErrorLike(
      await api.patch(`${items()}/records?${q(slow)}`, {fields: {Notes: 'x'}}, chimpy.as),
      400,
      /TimeoutError|MemoryError/,
    );
    isErrorLike(await api.patch(`${items()}/records?${q('$Nope')}`, {fields: {Notes: 'x'}}, chimpy.as), 400, /Nope/);
    isErrorLike(await api.post(`${items()}/records/delete?${q('$Price >')}`, undefined, chimpy.as), 400, /SyntaxError/);
    // A write needs a condition: none, or an empty one, is refused.
    isErrorLike(await api.patch(`${items()}/records`, {fields: {Notes: 'x'}}, chimpy.as), 400, /where/);
    isErrorLike(await api.patch(`${items()}/records?where=`, {fields: {Notes: 'x'}}, chimpy.as), 400, /where=True/);
    // More rows than GRISTLITE_WHERE_MAX_ROWS (4 here).
    isErrorLike(
      await api.post(`${items()}/records/delete?${q('True')}`, undefined, chimpy.as),
      400,
      /more than 4 rows.*GRISTLITE_WHERE_MAX_ROWS/,
    );
    assert.equal(ok(await api.get(`${items()}/records`, chimpy.as)).body, before, 'nothing written');
  });

  s('PATCH and delete by condition: one write, the ids touched', async () => {
    const {api, chimpy} = world();
    const res = ok(
      await api.patch(`${items()}/records?${q('$Status == "Late"')}`, {fields: {Notes: 'late'}}, chimpy.as),
    );
    assert.equal(res.body, {records: [{id: 2}, {id: 5}]});
    const notes = ok(await api.get(`${items()}/records`, chimpy.as)).body.records.map(
      (r: {fields: {Notes: string}}) => r.fields.Notes,
    );
    assert.equal(notes, ['n1', 'late', 'n3', 'n4', 'late', 'n6']);
    // Nothing matches: nothing written, no ids.
    assert.equal(
      ok(await api.patch(`${items()}/records?${q('$Price > 1000')}`, {fields: {Notes: 'x'}}, chimpy.as)).body,
      {records: []},
    );
    // The condition is read before the write: rows it changes are not matched again.
    ok(await api.patch(`${items()}/records?${q('$Notes == "late"')}`, {fields: {Notes: 'n'}}, chimpy.as));
    ok(await api.patch(`${items()}/records?${q('$id in (2, 5)')}`, {fields: {Notes: 'late'}}, chimpy.as));
    // Removal, in a copy of the table's rows made for it.
    ok(
      await api.post(
        `${items()}/records`,
        {records: [{fields: {Name: 'tmp1', Team: 'x'}}, {fields: {Name: 'tmp2', Team: 'x'}}]},
        chimpy.as,
      ),
    );
    const removed = ok(await api.post(`${items()}/records/delete?${q('$Team == "x"')}`, undefined, chimpy.as));
    assert.equal(removed.body, {records: [{id: 7}, {id: 8}]});
    assert.equal(ok(await api.get(`${items()}/records?count=true`, chimpy.as)).body, {count: 6});
  });

  s('under access rules: hidden is unknown, censored matches nothing, unreadable rows never match', async () => {
    const {api, chimpy, kiwi} = world();
    ok(
      await api.post(
        `/api/docs/${doc}/apply`,
        [
          ...ITEMS_READ_RULES,
          [
            'AddRecord',
            '_grist_ACLRules',
            null,
            {resource: -3, aclFormula: 'user.Access != OWNER and rec.Status == "Done"', permissionsText: '-U'},
          ],
        ],
        chimpy.as,
      ),
    );
    // A hidden column is an unknown column, in the same words.
    isErrorLike(
      await api.get(`${items()}/records?${q('$Secret == "s1"')}`, kiwi.as),
      400,
      /^Invalid where condition: AttributeError: Table 'Items' has no column 'Secret'$/,
    );
    assert.equal(ids(ok(await api.get(`${items()}/records?${q('$Secret == "s1"')}`, chimpy.as))), [1]);
    // Rows kiwi cannot read (Team red) never match nor count.
    assert.equal(ids(ok(await api.get(`${items()}/records?${q('True')}`, kiwi.as))), [1, 2, 4, 5, 6]);
    assert.equal(
      ok(await api.get(`${items()}/records?${q('$Price is None or $Price > 1')}&count=true`, kiwi.as)).body,
      {count: 4},
    );
    assert.equal(
      ok(await api.get(`${items()}/records?${q('$Price is None or $Price > 1')}&count=true`, chimpy.as)).body,
      {count: 5},
    );
    // A censored cell (Notes where Price is 150) equals nothing.
    assert.equal(ids(ok(await api.get(`${items()}/records?${q('$Notes == "late"')}`, kiwi.as))), [2]);
    assert.equal(ids(ok(await api.get(`${items()}/records?${q('$Notes == "late"')}`, chimpy.as))), [2, 5]);
    assert.equal(ids(ok(await api.get(`${items()}/records?${q('$Notes != "late"')}`, kiwi.as))), [1, 4, 5, 6]);
    // A row kiwi may not update (Status Done) fails the whole write with Grist's error; nothing written.
    const before = ok(await api.get(`${items()}/records`, chimpy.as)).body;
    const refused = await api.patch(`${items()}/records?${q('$Price > 20')}`, {fields: {Notes: 'k'}}, kiwi.as);
    assert.is(refused.status, 403, refused.text);
    assert.equal(ok(await api.get(`${items()}/records`, chimpy.as)).body, before, 'nothing written');
    const allowed = ok(
      await api.patch(`${items()}/records?${q('$Status == "Open"')}`, {fields: {Notes: 'k'}}, kiwi.as),
    );
    assert.equal(allowed.body, {records: [{id: 1}, {id: 4}]});
  });

  s('CSV and XLSX downloads of a table take where: the rows /records gives for it, under the same rules', async () => {
    const {api, chimpy, kiwi} = world();
    const download = (format: string, w: string) =>
      `/api/docs/${doc}/download/${format}?tableId=Items&header=colId&${q(w)}`;
    for (const [who, cond] of [
      [chimpy, '$Price > 10'],
      [kiwi, '$Price > 10'],
      [kiwi, 'len($Name) > 5'],
      [chimpy, '$Price > 1000'],
    ] as const) {
      const names = ok(await api.get(`${items()}/records?${q(cond)}`, who.as)).body.records.map(
        (r: {fields: {Name: string}}) => r.fields.Name,
      );
      const csv = ok(await api.get(download('csv', cond), who.as))
        .text.trim()
        .split(/\r?\n/);
      const header = csv[0].split(',');
      assert.equal(
        csv.slice(1).map((line: string) => line.split(',')[header.indexOf('Name')]),
        names,
        `${who.email}: ${cond} (CSV)`,
      );
      // Kiwi's export leaves out the column hidden from her, and censors Notes where rules do.
      assert.is(header.includes('Secret'), who === chimpy, 'Secret column');
      const xlsx = ok(await api.get(download('xlsx', cond), who.as));
      const wb = new ExcelJS.Workbook();
      await wb.xlsx.load(xlsx.raw as any);
      const rows = (wb.worksheets[0].getSheetValues().slice(2) as unknown[][]).map((r) => r.slice(1));
      assert.equal(
        rows.map((r) => r[header.indexOf('Name')] ?? ''),
        names,
        `${who.email}: ${cond} (XLSX)`,
      );
    }
    const censored = ok(await api.get(download('csv', '$Price == 150'), kiwi.as)).text;
    assert.match(censored, /CENSORED/);
    isErrorLike(await api.get(download('csv', '$Secret == "s1"'), kiwi.as), 400, /has no column 'Secret'/);
    isErrorLike(await api.get(download('csv', '$Price >'), chimpy.as), 400, /Invalid where condition: SyntaxError/);
    isErrorLike(await api.get(download('xlsx', '$Nope'), chimpy.as), 400, /has no column 'Nope'/);
    isErrorLike(
      await api.get(`/api/docs/${doc}/download/xlsx?header=colId&${q('True')}`, chimpy.as),
      400,
      /where needs one table \(tableId\)/,
    );
  });
  s.run();
}
