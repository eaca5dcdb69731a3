/**
 * Attachments (SPEC §12, §19 item 25): multipart upload, list with sort/limit, metadata,
 * download headers, storage by content, Attachments cells, and the errors.
 */
import {createHash} from 'node:crypto';
import * as assert from 'uvu/assert';
import {tablePath} from './docdata.js';
import {areaSuite, ISO_DATE, isError, ok, useWorld, type Target} from './world.js';

interface Part {
  name: string;
  content: string | Uint8Array;
  type?: string;
  field?: string;
}

/** A multipart/form-data body with file parts (field `upload` unless given). */
export function multipart(parts: Part[]): {body: Uint8Array; headers: Record<string, string>} {
  const boundary = `----gristlite-conformance-${parts.length}-${Date.now()}`;
  const chunks: Buffer[] = [];
  for (const p of parts) {
    chunks.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="${p.field ?? 'upload'}"; filename="${p.name}"\r\n` +
          `Content-Type: ${p.type ?? 'application/octet-stream'}\r\n\r\n`,
      ),
    );
    chunks.push(Buffer.from(p.content), Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return {
    body: new Uint8Array(Buffer.concat(chunks)),
    headers: {'content-type': `multipart/form-data; boundary=${boundary}`},
  };
}

export function attachmentsSuite(target: Target): void {
  const s = areaSuite(target, 'attachments');
  const world = useWorld(s, target);
  let doc = '';
  let att = '';
  const upload = (parts: Part[], key = world().chimpy.key) => {
    const {body, headers} = multipart(parts);
    return world().api.call('POST', att, {key, body, headers});
  };

  s('upload: ids in order, one multipart request or several (item 25)', async () => {
    const {api, chimpy} = world();
    doc = await world().newDoc(chimpy, await world().homeWs(chimpy), 'Files');
    att = `/api/docs/${doc}/attachments`;
    assert.equal(
      ok(
        await upload([
          {name: 'hello.doc', content: 'foobar'},
          {name: 'world.jpg', content: '123456'},
        ]),
      ).body,
      [1, 2],
    );
    assert.equal(ok(await upload([{name: 'hello.png', content: 'abcdef'}])).body, [3]);
    assert.equal(ok(await api.get(`${att}/store`, chimpy.as)).body, {type: 'internal'});
  });

  s('list: three fields, filter/sort/limit in the query or X-Sort/X-Limit', async () => {
    const {api, chimpy} = world();
    const all = ok(await api.get(att, chimpy.as)).body.records;
    assert.equal(
      all.map((r: any) => [r.id, Object.keys(r.fields).sort(), r.fields.fileName, r.fields.fileSize]),
      [
        [1, ['fileName', 'fileSize', 'timeUploaded'], 'hello.doc', 6],
        [2, ['fileName', 'fileSize', 'timeUploaded'], 'world.jpg', 6],
        [3, ['fileName', 'fileSize', 'timeUploaded'], 'hello.png', 6],
      ],
    );
    for (const r of all) assert.match(r.fields.timeUploaded, ISO_DATE);
    const sorted = ok(await api.get(`${att}?sort=-fileName&limit=2`, chimpy.as)).body.records;
    assert.equal(
      sorted.map((r: any) => ({id: r.id, fileName: r.fields.fileName, fileSize: r.fields.fileSize})),
      [
        {id: 2, fileName: 'world.jpg', fileSize: 6},
        {id: 3, fileName: 'hello.png', fileSize: 6},
      ],
    );
    const viaHeaders = ok(await api.get(att, {...chimpy.as, headers: {'x-sort': '-fileName', 'x-limit': '2'}})).body
      .records;
    assert.equal(viaHeaders, sorted);
    // A flag Grist does not know is ignored, as for records (Grist 1.7.17 recorded `Age:emptyFirst`).
    const unknownFlag = ok(await api.get(`${att}?sort=-fileName:emptyFirst&limit=2`, chimpy.as)).body.records;
    assert.equal(unknownFlag, sorted);
    const filtered = ok(
      await api.get(`${att}?filter=${encodeURIComponent(JSON.stringify({fileName: ['hello.doc']}))}`, chimpy.as),
    ).body.records;
    assert.equal(
      filtered.map((r: any) => r.id),
      [1],
    );
    isError(await api.get(`${att}?limit=abc`, chimpy.as), 400, 'limit is not a number');
  });

  s('metadata and download: headers, inline, name; 404 and 400 (item 25)', async () => {
    const {api, chimpy} = world();
    const meta = ok(await api.get(`${att}/2`, chimpy.as)).body;
    assert.equal(Object.keys(meta).sort(), ['fileName', 'fileSize', 'timeUploaded']);
    assert.equal([meta.fileName, meta.fileSize], ['world.jpg', 6]);
    assert.match(meta.timeUploaded, ISO_DATE);
    const dl = ok(await api.get(`${att}/2/download`, chimpy.as));
    assert.is(dl.headers['content-type'], 'image/jpeg');
    assert.is(dl.headers['content-disposition'], 'attachment; filename="world.jpg"');
    assert.is(dl.headers['cache-control'], 'private, max-age=3600');
    assert.is(dl.headers['content-security-policy'], "sandbox; default-src 'none'");
    assert.is(dl.text, '123456');
    const doc1 = ok(await api.get(`${att}/1/download`, chimpy.as));
    assert.equal(
      [doc1.headers['content-type'], doc1.headers['content-disposition'], doc1.text],
      ['application/msword', 'attachment; filename="hello.doc"', 'foobar'],
    );
    assert.is(
      ok(await api.get(`${att}/2/download?inline=1`, chimpy.as)).headers['content-disposition'],
      'inline; filename="world.jpg"',
    );
    assert.is(
      ok(await api.get(`${att}/2/download?name=photo.jpg`, chimpy.as)).headers['content-disposition'],
      'attachment; filename="photo.jpg"',
    );
    isError(await api.get(`${att}/22`, chimpy.as), 404, 'Attachment not found: 22');
    isError(await api.get(`${att}/22/download`, chimpy.as), 404, 'Attachment not found: 22');
    isError(await api.get(`${att}/moo`, chimpy.as), 400, 'attId parameter cannot be understood as an integer: moo');
    isError(
      await api.get(`${att}/moo/download`, chimpy.as),
      400,
      'attId parameter cannot be understood as an integer: moo',
    );
    isError(
      await api.get(`${att}/2?tableId=Table1`, chimpy.as),
      400,
      'define all of tableId, colId and rowId, or none.',
    );
  });

  s('storage: one file per content and extension; the ident is sha1 + ext; extension guessing', async () => {
    const {api, chimpy} = world();
    const sha1 = (c: string) => createHash('sha1').update(c).digest('hex');
    const meta = ok(await api.get(`${tablePath(doc, '_grist_Attachments')}/data`, chimpy.as)).body;
    assert.equal(meta.fileIdent, [`${sha1('foobar')}.doc`, `${sha1('123456')}.jpg`, `${sha1('abcdef')}.png`]);
    assert.equal(meta.fileSize, [6, 6, 6]);
    const files = async () =>
      ok(
        await api.get(
          `/api/docs/${doc}/sql?q=${encodeURIComponent('select count(*) as n from _gristsys_Files')}`,
          chimpy.as,
        ),
      ).body.records[0].fields.n;
    assert.is(await files(), 3);
    assert.equal(ok(await upload([{name: 'again.jpg', content: '123456'}])).body, [4]);
    assert.is(await files(), 3, 'the same content and extension is stored once');
    // A valid part Content-Type names the extension when the file name has none; a bogus one is ignored.
    assert.equal(
      ok(
        await upload([
          {name: 'foo', content: '%PDF-1.4 x', type: 'application/pdf'},
          {name: 'pic.png', content: 'zz', type: 'invalid/content-type'},
        ]),
      ).body,
      [5, 6],
    );
    const pdf = ok(await api.get(`${att}/5/download`, chimpy.as));
    assert.equal(
      [pdf.headers['content-type'], pdf.headers['content-disposition']],
      ['application/pdf', 'attachment; filename="foo.pdf"'],
    );
    assert.is(ok(await api.get(`${att}/6/download`, chimpy.as)).headers['content-type'], 'image/png');
  });

  s('Attachments cells hold ids; typed form; the upload itself attaches nothing', async () => {
    const {api, chimpy} = world();
    ok(
      await api.post(
        `/api/docs/${doc}/tables`,
        {tables: [{id: 'Docs', columns: [{id: 'Files', fields: {type: 'Attachments'}}]}]},
        chimpy.as,
      ),
    );
    const t = tablePath(doc, 'Docs');
    ok(await api.post(`${t}/records`, {records: [{fields: {Files: ['L', 1, 2]}}, {}]}, chimpy.as));
    assert.equal(ok(await api.get(`${t}/records`, chimpy.as)).body.records, [
      {id: 1, fields: {Files: ['L', 1, 2]}},
      {id: 2, fields: {Files: null}},
    ]);
    assert.equal(ok(await api.get(`${t}/records?cellFormat=typed`, chimpy.as)).body.records[0].fields.Files, [
      'r',
      '_grist_Attachments',
      [1, 2],
    ]);
  });

  s('upload errors: 415, missing payload, access', async () => {
    const {api, chimpy, kiwi} = world();
    const notMultipart = await api.call('POST', att, {
      ...chimpy.as,
      body: 'hello',
      headers: {'content-type': 'text/plain'},
    });
    assert.is(notMultipart.status, 415, notMultipart.text);
    const json = await api.post(att, {upload: 'x'}, chimpy.as);
    assert.is(json.status, 415, json.text);
    isError(await upload([{name: 'x.txt', content: 'x', field: 'other'}]), 400, 'missing payload');
    isError(await upload([{name: 'x.txt', content: 'x'}], kiwi.key), 403, 'No view access');
    isError(await api.get(att, kiwi.as), 403, 'No view access');
    isError(await api.get(`${att}/1/download`, kiwi.as), 403, 'No view access');
    await world().share(chimpy, `/api/docs/${doc}`, {[kiwi.email]: 'viewers'});
    isError(await upload([{name: 'x.txt', content: 'x'}], kiwi.key), 403, 'No write access');
    assert.is(ok(await api.get(`${att}/1/download`, kiwi.as)).text, 'foobar', 'viewers download');
    await world().share(chimpy, `/api/docs/${doc}`, {[kiwi.email]: null});
    assert.is(ok(await api.get(att, chimpy.as)).body.records.length, 6, 'failed uploads added nothing');
  });

  s('download: non-ASCII names as RFC 6266 filename* with an ASCII fallback (decision)', async () => {
    const {api, chimpy} = world();
    const [id] = ok(await upload([{name: 'résumé 日本.txt', content: 'hi'}])).body;
    assert.is(ok(await api.get(`${att}/${id}`, chimpy.as)).body.fileName, 'résumé 日本.txt');
    const dl = ok(await api.get(`${att}/${id}/download`, chimpy.as));
    assert.is(
      dl.headers['content-disposition'],
      'attachment; filename="resume ??.txt"; filename*=UTF-8\'\'r%C3%A9sum%C3%A9%20%E6%97%A5%E6%9C%AC.txt',
    );
    assert.is(
      ok(await api.get(`${att}/${id}/download?name=${encodeURIComponent('café.txt')}`, chimpy.as)).headers[
        'content-disposition'
      ],
      'attachment; filename="cafe.txt"; filename*=UTF-8\'\'caf%C3%A9.txt',
    );
  });

  s('attachment store endpoints answer as Grist does with no external store (issue 15)', async () => {
    const {api, chimpy, kiwi} = world();
    const status = (summary: string) => ({
      status: {pendingTransferCount: 0, isRunning: false, successes: 0, failures: 0},
      locationSummary: summary,
    });
    assert.equal(ok(await api.get(`${att}/transferStatus`, chimpy.as)).body, status('internal'));
    assert.equal(ok(await api.post(`${att}/transferAll`, {}, chimpy.as)).body, status('internal'));
    assert.equal(ok(await api.get(`${att}/stores`, chimpy.as)).body, {stores: []});
    assert.equal(ok(await api.post(`${att}/store`, {type: 'internal'}, chimpy.as)).body, {});
    isError(
      await api.post(`${att}/store`, {type: 'external'}, chimpy.as),
      400,
      'server is not configured with an external store',
    );
    const bad = await api.post(`${att}/store`, {type: 'cloud'}, chimpy.as);
    assert.is(bad.status, 400);
    assert.equal(bad.body, {
      error: 'Invalid payload',
      details: {userError: 'Error: body.type is none of "internal", "external"'},
    });
    assert.equal(ok(await api.get(`${att}/store`, chimpy.as)).body, {type: 'internal'});
    const empty = await world().newDoc(chimpy, await world().homeWs(chimpy), 'NoFiles');
    assert.equal(ok(await api.get(`/api/docs/${empty}/attachments/transferStatus`, chimpy.as)).body, status('none'));
    // Owners only, except transferStatus (viewers).
    await world().share(chimpy, `/api/docs/${empty}`, {[kiwi.email]: 'editors'});
    ok(await api.get(`/api/docs/${empty}/attachments/transferStatus`, kiwi.as));
    isError(await api.get(`/api/docs/${empty}/attachments/stores`, kiwi.as), 403, 'No owner access');
    isError(await api.post(`/api/docs/${empty}/attachments/transferAll`, {}, kiwi.as), 403, 'No owner access');
    isError(
      await api.post(`/api/docs/${empty}/attachments/store`, {type: 'internal'}, kiwi.as),
      403,
      'No owner access',
    );
  });

  s('updateUsed, removeUnused (?expiredonly, ?verifyfiles) and verifyFiles as Grist has them (issue 15)', async () => {
    const {api, chimpy, kiwi} = world();
    const d = await world().newDoc(chimpy, await world().homeWs(chimpy), 'Unused');
    const base = `/api/docs/${d}/attachments`;
    const up = multipart([
      {name: 'a.txt', content: 'aaa'},
      {name: 'b.txt', content: 'bbb'},
      {name: 'c.txt', content: 'ccc'},
    ]);
    assert.equal(ok(await api.call('POST', base, {key: chimpy.key, ...up})).body, [1, 2, 3]);
    ok(
      await api.post(
        `/api/docs/${d}/tables`,
        {tables: [{id: 'Files', columns: [{id: 'F', fields: {type: 'Attachments'}}]}]},
        chimpy.as,
      ),
    );
    ok(
      await api.post(
        `/api/docs/${d}/tables/Files/records`,
        {records: [{fields: {F: ['L', 1]}}, {fields: {F: ['L', 3, 1]}}]},
        chimpy.as,
      ),
    );
    const sql = async (q: string) =>
      ok(await api.get(`/api/docs/${d}/sql?q=${encodeURIComponent(q)}`, chimpy.as)).body.records.map(
        (r: any) => r.fields,
      );
    const deleted = async () =>
      (await sql('select id, timeDeleted is not null as del from _grist_Attachments order by id')).map((r: any) => [
        r.id,
        r.del,
      ]);
    await world().share(chimpy, `/api/docs/${d}`, {[kiwi.email]: 'editors'});
    const upd = ok(await api.post(`${base}/updateUsed`, {}, kiwi.as));
    assert.is(upd.text, 'null');
    assert.equal(await deleted(), [
      [1, 0],
      [2, 1],
      [3, 0],
    ]);
    ok(await api.post(`/api/docs/${d}/tables/Files/records`, {records: [{fields: {F: ['L', 2]}}]}, chimpy.as));
    ok(await api.post(`${base}/updateUsed`, {}, chimpy.as));
    assert.equal(
      await deleted(),
      [
        [1, 0],
        [2, 0],
        [3, 0],
      ],
      'used again: no longer deleted',
    );
    ok(await api.post(`/api/docs/${d}/tables/Files/data/delete`, [2, 3], chimpy.as));
    isError(await api.post(`${base}/removeUnused`, {}, kiwi.as), 403, 'No owner access');
    isError(await api.post(`${base}/verifyFiles`, {}, kiwi.as), 403, 'No owner access');
    // expiredonly: rows deleted just now are kept.
    assert.is(ok(await api.post(`${base}/removeUnused?expiredonly=1`, {}, chimpy.as)).text, 'null');
    assert.equal(await deleted(), [
      [1, 0],
      [2, 1],
      [3, 1],
    ]);
    assert.is(ok(await api.post(`${base}/removeUnused?verifyfiles=1`, {}, chimpy.as)).text, 'null');
    assert.equal(await deleted(), [[1, 0]]);
    assert.equal(await sql('select count(*) as n from _gristsys_Files'), [{n: 1}]);
    assert.is(ok(await api.post(`${base}/verifyFiles`, {}, chimpy.as)).text, 'null');
    ok(await api.get(`${base}/1/download`, chimpy.as));
  });

  s(
    'GET .../attachments/archive: zip (default) or tar of every attachment, named as Grist names them (issue 15)',
    async () => {
      const {api, chimpy} = world();
      const d = await world().newDoc(chimpy, await world().homeWs(chimpy), 'Archive');
      const base = `/api/docs/${d}/attachments`;
      const up = multipart([
        {name: 'notes.txt', content: 'first file'},
        {name: 'pic', content: 'GIF89a-second', type: 'image/gif'},
      ]);
      assert.equal(ok(await api.call('POST', base, {key: chimpy.key, ...up})).body, [1, 2]);
      const idents = (
        await ok(
          await api.get(
            `/api/docs/${d}/sql?q=${encodeURIComponent('select fileIdent from _grist_Attachments order by id')}`,
            chimpy.as,
          ),
        )
      ).body.records.map((r: any) => r.fields.fileIdent);
      const names = [`${idents[0].split('.')[0]}_notes.txt`, `${idents[1].split('.')[0]}_pic.gif`];
      const zip = ok(await api.get(`${base}/archive`, chimpy.as));
      assert.is(zip.headers['content-type'], 'application/zip');
      assert.is(zip.headers['content-disposition'], 'attachment; filename="Archive-Attachments.zip"');
      assert.is(zip.raw.subarray(0, 4).toString('latin1'), 'PK\u0003\u0004');
      const zipText = zip.raw.toString('latin1');
      for (const n of [...names, 'first file', 'GIF89a-second']) assert.ok(zipText.includes(n), `zip holds ${n}`);
      const tarRes = ok(await api.get(`${base}/archive?format=tar&title=All`, chimpy.as));
      assert.is(tarRes.headers['content-type'], 'application/x-tar');
      assert.is(tarRes.headers['content-disposition'], 'attachment; filename="All.tar"');
      // Two 512-byte headers, each followed by its content padded to 512.
      const t = tarRes.raw;
      const header = (at: number) => [
        t
          .subarray(at, at + 100)
          .toString('latin1')
          .replace(/\0.*$/s, ''),
        parseInt(t.subarray(at + 124, at + 136).toString('latin1'), 8),
      ];
      assert.equal(header(0), [names[0], 10]);
      assert.is(t.subarray(512, 522).toString(), 'first file');
      assert.equal(header(1024), [names[1], 13]);
      assert.is(t.subarray(1536, 1549).toString(), 'GIF89a-second');
      isError(
        await api.get(`${base}/archive?format=rar`, chimpy.as),
        400,
        'format parameter rar should be one of zip,tar',
      );
    },
  );

  s.run();
}
