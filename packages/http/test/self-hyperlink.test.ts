// SELF_HYPERLINK() (issue 29) through the whole pipeline: the document's URL on the server's public
// URL when one is set (GRISTLITE_PUBLIC_URL), else on the host each request came with; writes
// made with no request (Session) see it only through the public URL.
import {copyFileSync, mkdtempSync, readFileSync, rmSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {suite} from 'uvu';
import * as assert from 'uvu/assert';
import {Engine, FORMULAS_TABLE, GristDoc} from '@gristlite/core/internal';
import {createApiHandler, type Handler} from '../src/index.js';

const FORMULA = 'SELF_HYPERLINK(label=$Code, LinkKey_Code=$Code)';

interface World {
  dir: string;
  engine: Engine;
  handle: Handler;
  key: string;
  email: string;
  wid: number;
}

async function world(publicUrl: string | null): Promise<World> {
  const dir = mkdtempSync(join(tmpdir(), 'gl-selflink-'));
  const engine = await Engine.open({dataDir: dir, env: publicUrl ? {GRISTLITE_PUBLIC_URL: publicUrl} : {}});
  const email = 'chimpy@getgrist.com';
  const user = await engine.home.ensureUser(email, 'Chimpy');
  const key = await engine.home.setApiKey(user.id);
  const handle = createApiHandler(engine, {env: {}, onError: (e) => assert.unreachable(String(e))});
  const w = {dir, engine, handle, key, email, wid: 0};
  const spaces = (await call(w, 'GET', `/api/orgs/docs-${user.id}/workspaces`)) as {id: number; name: string}[];
  w.wid = spaces.find((s) => s.name === 'Home')!.id;
  return w;
}

async function close(w: World): Promise<void> {
  await w.engine.close();
  rmSync(w.dir, {recursive: true, force: true});
}

async function call(w: World, method: string, url: string, body?: unknown, headers: Record<string, string> = {}) {
  const raw = body instanceof Uint8Array;
  const res = await w.handle({
    method,
    url,
    headers: {
      host: 'api.example.test',
      authorization: `Bearer ${w.key}`,
      ...(body === undefined || raw ? {} : {'content-type': 'application/json'}),
      ...headers,
    },
    body: body === undefined ? undefined : raw ? body : Buffer.from(JSON.stringify(body)),
  });
  const text = typeof res.body === 'string' ? res.body : Buffer.from(res.body as Uint8Array).toString();
  assert.is(res.status, 200, text);
  return JSON.parse(text);
}

/** A doc named "Links Doc" with a table Links (Code, Link = FORMULA); returns its id and urlId. */
async function linksDoc(w: World, headers: Record<string, string> = {}): Promise<{id: string; urlId: string}> {
  const id = await call(w, 'POST', `/api/workspaces/${w.wid}/docs`, {name: 'Links Doc'});
  const columns = [
    {id: 'Code', type: 'Text'},
    {id: 'Link', type: 'Text', isFormula: true, formula: FORMULA},
  ];
  await call(w, 'POST', `/api/docs/${id}/apply`, [['AddTable', 'Links', columns]], headers);
  return {id, urlId: (await call(w, 'GET', `/api/docs/${id}`)).urlId};
}

const links = async (w: World, doc: string) => (await call(w, 'GET', `/api/docs/${doc}/tables/Links/data`)).Link;

const s = suite('SELF_HYPERLINK');

s('without a public URL: the host (and scheme) of the request that made the write', async () => {
  const w = await world(null);
  try {
    const {id, urlId} = await linksDoc(w);
    await call(w, 'POST', `/api/docs/${id}/tables/Links/records`, {records: [{fields: {Code: 'A 1'}}]});
    const proxied = {'x-forwarded-proto': 'https', 'x-forwarded-host': 'grist.example.org'};
    await call(w, 'POST', `/api/docs/${id}/tables/Links/records`, {records: [{fields: {Code: 'B'}}]}, proxied);
    assert.equal(await links(w, id), [
      `A 1 http://api.example.test/o/docs/${urlId}/Links-Doc?Code_=A+1`,
      `B https://grist.example.org/o/docs/${urlId}/Links-Doc?Code_=B`,
    ]);
    // A write with no request behind it (an embedder's Session) knows no host: None.
    const session = await w.engine.forUser(w.email);
    await (await session.doc(id)).addRecords('Links', [{Code: 'C'}]);
    assert.is((await links(w, id))[2], null);
  } finally {
    await close(w);
  }
});

s('with GRISTLITE_PUBLIC_URL: every write, with or without a request, and the table-schema path', async () => {
  const w = await world('https://public.example/grist/');
  try {
    assert.is(w.engine.publicUrl, 'https://public.example/grist');
    const {id, urlId} = await linksDoc(w, {'x-forwarded-host': 'ignored.example'});
    await call(w, 'POST', `/api/docs/${id}/tables/Links/records`, {records: [{fields: {Code: 'A'}}]});
    const session = await w.engine.forUser(w.email);
    await (await session.doc(id)).addRecords('Links', [{Code: 'B'}]);
    const base = `https://public.example/grist/o/docs/${urlId}/Links-Doc`;
    assert.equal(await links(w, id), [`A ${base}?Code_=A`, `B ${base}?Code_=B`]);
    const schema = await call(w, 'GET', `/api/docs/${id}/download/table-schema?tableId=Links`);
    assert.is(schema.path, `https://public.example/grist/o/docs/api/docs/${urlId}/download/csv?tableId=Links`);
  } finally {
    await close(w);
  }
});

/** A `.grist` file (made here, outside any server) whose Links table holds Code "A" and FORMULA, stored as None. */
function gristFile(dir: string): string {
  const path = join(dir, 'made-elsewhere.grist');
  const doc = GristDoc.create(path);
  doc.addTables([
    {
      id: 'Links',
      columns: [
        {id: 'Code', fields: {type: 'Text', isFormula: false}},
        {id: 'Link', fields: {type: 'Text', isFormula: true, formula: FORMULA}},
      ],
    },
  ]);
  doc.addRecords('Links', [{Code: 'A'}]);
  // As a file gristlite never computed: the marker that its values are current goes.
  doc.db.exec(`DROP TABLE ${FORMULAS_TABLE}`);
  doc.close();
  return path;
}

s('formulas computed when a .grist file is imported, or first opened, see the URL of that request', async () => {
  const w = await world(null);
  try {
    const file = gristFile(w.dir);
    const boundary = 'gristlite-selflink';
    const form = Buffer.concat([
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="workspaceId"\r\n\r\n${w.wid}\r\n`),
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="upload"; filename="Links Doc.grist"\r\n`),
      Buffer.from('Content-Type: application/octet-stream\r\n\r\n'),
      readFileSync(file),
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]);
    const imported = await call(w, 'POST', '/api/docs', form, {
      'content-type': `multipart/form-data; boundary=${boundary}`,
      host: 'import.example.test',
    });
    const urlId = (await call(w, 'GET', `/api/docs/${imported}`)).urlId;
    assert.equal(await links(w, imported), [`A http://import.example.test/o/docs/${urlId}/Links-Doc?Code_=A`]);

    // A file placed as a document's file, which gristlite never computed: the read that opens it
    // computes its formulas, on its own host.
    const {id, urlId: placedUrlId} = await linksDoc(w);
    await w.engine.reloadDoc(id);
    copyFileSync(file, w.engine.docPath(id));
    const first = await call(w, 'GET', `/api/docs/${id}/tables/Links/data`, undefined, {host: 'reader.example.test'});
    assert.equal(first.Link, [`A http://reader.example.test/o/docs/${placedUrlId}/Links-Doc?Code_=A`]);

    // The same first opening by a viewer: the host its request names is not stored for everyone
    // (without a public URL, None).
    const viewer = await w.engine.home.ensureUser('viewer@example.com', 'Viewer');
    const viewerKey = await w.engine.home.setApiKey(viewer.id);
    await call(w, 'PATCH', `/api/docs/${id}/access`, {delta: {users: {'viewer@example.com': 'viewers'}}});
    await w.engine.reloadDoc(id);
    copyFileSync(file, w.engine.docPath(id));
    const seen = await call(w, 'GET', `/api/docs/${id}/tables/Links/data`, undefined, {
      authorization: `Bearer ${viewerKey}`,
      'x-forwarded-host': 'phish.example',
    });
    assert.equal(seen.Link, [null]);
  } finally {
    await close(w);
  }
});

s('a bad public URL stops the engine from starting', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gl-selflink-'));
  try {
    let message = '';
    await Engine.open({dataDir: dir, env: {GRISTLITE_PUBLIC_URL: 'public.example'}}).then(
      (e) => e.close(),
      (e: Error) => {
        message = e.message;
      },
    );
    assert.match(message, /GRISTLITE_PUBLIC_URL must be an absolute http or https URL/);
  } finally {
    rmSync(dir, {recursive: true, force: true});
  }
});

s.run();
