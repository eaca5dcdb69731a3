/** Attachments, document lifecycle (states, compare, copies, snapshots), and bad input of every kind. */
import {type Scenario, site, tpath} from './common.js';

/** A multipart/form-data body with files under `upload` (the field Grist reads). */
function multipart(files: {name: string; type: string; data: string}[]): {type: string; data: string} {
  const boundary = 'recordedboundary12345';
  let data = '';
  for (const f of files) {
    data += `--${boundary}\r\nContent-Disposition: form-data; name="upload"; filename="${f.name}"\r\n`;
    data += `Content-Type: ${f.type}\r\n\r\n${f.data}\r\n`;
  }
  data += `--${boundary}--\r\n`;
  return {type: `multipart/form-data; boundary=${boundary}`, data};
}

export const attachments: Scenario = {
  name: 'attachments',
  async run(s) {
    const {doc} = await site(s, 'recattach');
    const d = `/api/docs/${doc}`;
    await s.get('none yet', 'chimpy', `${d}/attachments`);
    await s.post('upload two', 'chimpy', `${d}/attachments`, undefined, {
      raw: multipart([
        {name: 'hello.txt', type: 'text/plain', data: 'hello world'},
        {name: 'page.html', type: 'text/html', data: '<b>bold</b>'},
      ]),
    });
    await s.post('upload nothing', 'chimpy', `${d}/attachments`, undefined, {raw: multipart([])});
    await s.post('upload not multipart', 'chimpy', `${d}/attachments`, {file: 'x'});
    await s.get('list', 'chimpy', `${d}/attachments`);
    await s.get('list sorted', 'chimpy', `${d}/attachments?sort=-fileName`);
    await s.get('list sorted, unknown flag', 'chimpy', `${d}/attachments?sort=-fileName:emptyFirst`);
    await s.get(
      'list filtered',
      'chimpy',
      `${d}/attachments?filter=${encodeURIComponent('{"fileName":["hello.txt"]}')}`,
    );
    await s.get('metadata', 'chimpy', `${d}/attachments/1`);
    await s.get('metadata missing', 'chimpy', `${d}/attachments/99`);
    await s.get('metadata bad id', 'chimpy', `${d}/attachments/abc`);
    await s.get('download', 'chimpy', `${d}/attachments/1/download`);
    await s.get('download html', 'chimpy', `${d}/attachments/2/download`);
    await s.get('download missing', 'chimpy', `${d}/attachments/99/download`);
    await s.get('download stranger', 'kiwi', `${d}/attachments/1/download`);
    await s.post('attach to a cell', 'chimpy', `${d}/apply`, [
      ['AddTable', 'Files', [{id: 'F', type: 'Attachments'}]],
      ['AddRecord', 'Files', null, {F: ['L', 1]}],
    ]);
    await s.get('cell', 'chimpy', `${tpath(doc, 'Files')}/records`);
    await s.get('cell typed', 'chimpy', `${tpath(doc, 'Files')}/records?cellFormat=typed`);
    await s.get('archive zip', 'chimpy', `${d}/attachments/archive`);
    await s.get('store', 'chimpy', `${d}/attachments/store`);
    await s.get('store settings', 'chimpy', `${d}/attachments/stores`);
    await s.post('remove unused', 'chimpy', `${d}/attachments/removeUnused?verifyfiles=0&expiredonly=0`);
    await s.get('list after removeUnused', 'chimpy', `${d}/attachments`);
    await s.post('verify files', 'chimpy', `${d}/attachments/verifyFiles`);
  },
};

