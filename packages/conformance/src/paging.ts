/**
 * Beyond Grist (issue 30 §1): cursor pagination of GET /records, GET /data and GET /attachments.
 * A limited read that leaves rows out answers `Link: <...&cursor=...>; rel="next"`; following the
 * links gives exactly the rows of one unlimited request, in its order, whatever the sort; writes
 * between pages never repeat a row; a forged or foreign cursor is 400. Bodies stay Grist's.
 */
import * as assert from 'uvu/assert';
import type {ApiResponse} from './client.js';
import {multipart} from './attachments.js';
import {tablePath} from './docdata.js';
import {areaSuite, isErrorLike, ok, useWorld, type Target, type TestUser} from './world.js';

/** The path of a `Link: <path>; rel="next"` header, or null when there is none. */
export function nextOf(res: ApiResponse): string | null {
  const link = res.headers.link;
  if (!link) return null;
  const m = /^<([^>]+)>; rel="next"$/.exec(link);
  assert.ok(m, `a Link with rel="next": ${link}`);
  return m![1];
}

/** Every page from `first` on, following the links (at most `max` pages). */
async function follow(
  get: (path: string, headers?: Record<string, string>) => Promise<ApiResponse>,
  first: string,
  headers?: Record<string, string>,
  max = 200,
): Promise<ApiResponse[]> {
  const pages = [ok(await get(first, headers))];
  for (let next = nextOf(pages[0]); next; next = nextOf(pages[pages.length - 1])) {
    assert.ok(pages.length < max, 'the links end');
    pages.push(ok(await get(next)));
  }
  return pages;
}

// Values chosen to meet every branch of the order: ties, case, nulls, numbers among text, lists.
const NAMES = ['b', 'B', 'a', null, 'a10', 'a2', '', 'c', 'b', null, 'A', 'z', 'a2', '', 'y', 'b'];
const NUMS = [3, null, 1, 2, 2, 2, null, 5, -1, 0, 2.5, 3, 7, null, 1, 4];

