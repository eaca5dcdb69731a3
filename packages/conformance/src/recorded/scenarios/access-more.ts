/**
 * More access rules: a column hidden from viewers, rows frozen by a condition on their values, a
 * condition on the new values of a write, a condition through a reference, a public share — each
 * read path and each kind of write tried by owner, editor, viewer and then anyone (public).
 */
import type {Who} from '../session.js';
import {type Scenario, share, site, tpath} from './common.js';

export const accessMore: Scenario = {
  name: 'access-more',
  async run(s) {
    const {doc} = await site(s, 'recaccess2');
    const d = `/api/docs/${doc}`;
    await share(s, 'share doc', d, {'kiwi@getgrist.com': 'editors', 'charon@getgrist.com': 'viewers'});
    await s.post('tables', 'chimpy', `${d}/apply`, [
      [
        'AddTable',
        'Projects',
        [
          {id: 'Name', type: 'Text'},
          {id: 'Owner', type: 'Text'},
          {id: 'Budget', type: 'Numeric'},
          {id: 'Status', type: 'Choice'},
        ],
      ],
      [
        'AddTable',
        'Tasks',
        [
          {id: 'Project', type: 'Ref:Projects'},
          {id: 'Title', type: 'Text'},
          {id: 'Done', type: 'Bool'},
        ],
      ],
      [
        'BulkAddRecord',
        'Projects',
        [null, null, null],
        {
          Name: ['Alpha', 'Beta', 'Gamma'],
          Owner: ['kiwi@getgrist.com', 'chimpy@getgrist.com', 'kiwi@getgrist.com'],
          Budget: [100, 200, 300],
          Status: ['Open', 'Open', 'Closed'],
        },
      ],
      [
        'BulkAddRecord',
        'Tasks',
        [null, null, null, null],
        {Project: [1, 2, 3, 1], Title: ['a1', 'b1', 'g1', 'a2'], Done: [false, true, false, true]},
      ],
    ]);
    await s.post('rules', 'chimpy', `${d}/apply`, [
      ['AddRecord', '_grist_ACLResources', -1, {tableId: 'Projects', colIds: 'Budget'}],
      ['AddRecord', '_grist_ACLResources', -2, {tableId: 'Projects', colIds: '*'}],
      ['AddRecord', '_grist_ACLResources', -3, {tableId: 'Tasks', colIds: '*'}],
      [
        'AddRecord',
        '_grist_ACLRules',
        null,
        {resource: -1, aclFormula: 'user.Access == VIEWER', permissionsText: '-R', memo: 'Budget hidden from viewers'},
      ],
      [
        'AddRecord',
        '_grist_ACLRules',
        null,
        {
          resource: -2,
          aclFormula: 'rec.Status == "Closed" and user.Access != OWNER',
          permissionsText: '-UD',
          memo: 'Closed projects are frozen',
        },
      ],
      [
        'AddRecord',
        '_grist_ACLRules',
        null,
        {
          resource: -2,
          aclFormula: 'user.Access == EDITOR and newRec.Budget > 1000',
          permissionsText: '-CU',
          memo: 'Over budget',
        },
      ],
      [
        'AddRecord',
        '_grist_ACLRules',
        null,
        {
          resource: -3,
          aclFormula: 'user.Access == EDITOR and rec.Project.Owner != user.Email',
          permissionsText: '-D',
          memo: 'Not your project',
        },
      ],
    ]);
    const P = tpath(doc, 'Projects');
    const T = tpath(doc, 'Tasks');
    const reads = async (who: Who, tag: string) => {
      await s.get(`${tag}${who}: projects`, who, `${P}/records`);
      await s.get(`${tag}${who}: projects typed`, who, `${P}/records?cellFormat=typed`);
      await s.get(`${tag}${who}: projects data`, who, `${P}/data`);
      await s.get(`${tag}${who}: tasks`, who, `${T}/records`);
      await s.get(`${tag}${who}: projects columns`, who, `${P}/columns`);
      await s.get(`${tag}${who}: projects csv`, who, `${d}/download/csv?tableId=Projects`);
      await s.get(`${tag}${who}: projects table-schema`, who, `${d}/download/table-schema?tableId=Projects`);
      await s.get(`${tag}${who}: sql`, who, `${d}/sql?q=${encodeURIComponent('select Name from Projects')}`);
      await s.get(`${tag}${who}: download`, who, `${d}/download`);
      await s.get(`${tag}${who}: snapshots`, who, `${d}/snapshots`);
      await s.get(`${tag}${who}: webhooks`, who, `${d}/webhooks`);
    };
    for (const who of ['chimpy', 'kiwi', 'charon', 'anon'] as Who[]) await reads(who, '');

    // Writes by the editor: allowed, frozen rows, the new-values condition, the reference condition.
    const k = (step: string, method: string, path: string, body: unknown) =>
      s.call(`kiwi: ${step}`, 'kiwi', method, path, body);
    await k('update open project', 'PATCH', `${P}/records`, {records: [{id: 1, fields: {Name: 'Alpha 2'}}]});
    await k('update closed project', 'PATCH', `${P}/records`, {records: [{id: 3, fields: {Name: 'Gamma 2'}}]});
    await k('raise budget too far', 'PATCH', `${P}/records`, {records: [{id: 1, fields: {Budget: 5000}}]});
    await k('raise budget a little', 'PATCH', `${P}/records`, {records: [{id: 1, fields: {Budget: 500}}]});
    await k('add big project', 'POST', `${P}/records`, {records: [{fields: {Name: 'Huge', Budget: 9999}}]});
    await k('add small project', 'POST', `${P}/records`, {
      records: [{fields: {Name: 'Small', Owner: 'kiwi@getgrist.com', Budget: 1}}],
    });
    await k('delete closed project', 'POST', `${P}/data/delete`, [3]);
    await k('close a project', 'PATCH', `${P}/records`, {records: [{id: 1, fields: {Status: 'Closed'}}]});
    await k('reopen it', 'PATCH', `${P}/records`, {records: [{id: 1, fields: {Status: 'Open'}}]});
    await k('delete task of own project', 'POST', `${T}/data/delete`, [1]);
    await k('delete task of other project', 'POST', `${T}/data/delete`, [2]);
    await k('apply mixed', 'POST', `${d}/apply`, [
      ['UpdateRecord', 'Tasks', 4, {Done: false}],
      ['UpdateRecord', 'Projects', 3, {Budget: 1}],
    ]);
    await k('upsert by name', 'PUT', `${P}/records`, {records: [{require: {Name: 'Beta'}, fields: {Budget: 250}}]});
    await k('rename a column', 'PATCH', `${P}/columns`, {columns: [{id: 'Status', fields: {label: 'State'}}]});
    await k('add a column', 'POST', `${P}/columns`, {columns: [{id: 'Notes', fields: {type: 'Text'}}]});
    await s.post('charon: update', 'charon', `${P}/records`, {records: [{fields: {Name: 'by charon'}}]});
    await s.del('charon: delete column', 'charon', `${P}/columns/Notes`);
    await s.get('owner after writes', 'chimpy', `${P}/records`);
    await s.get('owner tasks after writes', 'chimpy', `${T}/records`);
    await s.get('rules after column rename', 'chimpy', `${tpath(doc, '_grist_ACLRules')}/records`);

    // Public: anyone may view; the viewer rules apply to them.
    await share(s, 'make public', d, {'everyone@getgrist.com': 'viewers'});
    await reads('anon', 'public ');
    await s.post('public: add', 'anon', `${P}/records`, {records: [{fields: {Name: 'anon'}}]});
    await s.get('public: doc', 'anon', d);
    await s.get('public: access', 'anon', `${d}/access`);
  },
};