export const lifecycle: Scenario = {
  name: 'lifecycle',
  async run(s) {
    const {ws, doc} = await site(s, 'reclife');
    const d = `/api/docs/${doc}`;
    await s.post('add rows', 'chimpy', `${tpath(doc)}/records`, {
      records: [{fields: {A: 'one'}}, {fields: {A: 'two'}}],
    });
    await s.get('states', 'chimpy', `${d}/states`);
    await s.post('states remove', 'chimpy', `${d}/states/remove`, {keep: 1});
    await s.get('compare with itself', 'chimpy', `${d}/compare/${doc}`);
    const copy = (
      await s.post(
        'copy',
        'chimpy',
        `/api/docs`,
        {sourceDocumentId: doc, workspaceId: ws, documentName: 'Copy'},
        {made: 'doc'},
      )
    ).body;
    await s.post(
      'copy as template',
      'chimpy',
      '/api/docs',
      {sourceDocumentId: doc, workspaceId: ws, documentName: 'T', asTemplate: true},
      {made: 'doc'},
    );
    await s.post('copy no workspace', 'chimpy', '/api/docs', {sourceDocumentId: doc, documentName: 'X'});
    await s.post('copy stranger', 'kiwi', '/api/docs', {sourceDocumentId: doc, workspaceId: ws, documentName: 'K'});
    await s.get('copy records', 'chimpy', `${tpath(copy)}/records`);
    await s.post('change the copy', 'chimpy', `${tpath(copy)}/records`, {records: [{fields: {A: 'three'}}]});
    await s.get('compare with copy', 'chimpy', `${d}/compare/${copy}`);
    await s.get('compare with copy detail', 'chimpy', `${d}/compare/${copy}?detail=1`);
    await s.get('compare unknown', 'chimpy', `${d}/compare/nosuchdocument1234`);
    await s.get('snapshots', 'chimpy', `${d}/snapshots`);
    await s.post('snapshots remove', 'chimpy', `${d}/snapshots/remove`, {select: 'unlisted'});
    await s.get('usage', 'chimpy', `${d}/usage`);
    await s.get('timing', 'chimpy', `${d}/timing`);
    await s.post('flush', 'chimpy', `${d}/flush`);
    await s.post('force reload', 'chimpy', `${d}/force-reload`);
    await s.post('force reload viewer', 'kiwi', `${d}/force-reload`);
    await s.post('assign', 'chimpy', `${d}/assign`);
    await s.post('replace from copy', 'chimpy', `${d}/replace`, {sourceDocId: copy});
    await s.get('records after replace', 'chimpy', `${tpath(doc)}/records`);
    await s.post('replace bad body', 'chimpy', `${d}/replace`, {nope: 1});
    await s.get('download', 'chimpy', `${d}/download?template=1`);
    await s.post('fork', 'chimpy', `${d}/fork`);
    await s.post('create without workspace', 'chimpy', '/api/docs', {});
    await s.post('import empty doc', 'chimpy', `/api/workspaces/${ws}/import`);
  },
};