export function pagingSuite(target: Target): void {
  const s = areaSuite(target, 'paging');
  const world = useWorld(s, target);
  let doc = '';
  let t = '';
  const get = (path: string, headers?: Record<string, string>) =>
    world().api.call('GET', path, {key: world().chimpy.key, headers});

  s('records: following the links gives the unlimited answer, for every sort', async () => {
    const {api, chimpy} = world();
    doc = await world().newDoc(chimpy, await world().homeWs(chimpy), 'Paging');
    t = tablePath(doc);
    ok(
      await api.post(
        `${t}/columns`,
        {
          columns: [
            {id: 'Name', fields: {type: 'Text'}},
            {id: 'Num', fields: {type: 'Numeric'}},
            {id: 'Any', fields: {type: 'Any'}},
          ],
        },
        chimpy.as,
      ),
    );
    const records = NAMES.map((name, i) => ({
      fields: {Name: name, Num: NUMS[i], Any: i % 3 === 0 ? i : i % 3 === 1 ? `t${i % 5}` : i % 2 === 0},
    }));
    ok(await api.post(`${t}/records`, {records}, chimpy.as));
    // A text value in the numeric column (alt-text) mixes storage classes there.
    ok(await api.patch(`${t}/records`, {records: [{id: 4, fields: {Num: 'n/a'}}]}, chimpy.as));
    const sorts = [
      '',
      'Name',
      '-Name',
      'Num',
      '-Num',
      'Num,-Name',
      'Name:naturalSort',
      '-Name:emptyLast',
      'Any',
      '-Any,id',
    ];
    for (const sort of sorts) {
      const qs = sort ? `sort=${encodeURIComponent(sort)}&` : '';
      const all = ok(await get(`${t}/records?${qs}hidden=true`)).body.records;
      assert.is(all.length, NAMES.length);
      assert.is(ok(await get(`${t}/records?${qs}hidden=true`)).headers.link, undefined, 'no limit: no Link');
      for (const limit of [1, 3, 16]) {
        const pages = await follow(get, `${t}/records?${qs}hidden=true&limit=${limit}`);
        assert.equal(
          pages.flatMap((p) => p.body.records),
          all,
          `sort=${sort} limit=${limit}: the pages make the whole answer`,
        );
        assert.ok(
          pages.every((p) => p.body.records.length === limit || p === pages[pages.length - 1]),
          'full pages',
        );
        assert.is(pages.length, Math.ceil(all.length / limit), `sort=${sort} limit=${limit}: no empty last page`);
        // The first page is exactly Grist's limited answer.
        assert.equal(pages[0].body.records, all.slice(0, limit));
      }
    }
  });

  s('records: the link keeps filter, sort, hidden and cellFormat; X-Limit and X-Sort go into it', async () => {
    const filter = encodeURIComponent(JSON.stringify({Name: ['b', 'a2', null]}));
    const base = `${t}/records?filter=${filter}&sort=-Num&hidden=1&cellFormat=typed`;
    const all = ok(await get(base)).body.records;
    assert.is(all.length, 7);
    const pages = await follow(get, `${base}&limit=2`);
    assert.equal(
      pages.flatMap((p) => p.body.records),
      all,
    );
    const link = nextOf(pages[0])!;
    for (const part of [`filter=`, 'sort=-Num', 'hidden=1', 'cellFormat=typed', 'limit=2', 'cursor=']) {
      assert.ok(link.includes(part), `${part} in ${link}`);
    }
    const viaHeaders = await follow(get, `${t}/records?filter=${filter}&hidden=1&cellFormat=typed`, {
      'X-Limit': '3',
      'X-Sort': '-Num',
    });
    assert.equal(
      viaHeaders.flatMap((p) => p.body.records),
      all,
    );
    assert.ok(nextOf(viaHeaders[0])!.includes('limit=3'));
    // A limit that takes every row, or Grist's negative limit, has no next page.
    assert.is(ok(await get(`${base}&limit=7`)).headers.link, undefined);
    assert.is(ok(await get(`${base}&limit=-2`)).headers.link, undefined);
  });

  s('records: rows added or removed between pages are neither repeated nor lost ahead', async () => {
    const {api, chimpy} = world();
    const before = ok(await get(`${t}/records?sort=Num`)).body.records.map((r: {id: number}) => r.id);
    const page1 = ok(await get(`${t}/records?sort=Num&limit=5`));
    const seen: number[] = page1.body.records.map((r: {id: number}) => r.id);
    // Remove a row already seen and one ahead; add a row ahead of the cursor (the greatest Num).
    const gone = before[8];
    ok(await api.post(`${t}/records/delete`, [seen[0], gone], chimpy.as));
    const added = ok(await api.post(`${t}/records`, {records: [{fields: {Num: 100, Name: 'late'}}]}, chimpy.as));
    const addedId = added.body.records[0].id;
    const rest = await follow(get, nextOf(page1)!);
    const ids = [...seen, ...rest.flatMap((p) => p.body.records.map((r: {id: number}) => r.id))];
    assert.is(new Set(ids).size, ids.length, 'no row twice');
    assert.ok(ids.includes(addedId), 'the row added ahead is reached');
    assert.not.ok(ids.includes(gone), 'the row removed ahead is not');
    const now = ok(await get(`${t}/records?sort=Num`)).body.records.map((r: {id: number}) => r.id);
    assert.equal(ids.slice(seen.length), now.slice(now.indexOf(seen[seen.length - 1]) + 1));
  });

  s('records: a forged, damaged, foreign or empty cursor answers 400', async () => {
    const first = ok(await get(`${t}/records?sort=Name&limit=2`));
    const link = nextOf(first)!;
    const cursor = new URL(link, 'http://x').searchParams.get('cursor')!;
    const flipped = cursor.slice(0, 20) + (cursor[20] === 'A' ? 'B' : 'A') + cursor.slice(21);
    const invalid = /^Invalid cursor/;
    for (const bad of [flipped, 'abc', cursor.slice(0, -2), `${cursor}x`, '%00', '']) {
      const res = await get(`${t}/records?sort=Name&limit=2&cursor=${encodeURIComponent(bad)}`);
      assert.is(res.status, 400, `cursor ${bad}`);
      assert.match(res.body.error, invalid);
    }
    // Another sort or filter than the one it was made for.
    for (const other of [
      `${t}/records?sort=-Name&limit=2`,
      `${t}/records?sort=Name&limit=2&filter=${encodeURIComponent('{"Name":["b"]}')}`,
    ]) {
      const res = await get(`${other}&cursor=${cursor}`);
      assert.is(res.status, 400, other);
      assert.match(res.body.error, invalid);
    }
    // /data reads the same rows in the same order: it follows a /records cursor.
    assert.equal(
      ok(await get(`${t}/data?sort=Name&limit=2&cursor=${cursor}`)).body.id,
      ok(await get(link)).body.records.map((r: {id: number}) => r.id),
    );
    const {api, chimpy} = world();
    const doc2 = await world().newDoc(chimpy, await world().homeWs(chimpy), 'Paging2');
    ok(await api.post(`${tablePath(doc2)}/records`, {records: [{}, {}, {}]}, chimpy.as));
    isErrorLike(await get(`${tablePath(doc2)}/records?sort=Name&limit=2&cursor=${cursor}`), 400, invalid);
    // The attachments list does not take a records cursor.
    isErrorLike(await get(`/api/docs/${doc}/attachments?sort=Name&limit=2&cursor=${cursor}`), 400, invalid);
  });

  s('data: the columnar form pages the same rows', async () => {
    for (const sort of ['', 'Name', '-Num,Name']) {
      const qs = sort ? `sort=${encodeURIComponent(sort)}&` : '';
      const all = ok(await get(`${t}/data?${qs}`)).body;
      const pages = await follow(get, `${t}/data?${qs}limit=3`);
      const ids = pages.flatMap((p) => p.body.id);
      assert.equal(ids, all.id, `sort=${sort}`);
      assert.equal(
        pages.flatMap((p) => p.body.Name),
        all.Name,
      );
    }
  });

  s('access rules: each user pages through exactly the rows they may read', async () => {
    const {chimpy, kiwi} = world();
    await world().share(chimpy, `/api/docs/${doc}`, {[kiwi.email]: 'viewers'});
    // A row rule in Python that SQL cannot express filters in JS, so both paths are met.
    await world().addTableRule(chimpy, doc, 'Table1', 'user.Access != OWNER and rec.Num > rec.id');
    const as = (u: TestUser) => (path: string, headers?: Record<string, string>) =>
      world().api.call('GET', path, {key: u.key, headers});
    for (const u of [chimpy, kiwi]) {
      for (const sort of ['', '-Name', 'Num']) {
        const qs = sort ? `sort=${encodeURIComponent(sort)}&` : '';
        const all = ok(await as(u)(`${t}/records?${qs}`)).body.records;
        const pages = await follow(as(u), `${t}/records?${qs}limit=2`);
        assert.equal(
          pages.flatMap((p) => p.body.records),
          all,
          `${u.email} sort=${sort}`,
        );
      }
    }
    // Sorting on a column the user cannot read is still refused, cursor or not (DA6).
    await world().share(chimpy, `/api/docs/${doc}`, {[kiwi.email]: null});
  });

  s('attachments: the list pages by the same rules', async () => {
    const {api, chimpy} = world();
    const files = await world().newDoc(chimpy, await world().homeWs(chimpy), 'PagedFiles');
    const att = `/api/docs/${files}/attachments`;
    const names = ['b.txt', 'a.txt', 'c.txt', 'a.txt', 'B.txt', 'd.txt', 'a10.txt'];
    const {body, headers} = multipart(names.map((name, i) => ({name, content: 'x'.repeat(i % 3)})));
    ok(await api.call('POST', att, {key: chimpy.key, body, headers}));
    for (const sort of ['', 'fileName', '-fileSize,fileName', 'fileName:naturalSort']) {
      const qs = sort ? `sort=${encodeURIComponent(sort)}&` : '';
      const all = ok(await get(`${att}?${qs}`)).body.records;
      assert.is(all.length, names.length);
      const pages = await follow(get, `${att}?${qs}limit=2`);
      assert.equal(
        pages.flatMap((p) => p.body.records),
        all,
        `sort=${sort}`,
      );
      assert.is(pages.length, 4);
    }
    const cursor = new URL(nextOf(ok(await get(`${att}?limit=2`)))!, 'http://x').searchParams.get('cursor');
    isErrorLike(await get(`${att}?limit=2&sort=fileName&cursor=${cursor}`), 400, /^Invalid cursor/);
  });
  s.run();
}
