/**
 * Subscriptions to document change feeds, and the engine's registry of feeds. A subscription is
 * a bounded queue of events filtered for one subscriber; it is read as an `AsyncIterable` or
 * drained into a listener. The registry creates a feed on the first subscription to a document,
 * attaches it whenever the document is open, keeps its history within a byte budget shared by
 * all documents, drops it a while after its last subscriber left, and checks each subscriber's
 * access again every so often. A subscription may ask for one table's changes, and for those of
 * its rows a `where` condition holds for (conditions.ts).
 */
import {randomUUID} from 'node:crypto';
import type {DocGuard} from '../doc/index.js';
import {ServiceUnavailable} from '../base/index.js';
import {DocFeed, type FeedSource, type FeedSubscriber} from './docfeed.js';
import type {FeedCondition} from './conditions.js';
import {carriesRows, type FeedSelection, filterChange, type StoredChange} from './filter.js';
import {type DocChange, type FeedSettings, resetItem} from './types.js';

/** What a subscription needs to know of its subscriber. */
export interface SubscriberAccess {
  /** The subscriber's access rules on the document as open now (null: none apply). */
  guard(): DocGuard | null;
  /** Checks again that the subscriber may still read the document (throws when not). */
  recheck(): Promise<void>;
  /** Who subscribes (user, key, link keys): one caller's subscriptions share a condition. */
  readonly identity?: string;
}

/** Options of a subscription. */
export interface SubscribeOptions {
  /** Resume after this event id (a `DocChange.id`, SSE's `Last-Event-ID`). */
  after?: string;
  /** Receive events in this function (in order, after each commit) instead of iterating. */
  listener?: (change: DocChange) => void;
  /** Beyond Grist: only this table's changes (and `schemaChanged` events). */
  tableId?: string;
  /**
   * Beyond Grist (D123): with `tableId`, only rows this condition (Grist's formula language, as
   * `GET /records?where=`) holds for, as each write left them; rows entering it arrive as added,
   * rows leaving it as removed. Check it first (`GristDoc.checkWhere`): the feed does not.
   */
  where?: string;
}

/** What `SessionDoc.subscribe` and `changes` take: where to resume, and what to select. */
export type ChangesOptions = Pick<SubscribeOptions, 'after' | 'tableId' | 'where'>;

/**
 * One subscriber's view of a document's feed. Iterate it (`for await`) or give a listener;
 * `close()` ends it. It ends by itself when the subscriber loses access, the document is
 * removed or the engine closes (`ended` says why).
 */
export class Subscription implements AsyncIterable<DocChange>, FeedSubscriber {
  /** The id of the last event delivered (at first, the feed's position when subscribed). */
  lastEventId: string;
  private queue: DocChange[] = [];
  private waiter: ((r: IteratorResult<DocChange>) => void) | null = null;
  private endReason: string | null = null;
  private draining = false;
  private resolveEnded!: (reason: string) => void;
  /** Resolves, with the reason, once the subscription has ended. */
  readonly ended: Promise<string> = new Promise((r) => {
    this.resolveEnded = r;
  });

  /** @internal */
  constructor(
    private readonly feed: DocFeed,
    /** @internal */
    readonly access: SubscriberAccess,
    private readonly maxQueued: number,
    private readonly listener: ((change: DocChange) => void) | null,
    private readonly onEnd: (sub: Subscription) => void,
    private readonly onListenerError: (e: unknown) => void,
    /** @internal What it asked for (one table, a condition), or null for everything. */
    readonly select: FeedSelection | null = null,
    /** @internal Its condition, shared with the caller's other subscriptions to the same one. */
    readonly condition: FeedCondition | null = null,
  ) {
    this.lastEventId = feed.position();
  }

  /** The document subscribed to. */
  get docId(): string {
    return this.feed.docId;
  }

  /** Whether the subscription has ended. */
  get isEnded(): boolean {
    return this.endReason !== null;
  }

