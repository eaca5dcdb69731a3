/**
 * The MCP endpoint (issue 42 §4): `/api/mcp` through the SDK's own client (`Client` over
 * `StreamableHTTPClientTransport`, in-process targets through their fetch handler). Each tool's
 * answer is compared with the REST call it mirrors; access rules, bad input, the size bounds on
 * both sides and the HTTP-level refusals are checked.
 */
import * as assert from 'uvu/assert';
import {Client as McpClient} from '@modelcontextprotocol/sdk/client/index.js';
import {StreamableHTTPClientTransport} from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type {CallToolResult} from '@modelcontextprotocol/sdk/types.js';
import {tablePath} from './docdata.js';
import {areaSuite, ok, useWorld, type Target, type TestUser, type World} from './world.js';

/** The bounds the suite's server runs with: small, so both sides of each are cheap to reach. */
const MAX_ROWS = 5;
const MAX_BYTES = 4096;

const TOOL_NAMES = [
  'add_records',
  'delete_records',
  'describe_document',
  'list_documents',
  'read_records',
  'run_sql',
  'update_records',
];

/** An MCP client of the world's server acting with `key` (none: no Authorization header). */
export async function mcpClient(w: World, key?: string): Promise<McpClient> {
  const inProcess = w.server.fetch;
  const transport = new StreamableHTTPClientTransport(new URL(`${w.server.url}/api/mcp`), {
    requestInit: key === undefined ? {} : {headers: {Authorization: `Bearer ${key}`}},
    ...(inProcess ? {fetch: (url: string | URL, init?: RequestInit) => inProcess(new Request(url, init))} : {}),
  });
  const client = new McpClient({name: 'gristlite-conformance', version: '1.0.0'});
  await client.connect(transport);
  return client;
}

/** A successful tool call's JSON answer. */
function answer(res: unknown, what = ''): any {
  const r = res as CallToolResult;
  const text = r.content?.[0]?.type === 'text' ? r.content[0].text : '';
  assert.not.ok(r.isError, `${what} expected success, got ${text}`);
  return JSON.parse(text);
}

/** A tool error's `{error, status}` (Grist's error body and the status REST answers). */
function toolError(res: unknown, status: number, pattern: RegExp, what = ''): any {
  const r = res as CallToolResult;
  const text = r.content?.[0]?.type === 'text' ? r.content[0].text : '';
  assert.ok(r.isError, `${what} expected a tool error, got ${text}`);
  const body = JSON.parse(text);
  assert.is(body.status, status, `${what} status: ${text}`);
  const message = body.details?.userError ? `${body.error}: ${body.details.userError}` : body.error;
  assert.match(message, pattern, `${what} message`);
  return body;
}

