/** `/data` (columnar reads and writes), `/apply` (user actions), `/sql`, and downloads. */
import {type Scenario, site, tpath} from './common.js';

export const data: Scenario = {
  name: 'data',
  async run(s) {
    const {doc} = await site(s, 'recdata');
    const d = `/api/docs/${doc}`;
    const t = tpath(doc, 'Items');
    await s.post('apply AddTable', 'chimpy', `${d}/apply`, [
      [
        'AddTable',
        'Items',
        [
          {id: 'Name', type: 'Text'},
          {id: 'Price', type: 'Numeric'},
          {id: 'Qty', type: 'Int'},
          {id: 'Total', type: 'Numeric', isFormula: true, formula: '$Price * $Qty'},
          {id: 'Day', type: 'Date'},
          {id: 'Done', type: 'Bool'},
        ],
      ],
    ]);
    await s.post('apply BulkAddRecord', 'chimpy', `${d}/apply`, [
      [
        'BulkAddRecord',
        'Items',
        [null, null, null, null],
        {
          Name: ['pen', 'book', 'lamp', 'cup'],
          Price: [1.5, 12, 30, 4],
          Qty: [10, 1, 2, 0],
          Day: [0, 86400, null, 1700000000],
        },
      ],
    ]);
    await s.get('data all', 'chimpy', `${t}/data`);
    await s.get('data sorted', 'chimpy', `${t}/data?sort=-Price`);
    await s.get('data filtered', 'chimpy', `${t}/data?filter=${encodeURIComponent('{"Qty":[1,2]}')}`);
    await s.get('data limit', 'chimpy', `${t}/data?limit=1`);
    await s.get('data hidden', 'chimpy', `${t}/data?hidden=1`);
    await s.post('data add', 'chimpy', `${t}/data`, {Name: ['desk'], Price: [100], Qty: [1]});
    await s.post('data add ragged', 'chimpy', `${t}/data`, {Name: ['a', 'b'], Price: [1]});
    await s.post('data add unknown column', 'chimpy', `${t}/data`, {Nope: [1]});
    await s.patch('data update', 'chimpy', `${t}/data`, {id: [1, 2], Qty: [11, 3]});
    await s.patch('data update no id', 'chimpy', `${t}/data`, {Qty: [1]});
    await s.patch('data update missing row', 'chimpy', `${t}/data`, {id: [99], Qty: [1]});
    await s.post('data delete', 'chimpy', `${t}/data/delete`, [5]);
    await s.get('data after writes', 'chimpy', `${t}/data`);

    // /apply: what it returns, and what it refuses.
    await s.post('apply UpdateRecord', 'chimpy', `${d}/apply`, [['UpdateRecord', 'Items', 1, {Done: true}]]);
    await s.post('apply several', 'chimpy', `${d}/apply`, [
      ['AddRecord', 'Items', null, {Name: 'mug', Price: 5, Qty: 2}],
      ['UpdateRecord', 'Items', 2, {Name: 'big book'}],
      ['RemoveRecord', 'Items', 3],
    ]);
    await s.post('apply AddColumn', 'chimpy', `${d}/apply`, [['AddColumn', 'Items', 'Note', {type: 'Text'}]]);
    await s.post('apply ModifyColumn', 'chimpy', `${d}/apply`, [['ModifyColumn', 'Items', 'Note', {type: 'Any'}]]);
    await s.post('apply RenameColumn', 'chimpy', `${d}/apply`, [['RenameColumn', 'Items', 'Note', 'Remark']]);
    await s.post('apply unknown action', 'chimpy', `${d}/apply`, [['Explode', 'Items']]);
    await s.post('apply unknown table', 'chimpy', `${d}/apply`, [['AddRecord', 'Nope', null, {}]]);
    await s.post('apply missing row', 'chimpy', `${d}/apply`, [['UpdateRecord', 'Items', 999, {Qty: 1}]]);
    await s.post('apply not a list', 'chimpy', `${d}/apply`, {action: 'AddRecord'});
    await s.post('apply empty list', 'chimpy', `${d}/apply`, []);
    await s.post('apply action not a list', 'chimpy', `${d}/apply`, ['AddRecord']);
    await s.post('apply second fails, first undone', 'chimpy', `${d}/apply`, [
      ['AddRecord', 'Items', null, {Name: 'ghost'}],
      ['UpdateRecord', 'Items', 999, {Qty: 1}],
    ]);
    await s.post('apply formula error cell', 'chimpy', `${d}/apply`, [
      ['AddColumn', 'Items', 'Err', {isFormula: true, formula: '1/0'}],
    ]);
    await s.get('records after apply', 'chimpy', `${t}/records`);
    await s.get('records typed after apply', 'chimpy', `${t}/records?cellFormat=typed`);
    await s.post('apply as stranger', 'kiwi', `${d}/apply`, [['AddRecord', 'Items', null, {}]]);
    await s.post('apply to metadata', 'chimpy', `${d}/apply`, [['UpdateRecord', '_grist_Tables', 1, {tableId: 'X'}]]);

    // SQL.
    const q = (x: string) => `${d}/sql?q=${encodeURIComponent(x)}`;
    await s.get('sql select', 'chimpy', q('select Name, Price, Qty, Total from Items order by id'));
    await s.get('sql count', 'chimpy', q('select count(*) as n from Items'));
    await s.get('sql syntax error', 'chimpy', q('select from'));
    await s.get('sql unknown table', 'chimpy', q('select * from Nope'));
    await s.get('sql write refused', 'chimpy', q('delete from Items'));
    await s.get('sql two statements', 'chimpy', q('select 1; select 2'));
    await s.get('sql no q', 'chimpy', `${d}/sql`);
    await s.post('sql post args', 'chimpy', `${d}/sql`, {
      sql: 'select Name from Items where Qty > ? order by id',
      args: [1],
    });
    await s.post('sql post named', 'chimpy', `${d}/sql`, {sql: 'select :x as x', args: {x: 1}});
    await s.post('sql post no sql', 'chimpy', `${d}/sql`, {args: []});
    await s.post('sql post trailing semicolon', 'chimpy', `${d}/sql`, {sql: 'select 1 as one;'});
    await s.post('sql post with', 'chimpy', `${d}/sql`, {sql: 'with x as (select 2 as two) select * from x'});
    await s.post('sql post timeout', 'chimpy', `${d}/sql`, {sql: 'select 1 as one', timeout: 100});
    await s.post('sql post pragma', 'chimpy', `${d}/sql`, {sql: 'pragma table_info(Items)'});
    await s.get('sql stranger', 'kiwi', q('select 1'));
    await s.get('sql metadata', 'chimpy', q('select tableId from _grist_Tables order by id'));

    // Downloads.
    await s.get('csv', 'chimpy', `${d}/download/csv?tableId=Items`);
    await s.get('csv header as label', 'chimpy', `${d}/download/csv?tableId=Items&header=label`);
    await s.get('csv no table', 'chimpy', `${d}/download/csv`);
    await s.get('csv unknown table', 'chimpy', `${d}/download/csv?tableId=Nope`);
    await s.get('tsv', 'chimpy', `${d}/download/tsv?tableId=Items`);
    await s.get('dsv', 'chimpy', `${d}/download/dsv?tableId=Items`);
    await s.get('xlsx table', 'chimpy', `${d}/download/xlsx?tableId=Items`);
    await s.get('xlsx whole doc', 'chimpy', `${d}/download/xlsx`);
    await s.get('table-schema', 'chimpy', `${d}/download/table-schema?tableId=Items`);
    await s.get('table-schema no table', 'chimpy', `${d}/download/table-schema`);
    await s.get('csv stranger', 'kiwi', `${d}/download/csv?tableId=Items`);
  },
};
