/** Records: reading, adding, updating, add-or-update, deleting, and the errors of each. */
import {type Scenario, site, tpath} from './common.js';

export const records: Scenario = {
  name: 'records',
  async run(s) {
    const {doc} = await site(s, 'recrecords');
    const t = tpath(doc);
    const T = tpath(doc, 'Pets');
    await s.post('add table Pets', 'chimpy', `/api/docs/${doc}/tables`, {
      tables: [
        {
          id: 'Pets',
          columns: [
            {id: 'Name', fields: {type: 'Text'}},
            {id: 'Age', fields: {type: 'Numeric'}},
            {id: 'Legs', fields: {type: 'Int'}},
            {id: 'Tame', fields: {type: 'Bool'}},
            {id: 'Born', fields: {type: 'Date'}},
            {id: 'Kind', fields: {type: 'Choice', widgetOptions: '{"choices":["cat","dog","bird"]}'}},
            {id: 'Tags', fields: {type: 'ChoiceList'}},
            {id: 'Loose', fields: {type: 'Any'}},
            {id: 'Double', fields: {formula: '$Age * 2', isFormula: true}},
          ],
        },
      ],
    });
    await s.get('empty table', 'chimpy', `${T}/records`);
    const pets = [
      {Name: 'Rex', Age: 3, Legs: 4, Tame: true, Born: 1577836800, Kind: 'dog', Tags: ['L', 'a'], Loose: 'x'},
      {Name: 'Tom', Age: 5.5, Legs: 4, Tame: false, Born: null, Kind: 'cat', Tags: ['L'], Loose: 2},
      {Name: 'Tweety', Age: null, Legs: 2, Tame: true, Kind: 'bird', Loose: true},
      {Name: 'Nemo'},
    ];
    await s.post('add four', 'chimpy', `${T}/records`, {records: pets.map((fields) => ({fields}))});
    await s.get('read all', 'chimpy', `${T}/records`);
    await s.get('read hidden', 'chimpy', `${T}/records?hidden=true`);
    await s.get('read typed', 'chimpy', `${T}/records?cellFormat=typed`);
    await s.get('read bad cellFormat', 'chimpy', `${T}/records?cellFormat=odd`);
    await s.get('read limit 2', 'chimpy', `${T}/records?limit=2`);
    await s.get('read limit 0', 'chimpy', `${T}/records?limit=0`);
    await s.get('read limit -1', 'chimpy', `${T}/records?limit=-1`);
    await s.get('read limit x', 'chimpy', `${T}/records?limit=x`);
    await s.get('read sort Age', 'chimpy', `${T}/records?sort=Age`);
    await s.get('read sort -Age', 'chimpy', `${T}/records?sort=-Age`);
    await s.get('read sort Kind,-Name', 'chimpy', `${T}/records?sort=Kind,-Name`);
    await s.get('read sort naturalSort', 'chimpy', `${T}/records?sort=Name:naturalSort`);
    await s.get('read sort emptyFirst', 'chimpy', `${T}/records?sort=Age:emptyFirst`);
    await s.get('read sort unknown column', 'chimpy', `${T}/records?sort=Nope`);
    await s.get('read X-Sort header', 'chimpy', `${T}/records`, {headers: {'X-Sort': '-Legs,Name', 'X-Limit': '3'}});
    const f = (o: unknown) => `${T}/records?filter=${encodeURIComponent(JSON.stringify(o))}`;
    await s.get('filter Legs 4', 'chimpy', f({Legs: [4]}));
    await s.get('filter Kind cat,bird', 'chimpy', f({Kind: ['cat', 'bird']}));
    await s.get('filter two columns', 'chimpy', f({Legs: [4], Tame: [true]}));
    await s.get('filter null Age', 'chimpy', f({Age: [null]}));
    await s.get('filter id', 'chimpy', f({id: [2, 4]}));
    await s.get('filter formula column', 'chimpy', f({Double: [6]}));
    await s.get('filter empty list', 'chimpy', f({Legs: []}));
    await s.get('filter not a list', 'chimpy', f({Legs: 4}));
    await s.get('filter unknown column', 'chimpy', f({Nope: [1]}));
    await s.get('filter not json', 'chimpy', `${T}/records?filter=%7Bnope`);
    await s.get('filter array', 'chimpy', f([1]));
    await s.get('filter with sort and limit', 'chimpy', `${f({Legs: [4, 2]})}&sort=-Name&limit=2`);
    await s.post('records/list', 'chimpy', `${T}/records/list`, {filter: {Legs: [4]}});

    await s.patch('update two', 'chimpy', `${T}/records`, {
      records: [
        {id: 1, fields: {Age: 4, Tags: ['L']}},
        {id: 4, fields: {Name: 'Nemo II', Legs: 0}},
      ],
    });
    await s.get('after update', 'chimpy', `${T}/records`);
    await s.patch('update missing id', 'chimpy', `${T}/records`, {records: [{id: 99, fields: {Age: 1}}]});
    await s.patch('update no id', 'chimpy', `${T}/records`, {records: [{fields: {Age: 1}}]});
    await s.patch('update unknown column', 'chimpy', `${T}/records`, {records: [{id: 1, fields: {Nope: 1}}]});
    await s.patch('update formula column', 'chimpy', `${T}/records`, {records: [{id: 1, fields: {Double: 1}}]});
    await s.patch('update mixed columns', 'chimpy', `${T}/records`, {
      records: [
        {id: 1, fields: {Age: 7}},
        {id: 2, fields: {Legs: 3}},
      ],
    });
    await s.patch('update empty list', 'chimpy', `${T}/records`, {records: []});
    await s.patch('update wrong types', 'chimpy', `${T}/records`, {
      records: [{id: 2, fields: {Age: 'old', Legs: 'many', Tame: 'yes', Born: 'yesterday'}}],
    });
    await s.get('after wrong types', 'chimpy', `${T}/records`);
    await s.get('after wrong types typed', 'chimpy', `${T}/records?cellFormat=typed`);

    await s.post('add empty record', 'chimpy', `${T}/records`, {records: [{}]});
    await s.post('add no fields key', 'chimpy', `${T}/records`, {records: [{fields: {}}]});
    await s.post('add unknown column', 'chimpy', `${T}/records`, {records: [{fields: {Nope: 1}}]});
    await s.post('add formula column value', 'chimpy', `${T}/records`, {records: [{fields: {Double: 1}}]});
    await s.post('add with id', 'chimpy', `${T}/records`, {records: [{id: 50, fields: {Name: 'id given'}}]});
    await s.post('add records not list', 'chimpy', `${T}/records`, {records: {fields: {}}});
    await s.post('add no records key', 'chimpy', `${T}/records`, {rows: []});
    await s.post('add empty list', 'chimpy', `${T}/records`, {records: []});
    await s.post('add bad cell value', 'chimpy', `${T}/records`, {records: [{fields: {Name: {a: 1}}}]});
    await s.post('add object code cell', 'chimpy', `${T}/records`, {records: [{fields: {Loose: ['L', 1, 2]}}]});
    await s.post('add bad object code', 'chimpy', `${T}/records`, {records: [{fields: {Loose: ['Q', 1]}}]});
    await s.post('add noparse', 'chimpy', `${T}/records?noparse=1`, {records: [{fields: {Age: '12'}}]});
    await s.post('add parse', 'chimpy', `${T}/records`, {records: [{fields: {Age: '12', Born: '2020-02-03'}}]});
    await s.post('add not json', 'chimpy', `${T}/records`, undefined, {
      raw: {type: 'application/json', data: '{"records": ['},
    });
    await s.post('add text/plain', 'chimpy', `${T}/records`, undefined, {raw: {type: 'text/plain', data: 'hello'}});
    await s.get('after adds', 'chimpy', `${T}/records`);

    // Add-or-update.
    const put = (step: string, body: unknown, q = '') => s.put(step, 'chimpy', `${T}/records${q}`, body);
    await put('upsert update by Name', {records: [{require: {Name: 'Rex'}, fields: {Age: 10}}]});
    await put('upsert add new', {records: [{require: {Name: 'Polly'}, fields: {Kind: 'bird'}}]});
    await put('upsert require only', {records: [{require: {Name: 'Solo'}}]});
    await put('upsert fields only', {records: [{fields: {Name: 'NoRequire'}}]});
    await put('upsert by id', {records: [{require: {id: 2}, fields: {Age: 6}}]});
    await put('upsert by missing id', {records: [{require: {id: 999}, fields: {Age: 6}}]});
    await put('upsert noadd', {records: [{require: {Name: 'Ghost'}, fields: {Age: 1}}]}, '?noadd=1');
    await put('upsert noupdate', {records: [{require: {Name: 'Rex'}, fields: {Age: 1}}]}, '?noupdate=1');
    await put('upsert onmany first', {records: [{require: {Legs: 4}, fields: {Tame: true}}]}, '?onmany=first');
    await put('upsert onmany none', {records: [{require: {Legs: 4}, fields: {Tame: false}}]}, '?onmany=none');
    await put('upsert onmany all', {records: [{require: {Legs: 4}, fields: {Tame: false}}]}, '?onmany=all');
    await put('upsert onmany bad', {records: [{require: {Legs: 4}, fields: {Tame: false}}]}, '?onmany=some');
    await put(
      'upsert allow_empty_require',
      {records: [{require: {}, fields: {Name: 'empty req'}}]},
      '?allow_empty_require=1',
    );
    await put('upsert empty require refused', {records: [{require: {}, fields: {Name: 'x'}}]});
    await put('upsert unknown column in require', {records: [{require: {Nope: 1}, fields: {Name: 'x'}}]});
    await put('upsert require not object', {records: [{require: 1}]});
    await put('upsert no records', {});
    await s.get('after upserts', 'chimpy', `${T}/records?sort=id`);

    await s.post('delete two', 'chimpy', `${T}/data/delete`, [2, 3]);
    await s.post('records/delete one', 'chimpy', `${T}/records/delete`, [1]);
    await s.post('records/delete missing', 'chimpy', `${T}/records/delete`, [1000]);
    await s.post('records/delete not list', 'chimpy', `${T}/records/delete`, {id: 4});
    await s.post('records/delete strings', 'chimpy', `${T}/records/delete`, ['a']);
    await s.get('after deletes', 'chimpy', `${T}/records`);

    // The empty Table1 every new document has.
    await s.get('Table1 records', 'chimpy', `${t}/records`);
    await s.get('Table1 by ref 1', 'chimpy', `${tpath(doc, '1')}/records`);
    await s.get('unknown table', 'chimpy', `${tpath(doc, 'Nope')}/records`);
    await s.get('unknown table ref', 'chimpy', `${tpath(doc, '99')}/records`);
    await s.get('lowercase table id', 'chimpy', `${tpath(doc, 'pets')}/records`);
    await s.post('add to unknown table', 'chimpy', `${tpath(doc, 'Nope')}/records`, {records: [{}]});
    await s.get('metadata table records', 'chimpy', `${tpath(doc, '_grist_Tables')}/records`);
    await s.get('unknown doc', 'chimpy', `${tpath('nosuchdocument1234')}/records`);
    await s.get('no key', 'anon', `${T}/records`);
    await s.get('stranger', 'kiwi', `${T}/records`);
    await s.post('stranger adds', 'kiwi', `${T}/records`, {records: [{}]});
  },
};