export function mcpSuite(target: Target): void {
  const s = areaSuite(target, 'mcp');
  const world = useWorld(s, target, {
    GRISTLITE_MCP_MAX_ROWS: String(MAX_ROWS),
    GRISTLITE_MCP_MAX_BYTES: String(MAX_BYTES),
  });
  const clients: McpClient[] = [];
  const connect = async (u?: TestUser) => {
    const c = await mcpClient(world(), u?.key);
    clients.push(c);
    return c;
  };
  s.after.each(async () => {
    for (const c of clients.splice(0)) await c.close();
  });
  let doc = '';

  /** A document of chimpy's with table People: Name (Text), Team (Choice), Age (Numeric), Label (formula). */
  const newPeople = async () => {
    const w = world();
    const {api, chimpy} = w;
    const id = await w.newDoc(chimpy, await w.homeWs(chimpy), 'People');
    const columns = [
      {id: 'Name', fields: {type: 'Text'}},
      {id: 'Team', fields: {type: 'Choice', widgetOptions: JSON.stringify({choices: ['red', 'blue']})}},
      {id: 'Age', fields: {type: 'Numeric'}},
      {id: 'Label', fields: {type: 'Text', isFormula: true, formula: '$Name.upper()'}},
    ];
    ok(await api.post(`/api/docs/${id}/tables`, {tables: [{id: 'People', columns}]}, chimpy.as), 'People');
    const rows = [
      ['Ann', 'red', 31],
      ['Bob', 'blue', 25],
      ['Cid', 'red', 47],
    ].map(([Name, Team, Age]) => ({fields: {Name, Team, Age}}));
    ok(await api.post(`${tablePath(id, 'People')}/records`, {records: rows}, chimpy.as), 'rows');
    return id;
  };

  s(
    'initialize and tools/list: the server, its instructions and the seven tools with their input schemas',
    async () => {
      const c = await connect(world().chimpy);
      assert.is(c.getServerVersion()?.name, 'gristlite');
      assert.ok(c.getServerCapabilities()?.tools, 'tools capability');
      assert.match(c.getInstructions() ?? '', /list_documents/);
      const {tools} = await c.listTools();
      assert.equal(tools.map((t) => t.name).sort(), TOOL_NAMES);
      const byName = new Map(tools.map((t) => [t.name, t]));
      for (const t of tools) assert.is(t.inputSchema.type, 'object', t.name);
      const read = byName.get('read_records')!;
      for (const p of ['docId', 'tableId', 'filter', 'sort', 'limit']) {
        assert.ok(p in (read.inputSchema.properties ?? {}), `read_records takes ${p}`);
      }
      assert.equal(read.inputSchema.required?.sort(), ['docId', 'tableId']);
      const props = read.inputSchema.properties as Record<string, {description?: string}>;
      assert.match(props.filter.description ?? '', /colId/, 'each argument says what it means');
      assert.is(read.annotations?.readOnlyHint, true);
      assert.is(byName.get('add_records')!.annotations?.readOnlyHint, false);
      assert.is(byName.get('delete_records')!.annotations?.destructiveHint, true);
      assert.equal(byName.get('run_sql')!.inputSchema.required?.sort(), ['docId', 'sql']);
    },
  );

  s('list_documents: the orgs, workspaces and documents the caller sees, as the home API lists them', async () => {
    const w = world();
    const {api, chimpy, kiwi} = w;
    doc = await newPeople();
    const c = await connect(chimpy);
    const listed = answer(await c.callTool({name: 'list_documents', arguments: {}}));
    const personal = await w.personalOrgId(chimpy);
    const org = listed.orgs.find((o: {id: number}) => o.id === personal);
    assert.ok(org, 'the personal org is listed');
    const rest = ok(await api.get(`/api/orgs/${personal}/workspaces`, chimpy.as)).body;
    assert.equal(
      org.workspaces.map((ws: {id: number; docs: {id: string}[]}) => [ws.id, ws.docs.map((d) => d.id)]),
      rest.map((ws: {id: number; docs: {id: string}[]}) => [ws.id, ws.docs.map((d) => d.id)]),
    );
    const home = org.workspaces.find((ws: {name: string}) => ws.name === 'Home');
    const restDoc = rest.find((ws: {name: string}) => ws.name === 'Home').docs.find((d: {id: string}) => d.id === doc);
    assert.equal(
      home.docs.find((d: {id: string}) => d.id === doc),
      {id: doc, name: 'People', urlId: restDoc.urlId, access: 'owners'},
    );
    assert.not.ok(listed.truncated);
    // Kiwi sees it only once it is shared, with the access given.
    const k = await connect(kiwi);
    const docsOf = (l: any) =>
      l.orgs.flatMap((o: any) => o.workspaces.flatMap((ws: any) => ws.docs.map((d: any) => [d.id, d.access])));
    assert.not.ok(
      docsOf(answer(await k.callTool({name: 'list_documents', arguments: {}}))).some(([id]: [string]) => id === doc),
    );
    await w.share(chimpy, `/api/docs/${doc}`, {[kiwi.email]: 'viewers'});
    assert.ok(
      docsOf(answer(await k.callTool({name: 'list_documents', arguments: {}}))).some(
        ([id, access]: [string, string]) => id === doc && access === 'viewers',
      ),
    );
  });

  s('describe_document: tables and columns with types, formulas and choices', async () => {
    const c = await connect(world().chimpy);
    const described = answer(await c.callTool({name: 'describe_document', arguments: {docId: doc}}));
    assert.is(described.docId, doc);
    assert.equal(
      described.tables.map((t: {id: string}) => t.id),
      ['Table1', 'People'],
    );
    const people = described.tables.find((t: {id: string}) => t.id === 'People');
    assert.equal(people.columns, [
      {id: 'Name', label: 'Name', type: 'Text', isFormula: false},
      {id: 'Team', label: 'Team', type: 'Choice', isFormula: false, choices: ['red', 'blue']},
      {id: 'Age', label: 'Age', type: 'Numeric', isFormula: false},
      {id: 'Label', label: 'Label', type: 'Text', isFormula: true, formula: '$Name.upper()'},
    ]);
  });

  s('read_records: where and count, the same answers as POST /records/list', async () => {
    const {api, chimpy} = world();
    const c = await connect(chimpy);
    const call = (args: Record<string, unknown>) =>
      c.callTool({name: 'read_records', arguments: {docId: doc, tableId: 'People', ...args}});
    const list = (body: Record<string, unknown>) =>
      api.post(`${tablePath(doc, 'People')}/records/list`, body, chimpy.as);
    for (const where of ['$Age > 30', '$Team == "blue" or not $Age', '$Name.startswith("A")']) {
      const query = {where, sort: ['Age']};
      assert.equal(answer(await call(query)), ok(await list(query)).body, where);
      const counted = answer(await call({where, count: true}));
      assert.equal(counted, ok(await list({where, count: true})).body, `${where} (count)`);
      assert.type(counted.count, 'number');
    }
    toolError(await call({where: '$Age >'}), 400, /Invalid where condition: SyntaxError/);
    toolError(await call({where: '$Nope == 1'}), 400, /has no column 'Nope'/);
  });

  s('read_records: filter, sort and limit, the same records as POST /records/list', async () => {
    const {api, chimpy} = world();
    const c = await connect(chimpy);
    const query = {filter: {Team: ['red']}, sort: ['-Age'], limit: 2};
    const read = answer(await c.callTool({name: 'read_records', arguments: {docId: doc, tableId: 'People', ...query}}));
    const rest = ok(await api.post(`${tablePath(doc, 'People')}/records/list`, query, chimpy.as)).body;
    assert.equal(read, rest);
    assert.equal(
      read.records.map((r: {fields: {Name: string; Label: string}}) => [r.fields.Name, r.fields.Label]),
      [
        ['Cid', 'CID'],
        ['Ann', 'ANN'],
      ],
    );
  });

  s('run_sql: a SELECT with args, as POST /sql answers it', async () => {
    const {api, chimpy} = world();
    const c = await connect(chimpy);
    const body = {sql: 'select Name, Age from People where Age > ? order by Age', args: [30]};
    const res = answer(await c.callTool({name: 'run_sql', arguments: {docId: doc, ...body}}));
    assert.equal(res, ok(await api.post(`/api/docs/${doc}/sql`, body, chimpy.as)).body);
    assert.equal(res.records, [{fields: {Name: 'Ann', Age: 31}}, {fields: {Name: 'Cid', Age: 47}}]);
  });

  s('add_records, update_records, delete_records: written as REST writes them', async () => {
    const {api, chimpy} = world();
    const c = await connect(chimpy);
    const t = tablePath(doc, 'People');
    const added = answer(
      await c.callTool({
        name: 'add_records',
        arguments: {docId: doc, tableId: 'People', records: [{fields: {Name: 'Dee', Age: '52'}}, {fields: {}}]},
      }),
    );
    assert.equal(added, {records: [{id: 4}, {id: 5}]});
    // Text is parsed into the column's type, as POST /records does by default.
    let rows = ok(await api.get(`${t}/records`, chimpy.as)).body.records;
    assert.equal(rows[3], {id: 4, fields: {Name: 'Dee', Team: '', Age: 52, Label: 'DEE'}});
    const updated = answer(
      await c.callTool({
        name: 'update_records',
        arguments: {docId: doc, tableId: 'People', records: [{id: 5, fields: {Name: 'Eve', Team: 'blue'}}]},
      }),
    );
    assert.equal(updated, {updated: 1});
    rows = ok(await api.get(`${t}/records`, chimpy.as)).body.records;
    assert.equal([rows[4].fields.Name, rows[4].fields.Team, rows[4].fields.Label], ['Eve', 'blue', 'EVE']);
    assert.equal(
      answer(await c.callTool({name: 'delete_records', arguments: {docId: doc, tableId: 'People', rowIds: [4, 5]}})),
      {deleted: 2},
    );
    rows = ok(await api.get(`${t}/records`, chimpy.as)).body.records;
    assert.equal(
      rows.map((r: {id: number}) => r.id),
      [1, 2, 3],
    );
  });

  s("bad input: each tool answers a tool error with Grist's text and status, never a crash", async () => {
    const c = await connect(world().chimpy);
    const call = (name: string, args: Record<string, unknown>) => c.callTool({name, arguments: args});
    const T = {docId: doc, tableId: 'People'};
    toolError(await call('describe_document', {}), 400, /Invalid payload: Error: arguments\.docId is missing/);
    toolError(await call('describe_document', {docId: 'nosuchdoc'}), 404, /document not found/);
    toolError(await call('describe_document', {docId: 's.abcdefghijkl'}), 400, /not a share key/);
    toolError(await call('read_records', {docId: doc}), 400, /arguments\.tableId is missing/);
    toolError(await call('read_records', {...T, sort: 'Age'}), 400, /Invalid payload: Error: arguments\.sort/);
    toolError(await call('read_records', {...T, limit: -1}), 400, /limit must be 0 \(no limit\) or positive/);
    toolError(await call('read_records', {...T, sort: ['Nope']}), 400, /Nope/);
    toolError(await call('read_records', {...T, filter: {Nope: ['x']}}), 400, /Nope/);
    toolError(await call('read_records', {...T, tableId: 'Nope'}), 404, /Table not found "Nope"/);
    toolError(
      await call('read_records', {...T, display: true, cellFormat: 'typed'}),
      400,
      /display cannot be combined/,
    );
    toolError(await call('run_sql', {docId: doc}), 400, /Invalid payload: Error: arguments\.sql is missing/);
    toolError(await call('run_sql', {docId: doc, sql: 'select * from Nope'}), 400, /no such table: Nope/);
    toolError(await call('run_sql', {docId: doc, sql: 'delete from People'}), 400, /./);
    toolError(await call('add_records', {...T, records: 'x'}), 400, /arguments\.records is not an array/);
    toolError(await call('add_records', {...T, records: [{fields: {Nope: 1}}]}), 400, /Nope/);
    toolError(await call('update_records', {...T, records: [{fields: {Name: 'x'}}]}), 400, /arguments\.records\[0\]/);
    toolError(await call('delete_records', {...T, rowIds: 'x'}), 400, /arguments\.rowIds/);
    // Refused by the document as REST refuses the same body: status and text alike.
    const {api, chimpy} = world();
    const t = tablePath(doc, 'People');
    const sameAsRest = async (res: unknown, rest: {status: number; body: {error: string}}) => {
      assert.ok(rest.status >= 400 && rest.status < 500, `REST refuses it: ${rest.status}`);
      const body = toolError(res, rest.status, /./);
      assert.is(body.error, rest.body.error);
    };
    const badUpdate = [{id: 99, fields: {Name: 'x'}}];
    await sameAsRest(
      await call('update_records', {...T, records: badUpdate}),
      await api.patch(`${t}/records`, {records: badUpdate}, chimpy.as),
    );
    await sameAsRest(
      await call('delete_records', {...T, rowIds: ['x']}),
      await api.post(`${t}/records/delete`, ['x'], chimpy.as),
    );
    // A tool that does not exist is the protocol's error, not a tool's.
    let refused: unknown = null;
    try {
      await call('drop_everything', {});
    } catch (e) {
      refused = e;
    }
    assert.match(String(refused), /Unknown tool: drop_everything/);
    // Nothing was written by any of these.
    assert.is(ok(await api.get(`${t}/records`, chimpy.as)).body.records.length, 3);
  });

  s('access: a viewer reads but cannot write; rules hide a column and rows, and keep SQL to owners', async () => {
    const w = world();
    const {api, chimpy, kiwi} = w;
    const k = await connect(kiwi);
    const T = {docId: doc, tableId: 'People'};
    // Kiwi is a viewer (shared above).
    assert.is(answer(await k.callTool({name: 'read_records', arguments: T})).records.length, 3);
    toolError(
      await k.callTool({name: 'add_records', arguments: {...T, records: [{fields: {Name: 'x'}}]}}),
      403,
      /No write access/,
    );
    toolError(
      await k.callTool({name: 'update_records', arguments: {...T, records: [{id: 1, fields: {Name: 'x'}}]}}),
      403,
      /No write access/,
    );
    toolError(await k.callTool({name: 'delete_records', arguments: {...T, rowIds: [1]}}), 403, /No write access/);
    // Age hidden from non-owners; rows of team blue too.
    await w.addTableRule(chimpy, doc, 'People', 'user.Access != OWNER', '-R', 'Age');
    await w.addTableRule(chimpy, doc, 'People', 'user.Access != OWNER and rec.Team == "blue"');
    const described = answer(await k.callTool({name: 'describe_document', arguments: {docId: doc}}));
    const cols = described.tables.find((t: {id: string}) => t.id === 'People').columns.map((c: {id: string}) => c.id);
    assert.equal(cols, ['Name', 'Team', 'Label']);
    const read = answer(await k.callTool({name: 'read_records', arguments: T}));
    assert.equal(read, ok(await api.get(`${tablePath(doc, 'People')}/records`, kiwi.as)).body);
    assert.equal(
      read.records.map((r: {id: number; fields: object}) => [r.id, Object.keys(r.fields)]),
      [
        [1, ['Name', 'Team', 'Label']],
        [3, ['Name', 'Team', 'Label']],
      ],
    );
    toolError(
      await k.callTool({name: 'run_sql', arguments: {docId: doc, sql: 'select 1'}}),
      403,
      /insufficient document access/,
    );
    // The owner still sees everything.
    const c = await connect(chimpy);
    assert.is(answer(await c.callTool({name: 'read_records', arguments: T})).records.length, 3);
    // Charon has no access at all: the home API's refusal.
    const ch = await connect(w.charon);
    toolError(await ch.callTool({name: 'describe_document', arguments: {docId: doc}}), 403, /No view access/);
  });

  s('size bounds: records up to GRISTLITE_MCP_MAX_ROWS whole, one more cut with a note', async () => {
    const {api, chimpy} = world();
    const c = await connect(chimpy);
    const id = await world().newDoc(chimpy, await world().homeWs(chimpy), 'Bounds');
    const t = tablePath(id);
    const rows = (n: number) => Array.from({length: n}, (_, i) => ({fields: {A: `r${i}`}}));
    ok(await api.post(`${t}/records`, {records: rows(MAX_ROWS)}, chimpy.as));
    const T = {docId: id, tableId: 'Table1'};
    let read = answer(await c.callTool({name: 'read_records', arguments: T}));
    assert.is(read.records.length, MAX_ROWS);
    assert.not.ok(read.truncated, 'exactly the bound: whole');
    const sql = {docId: id, sql: 'select A from Table1'};
    assert.not.ok(answer(await c.callTool({name: 'run_sql', arguments: sql})).truncated);
    ok(await api.post(`${t}/records`, {records: rows(1)}, chimpy.as));
    read = answer(await c.callTool({name: 'read_records', arguments: T}));
    assert.is(read.records.length, MAX_ROWS);
    assert.match(
      read.truncated,
      new RegExp(`Only the first ${MAX_ROWS} records.*more than ${MAX_ROWS}.*GRISTLITE_MCP_MAX_ROWS.*Narrow`),
    );
    const sqlRes = answer(await c.callTool({name: 'run_sql', arguments: sql}));
    assert.is(sqlRes.records.length, MAX_ROWS);
    assert.match(sqlRes.truncated, /GRISTLITE_MCP_MAX_ROWS.*LIMIT/);
    // A limit at or under the bound is the agent's own: no note.
    read = answer(await c.callTool({name: 'read_records', arguments: {...T, limit: MAX_ROWS}}));
    assert.is(read.records.length, MAX_ROWS);
    assert.not.ok(read.truncated);
  });

  s('size bounds: a result up to GRISTLITE_MCP_MAX_BYTES whole, beyond it cut within the bound', async () => {
    const {api, chimpy} = world();
    const c = await connect(chimpy);
    const id = await world().newDoc(chimpy, await world().homeWs(chimpy), 'Bytes');
    const t = tablePath(id);
    const T = {docId: id, tableId: 'Table1'};
    ok(await api.post(`${t}/records`, {records: [{fields: {A: 'x'}}]}, chimpy.as));
    // One record whose JSON answer is exactly MAX_BYTES long: the widest that is not cut.
    const oneText = (await c.callTool({name: 'read_records', arguments: T})).content as Array<{text: string}>;
    const pad = MAX_BYTES - Buffer.byteLength(oneText[0].text);
    ok(await api.patch(`${t}/records`, {records: [{id: 1, fields: {A: 'x'.repeat(pad + 1)}}]}, chimpy.as));
    const exact = (await c.callTool({name: 'read_records', arguments: T})) as CallToolResult;
    const exactText = (exact.content[0] as {text: string}).text;
    assert.is(Buffer.byteLength(exactText), MAX_BYTES);
    assert.not.ok(JSON.parse(exactText).truncated);
    // One byte more: cut (the one record does not fit), and the answer says why.
    ok(await api.patch(`${t}/records`, {records: [{id: 1, fields: {A: 'x'.repeat(pad + 2)}}]}, chimpy.as));
    const over = answer(await c.callTool({name: 'read_records', arguments: T}));
    assert.equal(over.records, []);
    assert.match(over.truncated, new RegExp(`Only the first 0 records.*${MAX_BYTES} bytes.*GRISTLITE_MCP_MAX_BYTES`));
    // Records of about 1.5 KB: two fit whole; with a third, the first two and a note, within the bound.
    const wide = (c: string) => ({fields: {A: c.repeat(1500)}});
    ok(await api.post(`${t}/records`, {records: [wide('y'), wide('z')]}, chimpy.as));
    const text = async (args: Record<string, unknown>) => {
      const res = (await c.callTool({name: 'read_records', arguments: {...T, ...args}})) as CallToolResult;
      const out = (res.content[0] as {text: string}).text;
      assert.ok(Buffer.byteLength(out) <= MAX_BYTES, `${Buffer.byteLength(out)} <= ${MAX_BYTES}`);
      return JSON.parse(out);
    };
    const two = await text({filter: {id: [2, 3]}});
    assert.equal(
      two.records.map((r: {id: number}) => r.id),
      [2, 3],
    );
    assert.not.ok(two.truncated);
    ok(await api.post(`${t}/records`, {records: [wide('w')]}, chimpy.as));
    const three = await text({filter: {id: [2, 3, 4]}});
    assert.equal(
      three.records.map((r: {id: number}) => r.id),
      [2, 3],
    );
    assert.match(three.truncated, /Only the first 2 records.*GRISTLITE_MCP_MAX_BYTES.*Narrow the query/);
  });

  s(
    'HTTP: no key or a bad key is 401 as REST; a bad body, GET and an oversized body answer as the SDK and HTTP expect',
    async () => {
      const w = world();
      const {api, chimpy} = w;
      const init = {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {protocolVersion: '2025-06-18', capabilities: {}, clientInfo: {name: 'raw', version: '1'}},
      };
      const headers = {accept: 'application/json, text/event-stream'};
      let res = await api.call('POST', '/api/mcp', {json: init, headers});
      assert.is(res.status, 401);
      assert.match(res.body.error, /API key is required/);
      res = await api.call('POST', '/api/mcp', {json: init, headers, key: 'nosuchkey'});
      assert.equal([res.status, res.body], [401, {error: 'Bad request: invalid API key'}]);
      assert.equal(
        [(await api.call('GET', '/api/orgs', {key: 'nosuchkey'})).status],
        [401],
        'REST answers the same key alike',
      );
      // A document API key opens only its document's /api/docs/{doc}/... routes (as everywhere else).
      const docKey = ok(await api.post(`/api/docs/${doc}/apikeys`, {name: 'agent', access: 'viewers'}, chimpy.as)).body
        .key;
      res = await api.call('POST', '/api/mcp', {json: init, headers, key: docKey});
      assert.equal(res.status, 403);
      assert.match(res.body.error, /A document API key opens only/);
      // The SDK's client refuses to connect without a key.
      let failed: unknown = null;
      try {
        await mcpClient(w);
      } catch (e) {
        failed = e;
      }
      assert.ok(failed, 'no key: the client cannot initialize');
      // A well-formed initialize answers JSON (stateless: no session id).
      res = await api.call('POST', '/api/mcp', {json: init, headers, key: chimpy.key});
      ok(res);
      assert.is(res.body.result.serverInfo.name, 'gristlite');
      assert.is(res.headers['mcp-session-id'], undefined);
      // Not JSON: the protocol's parse error.
      res = await api.call('POST', '/api/mcp', {
        body: '{"jsonrpc": ',
        headers: {...headers, 'content-type': 'application/json'},
        key: chimpy.key,
      });
      assert.is(res.status, 400);
      assert.is(res.body.error.code, -32700);
      // JSON, but not JSON-RPC.
      res = await api.call('POST', '/api/mcp', {json: {hello: 1}, headers, key: chimpy.key});
      assert.is(res.status, 400);
      assert.is(res.body.error.code, -32700);
      // Without the Accept header Streamable HTTP requires.
      res = await api.call('POST', '/api/mcp', {json: init, key: chimpy.key});
      assert.is(res.status, 406);
      // No event stream nor session to end.
      res = await api.call('GET', '/api/mcp', {headers: {accept: 'text/event-stream'}, key: chimpy.key});
      assert.equal([res.status, res.headers.allow], [405, 'POST']);
      assert.is((await api.call('DELETE', '/api/mcp', {key: chimpy.key})).status, 405);
      // A body over the server's limit: 413 as on every route, before it is parsed.
      const big = {...init, params: {...init.params, pad: 'x'.repeat(1024 * 1024)}};
      res = await api.call('POST', '/api/mcp', {json: big, headers, key: chimpy.key});
      assert.is(res.status, 413);
      assert.match(res.body.error, /request entity too large/);
    },
  );

  s.run();
}
