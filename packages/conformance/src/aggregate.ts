/**
 * Beyond Grist (issue 40 §2, docs/queries.md, D116): `GET /tables/{t}/aggregate` groups rows by
 * columns with count, sum, avg, min, max and count_distinct, filtered by `where` and `having`,
 * sorted and limited, answered as `{"records": [{"fields": ...}]}`; under access rules over what
 * the caller can read only (a hidden column is an unknown column, unreadable rows are never
 * counted, censored cells make their own group); bad input is a 400 with a clear message.
 */
import * as assert from 'uvu/assert';
import {ITEMS_READ_RULES} from './where.js';
import {areaSuite, isErrorLike, ok, useWorld, type Target} from './world.js';

// Name, Price, Status, Owner, Team, Notes, Secret
const ITEMS: Array<[string, number | string | null, string, number, string, string, string]> = [
  ['Apple', 12, 'Open', 1, 'blue', 'n1', 's1'],
  ['banana', 5, 'Late', 2, 'blue', 'n2', 's2'],
  ['Avocado', null, 'Done', 0, 'red', 'n3', 's3'],
  ['', 'n/a', 'Open', 1, 'blue', 'n4', 's4'],
  ['Cherry', 150, 'Late', 2, 'blue', 'n5', 's5'],
  ['apricot', 30, 'Done', 1, 'blue', 'n6', 's6'],
];

type Group = {fields: Record<string, unknown>; display?: Record<string, string>};

