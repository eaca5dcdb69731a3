/**
 * Summary tables through `POST /apply` (issue 26 §4): `CreateViewSection` with group-by column
 * refs makes `<Source>_summary_<colIds>` with `group`, `count` and a SUM per numeric column, filled
 * at once and kept current by every write path; `UpdateSummaryViewSection` regroups; the summary
 * goes with its last section and with its source. Bad refs are 400s in Grist's words.
 */
import * as assert from 'uvu/assert';
import {tablePath} from './docdata.js';
import {areaSuite, isErrorLike, ok, useWorld, type Target} from './world.js';

export function summariesSuite(target: Target): void {
  const s = areaSuite(target, 'summaries');
  const world = useWorld(s, target);
  let doc = '';
  /** The section the first test made (of Sales_summary_Region). */
  let firstSection = 0;

  const apply = async (actions: unknown[]) =>
    ok(await world().api.post(`/api/docs/${doc}/apply`, actions, world().chimpy.as), JSON.stringify(actions)).body;
  const tableIds = async (): Promise<string[]> =>
    ok(await world().api.get(`/api/docs/${doc}/tables`, world().chimpy.as)).body.tables.map((t: {id: string}) => t.id);
  const records = async (table: string) =>
    ok(await world().api.get(`${tablePath(doc, table)}/records`, world().chimpy.as)).body.records.map(
      (r: {id: number; fields: Record<string, unknown>}) => ({id: r.id, ...r.fields}),
    );
  const colRef = async (table: string, colId: string): Promise<number> => {
    const cols = ok(await world().api.get(`${tablePath(doc, table)}/columns`, world().chimpy.as)).body.columns;
    return cols.find((c: {id: string}) => c.id === colId).fields.colRef;
  };
  const meta = async (table: string) =>
    ok(await world().api.get(`${tablePath(doc, table)}/columns`, world().chimpy.as)).body.columns.map(
      (c: {id: string; fields: Record<string, unknown>}) => [c.id, c.fields.type, c.fields.formula],
    );

  s('CreateViewSection makes a summary Grist names and fills; every write path keeps it current', async () => {
    const {api, chimpy} = world();
    doc = await world().newDoc(chimpy, await world().homeWs(chimpy), 'Summaries');
    await apply([
      [
        'AddTable',
        'Sales',
        [
          {id: 'Region', type: 'Text', isFormula: false},
          {id: 'Amount', type: 'Numeric', isFormula: false},
          {id: 'Units', type: 'Int', isFormula: false},
          {id: 'Note', type: 'Text', isFormula: false},
        ],
      ],
      ['BulkAddRecord', 'Sales', [null, null, null], {Region: ['N', 'S', 'N'], Amount: [10, 5, 2.5], Units: [1, 2, 3]}],
    ]);
    const sales = (await apply([['AddRecord', '_grist_Views', null, {name: 'Report', type: 'empty'}]])).retValues[0];
    const region = await colRef('Sales', 'Region');
    const tablesMeta = ok(await api.get(`/api/docs/${doc}/tables/_grist_Tables/records`, chimpy.as)).body.records;
    const salesRef = tablesMeta.find((t: {fields: {tableId: string}}) => t.fields.tableId === 'Sales').id;
    const body = await apply([['CreateViewSection', salesRef, sales, 'record', [region], null]]);
    const ret = body.retValues[0];
    assert.equal(Object.keys(ret).sort(), ['sectionRef', 'tableRef', 'viewRef']);
    assert.equal([ret.tableRef, ret.viewRef], [salesRef, sales]);
    firstSection = ret.sectionRef;
    assert.ok((await tableIds()).includes('Sales_summary_Region'));
    assert.equal(await meta('Sales_summary_Region'), [
      ['Region', 'Text', ''],
      ['group', 'RefList:Sales', 'table.getSummarySourceGroup(rec)'],
      ['count', 'Int', 'len($group)'],
      ['Amount', 'Numeric', 'SUM($group.Amount)'],
      ['Units', 'Int', 'SUM($group.Units)'],
    ]);
    assert.equal(await records('Sales_summary_Region'), [
      {id: 1, Region: 'N', group: ['L', 1, 3], count: 2, Amount: 12.5, Units: 4},
      {id: 2, Region: 'S', group: ['L', 2], count: 1, Amount: 5, Units: 2},
    ]);

    // POST /records, PATCH /records, /data/delete: groups appear, move and go.
    ok(
      await api.post(`${tablePath(doc, 'Sales')}/records`, {records: [{fields: {Region: 'E', Amount: 1}}]}, chimpy.as),
    );
    ok(await api.patch(`${tablePath(doc, 'Sales')}/records`, {records: [{id: 2, fields: {Region: 'N'}}]}, chimpy.as));
    ok(await api.post(`${tablePath(doc, 'Sales')}/data/delete`, [1], chimpy.as));
    assert.equal(
      (await records('Sales_summary_Region')).map((r: Record<string, unknown>) => [r.Region, r.count, r.Amount]),
      [
        ['N', 2, 7.5],
        ['E', 1, 1],
      ],
    );
  });

  s('the same grouping is reused; UpdateSummaryViewSection regroups; the last section takes the summary', async () => {
    const region = await colRef('Sales', 'Region');
    const units = await colRef('Sales', 'Units');
    const salesRef = (await records('_grist_Tables')).find((t: {tableId: string}) => t.tableId === 'Sales').id;
    const [a, b] = (
      await apply([
        ['CreateViewSection', salesRef, 0, 'record', [region], null],
        ['CreateViewSection', salesRef, 0, 'record', [], null],
      ])
    ).retValues;
    const summaries = (await tableIds()).filter((t) => t.startsWith('Sales_summary'));
    assert.equal(summaries, ['Sales_summary_Region', 'Sales_summary']);
    assert.equal(await records('Sales_summary'), [{id: 1, group: ['L', 2, 3, 4], count: 3, Amount: 8.5, Units: 5}]);

    await apply([['UpdateSummaryViewSection', b.sectionRef, [region, units]]]);
    assert.equal(
      (await tableIds()).filter((t) => t.startsWith('Sales_summary')),
      ['Sales_summary_Region', 'Sales_summary_Region_Units'],
      'Sales_summary went with its only section',
    );
    const sections = await records('_grist_Views_section');
    const moved = sections.find((x: {id: number}) => x.id === b.sectionRef);
    const regrouped = (await records('_grist_Tables')).find(
      (t: {tableId: string}) => t.tableId === 'Sales_summary_Region_Units',
    );
    assert.is(moved.tableRef, regrouped.id);

    // Sales_summary_Region has two sections: it stays until both are gone.
    await apply([['RemoveViewSection', a.sectionRef]]);
    assert.ok((await tableIds()).includes('Sales_summary_Region'));
    await apply([['RemoveRecord', '_grist_Views_section', firstSection]]);
    assert.not.ok((await tableIds()).includes('Sales_summary_Region'));

    // The source removed: its summaries go with it.
    await apply([['RemoveTable', 'Sales']]);
    assert.equal(
      (await tableIds()).filter((t) => t.startsWith('Sales')),
      [],
    );
  });

  s('bad refs are 400s in Grist words, and the bundle changes nothing', async () => {
    const {api, chimpy} = world();
    await apply([['AddTable', 'Src', [{id: 'K', type: 'Text', isFormula: false}]]]);
    const srcRef = (await records('_grist_Tables')).find((t: {tableId: string}) => t.tableId === 'Src').id;
    const other = await colRef('Table1', 'A');
    const post = (actions: unknown[]) => api.post(`/api/docs/${doc}/apply`, actions, chimpy.as);
    isErrorLike(
      await post([
        ['AddRecord', 'Src', null, {K: 'x'}],
        ['CreateViewSection', srcRef, 0, 'record', [99999], null],
      ]),
      400,
      /Invalid column requested/,
    );
    isErrorLike(await post([['CreateViewSection', srcRef, 0, 'record', [other], null]]), 400, /\(wrong table\)/);
    isErrorLike(await post([['UpdateSummaryViewSection', 99999, []]]), 400, /View section 99999 not found/);
    assert.equal(await records('Src'), []);
    assert.not.ok((await tableIds()).some((t) => t.startsWith('Src_summary')));
  });

  s.run();
}