  /** @internal A committed event, filtered for this subscriber. */
  deliver(stored: StoredChange): void {
    if (this.endReason !== null) return;
    const key = this.select?.key;
    if (key) {
      const failed = stored.failed?.get(key);
      if (failed !== undefined) {
        this.end(`The condition could not be evaluated: ${failed}`);
        return;
      }
      // An event kept from before the condition was first asked (a resume): not filtered by it.
      if (!stored.matched?.has(key) && carriesRows(stored.change, this.select!.tableId)) {
        this.push(
          resetItem(
            stored.change.docId,
            stored.change.id,
            'Changes from before this condition was asked are not filtered by it',
          ),
        );
        return;
      }
    }
    let change: DocChange | null;
    try {
      change = filterChange(stored, this.access.guard(), this.select);
    } catch (e) {
      // Rules that cannot be evaluated (broken rules) deliver nothing: the subscriber is told.
      this.end(`Access rules could not be applied: ${(e as Error).message}`);
      return;
    }
    if (change) this.push(change);
  }

  /** @internal Queues an event (a reset in its place when the subscriber is too far behind). */
  push(change: DocChange): void {
    if (this.queue.length >= this.maxQueued) {
      this.queue = [
        resetItem(
          change.docId,
          change.id,
          `More than ${this.maxQueued} changes waited for this subscriber (GRISTLITE_FEED_QUEUE)`,
        ),
      ];
      return;
    }
    if (this.waiter) {
      const w = this.waiter;
      this.waiter = null;
      this.lastEventId = change.id;
      w({value: change, done: false});
      return;
    }
    this.queue.push(change);
    if (this.listener && !this.draining) {
      this.draining = true;
      queueMicrotask(() => this.drain());
    }
  }

  private drain(): void {
    this.draining = false;
    while (this.queue.length && this.listener) {
      const change = this.queue.shift()!;
      this.lastEventId = change.id;
      try {
        this.listener(change);
      } catch (e) {
        this.onListenerError(e);
      }
    }
  }

  /** @internal The feed ends, or access was lost. */
  end(reason: string): void {
    if (this.endReason !== null) return;
    this.endReason = reason;
    this.onEnd(this);
    this.resolveEnded(reason);
    if (this.waiter && !this.queue.length) {
      const w = this.waiter;
      this.waiter = null;
      w({value: undefined, done: true});
    }
  }

  /** Stops the subscription; events already queued are still given to an iterator. */
  close(): void {
    this.end('closed');
  }

  /** The events, in order; ends with the subscription (leaving a `for await` loop closes it). */
  [Symbol.asyncIterator](): AsyncIterator<DocChange> {
    return {
      next: () => {
        const change = this.queue.shift();
        if (change) {
          this.lastEventId = change.id;
          return Promise.resolve({value: change, done: false});
        }
        if (this.endReason !== null) return Promise.resolve({value: undefined, done: true});
        return new Promise((resolve) => {
          this.waiter = resolve;
        });
      },
      return: () => {
        this.close();
        this.queue = [];
        return Promise.resolve({value: undefined, done: true});
      },
    };
  }
}

/** The engine's change feeds, one per document with subscribers (or lingering for resumes). */
export class ChangeFeeds {
  private readonly feeds = new Map<string, DocFeed>();
  private readonly subscriptions = new Set<Subscription>();
  private readonly timer: NodeJS.Timeout;
  private closed = false;

  constructor(
    readonly settings: FeedSettings,
    /** The document as open now in this process, or null. */
    private readonly openSource: (docId: string) => FeedSource | null,
    private readonly onError: (e: unknown) => void,
  ) {
    this.timer = setInterval(() => void this.sweep(), Math.min(settings.recheckMs, settings.lingerMs, 60_000));
    this.timer.unref();
  }

  /** Subscriptions open now. */
  get size(): number {
    return this.subscriptions.size;
  }

