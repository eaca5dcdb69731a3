/** The home API: sites, workspaces, documents, sharing, and their errors, for each kind of user. */
import {newDoc, type Scenario, share, site} from './common.js';

export const home: Scenario = {
  name: 'home',
  async run(s) {
    const {org, ws, doc} = await site(s, 'rechome', 'First');
    await s.get('get org by id', 'chimpy', `/api/orgs/${org}`);
    await s.get('get org by domain', 'chimpy', '/api/orgs/rechome');
    await s.get('get org unknown', 'chimpy', '/api/orgs/nosuchdomain');
    await s.get('get org by big id', 'chimpy', '/api/orgs/999999');
    await s.get('org stranger', 'kiwi', `/api/orgs/${org}`);
    await s.get('org anonymous', 'anon', `/api/orgs/${org}`);
    await s.get('workspaces of org', 'chimpy', `/api/orgs/${org}/workspaces`);
    await s.get('workspaces stranger', 'kiwi', `/api/orgs/${org}/workspaces`);
    await s.get('get workspace', 'chimpy', `/api/workspaces/${ws}`);
    await s.get('get workspace unknown', 'chimpy', '/api/workspaces/999999');
    await s.get('get workspace not a number', 'chimpy', '/api/workspaces/abc');
    await s.get('get doc', 'chimpy', `/api/docs/${doc}`);
    await s.get('get doc unknown', 'chimpy', '/api/docs/nosuchdocument1234');
    await s.get('get doc stranger', 'kiwi', `/api/docs/${doc}`);
    await s.get('get doc anonymous', 'anon', `/api/docs/${doc}`);

    // Making and changing things, with the errors of bad input.
    await s.post('new org no name', 'chimpy', '/api/orgs', {domain: 'recnoname'});
    await s.post('new org taken domain', 'chimpy', '/api/orgs', {name: 'Again', domain: 'rechome'});
    await s.post('new org bad domain', 'chimpy', '/api/orgs', {name: 'Bad', domain: 'Bad Domain!'});
    await s.post('new org anonymous', 'anon', '/api/orgs', {name: 'Anon', domain: 'recanon'});
    await s.patch('rename org', 'chimpy', `/api/orgs/${org}`, {name: 'Rec Home'});
    await s.patch('rename org stranger', 'kiwi', `/api/orgs/${org}`, {name: 'Mine'});
    await s.patch('org unknown field', 'chimpy', `/api/orgs/${org}`, {color: 'red'});
    await s.get('org after rename', 'chimpy', `/api/orgs/${org}`);
    await s.post('new workspace no name', 'chimpy', `/api/orgs/${org}/workspaces`, {});
    await s.post('new workspace stranger', 'kiwi', `/api/orgs/${org}/workspaces`, {name: 'K'});
    const ws2 = (
      await s.post('second workspace', 'chimpy', `/api/orgs/${org}/workspaces`, {name: 'Second'}, {made: 'ws'})
    ).body;
    await s.patch('rename workspace', 'chimpy', `/api/workspaces/${ws2}`, {name: 'Renamed'});
    await s.patch('workspace unknown field', 'chimpy', `/api/workspaces/${ws2}`, {nope: 1});
    await s.post('new doc no name', 'chimpy', `/api/workspaces/${ws2}/docs`, {});
    await s.post('new doc stranger', 'kiwi', `/api/workspaces/${ws2}/docs`, {name: 'K'});
    const doc2 = await newDoc(s, 'second doc', ws2, 'Second');
    await s.patch('rename doc', 'chimpy', `/api/docs/${doc2}`, {name: 'Second renamed'});
    await s.patch('doc isPinned', 'chimpy', `/api/docs/${doc2}`, {isPinned: true});
    await s.patch('doc urlId', 'chimpy', `/api/docs/${doc2}`, {urlId: 'recsecond'});
    await s.get('doc by urlId', 'chimpy', '/api/docs/recsecond');
    await s.get('doc by urlId in org', 'chimpy', '/o/rechome/api/docs/recsecond');
    await s.patch('doc urlId taken', 'chimpy', `/api/docs/${doc}`, {urlId: 'recsecond'});
    await s.patch('doc unknown field', 'chimpy', `/api/docs/${doc2}`, {color: 'red'});
    await s.patch('doc name not string', 'chimpy', `/api/docs/${doc2}`, {name: 5});
    await s.get('workspace with docs', 'chimpy', `/api/workspaces/${ws2}`);
    await s.patch('move doc', 'chimpy', `/api/docs/${doc2}/move`, {workspace: ws});
    await s.patch('move doc to unknown ws', 'chimpy', `/api/docs/${doc2}/move`, {workspace: 999999});
    await s.get('workspaces after move', 'chimpy', `/api/orgs/${org}/workspaces`);

    // Sharing: kiwi edits the site, charon views one document.
    await share(s, 'share org with kiwi', `/api/orgs/${org}`, {'kiwi@getgrist.com': 'editors'});
    await share(s, 'share doc with charon', `/api/docs/${doc}`, {'charon@getgrist.com': 'viewers'});
    await share(s, 'share bad role', `/api/docs/${doc}`, {'charon@getgrist.com': 'kings'});
    await share(s, 'share bad email', `/api/docs/${doc}`, {'not an email': 'viewers'});
    await s.patch('share no delta', 'chimpy', `/api/docs/${doc}/access`, {users: {}});
    await s.patch('share by stranger', 'charon', `/api/workspaces/${ws}/access`, {
      delta: {users: {'kiwi@getgrist.com': 'owners'}},
    });
    await s.get('org access', 'chimpy', `/api/orgs/${org}/access`);
    await s.get('workspace access', 'chimpy', `/api/workspaces/${ws}/access`);
    await s.get('doc access', 'chimpy', `/api/docs/${doc}/access`);
    await s.get('doc access as viewer', 'charon', `/api/docs/${doc}/access`);
    await s.get('org as editor', 'kiwi', `/api/orgs/${org}`);
    await s.get('workspaces as editor', 'kiwi', `/api/orgs/${org}/workspaces`);
    await s.get('doc as viewer', 'charon', `/api/docs/${doc}`);
    await s.get('workspaces as doc viewer', 'charon', `/api/orgs/${org}/workspaces`);
    await s.get('orgs as viewer', 'charon', '/api/orgs');
    await s.patch('viewer renames doc', 'charon', `/api/docs/${doc}`, {name: 'Mine'});
    await s.patch('editor renames doc', 'kiwi', `/api/docs/${doc}`, {name: 'Kiwi named'});
    await s.patch('editor renames workspace', 'kiwi', `/api/workspaces/${ws}`, {name: 'Kiwi ws'});
    await s.post('editor makes doc', 'kiwi', `/api/workspaces/${ws}/docs`, {name: 'By Kiwi'}, {made: 'doc'});
    await s.patch('editor shares doc', 'kiwi', `/api/docs/${doc}/access`, {
      delta: {users: {'charon@getgrist.com': 'owners'}},
    });
    await share(s, 'public doc', `/api/docs/${doc2}`, {'everyone@getgrist.com': 'viewers'});
    await s.get('public doc as stranger', 'charon', `/api/docs/${doc2}`);
    await s.get('public doc anonymous', 'anon', `/api/docs/${doc2}`);
    await share(s, 'unshare kiwi', `/api/orgs/${org}`, {'kiwi@getgrist.com': null});
    await s.get('org after unshare', 'kiwi', `/api/orgs/${org}`);
    await s.get('profile chimpy', 'chimpy', '/api/profile/user');
    await s.get('profile anonymous', 'anon', '/api/profile/user');
    await s.get('session access all', 'chimpy', '/api/session/access/all');

    // Removing: soft delete, listing removed, undelete, hard delete.
    await s.post('remove doc', 'chimpy', `/api/docs/${doc2}/remove`);
    await s.get('removed doc', 'chimpy', `/api/docs/${doc2}`);
    await s.get('workspaces showRemoved', 'chimpy', `/api/orgs/${org}/workspaces?showRemoved=1`);
    await s.post('unremove doc', 'chimpy', `/api/docs/${doc2}/unremove`);
    await s.get('doc after unremove', 'chimpy', `/api/docs/${doc2}`);
    await s.post('remove workspace', 'chimpy', `/api/workspaces/${ws2}/remove`);
    await s.post('unremove workspace', 'chimpy', `/api/workspaces/${ws2}/unremove`);
    await s.del('delete doc as viewer', 'charon', `/api/docs/${doc}`);
    await s.del('delete doc', 'chimpy', `/api/docs/${doc2}`);
    await s.get('deleted doc', 'chimpy', `/api/docs/${doc2}`);
    await s.del('delete workspace', 'chimpy', `/api/workspaces/${ws2}`);
    await s.get('deleted workspace', 'chimpy', `/api/workspaces/${ws2}`);
    await s.del('delete org wrong name', 'chimpy', `/api/orgs/${org}/wrongname`);
    await s.del('delete org old route', 'chimpy', `/api/orgs/${org}`);
  },
};