export function aggregateSuite(target: Target): void {
  const s = areaSuite(target, 'aggregate');
  const world = useWorld(s, target, {
    GRISTLITE_AGGREGATE_MAX_GROUPS: '4',
    GRISTLITE_FORMULA_CELL_MSEC: '100',
    GRISTLITE_FORMULA_RECALC_MSEC: '300',
  });
  let doc = '';
  const agg = (params: Record<string, string>) =>
    `/api/docs/${doc}/tables/Items/aggregate?${new URLSearchParams(params).toString()}`;
  const fields = (res: {body: {records: Group[]}}) => res.body.records.map((r) => r.fields);

  s('setup', async () => {
    const {api, chimpy, kiwi} = world();
    doc = await world().newDoc(chimpy, await world().homeWs(chimpy), 'Aggregate');
    await world().share(chimpy, `/api/docs/${doc}`, {[kiwi.email]: 'viewers'});
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
                {id: 'Owner', fields: {type: 'Ref:People'}},
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
        {records: [{fields: {Email: 'a@b.c'}}, {fields: {Email: 'x@y.z'}}]},
        chimpy.as,
      ),
    );
    const records = ITEMS.map(([Name, Price, Status, Owner, Team, Notes, Secret]) => ({
      fields: {Name, Price, Status, Owner, Team, Notes, Secret},
    }));
    ok(await api.post(`/api/docs/${doc}/tables/Items/records`, {records}, chimpy.as));
  });

  s('groups with their aggregates, as Grist functions compute them', async () => {
    const {api, chimpy} = world();
    // Price holds None (Avocado) and the text 'n/a': sum and avg take the numbers only.
    assert.equal(
      fields(ok(await api.get(agg({group_by: 'Status', agg: 'count,sum:Price,avg:Price,max:Name'}), chimpy.as))),
      [
        {Status: 'Done', count: 2, sum_Price: 30, avg_Price: 30, max_Name: 'apricot'},
        {Status: 'Late', count: 2, sum_Price: 155, avg_Price: 77.5, max_Name: 'banana'},
        {Status: 'Open', count: 2, sum_Price: 12, avg_Price: 12, max_Name: 'Apple'},
      ],
    );
    // No group_by: one group; default agg: count.
    assert.equal(ok(await api.get(agg({}), chimpy.as)).body, {records: [{fields: {count: 6}}]});
    assert.equal(fields(ok(await api.get(agg({agg: 'count_distinct:Team,min:Price'}), chimpy.as))), [
      {count_distinct_Team: 2, min_Price: 5},
    ]);
  });

  s('a Ref group column: by row id, with its display value', async () => {
    const {api, chimpy} = world();
    const body = ok(await api.get(agg({group_by: 'Owner', agg: 'count'}), chimpy.as)).body as {records: Group[]};
    assert.equal(
      body.records.map((r) => [r.fields.Owner, r.fields.count]),
      [
        [0, 1],
        [1, 3],
        [2, 2],
      ],
    );
    // Without a visible column Grist shows a reference as Table[id].
    assert.equal(
      body.records.map((r) => r.display?.Owner),
      ['', 'People[1]', 'People[2]'],
    );
  });

  s('where, having, sort and limit', async () => {
    const {api, chimpy} = world();
    assert.equal(fields(ok(await api.get(agg({group_by: 'Team', where: '$Price > 10'}), chimpy.as))), [
      {Team: 'blue', count: 3},
    ]);
    assert.equal(
      fields(ok(await api.get(agg({group_by: 'Status', agg: 'count', having: 'sum_Price > 20'}), chimpy.as))),
      [
        {Status: 'Done', count: 2},
        {Status: 'Late', count: 2},
      ],
    );
    // avg_Price of a group without numbers is None: `None > 1` raises, the group is not kept.
    assert.equal(
      fields(
        ok(
          await api.get(
            agg({group_by: 'Name', agg: 'count', where: '$Team == "red" or $Price == "n/a"', having: 'avg_Price > 1'}),
            chimpy.as,
          ),
        ),
      ),
      [],
    );
    assert.equal(
      fields(ok(await api.get(agg({group_by: 'Status', agg: 'sum:Price', sort: '-sum_Price', limit: '2'}), chimpy.as))),
      [
        {Status: 'Late', sum_Price: 155},
        {Status: 'Done', sum_Price: 30},
      ],
    );
  });

  s('bad input: 400 with a clear message', async () => {
    const {api, chimpy} = world();
    const bad = async (params: Record<string, string>, message: RegExp) =>
      isErrorLike(await api.get(agg(params), chimpy.as), 400, message);
    await bad({group_by: 'Nope'}, /^Invalid group_by: Table 'Items' has no column 'Nope'$/);
    await bad({group_by: 'Status,'}, /Invalid group_by: an empty column name/);
    await bad({agg: 'sum:Nope'}, /^Invalid agg: Table 'Items' has no column 'Nope'$/);
    await bad({agg: 'sum:Status'}, /Invalid agg: sum:Status needs a Numeric, Int or Any column/);
    await bad({agg: 'median:Price'}, /Invalid agg: unknown function 'median'/);
    await bad({agg: 'sum(Price)'}, /Invalid agg: 'sum\(Price\)' is not fn or fn:Col/);
    await bad({having: 'count >'}, /^Invalid having condition: SyntaxError: invalid syntax/);
    await bad({having: 'nope > 1'}, /^Invalid having condition: NameError: name 'nope' is not defined/);
    await bad({where: '$Nope > 1'}, /^Invalid where condition: AttributeError: Table 'Items' has no column 'Nope'$/);
    await bad({sort: 'Nope'}, /Invalid sort: no group column or aggregate named 'Nope'/);
    await bad({limit: 'x'}, /Invalid limit/);
    // More groups than GRISTLITE_AGGREGATE_MAX_GROUPS (4 here): refused without a limit.
    await bad({group_by: 'Name'}, /more than 4 groups \(GRISTLITE_AGGREGATE_MAX_GROUPS\)/);
    await bad({group_by: 'Name', limit: '5'}, /at most 4 groups/);
    assert.equal(fields(ok(await api.get(agg({group_by: 'Name', limit: '2'}), chimpy.as))).length, 2);
    // A condition beyond the formula time budget.
    await bad({where: 'len([x for x in range(10**8)]) > 0'}, /TimeoutError|MemoryError/);
  });

  s('under access rules: hidden is unknown, unreadable rows not counted, censored cells grouped apart', async () => {
    const {api, chimpy, kiwi} = world();
    ok(await api.post(`/api/docs/${doc}/apply`, ITEMS_READ_RULES, chimpy.as));
    const hidden: Array<Record<string, string>> = [
      {group_by: 'Secret'},
      {agg: 'count_distinct:Secret'},
      {having: 'min_Secret == "s1"'},
    ];
    for (const params of hidden) {
      isErrorLike(await api.get(agg(params), kiwi.as), 400, /Table 'Items' has no column 'Secret'/);
    }
    assert.equal(fields(ok(await api.get(agg({group_by: 'Secret', limit: '1'}), chimpy.as))), [
      {Secret: 's1', count: 1},
    ]);
    // Kiwi cannot read the red row: 5 rows, and its Price (None) is not in the sum either way.
    assert.equal(fields(ok(await api.get(agg({agg: 'count,sum:Price'}), kiwi.as))), [{count: 5, sum_Price: 197}]);
    assert.equal(fields(ok(await api.get(agg({agg: 'count,sum:Price'}), chimpy.as))), [{count: 6, sum_Price: 197}]);
    assert.equal(fields(ok(await api.get(agg({group_by: 'Team'}), kiwi.as))), [{Team: 'blue', count: 5}]);
    // Notes is censored where Price is 150 (Cherry): one group of its own, ["C"] as /records shows it.
    assert.equal(fields(ok(await api.get(agg({group_by: 'Notes', where: '$Status == "Late"'}), kiwi.as))), [
      {Notes: 'n2', count: 1},
      {Notes: ['C'], count: 1},
    ]);
    assert.equal(fields(ok(await api.get(agg({agg: 'count_distinct:Notes'}), kiwi.as))), [{count_distinct_Notes: 4}]);
  });
  s.run();
}
