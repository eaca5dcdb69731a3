// The recording harness itself (issue 38): the normaliser, the comparison, and a round trip that
// records gristlite and replays the recording against a second, fresh gristlite (nothing made up
// by a server may survive normalisation, or this round trip would differ).
import {mkdtempSync, rmSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {nodeApiTarget, startWorld} from '../src/index.js';
import {compareAnswers, Normaliser, readGolden, recordScenarios, SCENARIOS, Session} from '../src/recorded/index.js';
import {RECORDED_ENV, worldUsers} from '../src/recorded/suite.js';

test('normaliser: home ids by kind and first sight, doc ids inside text, keys, times, ports', () => {
  const n = new Normaliser({secretkey123: 'chimpy'});
  assert.is(n.path('/api/orgs/7/workspaces'), '/api/orgs/<org:1>/workspaces');
  assert.is(n.path('/api/workspaces/7/docs'), '/api/workspaces/<ws:1>/docs', 'the same number as another kind');
  assert.is(n.body('AbCdEfGhIjKlMnOp', 'doc'), '<doc:1>');
  assert.is(
    n.path('/api/docs/AbCdEfGhIjKlMnOp/tables/T/records?limit=2'),
    '/api/docs/<doc:1>/tables/T/records?limit=2',
  );
  assert.is(n.path('/api/docs/AbCdEfGhIjKl/x'), '/api/docs/<urlid:1>/x', 'a default urlId');
  assert.is(n.path('/api/docs/mine/x'), '/api/docs/mine/x', 'a urlId a client chose');
  const body = n.body({
    id: 7,
    name: 'x',
    domain: 'd',
    owner: {id: 3, name: 'C', email: 'c@x', ref: 'REFREFREFREF'},
    updatedAt: '2026-11-29T03:00:00.000Z',
    workspaces: [
      {
        id: 9,
        docs: [
          {
            id: 'AbCdEfGhIjKlMnOp',
            urlId: null,
            isPinned: false,
            name: 'See AbCdEfGhIjKlMnOp at http://localhost:8484/o/d',
          },
        ],
      },
    ],
  });
  assert.equal(body, {
    id: '<org:1>',
    name: 'x',
    domain: 'd',
    owner: {id: '<user:1>', name: 'C', email: 'c@x', ref: '<ref:1>'},
    updatedAt: '<time>',
    workspaces: [
      {id: '<ws:2>', docs: [{id: '<doc:1>', urlId: null, isPinned: false, name: 'See <doc:1> at <origin>/o/d'}]},
    ],
  });
  assert.equal(
    n.body({records: [{id: 7, fields: {A: 7}}]}),
    {records: [{id: 7, fields: {A: 7}}]},
    'row ids and cells stay',
  );
  assert.is(n.text('key secretkey123 then 127.0.0.1:4000'), 'key <key:chimpy> then 127.0.0.1:<port>');
  assert.equal(n.body({lastEventTime: 1764385200000, count: 1764385200000}), {
    lastEventTime: '<time>',
    count: 1764385200000,
  });
  assert.is(n.body(12, 'ws'), '<ws:3>');
  assert.is(n.text('/o/x/api/docs/AbCdEfGhIjKl/download'), '/o/x/api/docs/<urlid:1>/download');
});

test('compareAnswers: paths of differences, and the looser levels', () => {
  const grist = {status: 400, headers: {'content-type': 'application/json'}, body: {error: 'a', details: {x: [1, 2]}}};
  const ours = {
    status: 400,
    headers: {'content-type': 'application/json'},
    body: {error: 'b', details: {x: [1], y: 1}},
  };
  assert.equal(compareAnswers(grist, ours), [
    {path: 'body.error', grist: 'a', gristlite: 'b'},
    {path: 'body.details.x.length', grist: 2, gristlite: 1},
    {path: 'body.details.y', grist: undefined, gristlite: 1},
  ]);
  assert.equal(compareAnswers(grist, ours, 'shape'), [{path: 'body.details.y', grist: undefined, gristlite: 1}]);
  assert.equal(compareAnswers(grist, {...ours, status: 403}, 'status-class'), []);
  assert.equal(compareAnswers(grist, {...ours, status: 500}, 'status-class'), [
    {path: 'status', grist: 400, gristlite: 500},
  ]);
  assert.equal(compareAnswers({...grist, status: 500}, ours, 'error'), []);
  assert.equal(compareAnswers(grist, {...ours, status: 200}, 'error'), [{path: 'status', grist: 400, gristlite: 200}]);
  assert.equal(compareAnswers(grist, grist), []);
});

test('round trip: gristlite recorded, then replayed on a fresh gristlite, answers the same', async () => {
  const target = nodeApiTarget('recorded-self');
  const dir = mkdtempSync(join(tmpdir(), 'gl-golden-'));
  const a = await startWorld(target, RECORDED_ENV);
  try {
    const u = worldUsers(a);
    await recordScenarios(a.api, {chimpy: u.chimpy.key, kiwi: u.kiwi.key, charon: u.charon.key}, SCENARIOS, dir);
  } finally {
    await a.server.close();
  }
  const b = await startWorld(target, RECORDED_ENV);
  try {
    for (const scenario of SCENARIOS) {
      const golden = readGolden(scenario.name, dir);
      assert.ok(golden && golden.steps.length > 10, `${scenario.name} recorded`);
      const session = new Session(scenario.name, 'replay', b.api, worldUsers(b), golden);
      await scenario.run(session);
      assert.equal(session.unexpected, [], `${scenario.name}: replay differs`);
      assert.equal(session.missing(), []);
    }
  } finally {
    await b.server.close();
  }
  // A changed answer is found: the first scenario against its golden with one status altered.
  const c = await startWorld(target, RECORDED_ENV);
  try {
    const golden = readGolden(SCENARIOS[0].name, dir)!;
    const step = golden.steps.find((st) => st.answer.status === 200)!;
    step.answer.status = 201;
    const session = new Session(SCENARIOS[0].name, 'replay', c.api, worldUsers(c), golden);
    await SCENARIOS[0].run(session);
    assert.equal(
      session.unexpected.map((d) => [d.step, d.path, d.grist]),
      [[step.step, 'status', 201]],
    );
  } finally {
    await c.server.close();
    rmSync(dir, {recursive: true, force: true});
  }
});

test.run();
