/**
 * Beyond Grist (issue 23): a document's committed changes as Server-Sent Events. Each event is
 * one write, filtered by what the caller may read (core feed/); `Last-Event-ID` (or `?lastEventId=`,
 * for clients that cannot set headers) resumes after an event the server still keeps, else the
 * stream starts with a `reset`. Comments are sent every GRISTLITE_FEED_HEARTBEAT_MSEC so that
 * proxies and the caller notice a dead connection. `table` keeps one table's changes; with
 * `where`, only its rows a condition holds for (D123).
 */
import {BadRequest, type DocChange, type Subscription} from '@gristlite/core/internal';
import type {Route} from '../route.js';
import {RawResponse} from '../types.js';
import {docRoute, linkKeys} from './doc-common.js';

const encoder = new TextEncoder();

/** One SSE message (`data` is one line of JSON, so it needs no splitting). */
function message(event: string, data: unknown, id?: string): Uint8Array {
  return encoder.encode(`${id !== undefined ? `id: ${id}\n` : ''}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

/**
 * The stream: `ready` with the position subscribed at, then each change as it commits. Produced
 * only as fast as the client reads (the adapters pull); a subscriber too far behind gets a reset.
 * Ends (with `end`) when the subscription does; the client going away closes the subscription.
 */
async function* events(sub: Subscription, heartbeatMs: number): AsyncGenerator<Uint8Array> {
  const changes = sub[Symbol.asyncIterator]();
  try {
    // The client's own reconnection delay, and the position to resume from if nothing changes.
    yield encoder.encode('retry: 2000\n');
    yield message('ready', {id: sub.lastEventId}, sub.lastEventId);
    let next = changes.next();
    for (;;) {
      let timer: NodeJS.Timeout | undefined;
      const beat = new Promise<'beat'>((r) => {
        timer = setTimeout(() => r('beat'), heartbeatMs);
      });
      const got = await Promise.race([next, beat]);
      clearTimeout(timer);
      if (got === 'beat') {
        yield encoder.encode(': keep-alive\n\n');
        continue;
      }
      if (got.done) {
        yield message('end', {reason: await sub.ended});
        return;
      }
      const change: DocChange = got.value;
      yield message(change.kind, change, change.id);
      next = changes.next();
    }
  } finally {
    sub.close();
  }
}

/**
 * The stream as the adapters take it. Its `return()` closes the subscription even when the
 * generator never started (a client gone before the first read), which a generator's own
 * `finally` would not see.
 */
function stream(sub: Subscription, heartbeatMs: number): AsyncIterable<Uint8Array> {
  const gen = events(sub, heartbeatMs);
  return {
    [Symbol.asyncIterator]: () => ({
      next: () => gen.next(),
      return: (value?: unknown) => {
        sub.close();
        return gen.return(value as undefined);
      },
    }),
  };
}

export const changeRoutes: Route[] = [
  docRoute({
    method: 'GET',
    path: '/api/docs/:docId/changes',
    tag: 'changes',
    summary:
      'Beyond Grist: committed changes as Server-Sent Events, filtered by access rules; Last-Event-ID resumes (viewers)',
    need: 'viewers',
    query: ['table', 'where', 'lastEventId'],
    handler: async (ctx, {doc, role}) => {
      const after = ctx.headers['last-event-id'] ?? ctx.query.get('lastEventId') ?? undefined;
      if (after !== undefined && (after.length > 100 || !/^[\x21-\x7e]*$/.test(after))) {
        throw new BadRequest('Last-Event-ID must be an event id this stream sent');
      }
      const headers = {
        'Content-Type': 'text/event-stream; charset=utf-8',
        'Cache-Control': 'no-cache',
        // Proxies that buffer answers (nginx) would hold events back.
        'X-Accel-Buffering': 'no',
      };
      if (ctx.method === 'HEAD') return new RawResponse(200, null, headers);
      const tableId = ctx.query.get('table') ?? undefined;
      const where = ctx.query.get('where') ?? undefined;
      const sub = ctx.engine.subscribeChanges(doc, ctx.principal, role, ctx.org, {
        after: after || undefined,
        linkKey: linkKeys(ctx),
        tableId,
        where,
      });
      return new RawResponse(200, stream(sub, ctx.engine.feeds.settings.heartbeatMs), headers);
    },
  }),
];
