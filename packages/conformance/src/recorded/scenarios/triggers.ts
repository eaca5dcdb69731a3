/** Triggers (`/triggers`, Grist 1.7.17's DocApiTriggers): listing, adding, changing, deleting. */
import {type Scenario, site} from './common.js';

export const triggers: Scenario = {
  name: 'triggers',
  async run(s) {
    const {doc} = await site(s, 'rectriggers');
    const d = `/api/docs/${doc}`;
    await s.get('none yet', 'chimpy', `${d}/triggers`);
    // Table1 is the document's first table: tableRef 1.
    await s.post('add one', 'chimpy', `${d}/triggers`, {
      records: [{fields: {tableRef: 1, label: 'T1', enabled: true}}],
    });
    await s.post('add two', 'chimpy', `${d}/triggers`, {
      records: [{fields: {tableRef: 1, label: 'A', memo: 'old'}}, {fields: {tableRef: 1, label: 'B'}}],
    });
    await s.post('add to unknown table', 'chimpy', `${d}/triggers`, {records: [{fields: {tableRef: 99, label: 'X'}}]});
    await s.post('add without tableRef', 'chimpy', `${d}/triggers`, {records: [{fields: {label: 'X'}}]});
    await s.post('add not a list', 'chimpy', `${d}/triggers`, {records: {}});
    await s.get('list', 'chimpy', `${d}/triggers`);
    await s.patch('update label and memo', 'chimpy', `${d}/triggers`, {
      records: [{id: 2, fields: {label: 'After', memo: 'new'}}],
    });
    await s.patch('disable', 'chimpy', `${d}/triggers`, {records: [{id: 1, fields: {enabled: false}}]});
    await s.patch('email action', 'chimpy', `${d}/triggers`, {
      records: [
        {id: 3, fields: {actions: JSON.stringify([{type: 'email', to: 'a@example.com', subject: 'Hi', body: 'B'}])}},
      ],
    });
    await s.patch('webhook action', 'chimpy', `${d}/triggers`, {
      records: [
        {
          id: 2,
          fields: {
            actions: JSON.stringify([
              {type: 'webhook', url: 'https://example.com/hook', authorization: 'Bearer secret123'},
            ]),
          },
        },
      ],
    });
    await s.patch('update unknown trigger', 'chimpy', `${d}/triggers`, {records: [{id: 99, fields: {label: 'x'}}]});
    await s.get('list after updates', 'chimpy', `${d}/triggers`);
    await s.get('webhooks after webhook action', 'chimpy', `${d}/webhooks`);
    await s.get('monitor', 'chimpy', `${d}/triggers/monitor`);
    await s.get('list as stranger', 'kiwi', `${d}/triggers`);
    await s.post('delete one', 'chimpy', `${d}/triggers/delete`, {ids: [1]});
    await s.post('delete unknown', 'chimpy', `${d}/triggers/delete`, {ids: [99]});
    await s.post('delete bad body', 'chimpy', `${d}/triggers/delete`, {ids: 'x'});
    await s.get('list after delete', 'chimpy', `${d}/triggers`);
  },
};
