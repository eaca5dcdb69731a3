// Issue 23, "a complete Session": orgs, workspaces, access lists, document renames, moves and
// deletes, downloads, attachments and webhooks through `Session` / `SessionDoc`, each run against
// its HTTP twin by an owner, an editor, a viewer and a stranger: the same status and error, and for
// successful calls the same answer where the two are comparable.
import {randomBytes} from 'node:crypto';
import {mkdtempSync, readFileSync, rmSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {ApiError, Engine, type Session, type SessionDownload} from '@gristlite/core/internal';
import {createApiHandler} from '../src/index.js';

type Handle = ReturnType<typeof createApiHandler>;

/** What a call answered: its status, and its error or its result. */
interface Outcome {
  status: number;
  error?: string;
  /** The session's result, or the HTTP body (parsed JSON, else bytes). */
  body?: unknown;
  /** HTTP response headers. */
  headers?: Record<string, string>;
}

async function bytesOf(body: unknown): Promise<Buffer> {
  if (body === null || body === undefined) return Buffer.alloc(0);
  if (typeof body === 'string') return Buffer.from(body);
  if (body instanceof Uint8Array) return Buffer.from(body);
  const chunks: Buffer[] = [];
  for await (const c of body as AsyncIterable<Uint8Array>) chunks.push(Buffer.from(c));
  return Buffer.concat(chunks);
}

async function inProcess(fn: () => Promise<unknown>): Promise<Outcome> {
  try {
    let body = await fn();
    // A download's stream is read here, as the HTTP answer's is.
    if (body && typeof body === 'object' && 'body' in body && 'filename' in body) {
      const d = body as SessionDownload;
      body = {...d, body: await bytesOf(d.body)};
    }
    return {status: 200, body};
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    return {status: e.status, error: e.message};
  }
}

function multipart(files: Array<{fileName: string; mimeType: string; data: Buffer}>): {
  body: Buffer;
  type: string;
} {
  const boundary = '----gristlite' + randomBytes(8).toString('hex');
  const chunks: Buffer[] = [];
  for (const f of files) {
    chunks.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="upload"; filename="${f.fileName}"\r\n` +
          `Content-Type: ${f.mimeType}\r\n\r\n`,
      ),
      f.data,
      Buffer.from('\r\n'),
    );
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return {body: Buffer.concat(chunks), type: `multipart/form-data; boundary=${boundary}`};
}

/** What one operation needs fresh for each call (a workspace or document to delete, ...). */
interface Fresh {
  ws?: number;
  doc?: string;
  hook?: string;
}

interface Op {
  what: string;
  /** Makes what the call consumes, once per call (by the owner, unchecked by the comparison). */
  fresh?: () => Promise<Fresh>;
  session: (s: Session, f: Fresh) => Promise<unknown>;
  http: (f: Fresh) => [method: string, url: string, body?: unknown];
  /** The comparable parts of a successful answer: [session's, HTTP's]; omitted: status only. */
  same?: (mine: Outcome, theirs: Outcome) => [unknown, unknown];
}

test('Session home, download, attachment and webhook calls answer as their HTTP twins, for every role', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gl-session-home-'));
  const engine = await Engine.open({
    dataDir: dir,
    resumeWebhooks: false,
    env: {GRISTLITE_ALLOWED_WEBHOOK_DOMAINS: 'example.com'},
  });
  try {
    const handle: Handle = createApiHandler(engine, {
      onError: (e) => {
        throw e;
      },
    });
    const people = ['ada', 'bob', 'cy', 'dee'];
    const sessions: Record<string, Session> = {};
    const keys: Record<string, string> = {};
    for (const name of people) {
      sessions[name] = await engine.forUser(`${name}@example.com`, name);
      keys[name] = await engine.home.setApiKey(sessions[name].principal.user.id);
    }
    const http = async (who: string, [method, url, body]: [string, string, unknown?]): Promise<Outcome> => {
      const upload = body instanceof Buffer;
      const headers: Record<string, string> = {
        host: 'localhost',
        authorization: `Bearer ${keys[who]}`,
        'content-type': upload ? (body as Buffer & {type: string}).type : 'application/json',
        ...(upload ? {'x-requested-with': 'XMLHttpRequest'} : {}),
      };
      const res = await handle({
        method,
        url,
        headers,
        ...(body === undefined
          ? {}
          : {body: upload ? (body as Buffer) : new TextEncoder().encode(JSON.stringify(body))}),
      });
      const bytes = await bytesOf(res.body);
      const json = (res.headers['Content-Type'] ?? '').includes('json');
      const parsed = json ? JSON.parse(bytes.toString()) : bytes;
      return res.status === 200
        ? {status: 200, body: parsed, headers: res.headers as Record<string, string>}
        : {status: res.status, error: (parsed as {error: string}).error};
    };

    // A team site ada owns, bob edits and cy views; dee is a stranger. Everything below is in it.
    const ada = sessions.ada;
    const orgId = await ada.createOrg({name: 'Team', domain: 'team'});
    await ada.updateOrgAccess(orgId, {users: {'bob@example.com': 'editors', 'cy@example.com': 'viewers'}});
    const wsId = await ada.createWorkspace(orgId, {name: 'Projects'});
    const ws2 = await ada.createWorkspace(orgId, {name: 'Archive'});
    const docId = await ada.createDoc(wsId, {name: 'Shared'});
    const doc = await ada.doc(docId);
    await doc.addTables([{id: 'Items', columns: [{id: 'Name'}, {id: 'Files', fields: {type: 'Attachments'}}]}]);
    const data = Buffer.from('hello attachment');
    const [attId] = await doc.addAttachments([{fileName: 'a.txt', mimeType: 'text/plain', data}]);
    await doc.addRecords('Items', [{Name: 'bolts', Files: ['L', attId]}]);
    const webhook = {url: 'https://example.com/hook', eventTypes: ['add' as const], tableId: 'Items'};
    await doc.addWebhooks([webhook]);
    const freshWs = async (): Promise<Fresh> => ({ws: await ada.createWorkspace(orgId, {name: 'Tmp'})});
    const freshDoc = async (): Promise<Fresh> => ({doc: await ada.createDoc(wsId, {name: 'Tmp'})});
    const freshHook = async (): Promise<Fresh> => ({
      hook: (await doc.addWebhooks([webhook])).webhooks[0].id,
    });
    const d = `/api/docs/${docId}`;
    const body = (o: Outcome) => o.body;
    const bothBodies = (a: Outcome, b: Outcome): [unknown, unknown] => [body(a), body(b)];
    const fileOf = (a: Outcome, b: Outcome): [unknown, unknown] => {
      const dl = a.body as {filename: string; contentType: string};
      const disposition = b.headers!['Content-Disposition'];
      return [
        {type: dl.contentType, disposition: `attachment; filename="${dl.filename}"`},
        {type: b.headers!['Content-Type'], disposition},
      ];
    };
    const fileAndBytes = (a: Outcome, b: Outcome): [unknown, unknown] => {
      const [x, y] = fileOf(a, b);
      return [
        {...(x as object), bytes: (a.body as {body: Buffer}).body},
        {...(y as object), bytes: b.body},
      ];
    };
    const upload = Object.assign(multipart([{fileName: 'b.txt', mimeType: 'text/plain', data}]), {});
    const uploadBody = Object.assign(Buffer.from(upload.body), {type: upload.type});
    const tmpGrist = join(dir, 'copy.grist');

    const ops: Op[] = [
      // orgs and workspaces
      {
        what: 'create an org',
        session: (s) => s.createOrg({name: 'Mine'}),
        http: () => ['POST', '/api/orgs', {name: 'Mine'}],
      },
      {
        what: 'create an org, no name',
        session: (s) => s.createOrg({name: ''}),
        http: () => ['POST', '/api/orgs', {name: ''}],
      },
      {
        what: 'create a workspace',
        session: (s) => s.createWorkspace(orgId, {name: 'W'}),
        http: () => ['POST', `/api/orgs/${orgId}/workspaces`, {name: 'W'}],
      },
      {
        what: 'create a workspace by domain',
        session: (s) => s.createWorkspace('team', {name: 'W'}),
        http: () => ['POST', `/api/orgs/team/workspaces`, {name: 'W'}],
      },
      {
        what: 'rename a workspace',
        session: (s) => s.renameWorkspace(ws2, 'Old'),
        http: () => ['PATCH', `/api/workspaces/${ws2}`, {name: 'Old'}],
      },
      {
        what: 'trash a workspace',
        fresh: freshWs,
        session: (s, f) => s.removeWorkspace(f.ws!),
        http: (f) => ['POST', `/api/workspaces/${f.ws}/remove`],
      },
      {
        what: 'restore a workspace',
        fresh: async () => {
          const f = await freshWs();
          await ada.removeWorkspace(f.ws!);
          return f;
        },
        session: (s, f) => s.restoreWorkspace(f.ws!),
        http: (f) => ['POST', `/api/workspaces/${f.ws}/unremove`],
      },
      {
        what: 'remove a workspace for good',
        fresh: freshWs,
        session: (s, f) => s.removeWorkspace(f.ws!, {permanent: true}),
        http: (f) => ['POST', `/api/workspaces/${f.ws}/remove?permanent=1`],
      },
      {
        what: 'delete a workspace',
        fresh: freshWs,
        session: (s, f) => s.deleteWorkspace(f.ws!),
        http: (f) => ['DELETE', `/api/workspaces/${f.ws}`],
      },
      // access lists
      {
        what: 'org access',
        session: (s) => s.orgAccess(orgId),
        http: () => ['GET', `/api/orgs/${orgId}/access`],
        same: bothBodies,
      },
      {
        what: 'share the org',
        session: (s) => s.updateOrgAccess(orgId, {users: {'eve@example.com': 'viewers'}}),
        http: () => ['PATCH', `/api/orgs/${orgId}/access`, {delta: {users: {'eve@example.com': 'viewers'}}}],
      },
      {
        what: 'share the org, bad role',
        session: (s) => s.updateOrgAccess(orgId, {users: {'eve@example.com': 'gods'}}),
        http: () => ['PATCH', `/api/orgs/${orgId}/access`, {delta: {users: {'eve@example.com': 'gods'}}}],
      },
      {
        what: 'workspace access',
        session: (s) => s.workspaceAccess(wsId),
        http: () => ['GET', `/api/workspaces/${wsId}/access`],
        same: bothBodies,
      },
      {
        what: 'share a workspace',
        session: (s) => s.updateWorkspaceAccess(wsId, {users: {'fay@example.com': 'editors'}}),
        http: () => ['PATCH', `/api/workspaces/${wsId}/access`, {delta: {users: {'fay@example.com': 'editors'}}}],
      },
      {
        what: 'doc access',
        session: (s) => s.docAccess(docId),
        http: () => ['GET', `${d}/access`],
        same: bothBodies,
      },
      {
        what: 'share a doc',
        session: (s) => s.updateDocAccess(docId, {maxInheritedRole: 'editors'}),
        http: () => ['PATCH', `${d}/access`, {delta: {maxInheritedRole: 'editors'}}],
      },
      {
        what: 'share a doc, no delta',
        session: (s) => s.updateDocAccess(docId, {}),
        http: () => ['PATCH', `${d}/access`, {delta: {}}],
      },
      // document metadata
      {
        what: 'rename a doc',
        session: (s) => s.renameDoc(docId, 'Shared'),
        http: () => ['PATCH', d, {name: 'Shared'}],
      },
      {
        what: 'change a doc',
        session: (s) => s.updateDoc(docId, {options: {description: 'x'}}),
        http: () => ['PATCH', d, {options: {description: 'x'}}],
      },
      {
        what: 'move a doc',
        fresh: freshDoc,
        session: (s, f) => s.moveDoc(f.doc!, ws2),
        http: (f) => ['PATCH', `/api/docs/${f.doc}/move`, {workspace: ws2}],
      },
      {
        what: 'trash a doc',
        fresh: freshDoc,
        session: (s, f) => s.removeDoc(f.doc!),
        http: (f) => ['POST', `/api/docs/${f.doc}/remove`],
      },
      {
        what: 'restore a doc',
        fresh: async () => {
          const f = await freshDoc();
          await ada.removeDoc(f.doc!);
          return f;
        },
        session: (s, f) => s.restoreDoc(f.doc!),
        http: (f) => ['POST', `/api/docs/${f.doc}/unremove`],
      },
      {
        what: 'remove a doc for good',
        fresh: freshDoc,
        session: (s, f) => s.removeDoc(f.doc!, {permanent: true}),
        http: (f) => ['POST', `/api/docs/${f.doc}/remove?permanent=1`],
      },
      {
        what: 'delete a doc',
        fresh: freshDoc,
        session: (s, f) => s.deleteDoc(f.doc!),
        http: (f) => ['DELETE', `/api/docs/${f.doc}`],
      },
      // downloads
      {
        what: 'download the .grist file',
        session: async (s) => (await s.doc(docId)).download({nohistory: true}),
        http: () => ['GET', `${d}/download?nohistory=1`],
        same: fileOf,
      },
      {
        what: 'download the .grist file to a path',
        session: async (s) => {
          await (await s.doc(docId)).downloadTo(tmpGrist);
          return readFileSync(tmpGrist).subarray(0, 16).toString();
        },
        http: () => ['GET', `${d}/download`],
        same: (a, b) => [a.body, (b.body as Buffer).subarray(0, 16).toString()],
      },
      {
        what: 'CSV',
        session: async (s) => (await s.doc(docId)).exportTable('Items'),
        http: () => ['GET', `${d}/download/csv?tableId=Items`],
        same: fileAndBytes,
      },
      {
        what: 'TSV with column ids',
        session: async (s) => (await s.doc(docId)).exportTable('Items', {format: 'tsv', header: 'colId', title: 'T'}),
        http: () => ['GET', `${d}/download/tsv?tableId=Items&header=colId&title=T`],
        same: fileAndBytes,
      },
      {
        what: 'CSV of no table',
        session: async (s) => (await s.doc(docId)).exportTable('Nope'),
        http: () => ['GET', `${d}/download/csv?tableId=Nope`],
      },
      {
        what: 'XLSX',
        session: async (s) => (await s.doc(docId)).exportXlsx(),
        http: () => ['GET', `${d}/download/xlsx`],
        same: fileOf,
      },
      {
        what: 'XLSX of one table',
        session: async (s) => (await s.doc(docId)).exportXlsx({tableId: 'Items'}),
        http: () => ['GET', `${d}/download/xlsx?tableId=Items`],
        same: fileOf,
      },
      {
        what: 'table schema',
        session: async (s) => (await s.doc(docId)).tableSchema('Items'),
        http: () => ['GET', `${d}/download/table-schema?tableId=Items&header=label`],
        same: (a, b) => [
          a.body,
          {...(b.body as object), path: (b.body as {path: string}).path.replace('http://localhost', '')},
        ],
      },
      // attachments
      {
        what: 'add attachments',
        session: async (s) => (await s.doc(docId)).addAttachments([{fileName: 'b.txt', mimeType: 'text/plain', data}]),
        http: () => ['POST', `${d}/attachments`, uploadBody],
        same: (a, b) => [(a.body as number[]).length, (b.body as number[]).length],
      },
      {
        what: 'list attachments',
        session: async (s) => (await s.doc(docId)).listAttachments({sort: ['-id'], limit: 1}),
        http: () => ['GET', `${d}/attachments?sort=-id&limit=1`],
        same: bothBodies,
      },
      {
        what: 'attachment metadata',
        session: async (s) => (await s.doc(docId)).attachmentMetadata(attId),
        http: () => ['GET', `${d}/attachments/${attId}`],
        same: bothBodies,
      },
      {
        what: 'no such attachment',
        session: async (s) => (await s.doc(docId)).attachmentMetadata(999),
        http: () => ['GET', `${d}/attachments/999`],
      },
      {
        what: 'download an attachment',
        session: async (s) => (await s.doc(docId)).downloadAttachment(attId, {inline: true}),
        http: () => ['GET', `${d}/attachments/${attId}/download?inline=1`],
        same: (a, b) => {
          const dl = a.body as {data: Buffer; headers: Record<string, string>};
          const h = b.headers!;
          return [
            {data: dl.data, headers: dl.headers},
            {data: b.body, headers: Object.fromEntries(Object.keys(dl.headers).map((k) => [k, h[k]]))},
          ];
        },
      },
      // webhooks
      {
        what: 'list webhooks',
        session: async (s) => (await s.doc(docId)).listWebhooks(),
        http: () => ['GET', `${d}/webhooks`],
        same: bothBodies,
      },
      {
        what: 'add a webhook',
        session: async (s) => (await s.doc(docId)).addWebhooks([webhook]),
        http: () => ['POST', `${d}/webhooks`, {webhooks: [{fields: webhook}]}],
      },
      {
        what: 'add a webhook on no table',
        session: async (s) => (await s.doc(docId)).addWebhooks([{...webhook, tableId: 'Nope'}]),
        http: () => ['POST', `${d}/webhooks`, {webhooks: [{fields: {...webhook, tableId: 'Nope'}}]}],
      },
      {
        what: 'change a webhook',
        fresh: freshHook,
        session: async (s, f) => (await s.doc(docId)).updateWebhook(f.hook!, {memo: 'changed', enabled: false}),
        http: (f) => ['PATCH', `${d}/webhooks/${f.hook}`, {memo: 'changed', enabled: false}],
      },
      {
        what: 'change no webhook',
        session: async (s) => (await s.doc(docId)).updateWebhook('nope', {memo: 'x'}),
        http: () => ['PATCH', `${d}/webhooks/nope`, {memo: 'x'}],
      },
      {
        what: 'remove a webhook',
        fresh: freshHook,
        session: async (s, f) => (await s.doc(docId)).removeWebhook(f.hook!),
        http: (f) => ['DELETE', `${d}/webhooks/${f.hook}`],
      },
    ];

    const seen = new Map<string, number>();
    for (const who of people) {
      for (const op of ops) {
        const mine = await inProcess(async () => op.session(sessions[who], (await op.fresh?.()) ?? {}));
        const theirs = await http(who, op.http((await op.fresh?.()) ?? {}));
        const label = `${who}: ${op.what}`;
        assert.equal({status: mine.status, error: mine.error}, {status: theirs.status, error: theirs.error}, label);
        if (mine.status === 200 && op.same) {
          const [a, b] = op.same(mine, theirs);
          assert.equal(a, b, `${label} (answer)`);
        }
        seen.set(label, mine.status);
      }
    }
    // The outcomes follow the roles (and were not all refusals, nor all successes).
    const expect: Array<[string, number]> = [
      ['ada: share the org', 200],
      ['bob: share the org', 403],
      ['ada: share the org, bad role', 400],
      ['dee: org access', 403],
      ['ada: delete a doc', 200],
      ['bob: delete a doc', 403],
      ['ada: rename a doc', 200],
      ['bob: rename a doc', 403],
      ['bob: move a doc', 403],
      ['cy: download the .grist file', 200],
      ['dee: download the .grist file', 403],
      ['cy: CSV', 200],
      ['ada: CSV of no table', 404],
      ['bob: add attachments', 200],
      ['cy: add attachments', 403],
      ['cy: download an attachment', 200],
      ['ada: no such attachment', 404],
      ['ada: list webhooks', 200],
      ['bob: list webhooks', 403],
      ['ada: change a webhook', 200],
      ['ada: change no webhook', 404],
    ];
    for (const [label, status] of expect) assert.is(seen.get(label), status, label);
  } finally {
    await engine.close();
    rmSync(dir, {recursive: true, force: true});
  }
});

// Under access rules, downloads, exports and attachments are gated as routes/download.ts,
// routes/exports.ts and routes/attachments.ts gate them: the .grist file only for owners and those
// who may copy everything, exports filtered (a hidden table is 404), attachments only when a
// readable cell holds them.
test('under access rules, Session downloads, exports and attachments answer as HTTP does', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gl-session-rules-'));
  const engine = await Engine.open({dataDir: dir, resumeWebhooks: false});
  try {
    const handle: Handle = createApiHandler(engine, {
      onError: (e) => {
        throw e;
      },
    });
    const ada = await engine.forUser('ada@example.com', 'Ada');
    const kiwi = await engine.forUser('kiwi@example.com', 'Kiwi');
    const key = await engine.home.setApiKey(kiwi.principal.user.id);
    const docId = await ada.createDoc((await ada.personalWorkspace()).id, {name: 'Rules'});
    await ada.updateDocAccess(docId, {users: {'kiwi@example.com': 'editors'}});
    const doc = await ada.doc(docId);
    await doc.addTables([
      {
        id: 'Deals',
        columns: [
          {id: 'Owner'},
          {id: 'Amount', fields: {type: 'Numeric'}},
          {id: 'Files', fields: {type: 'Attachments'}},
        ],
      },
      {id: 'Secrets', columns: [{id: 'X'}]},
    ]);
    const [mine, theirs] = await doc.addAttachments([
      {fileName: 'kiwi.txt', mimeType: 'text/plain', data: Buffer.from('for kiwi')},
      {fileName: 'ada.txt', mimeType: 'text/plain', data: Buffer.from('for ada')},
    ]);
    await doc.addRecords('Deals', [
      {Owner: 'kiwi@example.com', Amount: 1, Files: ['L', mine]},
      {Owner: 'ada@example.com', Amount: 2, Files: ['L', theirs]},
    ]);
    await doc.addRecords('Secrets', [{X: 'hidden'}]);
    await doc.applyUserActions([
      ['AddRecord', '_grist_ACLResources', -1, {tableId: 'Deals', colIds: '*'}],
      ['AddRecord', '_grist_ACLResources', -3, {tableId: 'Secrets', colIds: '*'}],
      [
        'AddRecord',
        '_grist_ACLRules',
        null,
        {
          resource: -1,
          aclFormula: 'user.Access != OWNER and rec.Owner != user.Email',
          permissionsText: '-RU',
          rulePos: 1,
        },
      ],
      [
        'AddRecord',
        '_grist_ACLRules',
        null,
        {resource: -3, aclFormula: 'user.Access != OWNER', permissionsText: '-R', rulePos: 2},
      ],
    ]);
    const http = async (url: string): Promise<Outcome> => {
      const res = await handle({
        method: 'GET',
        url: `/api/docs/${docId}${url}`,
        headers: {host: 'localhost', authorization: `Bearer ${key}`},
      });
      const bytes = await bytesOf(res.body);
      const json = (res.headers['Content-Type'] ?? '').includes('json');
      const parsed = json ? JSON.parse(bytes.toString()) : bytes;
      return res.status === 200
        ? {status: 200, body: parsed}
        : {status: res.status, error: (parsed as {error: string}).error};
    };
    const kdoc = await kiwi.doc(docId);
    const pairs: Array<[string, () => Promise<unknown>, string, ((o: Outcome) => unknown)?]> = [
      ['.grist file', () => kdoc.download(), '/download'],
      ['.grist file to a path', () => kdoc.downloadTo(join(dir, 'k.grist')), '/download'],
      [
        'CSV',
        () => kdoc.exportTable('Deals'),
        '/download/csv?tableId=Deals',
        (o) => (o.body as {body: Buffer}).body ?? o.body,
      ],
      ['CSV of a hidden table', () => kdoc.exportTable('Secrets'), '/download/csv?tableId=Secrets'],
      ['XLSX of a hidden table', () => kdoc.exportXlsx({tableId: 'Secrets'}), '/download/xlsx?tableId=Secrets'],
      ['schema of a hidden table', () => kdoc.tableSchema('Secrets'), '/download/table-schema?tableId=Secrets'],
      ['attachments', () => kdoc.listAttachments(), '/attachments', (o) => o.body],
      ['her attachment', () => kdoc.attachmentMetadata(mine), `/attachments/${mine}`, (o) => o.body],
      ["ada's attachment", () => kdoc.attachmentMetadata(theirs), `/attachments/${theirs}`],
      [
        'her attachment downloaded',
        () => kdoc.downloadAttachment(mine),
        `/attachments/${mine}/download`,
        (o) => (o.body as {data: Buffer}).data ?? o.body,
      ],
      ["ada's attachment downloaded", () => kdoc.downloadAttachment(theirs), `/attachments/${theirs}/download`],
    ];
    const outcomes: Record<string, number> = {};
    for (const [what, viaSession, url, answer] of pairs) {
      const a = await inProcess(viaSession);
      const b = await http(url);
      assert.equal({status: a.status, error: a.error}, {status: b.status, error: b.error}, what);
      if (a.status === 200 && answer) assert.equal(answer(a), answer(b), `${what} (answer)`);
      outcomes[what] = a.status;
    }
    assert.equal(outcomes, {
      '.grist file': 403,
      '.grist file to a path': 403,
      CSV: 200,
      'CSV of a hidden table': 404,
      'XLSX of a hidden table': 404,
      'schema of a hidden table': 404,
      attachments: 200,
      'her attachment': 200,
      "ada's attachment": 403,
      'her attachment downloaded': 200,
      "ada's attachment downloaded": 403,
    });
    // What she gets: her row only, her attachment only.
    const csv = (await kdoc.exportTable('Deals')).body;
    assert.not.ok((await bytesOf(csv)).toString().includes('ada@example.com'));
    assert.equal(
      (await kdoc.listAttachments()).records.map((r) => r.id),
      [mine],
    );
    // The owner still downloads the file.
    await ada.doc(docId).then((d) => d.downloadTo(join(dir, 'a.grist')));
  } finally {
    await engine.close();
    rmSync(dir, {recursive: true, force: true});
  }
});

test.run();
