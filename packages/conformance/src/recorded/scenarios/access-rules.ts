/**
 * Access rules (granular access): rules written through `/apply` as Grist's client writes them, then
 * every read and write path tried by the owner (chimpy), an editor (kiwi), a viewer (charon) and
 * someone without a key, including rule edits, memos, broken rules and recovery mode.
 */
import type {Who} from '../session.js';
import {type Scenario, share, site, tpath} from './common.js';

const PEOPLE: Who[] = ['chimpy', 'kiwi', 'charon', 'anon'];

export const accessRules: Scenario = {
  name: 'access-rules',
  async run(s) {
    const {doc} = await site(s, 'recaccess');
    const d = `/api/docs/${doc}`;
    await share(s, 'share doc', d, {'kiwi@getgrist.com': 'editors', 'charon@getgrist.com': 'viewers'});
    await s.post('tables', 'chimpy', `${d}/apply`, [
      [
        'AddTable',
        'Orders',
        [
          {id: 'Owner', type: 'Text'},
          {id: 'Item', type: 'Text'},
          {id: 'Price', type: 'Numeric'},
          {id: 'Secret', type: 'Text'},
        ],
      ],
      ['AddTable', 'Notes', [{id: 'Text', type: 'Text'}]],
    ]);
    await s.post('rows', 'chimpy', `${d}/apply`, [
      [
        'BulkAddRecord',
        'Orders',
        [null, null, null, null],
        {
          Owner: ['kiwi@getgrist.com', 'charon@getgrist.com', 'chimpy@getgrist.com', 'kiwi@getgrist.com'],
          Item: ['apple', 'pear', 'plum', 'fig'],
          Price: [1, 2, 3, 4],
          Secret: ['s1', 's2', 's3', 's4'],
        },
      ],
      ['BulkAddRecord', 'Notes', [null, null], {Text: ['first', 'second']}],
    ]);
    await s.post('rules', 'chimpy', `${d}/apply`, [
      ['AddRecord', '_grist_ACLResources', -1, {tableId: 'Orders', colIds: 'Secret'}],
      ['AddRecord', '_grist_ACLResources', -2, {tableId: 'Orders', colIds: '*'}],
      ['AddRecord', '_grist_ACLResources', -3, {tableId: 'Notes', colIds: '*'}],
      ['AddRecord', '_grist_ACLResources', -4, {tableId: '*', colIds: '*'}],
      [
        'AddRecord',
        '_grist_ACLRules',
        null,
        {resource: -1, aclFormula: 'user.Access != OWNER', permissionsText: '-R', memo: 'Secrets are for owners'},
      ],
      [
        'AddRecord',
        '_grist_ACLRules',
        null,
        {
          resource: -2,
          aclFormula: 'user.Access != OWNER and rec.Owner != user.Email',
          permissionsText: '-RUD',
          memo: 'Not your order',
        },
      ],
      [
        'AddRecord',
        '_grist_ACLRules',
        null,
        {
          resource: -2,
          aclFormula: 'user.Access == EDITOR and newRec.Price > 100',
          permissionsText: '-CU',
          memo: 'Too expensive',
        },
      ],
      [
        'AddRecord',
        '_grist_ACLRules',
        null,
        {resource: -3, aclFormula: 'user.Access == EDITOR', permissionsText: '-CUD'},
      ],
      [
        'AddRecord',
        '_grist_ACLRules',
        null,
        {resource: -4, aclFormula: 'user.Access == EDITOR', permissionsText: '-S', memo: 'No schema changes'},
      ],
    ]);
    await s.get('rules as stored', 'chimpy', `${tpath(doc, '_grist_ACLRules')}/records`);
    await s.get('resources as stored', 'chimpy', `${tpath(doc, '_grist_ACLResources')}/records`);

    // Reads, by everyone, through every read path.
    const O = tpath(doc, 'Orders');
    for (const who of PEOPLE) {
      await s.get(`${who}: orders records`, who, `${O}/records`);
      await s.get(`${who}: orders records sorted`, who, `${O}/records?sort=-Price&limit=2`);
      await s.get(
        `${who}: orders filtered by Item`,
        who,
        `${O}/records?filter=${encodeURIComponent('{"Item":["apple","fig","plum"]}')}`,
      );
      await s.get(`${who}: orders data`, who, `${O}/data`);
      await s.get(`${who}: orders columns`, who, `${O}/columns`);
      await s.get(`${who}: notes records`, who, `${tpath(doc, 'Notes')}/records`);
      await s.get(`${who}: tables`, who, `${d}/tables`);
      await s.get(`${who}: csv`, who, `${d}/download/csv?tableId=Orders`);
      await s.get(`${who}: xlsx`, who, `${d}/download/xlsx?tableId=Orders`);
      await s.get(`${who}: sql`, who, `${d}/sql?q=${encodeURIComponent('select * from Orders')}`);
      await s.get(`${who}: rules table`, who, `${tpath(doc, '_grist_ACLRules')}/records`);
      await s.get(`${who}: attachments`, who, `${d}/attachments`);
      await s.get(`${who}: doc`, who, d);
      await s.get(`${who}: download doc`, who, `${d}/download`);
      await s.get(`${who}: filter on Secret`, who, `${O}/records?filter=${encodeURIComponent('{"Secret":["s1"]}')}`);
      await s.get(`${who}: sort on Secret`, who, `${O}/records?sort=Secret`);
    }

    // Writes.
    const writes: [string, string, unknown][] = [
      ['add own order', 'POST', {records: [{fields: {Owner: 'kiwi@getgrist.com', Item: 'kiwi fruit', Price: 5}}]}],
      [
        'add order of someone else',
        'POST',
        {records: [{fields: {Owner: 'chimpy@getgrist.com', Item: 'gift', Price: 5}}]},
      ],
      ['add expensive order', 'POST', {records: [{fields: {Owner: 'kiwi@getgrist.com', Item: 'car', Price: 5000}}]}],
      ['update own order', 'PATCH', {records: [{id: 1, fields: {Item: 'green apple'}}]}],
      ['update hidden order', 'PATCH', {records: [{id: 3, fields: {Item: 'mine now'}}]}],
      ['update own order secret', 'PATCH', {records: [{id: 4, fields: {Secret: 'changed'}}]}],
      ['give own order away', 'PATCH', {records: [{id: 4, fields: {Owner: 'charon@getgrist.com'}}]}],
      ['upsert own order', 'PUT', {records: [{require: {Item: 'green apple'}, fields: {Price: 7}}]}],
    ];
    for (const who of ['kiwi', 'charon', 'anon'] as Who[]) {
      for (const [name, method, body] of writes) await s.call(`${who}: ${name}`, who, method, `${O}/records`, body);
      await s.post(`${who}: delete hidden row`, who, `${O}/data/delete`, [3]);
      await s.post(`${who}: add note`, who, `${tpath(doc, 'Notes')}/records`, {
        records: [{fields: {Text: 'by ' + who}}],
      });
      await s.post(`${who}: add column`, who, `${O}/columns`, {columns: [{id: `Col_${who}`}]});
      await s.post(`${who}: apply AddTable`, who, `${d}/apply`, [['AddTable', `T_${who}`, [{id: 'A'}]]]);
      await s.post(`${who}: edit rules`, who, `${d}/apply`, [['RemoveRecord', '_grist_ACLRules', 2]]);
      await s.get(`${who}: orders after writes`, who, `${O}/records`);
    }
    await s.get('owner sees all after writes', 'chimpy', `${O}/records`);

    // Rules that do not hold: bad formulas, unknown columns, then a column rename under a rule.
    const rule = (formula: string, perms = '-R') => [
      ['AddRecord', '_grist_ACLResources', -1, {tableId: 'Notes', colIds: 'Text'}],
      ['AddRecord', '_grist_ACLRules', null, {resource: -1, aclFormula: formula, permissionsText: perms}],
    ];
    await s.post('rule syntax error', 'chimpy', `${d}/apply`, rule('user.Access =='));
    await s.post('rule unknown attribute', 'chimpy', `${d}/apply`, rule('user.Nope == 1'));
    await s.post('rule unknown rec column', 'chimpy', `${d}/apply`, rule('rec.Nope == 1'));
    await s.post('rule bad permissions', 'chimpy', `${d}/apply`, rule('True', '-X'));
    await s.post('rule on unknown table', 'chimpy', `${d}/apply`, [
      ['AddRecord', '_grist_ACLResources', -1, {tableId: 'Nope', colIds: '*'}],
      ['AddRecord', '_grist_ACLRules', null, {resource: -1, aclFormula: 'True', permissionsText: '-R'}],
    ]);
    await s.post('rule on unknown column', 'chimpy', `${d}/apply`, [
      ['AddRecord', '_grist_ACLResources', -1, {tableId: 'Notes', colIds: 'Nope'}],
      ['AddRecord', '_grist_ACLRules', null, {resource: -1, aclFormula: 'True', permissionsText: '-R'}],
    ]);
    await s.post('duplicate resource', 'chimpy', `${d}/apply`, [
      ['AddRecord', '_grist_ACLResources', -1, {tableId: 'Orders', colIds: '*'}],
      ['AddRecord', '_grist_ACLRules', null, {resource: -1, aclFormula: 'True', permissionsText: '-D'}],
    ]);
    await s.post('user attribute', 'chimpy', `${d}/apply`, [
      [
        'AddTable',
        'Staff',
        [
          {id: 'Email', type: 'Text'},
          {id: 'Team', type: 'Text'},
        ],
      ],
      [
        'BulkAddRecord',
        'Staff',
        [null, null],
        {Email: ['kiwi@getgrist.com', 'charon@getgrist.com'], Team: ['red', 'blue']},
      ],
      ['AddRecord', '_grist_ACLResources', -1, {tableId: '*', colIds: '*'}],
      [
        'AddRecord',
        '_grist_ACLRules',
        null,
        {
          resource: -1,
          userAttributes: JSON.stringify({name: 'Who', tableId: 'Staff', lookupColId: 'Email', charId: 'Email'}),
          rulePos: 0,
        },
      ],
    ]);
    await s.get('rules after user attribute', 'chimpy', `${tpath(doc, '_grist_ACLRules')}/records`);
    await s.post('rule using user attribute', 'chimpy', `${d}/apply`, [
      ['AddRecord', '_grist_ACLResources', -1, {tableId: 'Notes', colIds: 'Text'}],
      [
        'AddRecord',
        '_grist_ACLRules',
        null,
        {resource: -1, aclFormula: 'user.Who.Team == "blue"', permissionsText: '-R', memo: 'Blue team'},
      ],
    ]);
    for (const who of PEOPLE) await s.get(`${who}: notes under team rule`, who, `${tpath(doc, 'Notes')}/records`);
    await s.post('rename a column a rule names', 'chimpy', `${d}/apply`, [
      ['RenameColumn', 'Orders', 'Owner', 'Buyer'],
    ]);
    await s.get('rules after rename', 'chimpy', `${tpath(doc, '_grist_ACLRules')}/records`);
    await s.get('kiwi after rename', 'kiwi', `${O}/records`);
    await s.post('remove the column a rule names', 'chimpy', `${d}/apply`, [['RemoveColumn', 'Orders', 'Secret']]);
    await s.get('resources after removal', 'chimpy', `${tpath(doc, '_grist_ACLResources')}/records`);
    await s.get('kiwi after removal', 'kiwi', `${O}/records`);
    await s.post('recover on', 'chimpy', `${d}/recover`, {recoveryMode: true});
    await s.post('recover by editor', 'kiwi', `${d}/recover`, {recoveryMode: true});
    await s.get('owner in recovery', 'chimpy', `${O}/records`);
    await s.get('editor in recovery', 'kiwi', `${O}/records`);
    await s.post('recover off', 'chimpy', `${d}/recover`, {recoveryMode: false});
    await s.post('recover bad body', 'chimpy', `${d}/recover`, {recoveryMode: 'yes'});
    await s.get('owner after recovery', 'chimpy', `${O}/records`);
  },
};