  /**
   * Subscribes to a document's changes from now on (or after `opts.after`, replaying what the
   * history holds, else a reset first). Call with the document open and access checked.
   */
  subscribe(docId: string, access: SubscriberAccess, opts: SubscribeOptions = {}): Subscription {
    if (this.closed) throw new ServiceUnavailable('The engine is closed');
    if (this.subscriptions.size >= this.settings.maxSubscribers) {
      throw new ServiceUnavailable(
        `Too many change subscriptions (${this.settings.maxSubscribers}, GRISTLITE_FEED_MAX_SUBSCRIBERS); try again later`,
      );
    }
    const feed = this.feedFor(docId);
    const condition =
      opts.tableId !== undefined && opts.where !== undefined
        ? // Without an identity, a condition is this subscription's own (never another caller's rules).
          feed.conditions.use(access.identity ?? randomUUID(), opts.tableId, opts.where, access.guard)
        : null;
    const select = opts.tableId !== undefined ? {tableId: opts.tableId, key: condition?.key ?? null} : null;
    const sub = new Subscription(
      feed,
      access,
      this.settings.maxQueued,
      opts.listener ?? null,
      (s) => this.ended(feed, s),
      this.onError,
      select,
      condition,
    );
    if (opts.after !== undefined && opts.after !== feed.position()) {
      const replay = feed.since(opts.after);
      if (Array.isArray(replay)) {
        for (const stored of replay) sub.deliver(stored);
      } else {
        sub.push(resetItem(docId, feed.position(), replay.missed));
      }
    }
    feed.subscribers.add(sub);
    feed.idleSince = null;
    this.subscriptions.add(sub);
    return sub;
  }

  /** The document opened in this process: its feed (if any) captures its writes. */
  opened(docId: string, source: FeedSource): void {
    this.feeds.get(docId)?.attach(source);
  }

  /** The document closed here: nothing to capture until it opens again. */
  closedDoc(docId: string): void {
    this.feeds.get(docId)?.release();
  }

  /** The document's content changed outside any write (replaced): its subscribers get a reset. */
  reset(docId: string, reason: string): void {
    const feed = this.feeds.get(docId);
    if (!feed) return;
    feed.reset(reason);
  }

  /** The document is gone (or no longer served here): its subscriptions end. */
  removed(docId: string, reason = 'The document was removed'): void {
    const feed = this.feeds.get(docId);
    if (!feed) return;
    this.drop(feed, reason);
  }

  /** Ends every subscription (the engine closes). */
  close(): void {
    this.closed = true;
    clearInterval(this.timer);
    for (const feed of [...this.feeds.values()]) this.drop(feed, 'The server is shutting down');
  }

  private feedFor(docId: string): DocFeed {
    let feed = this.feeds.get(docId);
    if (!feed) {
      feed = new DocFeed(docId, this.settings, (f) => this.grew(f));
      this.feeds.set(docId, feed);
      const source = this.openSource(docId);
      if (source) feed.attach(source);
    }
    return feed;
  }

  private ended(feed: DocFeed, sub: Subscription): void {
    this.subscriptions.delete(sub);
    feed.subscribers.delete(sub);
    if (sub.condition) feed.conditions.release(sub.condition, Date.now());
    if (!feed.subscribers.size && this.feeds.get(feed.docId) === feed) feed.idleSince = Date.now();
  }

  private drop(feed: DocFeed, reason: string): void {
    this.feeds.delete(feed.docId);
    feed.close(reason);
  }

  /** A feed kept one more event: all feeds together stay within the byte budget, oldest out first. */
  private grew(_feed: DocFeed): void {
    let total = 0;
    for (const f of this.feeds.values()) total += f.bytes;
    while (total > this.settings.historyBytes) {
      let oldest: DocFeed | null = null;
      for (const f of this.feeds.values()) if (!oldest || f.oldestTime() < oldest.oldestTime()) oldest = f;
      const before = oldest?.bytes ?? 0;
      if (!oldest?.trimOldest()) break;
      total -= before - oldest.bytes;
    }
  }

  private async sweep(): Promise<void> {
    const now = Date.now();
    for (const feed of [...this.feeds.values()]) {
      if (feed.idleSince !== null && now - feed.idleSince >= this.settings.lingerMs) this.drop(feed, 'expired');
      else feed.conditions.sweep(now, this.settings.lingerMs);
    }
    await this.recheckNow();
  }

  /** Checks every subscriber's access again now (the sweep does it every `recheckMs`). */
  async recheckNow(): Promise<void> {
    for (const sub of [...this.subscriptions]) {
      try {
        await sub.access.recheck();
      } catch (e) {
        sub.end((e as Error).message || 'Access to the document was lost');
      }
    }
  }
}
