/**
 * Beyond Grist (issue 40 §1, D123): `where` conditions of change subscriptions. A condition is
 * evaluated inside each write's transaction on the rows its event carries: as a row was before
 * the write first touched it, and as the write left it. A row entering the condition then arrives
 * as added and one leaving it as removed, as rows do when row rules start or stop letting a
 * subscriber read them. The state at each commit is the only one that can answer: filtering later
 * would read rows as a newer write left them.
 *
 * A condition is kept per table, text and caller, shared by that caller's subscriptions, and stays
 * evaluated for `lingerMs` after its last subscription ended, as the feed's history does, so that
 * a stream resumed with `Last-Event-ID` is filtered as if it had never dropped.
 */
import type {DocGuard} from '../doc/index.js';
import {ServiceUnavailable} from '../base/index.js';

/** One condition the feed evaluates at each write. */
export interface FeedCondition {
  readonly key: string;
  readonly tableId: string;
  readonly where: string;
  /** The caller's rules as they stand (its newest subscription's view). */
  guard: () => DocGuard | null;
  /** Subscriptions using it now. */
  users: number;
  /** When its last subscription ended (it lingers for resumes), or null while it has some. */
  endedAt: number | null;
}

/** The rows of one event a condition holds for: before the write touched them, and after it. */
export interface ConditionMatches {
  before: Set<number>;
  after: Set<number>;
}

/** A document feed's conditions, at most `max` (GRISTLITE_FEED_MAX_CONDITIONS). */
export class FeedConditions {
  private readonly byKey = new Map<string, FeedCondition>();

  constructor(private readonly max: number) {}

  /** Whether any condition is kept (writes then read what conditions need). */
  get size(): number {
    return this.byKey.size;
  }

  /** The conditions on a table. */
  forTable(tableId: string): FeedCondition[] {
    const out: FeedCondition[] = [];
    for (const c of this.byKey.values()) if (c.tableId === tableId) out.push(c);
    return out;
  }

  /** A subscription's condition: the caller's existing one, or a new one (503 beyond the bound). */
  use(identity: string, tableId: string, where: string, guard: () => DocGuard | null): FeedCondition {
    const key = JSON.stringify([tableId, where, identity]);
    let cond = this.byKey.get(key);
    if (!cond) {
      if (this.byKey.size >= this.max) this.dropOldestEnded();
      if (this.byKey.size >= this.max) {
        throw new ServiceUnavailable(
          `Too many change subscriptions with a condition on this document (${this.max}, GRISTLITE_FEED_MAX_CONDITIONS); try again later`,
        );
      }
      cond = {key, tableId, where, guard, users: 0, endedAt: null};
      this.byKey.set(key, cond);
    }
    cond.guard = guard;
    cond.users++;
    cond.endedAt = null;
    return cond;
  }

  /** A subscription using `cond` ended. */
  release(cond: FeedCondition, now: number): void {
    if (--cond.users <= 0) {
      cond.users = 0;
      cond.endedAt = now;
    }
  }

  /** Forgets conditions no subscription has used for `lingerMs`. */
  sweep(now: number, lingerMs: number): void {
    for (const [key, c] of this.byKey) if (c.endedAt !== null && now - c.endedAt >= lingerMs) this.byKey.delete(key);
  }

  private dropOldestEnded(): void {
    let oldest: FeedCondition | null = null;
    for (const c of this.byKey.values()) {
      if (c.endedAt !== null && (!oldest || c.endedAt < oldest.endedAt!)) oldest = c;
    }
    if (oldest) this.byKey.delete(oldest.key);
  }
}
