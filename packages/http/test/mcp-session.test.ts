// Issue 42 §4: the MCP tools in-process (`mcpServerFor(session)` over the SDK's in-memory
// transport) answer what the same calls answer through POST /api/mcp, for an owner and a viewer,
// access rules and refusals included; the in-process size bounds come from the caller's settings.
import {mkdtempSync, rmSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {Client} from '@modelcontextprotocol/sdk/client/index.js';
import {InMemoryTransport} from '@modelcontextprotocol/sdk/inMemory.js';
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {Engine, type Session} from '@gristlite/core/internal';
import {createApiHandler, type McpSettings, mcpServerFor} from '../src/index.js';
import {mcpRequest} from './helpers.js';

type Handle = ReturnType<typeof createApiHandler>;

/** An SDK client connected in-process to the tools acting as `session`'s user. */
async function inProcess(session: Session, settings: Partial<McpSettings> = {}): Promise<Client> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await (await mcpServerFor(session, settings)).connect(serverSide);
  const client = new Client({name: 'embedder', version: '1.0.0'});
  await client.connect(clientSide);
  return client;
}

/** One JSON-RPC call through POST /api/mcp, as a client would send it; the `result`. */
async function overHttp(handle: Handle, key: string, method: string, params: unknown): Promise<any> {
  const res = await handle(mcpRequest(key, method, params));
  assert.is(res.status, 200, String(res.body));
  return JSON.parse(res.body as string).result;
}

test('in-process and over HTTP: the same tools, answers, refusals and hidden columns', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gl-mcp-session-'));
  const engine = await Engine.open({dataDir: dir, resumeWebhooks: false});
  const clients: Client[] = [];
  try {
    const handle = createApiHandler(engine, {
      env: {},
      onError: (e) => {
        throw e;
      },
    });
    const ada = await engine.forUser('ada@example.com', 'Ada');
    const bob = await engine.forUser('bob@example.com', 'Bob');
    const keys = {
      ada: await engine.home.setApiKey(ada.principal.user.id),
      bob: await engine.home.setApiKey(bob.principal.user.id),
    };
    const docId = await ada.createDoc((await ada.personalWorkspace()).id, {name: 'Pets'});
    await ada.updateDocAccess(docId, {users: {'bob@example.com': 'viewers'}});
    const doc = await ada.doc(docId);
    await doc.addTables([
      {
        id: 'Pets',
        columns: [
          {id: 'Name', fields: {type: 'Text'}},
          {id: 'Secret', fields: {type: 'Text'}},
        ],
      },
    ]);
    await doc.addRecords('Pets', [
      {Name: 'Rex', Secret: 's1'},
      {Name: 'Tom', Secret: 's2'},
      {Name: 'Kit', Secret: 's3'},
    ]);
    await doc.applyUserActions([
      ['AddRecord', '_grist_ACLResources', -1, {tableId: 'Pets', colIds: 'Secret'}],
      ['AddRecord', '_grist_ACLRules', null, {resource: -1, aclFormula: 'user.Access != OWNER', permissionsText: '-R'}],
    ]);
    const local = {ada: await inProcess(ada), bob: await inProcess(bob)};
    clients.push(local.ada, local.bob);

    assert.equal(await local.ada.listTools(), await overHttp(handle, keys.ada, 'tools/list', {}));
    const calls: Array<[keyof typeof keys, string, Record<string, unknown>]> = [
      ['ada', 'describe_document', {docId}],
      ['bob', 'describe_document', {docId}],
      ['ada', 'read_records', {docId, tableId: 'Pets', sort: ['-Name']}],
      ['bob', 'read_records', {docId, tableId: 'Pets', filter: {Name: ['Rex', 'Kit']}}],
      ['ada', 'run_sql', {docId, sql: 'select Name from Pets where id > ?', args: [1]}],
      ['bob', 'run_sql', {docId, sql: 'select 1'}],
      ['bob', 'add_records', {docId, tableId: 'Pets', records: [{fields: {Name: 'No'}}]}],
      ['ada', 'read_records', {docId, tableId: 'Nope'}],
      ['ada', 'add_records', {docId, tableId: 'Pets', records: [{fields: 'x'}]}],
      ['ada', 'describe_document', {docId: ''}],
    ];
    for (const [who, name, args] of calls) {
      const here = await local[who].callTool({name, arguments: args});
      const there = await overHttp(handle, keys[who], 'tools/call', {name, arguments: args});
      assert.equal(here, there, `${who} ${name} ${JSON.stringify(args)}`);
    }
    // What those answers say, so that equal answers are not equally wrong.
    const text = (r: unknown) => JSON.parse((r as {content: Array<{text: string}>}).content[0].text);
    const bobSees = text(await local.bob.callTool({name: 'describe_document', arguments: {docId}}));
    assert.equal(
      bobSees.tables.find((t: {id: string}) => t.id === 'Pets').columns.map((c: {id: string}) => c.id),
      ['Name'],
    );
    const adaReads = text(await local.ada.callTool({name: 'read_records', arguments: {docId, tableId: 'Pets'}}));
    assert.equal(adaReads.records[0].fields, {Name: 'Rex', Secret: 's1'});
    const refused = await local.bob.callTool({
      name: 'update_records',
      arguments: {docId, tableId: 'Pets', records: [{id: 1, fields: {Name: 'x'}}]},
    });
    assert.ok(refused.isError);
    assert.equal(text(refused), {error: 'No write access', status: 403});

    // Writes in-process land in the document as over HTTP.
    const added = text(
      await local.ada.callTool({
        name: 'add_records',
        arguments: {docId, tableId: 'Pets', records: [{fields: {Name: 'Zed'}}]},
      }),
    );
    assert.equal(added, {records: [{id: 4}]});
    assert.is((await doc.fetchRecords('Pets'))[3].fields.Name, 'Zed');

    // A header the transport cannot carry (only a hand-made request has one) is the client's error.
    const bad = mcpRequest(keys.ada, 'tools/list', {});
    const refusedHeader = await handle({
      ...bad,
      headers: {...bad.headers, accept: 'application/json,\ntext/event-stream'},
    });
    assert.equal(
      [refusedHeader.status, JSON.parse(refusedHeader.body as string)],
      [400, {error: 'Invalid accept header'}],
    );

    // The embedder's own bound: 2 records at most.
    const small = await inProcess(ada, {maxRows: 2});
    clients.push(small);
    const cut = text(await small.callTool({name: 'read_records', arguments: {docId, tableId: 'Pets'}}));
    assert.is(cut.records.length, 2);
    assert.match(cut.truncated, /more than 2 matched/);
  } finally {
    for (const c of clients) await c.close();
    await engine.close();
    rmSync(dir, {recursive: true, force: true});
  }
});

test.run();
