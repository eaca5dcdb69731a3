/**
 * Beyond Grist (issue 23 §2): `GET /api/docs/{doc}/changes`, a document's committed changes as
 * Server-Sent Events, through every transport: `ready` first, one `change` per write with its
 * values, filtered by access rules; `Last-Event-ID` resumes (a `reset` when it cannot); a client
 * that hangs up frees its subscription.
 */
import * as assert from 'uvu/assert';
import type {StreamResponse} from './client.js';
import {tablePath} from './docdata.js';
import {areaSuite, isError, isErrorLike, ok, useWorld, type Target} from './world.js';

interface SseEvent {
  id?: string;
  event: string;
  data: any;
}

/** Reads SSE events off a stream (comments skipped), as an EventSource would. */
class Events {
  private buffer = '';
  private readonly queue: SseEvent[] = [];
  constructor(readonly res: StreamResponse) {}

  async next(what: string, ms = 10_000): Promise<SseEvent> {
    const end = Date.now() + ms;
    while (!this.queue.length) {
      const left = end - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${what}`);
      const chunk = await Promise.race([
        this.res.text.next(),
        new Promise<'late'>((r) => setTimeout(() => r('late'), left).unref()),
      ]);
      if (chunk === 'late') throw new Error(`timed out waiting for ${what}`);
      if (chunk.done) throw new Error(`the stream ended while waiting for ${what}`);
      this.buffer += chunk.value;
      let cut = this.buffer.indexOf('\n\n');
      while (cut >= 0) {
        const block = this.buffer.slice(0, cut);
        this.buffer = this.buffer.slice(cut + 2);
        const e: Partial<SseEvent> & {data?: string} = {};
        for (const line of block.split('\n')) {
          if (line.startsWith(':')) continue;
          const [field, ...rest] = line.split(': ');
          const value = rest.join(': ');
          if (field === 'id') e.id = value;
          else if (field === 'event') e.event = value;
          else if (field === 'data') e.data = value;
        }
        if (e.event) this.queue.push({id: e.id, event: e.event, data: JSON.parse(e.data ?? 'null')});
        cut = this.buffer.indexOf('\n\n');
      }
    }
    return this.queue.shift()!;
  }
}

export function changesSuite(target: Target): void {
  const s = areaSuite(target, 'changes');
  const world = useWorld(s, target, {GRISTLITE_FEED_MAX_SUBSCRIBERS: '3', GRISTLITE_FEED_HEARTBEAT_MSEC: '200'});
  let doc = '';
  const changes = () => `/api/docs/${doc}/changes`;

  s('a stream: ready with its position, then one change per write, in order, with values', async () => {
    const {api, chimpy} = world();
    doc = await world().newDoc(chimpy, await world().homeWs(chimpy), 'Live');
    const res = await api.stream(changes(), chimpy.as);
    const events = new Events(res);
    try {
      assert.is(res.status, 200);
      assert.match(res.headers['content-type'], /^text\/event-stream/);
      assert.is(res.headers['cache-control'], 'no-cache');
      const ready = await events.next('ready');
      assert.is(ready.event, 'ready');
      assert.is(ready.data.id, ready.id);
      const rows = `${tablePath(doc)}/records`;
      ok(await api.post(rows, {records: [{fields: {A: 'one'}}, {fields: {A: 'two'}}]}, chimpy.as));
      ok(await api.patch(rows, {records: [{id: 2, fields: {B: 5}}]}, chimpy.as));
      const added = await events.next('the add');
      assert.is(added.event, 'change');
      assert.is(added.id, added.data.id);
      assert.equal(
        added.data.tables.map((t: any) => [t.tableId, t.added.map((r: any) => [r.id, r.fields.A])]),
        [
          [
            'Table1',
            [
              [1, 'one'],
              [2, 'two'],
            ],
          ],
        ],
      );
      assert.is(added.data.actor.email, chimpy.email);
      const updated = await events.next('the update');
      // Updated rows carry the old values of the columns set (D106).
      assert.equal(updated.data.tables[0].updated, [{id: 2, fields: {B: 5}, previous: {B: null}}]);
      assert.equal(updated.data.tables[0].columns, ['B']);
      // Heartbeats keep an idle stream alive without events (comments, skipped by clients).
      await new Promise((r) => setTimeout(r, 450));
      ok(await api.post(rows, {records: [{fields: {A: 'three'}}]}, chimpy.as));
      assert.is((await events.next('the third add')).data.tables[0].added[0].fields.A, 'three');
    } finally {
      res.close();
    }
  });

  s('Last-Event-ID resumes after an event; an unknown one starts with a reset', async () => {
    const {api, chimpy} = world();
    const first = await api.stream(changes(), chimpy.as);
    const events = new Events(first);
    const rows = `${tablePath(doc)}/records`;
    await events.next('ready');
    ok(await api.post(rows, {records: [{fields: {A: 'r1'}}]}, chimpy.as));
    ok(await api.post(rows, {records: [{fields: {A: 'r2'}}]}, chimpy.as));
    const e1 = await events.next('r1');
    const e2 = await events.next('r2');
    first.close();
    const again = await api.stream(changes(), {...chimpy.as, headers: {'Last-Event-ID': e1.id!}});
    try {
      const replay = new Events(again);
      assert.is((await replay.next('ready')).event, 'ready');
      const got = await replay.next('the replayed r2');
      assert.equal([got.id, got.data.tables[0].added[0].fields.A], [e2.id, 'r2']);
    } finally {
      again.close();
    }
    const lost = await api.stream(`${changes()}?lastEventId=nope.7`, chimpy.as);
    try {
      const ev = new Events(lost);
      await ev.next('ready');
      const reset = await ev.next('a reset');
      assert.is(reset.event, 'reset');
      assert.is(reset.data.kind, 'reset');
      assert.type(reset.data.reason, 'string');
    } finally {
      lost.close();
    }
  });

  s('access: viewers may subscribe, others get 403; rules hide rows; bad ids 400; unknown doc 404', async () => {
    const {api, chimpy, kiwi, charon} = world();
    await world().share(chimpy, `/api/docs/${doc}`, {[kiwi.email]: 'viewers'});
    isError(await api.get(changes(), charon.as), 403, 'No view access');
    isError(await api.get('/api/docs/nosuchdoc/changes', chimpy.as), 404, 'document not found');
    isError(
      await api.get(changes(), {...chimpy.as, headers: {'Last-Event-ID': 'x'.repeat(101)}}),
      400,
      'Last-Event-ID must be an event id this stream sent',
    );
    await world().addTableRule(chimpy, doc, 'Table1', 'user.Access != OWNER and rec.A != "public"');
    const res = await api.stream(changes(), kiwi.as);
    try {
      const events = new Events(res);
      await events.next('ready');
      const rows = `${tablePath(doc)}/records`;
      ok(await api.post(rows, {records: [{fields: {A: 'secret'}}, {fields: {A: 'public'}}]}, chimpy.as));
      const got = await events.next('the public row');
      assert.equal(
        got.data.tables[0].added.map((r: any) => r.fields.A),
        ['public'],
      );
      assert.not.ok(JSON.stringify(got.data).includes('secret'));
    } finally {
      res.close();
    }
  });

  s('previous values (D106) follow the rules: hidden columns never, rows coming into or out of view none', async () => {
    const {api, chimpy, kiwi} = world();
    const d = await world().newDoc(chimpy, await world().homeWs(chimpy), 'Previous');
    await world().share(chimpy, `/api/docs/${d}`, {[kiwi.email]: 'viewers'});
    const rows = `${tablePath(d)}/records`;
    ok(
      await api.post(
        rows,
        {records: [{fields: {A: 'public', B: 1, C: 'c1'}}, {fields: {A: 'private', B: 2}}]},
        chimpy.as,
      ),
    );
    ok(
      await api.post(
        `/api/docs/${d}/apply`,
        [
          ['AddRecord', '_grist_ACLResources', -1, {tableId: 'Table1', colIds: 'C'}],
          ['AddRecord', '_grist_ACLResources', -2, {tableId: 'Table1', colIds: '*'}],
          [
            'AddRecord',
            '_grist_ACLRules',
            null,
            {resource: -1, aclFormula: 'user.Access != OWNER', permissionsText: '-R'},
          ],
          [
            'AddRecord',
            '_grist_ACLRules',
            null,
            {resource: -2, aclFormula: 'user.Access != OWNER and rec.A != "public"', permissionsText: '-R'},
          ],
        ],
        chimpy.as,
      ),
    );
    const mine = await api.stream(`/api/docs/${d}/changes`, chimpy.as);
    const theirs = await api.stream(`/api/docs/${d}/changes`, kiwi.as);
    try {
      const owner = new Events(mine);
      const viewer = new Events(theirs);
      await owner.next('ready');
      await viewer.next('ready');
      ok(await api.patch(rows, {records: [{id: 1, fields: {B: 10, C: 'c2'}}]}, chimpy.as));
      ok(await api.patch(rows, {records: [{id: 2, fields: {A: 'public', B: 20}}]}, chimpy.as));
      ok(await api.patch(rows, {records: [{id: 1, fields: {A: 'private', B: 30}}]}, chimpy.as));
      const o = [await owner.next('1'), await owner.next('2'), await owner.next('3')].map((e) => e.data.tables[0]);
      assert.equal(o[0].updated, [{id: 1, fields: {B: 10, C: 'c2'}, previous: {B: 1, C: 'c1'}}]);
      assert.equal(o[1].updated, [{id: 2, fields: {A: 'public', B: 20}, previous: {A: 'private', B: 2}}]);
      const v = [await viewer.next('1'), await viewer.next('2'), await viewer.next('3')].map((e) => e.data.tables[0]);
      // C is hidden: neither its new nor its old value.
      assert.equal(v[0].updated, [{id: 1, fields: {B: 10}, previous: {B: 1}}]);
      // Row 2 comes into view: whole, as added, with no previous values (they were not readable).
      assert.equal(v[1].added, [{id: 2, fields: {A: 'public', B: 20}}]);
      assert.equal(v[1].updated, []);
      // Row 1 leaves it: removed, nothing of its values.
      assert.equal([v[2].added, v[2].updated, v[2].removed], [[], [], [1]]);
      const json = JSON.stringify(v);
      for (const leak of ['c1', 'c2', 'private', '"C"']) assert.not.ok(json.includes(leak), leak);
    } finally {
      mine.close();
      theirs.close();
    }
  });

  s(
    'table and where (D123): one table, rows as each write left them; entering arrives as added, leaving as removed',
    async () => {
      const {api, chimpy} = world();
      const d = await world().newDoc(chimpy, await world().homeWs(chimpy), 'Where');
      ok(await api.post(`/api/docs/${d}/tables`, {tables: [{id: 'Other', columns: [{id: 'X'}]}]}, chimpy.as));
      const base = `/api/docs/${d}/changes`;
      isErrorLike(await api.get(`${base}?where=${encodeURIComponent('$B > 5')}`, chimpy.as), 400, /needs the table/);
      isErrorLike(await api.get(`${base}?table=Nope&where=True`, chimpy.as), 404, /Nope/);
      isErrorLike(
        await api.get(`${base}?table=Table1&where=${encodeURIComponent('$B >')}`, chimpy.as),
        400,
        /SyntaxError/,
      );
      isErrorLike(await api.get(`${base}?table=Table1&where=${encodeURIComponent('$Nope')}`, chimpy.as), 400, /Nope/);
      const res = await api.stream(`${base}?table=Table1&where=${encodeURIComponent('$B > 5')}`, chimpy.as);
      try {
        const events = new Events(res);
        await events.next('ready');
        const rows = `${tablePath(d)}/records`;
        ok(await api.post(rows, {records: [{fields: {A: 'low', B: 1}}, {fields: {A: 'high', B: 10}}]}, chimpy.as));
        const first = (await events.next('the add')).data.tables;
        assert.equal(first.length, 1);
        assert.equal(
          first[0].added.map((r: any) => [r.id, r.fields.A]),
          [[2, 'high']],
        );
        // Row 1 enters the condition: whole, as added; row 2 leaves it: removed.
        ok(await api.patch(rows, {records: [{id: 1, fields: {B: 7}}]}, chimpy.as));
        ok(await api.patch(rows, {records: [{id: 2, fields: {B: 2}}]}, chimpy.as));
        const entered = (await events.next('row 1 enters')).data.tables[0];
        assert.equal(
          [entered.added.map((r: any) => [r.id, r.fields.A, r.fields.B]), entered.updated],
          [[[1, 'low', 7]], []],
        );
        const left = (await events.next('row 2 leaves')).data.tables[0];
        assert.equal([left.added, left.updated, left.removed], [[], [], [2]]);
        // Another table's write, and a row that does not match: nothing; then a match arrives.
        ok(await api.post(`${tablePath(d, 'Other')}/records`, {records: [{fields: {X: 'x'}}]}, chimpy.as));
        ok(await api.post(rows, {records: [{fields: {A: 'still low', B: 3}}]}, chimpy.as));
        ok(await api.post(rows, {records: [{fields: {A: 'next', B: 6}}]}, chimpy.as));
        const next = (await events.next('the next match')).data.tables;
        assert.equal(
          next.map((t: any) => [t.tableId, t.added.map((r: any) => r.fields.A)]),
          [['Table1', ['next']]],
        );
      } finally {
        res.close();
      }
      // Under rules (D113): a hidden column cannot be named; rows the viewer cannot read never arrive.
      const {kiwi} = world();
      await world().share(chimpy, `/api/docs/${d}`, {[kiwi.email]: 'viewers'});
      await world().addTableRule(chimpy, d, 'Table1', 'user.Access != OWNER', '-R', 'C');
      await world().addTableRule(chimpy, d, 'Table1', 'user.Access != OWNER and rec.A == "secret"');
      isErrorLike(await api.get(`${base}?table=Table1&where=${encodeURIComponent('$C')}`, kiwi.as), 400, /C/);
      const theirs = await api.stream(`${base}?table=Table1&where=${encodeURIComponent('$B > 5')}`, kiwi.as);
      try {
        const events = new Events(theirs);
        await events.next('ready');
        const rows = `${tablePath(d)}/records`;
        const two = {records: [{fields: {A: 'secret', B: 50, C: 'c'}}, {fields: {A: 'open', B: 60, C: 'c'}}]};
        ok(await api.post(rows, two, chimpy.as));
        const got = (await events.next('the readable match')).data.tables[0];
        assert.equal(
          got.added.map((r: any) => [r.fields.A, r.fields.B, 'C' in r.fields]),
          [['open', 60, false]],
        );
      } finally {
        theirs.close();
      }
    },
  );

  s('a client that hangs up frees its subscription (at most 3 at once here)', async () => {
    const {api, chimpy} = world();
    for (let i = 0; i < 8; i++) {
      const res = await api.stream(changes(), chimpy.as);
      assert.is(res.status, 200, `stream ${i}`);
      await new Events(res).next('ready');
      res.close();
      // Freed once the server notices (at once, or at the next heartbeat).
      const end = Date.now() + 10_000;
      let probe = await api.stream(changes(), chimpy.as);
      const held: StreamResponse[] = [probe];
      while (Date.now() < end) {
        if (probe.status === 200) break;
        await new Promise((r) => setTimeout(r, 50));
        probe = await api.stream(changes(), chimpy.as);
        held.push(probe);
      }
      assert.is(probe.status, 200, `a slot came free after stream ${i}`);
      for (const h of held) h.close();
    }
    // While three are open, a fourth is refused with Grist's error body.
    const open = [];
    for (let i = 0; i < 3; i++) {
      let res = await api.stream(changes(), chimpy.as);
      const end = Date.now() + 10_000;
      while (res.status !== 200 && Date.now() < end) {
        res.close();
        await new Promise((r) => setTimeout(r, 50));
        res = await api.stream(changes(), chimpy.as);
      }
      assert.is(res.status, 200);
      await new Events(res).next('ready');
      open.push(res);
    }
    const refused = await api.get(changes(), chimpy.as);
    isError(refused, 503, 'Too many change subscriptions (3, GRISTLITE_FEED_MAX_SUBSCRIBERS); try again later');
    for (const r of open) r.close();
  });

  s.run();
}
