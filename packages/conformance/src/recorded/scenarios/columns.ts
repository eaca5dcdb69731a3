/** Tables and columns: listing, adding, changing, replacing and removing them, with their errors. */
import {type Scenario, site, tpath} from './common.js';

export const columns: Scenario = {
  name: 'columns',
  async run(s) {
    const {doc} = await site(s, 'reccolumns');
    const d = `/api/docs/${doc}`;
    const c = `${tpath(doc)}/columns`;
    await s.get('tables of a new doc', 'chimpy', `${d}/tables`);
    await s.get('columns of Table1', 'chimpy', c);
    await s.get('columns hidden', 'chimpy', `${c}?hidden=true`);
    await s.get('tables expand columns', 'chimpy', `${d}/tables?expand=columns`);
    await s.post('add columns', 'chimpy', c, {
      columns: [
        {id: 'Text1', fields: {type: 'Text', label: 'A text'}},
        {id: 'Num', fields: {type: 'Numeric', widgetOptions: {decimals: 2}}},
        {id: 'When', fields: {type: 'DateTime:UTC'}},
        {id: 'Ref1', fields: {type: 'Ref:Table1'}},
        {id: 'F', fields: {isFormula: true, formula: '$Num + 1'}},
        {id: 'Plain'},
        {fields: {label: 'No Id'}},
        {id: 'with space', fields: {}},
      ],
    });
    await s.get('columns after add', 'chimpy', c);
    await s.post('add column twice', 'chimpy', c, {columns: [{id: 'Num'}]});
    await s.post('add column bad type', 'chimpy', c, {columns: [{id: 'Bad', fields: {type: 'Wat'}}]});
    await s.post('add column unknown field', 'chimpy', c, {columns: [{id: 'Bad2', fields: {color: 'red'}}]});
    await s.post('add columns empty list', 'chimpy', c, {columns: []});
    await s.post('add columns not a list', 'chimpy', c, {columns: {id: 'X'}});
    await s.post('add column id not string', 'chimpy', c, {columns: [{id: 5}]});
    await s.post('add column ref to unknown table', 'chimpy', c, {columns: [{id: 'R2', fields: {type: 'Ref:Nope'}}]});
    await s.post('add column bad formula', 'chimpy', c, {
      columns: [{id: 'Bad3', fields: {isFormula: true, formula: '$Num +'}}],
    });
    await s.get('records with bad formula', 'chimpy', `${tpath(doc)}/records`);
    await s.patch('change column type and label', 'chimpy', c, {
      columns: [{id: 'Plain', fields: {type: 'Int', label: 'Plain int'}}],
    });
    await s.patch('rename column by colId', 'chimpy', c, {columns: [{id: 'Text1', fields: {colId: 'Title'}}]});
    await s.patch('change formula', 'chimpy', c, {columns: [{id: 'F', fields: {formula: '$Num * 10'}}]});
    await s.patch('change unknown column', 'chimpy', c, {columns: [{id: 'Nope', fields: {label: 'x'}}]});
    await s.patch('change no fields', 'chimpy', c, {columns: [{id: 'Num'}]});
    await s.patch('widgetOptions as object', 'chimpy', c, {
      columns: [{id: 'Num', fields: {widgetOptions: {decimals: 1}}}],
    });
    await s.patch('widgetOptions as text', 'chimpy', c, {
      columns: [{id: 'Num', fields: {widgetOptions: '{"decimals":3}'}}],
    });
    await s.patch('widgetOptions bad json', 'chimpy', c, {columns: [{id: 'Num', fields: {widgetOptions: '{nope'}}]});
    await s.post('records for columns', 'chimpy', `${tpath(doc)}/records`, {
      records: [{fields: {Title: 'a', Num: 1.5, When: 1700000000, Plain: 7}}, {fields: {Title: 'b', Num: 2, Ref1: 1}}],
    });
    await s.get('records after column changes', 'chimpy', `${tpath(doc)}/records`);
    await s.get('columns after changes', 'chimpy', c);
    await s.put('put columns add and update', 'chimpy', c, {
      columns: [
        {id: 'Title', fields: {label: 'Title again'}},
        {id: 'New1', fields: {type: 'Bool'}},
      ],
    });
    await s.put('put columns noadd', 'chimpy', `${c}?noadd=1`, {columns: [{id: 'New2', fields: {type: 'Bool'}}]});
    await s.put('put columns noupdate', 'chimpy', `${c}?noupdate=1`, {columns: [{id: 'Title', fields: {label: 'x'}}]});
    await s.get('columns after put', 'chimpy', c);
    await s.put('put columns replaceall', 'chimpy', `${c}?replaceall=1`, {
      columns: [{id: 'Title'}, {id: 'Num'}, {id: 'F'}],
    });
    await s.get('columns after replaceall', 'chimpy', c);
    await s.del('delete column', 'chimpy', `${c}/F`);
    await s.del('delete unknown column', 'chimpy', `${c}/Nope`);
    await s.del('delete id column', 'chimpy', `${c}/id`);
    await s.get('columns after delete', 'chimpy', c);

    // Tables.
    await s.post('add tables', 'chimpy', `${d}/tables`, {
      tables: [
        {
          id: 'People',
          columns: [
            {id: 'Name', fields: {type: 'Text'}},
            {id: 'Age', fields: {type: 'Int'}},
          ],
        },
        {id: 'lower_case', columns: [{id: 'x'}]},
        {columns: [{id: 'A'}]},
      ],
    });
    await s.post('add table no columns', 'chimpy', `${d}/tables`, {tables: [{id: 'Empty', columns: []}]});
    await s.post('add table existing id', 'chimpy', `${d}/tables`, {tables: [{id: 'People', columns: [{id: 'A'}]}]});
    await s.post('add table bad id', 'chimpy', `${d}/tables`, {tables: [{id: '1 bad', columns: [{id: 'A'}]}]});
    await s.post('add tables not a list', 'chimpy', `${d}/tables`, {tables: {}});
    await s.get('tables after adds', 'chimpy', `${d}/tables`);
    await s.patch('rename table', 'chimpy', `${d}/tables`, {tables: [{id: 'People', fields: {tableId: 'Persons'}}]});
    await s.patch('change table unknown', 'chimpy', `${d}/tables`, {tables: [{id: 'Nope', fields: {tableId: 'X'}}]});
    await s.get('tables after rename', 'chimpy', `${d}/tables`);
    await s.get('columns of renamed', 'chimpy', `${tpath(doc, 'Persons')}/columns`);
    await s.get('columns of old name', 'chimpy', `${tpath(doc, 'People')}/columns`);
    await s.post('remove table by apply', 'chimpy', `${d}/apply`, [['RemoveTable', 'Lower_case']]);
    await s.get('tables after remove', 'chimpy', `${d}/tables`);
    await s.get('columns stranger', 'kiwi', c);
    await s.post('add columns stranger', 'kiwi', c, {columns: [{id: 'K'}]});
  },
};