export const errors: Scenario = {
  name: 'errors',
  async run(s) {
    const {org, ws, doc} = await site(s, 'recerrors');
    const d = `/api/docs/${doc}`;
    const T = tpath(doc);
    await s.get('unknown api route', 'chimpy', '/api/nope');
    await s.get('unknown doc route', 'chimpy', `${d}/nope`);
    await s.call('wrong method on records', 'chimpy', 'DELETE', `${T}/records`);
    await s.call('wrong method on doc', 'chimpy', 'PUT', d, {name: 'x'});
    await s.get('bad key', 'chimpy', '/api/orgs', {headers: {authorization: 'Bearer nosuchkey'}});
    await s.get('bad auth scheme', 'anon', '/api/orgs', {headers: {authorization: 'Basic abc'}});
    await s.get('anonymous orgs', 'anon', '/api/orgs');
    await s.get('status', 'anon', '/status');
    await s.post('records body a string', 'chimpy', `${T}/records`, 'records');
    await s.post('records body null', 'chimpy', `${T}/records`, null);
    await s.post('records body a number', 'chimpy', `${T}/records`, 5);
    await s.post('records fields a list', 'chimpy', `${T}/records`, {records: [{fields: [1]}]});
    await s.post('records fields null', 'chimpy', `${T}/records`, {records: [{fields: null}]});
    await s.patch('records id a string', 'chimpy', `${T}/records`, {records: [{id: 'one', fields: {}}]});
    await s.patch('records id a float', 'chimpy', `${T}/records`, {records: [{id: 1.5, fields: {}}]});
    await s.patch('records id negative', 'chimpy', `${T}/records`, {records: [{id: -1, fields: {}}]});
    await s.patch('records extra key', 'chimpy', `${T}/records`, {records: [{id: 1, fields: {}, other: 1}]});
    await s.post('columns body missing', 'chimpy', `${T}/columns`, {});
    await s.post('columns fields a string', 'chimpy', `${T}/columns`, {columns: [{id: 'X', fields: 'Text'}]});
    await s.post('columns type a number', 'chimpy', `${T}/columns`, {columns: [{id: 'X', fields: {type: 5}}]});
    await s.post('tables body missing', 'chimpy', `${d}/tables`, {});
    await s.post('tables columns missing', 'chimpy', `${d}/tables`, {tables: [{id: 'X'}]});
    await s.post('workspace name a number', 'chimpy', `/api/orgs/${org}/workspaces`, {name: 5});
    await s.post('doc name a number', 'chimpy', `/api/workspaces/${ws}/docs`, {name: 5});
    await s.patch('access delta a string', 'chimpy', `${d}/access`, {delta: 'x'});
    await s.patch('access users a list', 'chimpy', `${d}/access`, {delta: {users: ['kiwi@getgrist.com']}});
    await s.patch('access maxInheritedRole bad', 'chimpy', `${d}/access`, {delta: {maxInheritedRole: 'kings'}});
    await s.post('webhook no body', 'chimpy', `${d}/webhooks`, {});
    await s.post('webhook bad url', 'chimpy', `${d}/webhooks`, {
      webhooks: [{fields: {url: 'not a url', eventTypes: ['add'], tableId: 'Table1'}}],
    });
    await s.post('webhook unknown table', 'chimpy', `${d}/webhooks`, {
      webhooks: [{fields: {url: 'https://example.com/x', eventTypes: ['add'], tableId: 'Nope'}}],
    });
    await s.post('webhook bad event', 'chimpy', `${d}/webhooks`, {
      webhooks: [{fields: {url: 'https://example.com/x', eventTypes: ['boom'], tableId: 'Table1'}}],
    });
    await s.post('webhook no event types', 'chimpy', `${d}/webhooks`, {
      webhooks: [{fields: {url: 'https://example.com/x', tableId: 'Table1'}}],
    });
    await s.get('webhooks list', 'chimpy', `${d}/webhooks`);
    await s.del('webhook unknown', 'chimpy', `${d}/webhooks/00000000-0000-0000-0000-000000000000`);
    await s.patch('webhook patch unknown', 'chimpy', `${d}/webhooks/00000000-0000-0000-0000-000000000000`, {
      enabled: false,
    });
    await s.del('webhooks queue', 'chimpy', `${d}/webhooks/queue`);
    await s.get('sql q empty', 'chimpy', `${d}/sql?q=`);
    await s.post('sql args not list', 'chimpy', `${d}/sql`, {sql: 'select ?', args: 'x'});
    await s.post('sql too few args', 'chimpy', `${d}/sql`, {sql: 'select ?, ?', args: [1]});
    await s.post('sql timeout not number', 'chimpy', `${d}/sql`, {sql: 'select 1', timeout: 'x'});
    await s.post('sql unknown key', 'chimpy', `${d}/sql`, {sql: 'select 1', other: 1});
    await s.get('limit huge', 'chimpy', `${T}/records?limit=99999999999999999999`);
    await s.get('sort empty', 'chimpy', `${T}/records?sort=`);
    await s.get('filter null', 'chimpy', `${T}/records?filter=null`);
    await s.get('filter list of lists', 'chimpy', `${T}/records?filter=${encodeURIComponent('{"A":[[1]]}')}`);
    await s.get('table id with space', 'chimpy', `${tpath(doc, 'A%20B')}/records`);
    await s.get('doc id with dot', 'chimpy', '/api/docs/a.b/tables/Table1/records');
    await s.get('org id zero', 'chimpy', '/api/orgs/0');
    await s.get('workspace id negative', 'chimpy', '/api/workspaces/-1');
    await s.get('users of org', 'chimpy', `/api/orgs/${org}/users`);
    await s.get('usage of org', 'chimpy', `/api/orgs/${org}/usage`);
  },
};
