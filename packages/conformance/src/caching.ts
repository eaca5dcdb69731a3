/**
 * Beyond Grist (issue 28, D66): HTTP revalidation of reads of document data. Each read answers a
 * strong ETag and `Cache-Control: private, no-cache`; the same read with `If-None-Match` naming it
 * answers 304 with no body until anything in the document changes; another user, another query or
 * another sort header never shares a tag, so an answer filtered by access rules is never another
 * user's.
 */
import * as assert from 'uvu/assert';
import type {ApiResponse} from './client.js';
import {tablePath} from './docdata.js';
import {areaSuite, ok, useWorld, type Target, type TestUser} from './world.js';

export function cachingSuite(target: Target): void {
  const s = areaSuite(target, 'caching');
  const world = useWorld(s, target);
  let doc = '';
  let t = '';

  const get = (u: TestUser, path: string, headers: Record<string, string> = {}): Promise<ApiResponse> =>
    world().api.call('GET', path, {key: u.key, headers});

  /** A 200 with a strong ETag and `private, no-cache`; returns the tag. */
  function tagged(res: ApiResponse, what: string): string {
    ok(res, what);
    const etag = res.headers.etag;
    assert.match(etag ?? '', /^"[A-Za-z0-9_-]+"$/, `${what}: a strong ETag`);
    assert.is(res.headers['cache-control'], 'private, no-cache', `${what}: Cache-Control`);
    return etag!;
  }

  /** A 304 with the same tag and no body. */
  function notModified(res: ApiResponse, etag: string, what: string): void {
    assert.is(res.status, 304, `${what}: 304, got ${res.status} ${res.text.slice(0, 200)}`);
    assert.is(res.headers.etag, etag, `${what}: the same ETag`);
    assert.is(res.text, '', `${what}: no body`);
  }

  s('every data read answers an ETag, and 304 to a matching If-None-Match until the document changes', async () => {
    const {api, chimpy} = world();
    doc = await world().newDoc(chimpy, await world().homeWs(chimpy), 'Cached');
    t = tablePath(doc, 'Table1');
    ok(await api.post(`${t}/records`, {records: [{fields: {A: 'x', B: 1}}, {fields: {A: 'y', B: 2}}]}, chimpy.as));
    const csv = `/api/docs/${doc}/download/csv?tableId=Table1`;
    const reads = [
      `/api/docs/${doc}/tables`,
      `${t}/columns`,
      `${t}/records`,
      `${t}/data`,
      `/api/docs/${doc}/attachments`,
      csv,
      `/api/docs/${doc}/download/table-schema?tableId=Table1`,
    ];
    const tags = new Map<string, string>();
    for (const path of reads) {
      const first = await get(chimpy, path);
      const etag = tagged(first, path);
      tags.set(path, etag);
      notModified(await get(chimpy, path, {'if-none-match': etag}), etag, path);
      // Weak comparison (W/), lists and `*` match too; another tag does not.
      notModified(await get(chimpy, path, {'if-none-match': `"other", W/${etag}`}), etag, `${path} W/ in a list`);
      notModified(await get(chimpy, path, {'if-none-match': '*'}), etag, `${path} *`);
      assert.is((await get(chimpy, path, {'if-none-match': '"other"'})).status, 200, `${path}: another tag`);
    }
    // A write changes every tag at once, and the answer is the new data.
    ok(await api.patch(`${t}/records`, {records: [{id: 1, fields: {A: 'changed'}}]}, chimpy.as));
    for (const path of reads) {
      const res = await get(chimpy, path, {'if-none-match': tags.get(path)!});
      assert.is(res.status, 200, `${path}: after a write`);
      assert.not.equal(tagged(res, path), tags.get(path), `${path}: a new tag after a write`);
    }
    const fresh = ok(await get(chimpy, `${t}/records`, {'if-none-match': tags.get(`${t}/records`)!}));
    assert.equal(fresh.body.records[0].fields.A, 'changed');
    // A schema change changes the columns' tag.
    const cols = tagged(await get(chimpy, `${t}/columns`), 'columns');
    ok(await api.post(`${t}/columns`, {columns: [{id: 'New', fields: {type: 'Text'}}]}, chimpy.as));
    assert.is((await get(chimpy, `${t}/columns`, {'if-none-match': cols})).status, 200, 'columns after AddColumn');
  });

  s('another query, sort header, limit or user never shares a tag', async () => {
    const {chimpy, kiwi} = world();
    await world().share(chimpy, `/api/docs/${doc}`, {[kiwi.email]: 'viewers'});
    const base = tagged(await get(chimpy, `${t}/records`), 'records');
    const variants: Array<[string, string, Record<string, string>]> = [
      ['sort', `${t}/records?sort=-B`, {}],
      ['limit', `${t}/records?limit=1`, {}],
      ['X-Sort', `${t}/records`, {'x-sort': '-B'}],
      ['X-Limit', `${t}/records`, {'x-limit': '1'}],
    ];
    for (const [what, path, headers] of variants) {
      const etag = tagged(await get(chimpy, path, headers), what);
      assert.not.equal(etag, base, what);
      assert.is((await get(chimpy, `${t}/records`, {'if-none-match': etag})).status, 200, `${what}'s tag`);
    }
    const viewer = tagged(await get(kiwi, `${t}/records`), 'viewer');
    assert.not.equal(viewer, base, "a viewer's tag is their own");
    assert.is((await get(kiwi, `${t}/records`, {'if-none-match': base})).status, 200, "the owner's tag");
    await world().share(chimpy, `/api/docs/${doc}`, {[kiwi.email]: null});
  });

  s('under access rules a user never revalidates against another user whose answer differs', async () => {
    const {chimpy, kiwi} = world();
    await world().share(chimpy, `/api/docs/${doc}`, {[kiwi.email]: 'viewers'});
    await world().addTableRule(chimpy, doc, 'Table1', 'user.Access != OWNER and rec.B > 1');
    const owner = await get(chimpy, `${t}/records`);
    const ownerTag = tagged(owner, 'owner');
    const viewer = await get(kiwi, `${t}/records`);
    const viewerTag = tagged(viewer, 'viewer');
    assert.is(owner.body.records.length, 2);
    assert.is(viewer.body.records.length, 1, 'the rule hides a row from the viewer');
    const crossed = await get(kiwi, `${t}/records`, {'if-none-match': ownerTag});
    assert.is(crossed.status, 200, "the owner's tag does not revalidate the viewer's answer");
    assert.is(crossed.body.records.length, 1);
    notModified(await get(kiwi, `${t}/records`, {'if-none-match': viewerTag}), viewerTag, 'viewer');
    await world().share(chimpy, `/api/docs/${doc}`, {[kiwi.email]: null});
  });
  s('a where condition reading the clock is never revalidated; one that does not is', async () => {
    const {chimpy} = world();
    const path = (where: string) => `${t}/records?where=${encodeURIComponent(where)}`;
    // No write comes between these reads, yet TODAY() moves: a tag would pin yesterday's answer.
    for (const where of ['$B < 5 or TODAY() is None', 'NOW() and $B > 0']) {
      const res = ok(await get(chimpy, path(where)), where);
      assert.is(res.headers.etag, undefined, `${where}: no ETag`);
      assert.is((await get(chimpy, path(where), {'if-none-match': '*'})).status, 200, `${where}: never 304`);
    }
    const plain = path('$B > 0');
    const etag = tagged(await get(chimpy, plain), 'where without the clock');
    notModified(await get(chimpy, plain, {'if-none-match': etag}), etag, 'where without the clock');
  });
  s.run();
}
