/**
 * External attachment stores (issue 29): a server configured with a directory store
 * (GRISTLITE_ATTACHMENT_STORE_DIR), documents that choose it (`POST /attachments/store`), uploads
 * and downloads through it, `transferAll` and its status, removals, archives, copies and imports.
 */
import {createHash} from 'node:crypto';
import {existsSync, mkdtempSync, readdirSync, rmSync, unlinkSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import * as assert from 'uvu/assert';
import {multipart} from './attachments.js';
import {areaSuite, isError, ok, useWorld, type Target} from './world.js';

const sha1 = (s: string) => createHash('sha1').update(s).digest('hex');

/** The entries of a tar file: name, and where its content is. */
function tarEntries(t: Buffer): {name: string; at: number; size: number}[] {
  const out = [];
  for (let at = 0; at + 512 <= t.length && t[at] !== 0; ) {
    const name = t
      .subarray(at, at + 100)
      .toString('latin1')
      .replace(/\0.*$/s, '');
    const size = parseInt(t.subarray(at + 124, at + 136).toString('latin1'), 8);
    out.push({name, at: at + 512, size});
    at += 512 + Math.ceil(size / 512) * 512;
  }
  return out;
}

export function attachmentStoresSuite(target: Target): void {
  const s = areaSuite(target, 'attachment-stores');
  const dir = mkdtempSync(join(tmpdir(), 'gl-attach-store-'));
  s.after(() => rmSync(dir, {recursive: true, force: true}));
  const world = useWorld(s, target, {GRISTLITE_ATTACHMENT_STORE_DIR: dir});
  let doc = '';
  let att = '';
  const upload = async (docId: string, parts: {name: string; content: string}[]) => {
    const {body, headers} = multipart(parts);
    return ok(
      await world().api.call('POST', `/api/docs/${docId}/attachments`, {key: world().chimpy.key, body, headers}),
    ).body as number[];
  };
  const files = async (docId: string) =>
    ok(
      await world().api.get(
        `/api/docs/${docId}/sql?q=${encodeURIComponent('select ident, data is not null as here, storageId from _gristsys_Files order by ident')}`,
        world().chimpy.as,
      ),
    ).body.records.map((r: any) => r.fields);
  const inStore = (docId: string) => (existsSync(join(dir, docId)) ? readdirSync(join(dir, docId)).sort() : []);
  const status = async (docId: string) =>
    ok(await world().api.get(`/api/docs/${docId}/attachments/transferStatus`, world().chimpy.as)).body;
  const settled = async (docId: string) => {
    for (let i = 0; i < 200; i++) {
      const st = await status(docId);
      if (!st.status.isRunning) return st;
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error('transfer did not end');
  };
  const download = async (docId: string, id: number) =>
    world().api.get(`/api/docs/${docId}/attachments/${id}/download`, world().chimpy.as);

  s('a configured store is listed; choosing "external" sends new files there (Grist 1.7)', async () => {
    const {api, chimpy, kiwi} = world();
    doc = await world().newDoc(chimpy, await world().homeWs(chimpy), 'Stored');
    att = `/api/docs/${doc}/attachments`;
    assert.equal(ok(await api.get(`${att}/stores`, chimpy.as)).body, {stores: [{label: 'filesystem'}]});
    assert.equal(await upload(doc, [{name: 'in.txt', content: 'inside'}]), [1]);
    assert.equal(ok(await api.get(`${att}/store`, chimpy.as)).body, {type: 'internal'});
    const chosen = ok(await api.post(`${att}/store`, {type: 'external'}, chimpy.as)).body;
    assert.match(chosen.store, /^[0-9a-f-]{36}-filesystem$/);
    assert.equal(ok(await api.get(`${att}/store`, chimpy.as)).body, {type: 'external'});
    // The choice is the document's setting, as Grist keeps it.
    const settings = ok(
      await api.get(
        `/api/docs/${doc}/sql?q=${encodeURIComponent('select documentSettings from _grist_DocInfo')}`,
        chimpy.as,
      ),
    ).body.records[0].fields.documentSettings;
    assert.is(JSON.parse(settings).attachmentStoreId, chosen.store);
    // A new file goes to the store: the row keeps its storageId and no bytes.
    assert.equal(
      await upload(doc, [
        {name: 'out.txt', content: 'outside'},
        {name: 'again.txt', content: 'inside'},
      ]),
      [2, 3],
    );
    assert.equal(
      await files(doc),
      [
        {ident: `${sha1('outside')}.txt`, here: 0, storageId: chosen.store},
        {ident: `${sha1('inside')}.txt`, here: 1, storageId: null},
      ].sort((a, b) => (a.ident < b.ident ? -1 : 1)),
    );
    assert.equal(inStore(doc), [`${sha1('outside')}.txt`]);
    const dl = ok(await download(doc, 2));
    assert.is(dl.text, 'outside');
    assert.is(dl.headers['content-disposition'], 'attachment; filename="out.txt"');
    assert.is(ok(await download(doc, 3)).text, 'inside', 'content already in the document stays there');
    assert.equal(await status(doc), {
      status: {pendingTransferCount: 0, isRunning: false, successes: 0, failures: 0},
      locationSummary: 'mixed',
    });
    // Owners only, as in Grist; viewers see where files are.
    await world().share(chimpy, `/api/docs/${doc}`, {[kiwi.email]: 'editors'});
    isError(await api.get(`${att}/stores`, kiwi.as), 403, 'No owner access');
    isError(await api.post(`${att}/store`, {type: 'internal'}, kiwi.as), 403, 'No owner access');
    isError(await api.post(`${att}/transferAll`, {}, kiwi.as), 403, 'No owner access');
    assert.equal(ok(await api.get(`${att}/store`, kiwi.as)).body, {type: 'external'});
    ok(await api.get(`${att}/transferStatus`, kiwi.as));
  });

  s('transferAll moves every file to the chosen store, then back; old copies are deleted', async () => {
    const {api, chimpy} = world();
    // The moves are not the request's writes: a repeat with its Idempotency-Key runs again (the
    // request itself wrote nothing), rather than answering 409 as for a write whose answer was lost.
    const once = {...chimpy.as, headers: {'Idempotency-Key': 'transfer-all-1'}};
    const started = ok(await api.post(`${att}/transferAll`, {}, once)).body;
    assert.equal(started, {
      status: {pendingTransferCount: 1, isRunning: true, successes: 0, failures: 0},
      locationSummary: 'mixed',
    });
    assert.equal(await settled(doc), {
      status: {pendingTransferCount: 0, isRunning: false, successes: 1, failures: 0},
      locationSummary: 'external',
    });
    assert.equal(ok(await api.post(`${att}/transferAll`, {}, once)).body.status.pendingTransferCount, 0);
    assert.equal(inStore(doc), [`${sha1('inside')}.txt`, `${sha1('outside')}.txt`].sort());
    assert.ok((await files(doc)).every((f: any) => f.here === 0 && f.storageId));
    assert.is(ok(await download(doc, 1)).text, 'inside');
    // Nothing left to move: the answer says so at once.
    assert.equal(ok(await api.post(`${att}/transferAll`, {}, chimpy.as)).body.status, {
      pendingTransferCount: 0,
      isRunning: false,
      successes: 0,
      failures: 0,
    });
    // Back into the document: Grist answers `{}` for the internal store.
    assert.equal(ok(await api.post(`${att}/store`, {type: 'internal'}, chimpy.as)).body, {});
    assert.equal(ok(await api.get(`${att}/store`, chimpy.as)).body, {type: 'internal'});
    ok(await api.post(`${att}/transferAll`, {}, chimpy.as));
    assert.equal((await settled(doc)).locationSummary, 'internal');
    assert.equal((await settled(doc)).status.successes, 2);
    assert.equal(inStore(doc), [], 'the copies in the store are deleted once the rows name the document');
    assert.is(ok(await download(doc, 2)).text, 'outside');
    ok(await api.post(`${att}/verifyFiles`, {}, chimpy.as));
  });

  s('a file missing from the store: download 404, transfer counted as a failure', async () => {
    const {api, chimpy} = world();
    const d = await world().newDoc(chimpy, await world().homeWs(chimpy), 'Missing');
    ok(await api.post(`/api/docs/${d}/attachments/store`, {type: 'external'}, chimpy.as));
    assert.equal(
      await upload(d, [
        {name: 'gone.txt', content: 'gone'},
        {name: 'kept.txt', content: 'kept'},
      ]),
      [1, 2],
    );
    unlinkSync(join(dir, d, `${sha1('gone')}.txt`));
    isError(await download(d, 1), 404, 'Invalid attachment identifier');
    ok(await api.post(`/api/docs/${d}/attachments/store`, {type: 'internal'}, chimpy.as));
    ok(await api.post(`/api/docs/${d}/attachments/transferAll`, {}, chimpy.as));
    assert.equal(await settled(d), {
      status: {pendingTransferCount: 0, isRunning: false, successes: 1, failures: 1},
      locationSummary: 'mixed',
    });
    assert.is(ok(await download(d, 2)).text, 'kept');
    // Uploading the same content again puts the file back where its row says it is.
    ok(await api.post(`/api/docs/${d}/attachments/store`, {type: 'external'}, chimpy.as));
    assert.equal(await upload(d, [{name: 'back.txt', content: 'gone'}]), [3]);
    assert.is(ok(await download(d, 1)).text, 'gone');
  });

  s('removeUnused deletes unused files from the store too', async () => {
    const {api, chimpy} = world();
    const d = await world().newDoc(chimpy, await world().homeWs(chimpy), 'Unused');
    ok(await api.post(`/api/docs/${d}/attachments/store`, {type: 'external'}, chimpy.as));
    assert.equal(
      await upload(d, [
        {name: 'a.txt', content: 'aaa'},
        {name: 'b.txt', content: 'bbb'},
      ]),
      [1, 2],
    );
    ok(
      await api.post(
        `/api/docs/${d}/tables`,
        {tables: [{id: 'Files', columns: [{id: 'F', fields: {type: 'Attachments'}}]}]},
        chimpy.as,
      ),
    );
    ok(await api.post(`/api/docs/${d}/tables/Files/records`, {records: [{fields: {F: ['L', 2]}}]}, chimpy.as));
    assert.equal(inStore(d).length, 2);
    ok(await api.post(`/api/docs/${d}/attachments/removeUnused?verifyfiles=1`, {}, chimpy.as));
    assert.equal(inStore(d), [`${sha1('bbb')}.txt`]);
    assert.equal(
      (await files(d)).map((f: any) => f.ident),
      [`${sha1('bbb')}.txt`],
    );
    assert.is(ok(await download(d, 2)).text, 'bbb');
  });

  s('archive holds external files; a .grist download lacks them and POST /archive restores them (Grist)', async () => {
    const {api, chimpy, kiwi} = world();
    const d = await world().newDoc(chimpy, await world().homeWs(chimpy), 'Portable');
    ok(await api.post(`/api/docs/${d}/attachments/store`, {type: 'external'}, chimpy.as));
    assert.equal(
      await upload(d, [
        {name: 'hello.doc', content: 'foobar'},
        {name: 'world.txt', content: '123456'},
        {name: 'hello2.doc', content: 'foobar'},
      ]),
      [1, 2, 3],
    );
    const tarRes = ok(await api.get(`/api/docs/${d}/attachments/archive?format=tar`, chimpy.as));
    const entries = tarEntries(tarRes.raw);
    assert.equal(
      entries.map((e) => e.name),
      [`${sha1('foobar')}_hello.doc`, `${sha1('123456')}_world.txt`, `${sha1('foobar')}_hello2.doc`],
    );
    assert.is(tarRes.raw.subarray(entries[1].at, entries[1].at + 6).toString(), '123456');
    // The .grist file names the files and their store, without their bytes.
    const grist = ok(await api.get(`/api/docs/${d}/download`, chimpy.as)).raw;
    const form = multipart([{name: 'Portable.grist', content: grist}]);
    const copy = ok(
      await api.call('POST', `/api/workspaces/${await world().homeWs(chimpy)}/import`, {key: chimpy.key, ...form}),
    ).body.id;
    assert.equal(ok(await api.get(`/api/docs/${copy}/attachments/store`, chimpy.as)).body, {type: 'external'});
    isError(await download(copy, 1), 404, 'Invalid attachment identifier');
    const restore = (
      content: Uint8Array,
      name = 'AttachmentsAreHere.tar',
      type = 'application/x-tar',
      key = chimpy.key,
    ) => api.call('POST', `/api/docs/${copy}/attachments/archive`, {key, ...multipart([{name, content, type}])});
    await world().share(chimpy, `/api/docs/${copy}`, {[kiwi.email]: 'editors'});
    isError(await restore(tarRes.raw, 'x.tar', 'application/x-tar', kiwi.key), 403, 'No owner access');
    isError(
      await restore(Buffer.from('Random content'), 'x.zip', 'application/zip'),
      400,
      'No .tar file found in request',
    );
    isError(await restore(Buffer.from('Random content')), 400, 'File is not a valid .tar');
    assert.equal(ok(await restore(tarRes.raw)).body, {added: 2, errored: 0, unused: 1});
    assert.is(ok(await download(copy, 1)).text, 'foobar');
    assert.is(ok(await download(copy, 2)).text, '123456');
    assert.equal(inStore(copy), [`${sha1('123456')}.txt`, `${sha1('foobar')}.doc`].sort());
    // Again: nothing is missing now. A file whose content does not match its name is refused.
    assert.equal(ok(await restore(tarRes.raw)).body, {added: 0, errored: 0, unused: 3});
    unlinkSync(join(dir, copy, `${sha1('123456')}.txt`));
    // The same archive with other bytes in the file's place (its header, and so the tar, stays valid).
    const forged = Buffer.from(tarRes.raw);
    forged.write('654321', entries[1].at);
    assert.equal(ok(await restore(forged)).body, {added: 0, errored: 1, unused: 2});
    isError(await download(copy, 2), 404, 'Invalid attachment identifier');
  });

  s('a copy gets its own copies of the files; deleting a document deletes its files', async () => {
    const {api, chimpy} = world();
    const d = await world().newDoc(chimpy, await world().homeWs(chimpy), 'Original');
    ok(await api.post(`/api/docs/${d}/attachments/store`, {type: 'external'}, chimpy.as));
    assert.equal(await upload(d, [{name: 'c.txt', content: 'copied'}]), [1]);
    const copy = ok(
      await api.post(
        `/api/docs/${d}/copy`,
        {workspaceId: await world().homeWs(chimpy), documentName: 'Copy'},
        chimpy.as,
      ),
    ).body;
    assert.equal(inStore(copy), [`${sha1('copied')}.txt`]);
    ok(await api.del(`/api/docs/${d}`, chimpy.as));
    assert.not.ok(existsSync(join(dir, d)), "the deleted document's files are gone");
    assert.is(ok(await download(copy, 1)).text, 'copied');
    assert.equal(ok(await api.get(`/api/docs/${copy}/attachments/store`, chimpy.as)).body, {type: 'external'});
  });

  s('a document naming a store this server lacks: imports switch to this one; uploads refuse (400)', async () => {
    const {api, chimpy} = world();
    const d = await world().newDoc(chimpy, await world().homeWs(chimpy), 'Elsewhere');
    const foreign = '00000000-0000-0000-0000-000000000000-elsewhere';
    ok(
      await api.post(
        `/api/docs/${d}/apply`,
        [
          [
            'UpdateRecord',
            '_grist_DocInfo',
            1,
            {documentSettings: JSON.stringify({locale: 'en-US', attachmentStoreId: foreign})},
          ],
        ],
        chimpy.as,
      ),
    );
    assert.equal(ok(await api.get(`/api/docs/${d}/attachments/store`, chimpy.as)).body, {type: 'external'});
    const {body, headers} = multipart([{name: 'x.txt', content: 'x'}]);
    isError(
      await api.call('POST', `/api/docs/${d}/attachments`, {key: chimpy.key, body, headers}),
      400,
      `Store '${foreign}' is not a valid and available store`,
    );
    const grist = ok(await api.get(`/api/docs/${d}/download`, chimpy.as)).raw;
    const form = multipart([{name: 'Elsewhere.grist', content: grist}]);
    const imported = ok(
      await api.call('POST', `/api/workspaces/${await world().homeWs(chimpy)}/import`, {key: chimpy.key, ...form}),
    ).body.id;
    const ours = ok(await api.get(`/api/docs/${imported}/attachments/stores`, chimpy.as)).body;
    assert.equal(ours, {stores: [{label: 'filesystem'}]});
    assert.equal(await upload(imported, [{name: 'y.txt', content: 'y'}]), [1]);
    assert.equal((await status(imported)).locationSummary, 'external');
  });

  s.run();
}
