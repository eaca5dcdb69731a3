/**
 * One document's change feed: captures each committed write of the open document (inside its
 * transaction, published after COMMIT), numbers it, keeps a bounded history for resuming, and
 * hands it to its subscribers. The feed belongs to the engine, not to the open document, so
 * subscribers and history survive the document being closed when idle and opened again.
 */
import {randomBytes} from 'node:crypto';
import type {GristDoc, RowReader, RowValues, WriteSummary} from '../doc/index.js';
import {type ConditionMatches, type FeedCondition, FeedConditions} from './conditions.js';
import {publicFields, type StoredChange} from './filter.js';
import {type ChangedRow, type DocChange, type FeedSettings, resetItem, type TableChanges} from './types.js';

/** What a feed hands events to (subscriptions.ts). */
export interface FeedSubscriber {
  /** An item that needs no filtering (a reset). */
  push(change: DocChange): void;
  /** A committed event, unfiltered (the subscriber filters it for its user). */
  deliver(stored: StoredChange): void;
  /** The feed ends (document removed, engine closed). */
  end(reason: string): void;
}

/** The document a feed is attached to while it is open. */
export interface FeedSource {
  grist: GristDoc;
  /** Whether the document has access rules now (then whole rows are kept to filter by). */
  hasRules(): boolean;
}

export class DocFeed {
  /** Changes with every process start and every new feed: positions of another one are unknown. */
  readonly epoch = randomBytes(6).toString('base64url');
  private seq = 0;
  private readonly history: StoredChange[] = [];
  /** Bytes of `history` (JSON). */
  bytes = 0;
  readonly subscribers = new Set<FeedSubscriber>();
  /** Subscriptions' `where` conditions, evaluated at each write (conditions.ts). */
  readonly conditions: FeedConditions;
  /** When the last subscriber left (the feed lingers for resumes), or null while it has some. */
  idleSince: number | null = null;
  private detach: (() => void) | null = null;

  constructor(
    readonly docId: string,
    private readonly settings: FeedSettings,
    /** Called with the bytes a new event adds (the registry keeps all feeds within budget). */
    private readonly onGrow: (feed: DocFeed) => void,
  ) {
    this.conditions = new FeedConditions(settings.maxConditions);
  }

  /** The position of the newest event (what a new subscriber starts after). */
  position(): string {
    return `${this.epoch}.${this.seq}`;
  }

  /** The oldest event kept, for trimming across feeds. */
  oldestTime(): number {
    return this.history.length ? Date.parse(this.history[0].change.time) : Number.POSITIVE_INFINITY;
  }

  /** Drops the oldest event kept; false when none is left. */
  trimOldest(): boolean {
    const gone = this.history.shift();
    if (!gone) return false;
    this.bytes -= gone.json.length;
    return true;
  }

  /**
   * The events after a position, or a reason they cannot be given (another feed's position, or
   * one older than the history kept).
   */
  since(after: string): StoredChange[] | {missed: string} {
    const m = /^([A-Za-z0-9_-]+)\.(\d+)$/.exec(after);
    if (!m) return {missed: 'Unrecognized event id'};
    if (m[1] !== this.epoch)
      return {missed: 'The event id is from an earlier feed (the server restarted or the feed expired)'};
    const seq = Number(m[2]);
    if (seq > this.seq)
      return {missed: 'The event id is from an earlier feed (the server restarted or the feed expired)'};
    const first = this.history.length ? this.history[0].seq : this.seq + 1;
    if (seq < first - 1) return {missed: 'Changes after this event id are no longer kept'};
    return this.history.filter((s) => s.seq > seq);
  }

  /** Starts capturing the writes of the open document. */
  attach(source: FeedSource): void {
    this.detach?.();
    // Rows as they were before the write: the previous values of updated rows (D106) and, under
    // rules, who could read them. An event carries at most `maxRows` updated and `maxRows`
    // removed rows, so no more are kept; the first capture of a row in a write wins.
    // Conditions are evaluated on the same rows, as they were then (conditions.ts).
    let before: (Before & {seq: number; count: number}) | null = null;
    const unBefore = source.grist.onBeforeRows((tableId, rowIds, writeSeq, read) => {
      if (!this.active || tableId.startsWith('_grist')) return;
      if (before?.seq !== writeSeq)
        before = {seq: writeSeq, rows: new Map(), count: 0, matches: new Map(), failed: new Map()};
      let table = before.rows.get(tableId);
      const wanted = table ? rowIds.filter((id) => !table!.has(id)) : rowIds;
      if (!wanted.length || before.count + wanted.length > 2 * this.settings.maxRows) return;
      if (!table) before.rows.set(tableId, (table = new Map()));
      for (const [id, row] of read(tableId, wanted)) table.set(id, row);
      before.count += wanted.length;
      for (const cond of this.conditions.forTable(tableId)) {
        match(source, cond, wanted, 'before', before.matches, before.failed);
      }
    });
    const unWrite = source.grist.onWrite((write) => {
      if (!this.active) return undefined;
      const rules = source.hasRules();
      const stored = this.capture(source, write, rules, before?.seq === write.writeSeq ? before : null);
      before = null;
      return stored ? () => this.publish(stored) : undefined;
    });
    this.detach = () => {
      unBefore();
      unWrite();
      this.detach = null;
    };
  }

  /** Whether writes are captured: while subscribers listen, or the feed lingers for their return. */
  private get active(): boolean {
    return this.subscribers.size > 0 || this.idleSince !== null;
  }

  /** Stops capturing (the document closed, or the feed is dropped). */
  release(): void {
    this.detach?.();
  }

  /**
   * The document changed outside any write (its content replaced): subscribers get a reset, and
   * no position from before can be resumed from.
   */
  reset(reason: string): void {
    this.history.length = 0;
    this.bytes = 0;
    const item = resetItem(this.docId, this.position(), reason);
    for (const s of this.subscribers) s.push(item);
  }

  /** Ends every subscription (the document is gone or the engine closes). */
  close(reason: string): void {
    this.release();
    for (const s of [...this.subscribers]) s.end(reason);
    this.subscribers.clear();
    this.history.length = 0;
    this.bytes = 0;
  }

  private capture(source: FeedSource, write: WriteSummary, rules: boolean, pre: Before | null): StoredChange | null {
    const before = pre?.rows ?? null;
    const tables: TableChanges[] = [];
    const conditions = this.conditions.size > 0;
    const after = rules || conditions ? new Map<string, Map<number, RowValues>>() : null;
    const matched = conditions ? new Map<string, ConditionMatches>() : null;
    const failed = new Map(pre?.failed ?? []);
    let schemaChanged = false;
    let budget = this.settings.maxRows;
    for (const c of write.changes) {
      if (c.tableId.startsWith('_grist')) {
        // Grist's metadata (and its action history): the structure, not user data.
        if (!c.tableId.startsWith('_gristsys_')) schemaChanged = true;
        continue;
      }
      if (c.tableId.startsWith('_gristlite_')) continue;
      const rows = c.added.length + c.updated.length;
      if (rows > budget || c.removed.length > this.settings.maxRows) {
        tables.push({
          tableId: c.tableId,
          added: [],
          updated: [],
          removed: [],
          columns: c.columns,
          truncated: {added: c.added.length, updated: c.updated.length, removed: c.removed.length},
        });
        continue;
      }
      budget -= rows;
      const added = readChanged(write.read, c.tableId, c.added, null);
      const onTable = conditions ? this.conditions.forTable(c.tableId) : [];
      // Rules and conditions decide on whole rows; a row entering either arrives whole, as added.
      const wholeUpdated = rules || onTable.length || !c.columns ? write.read(c.tableId, c.updated) : null;
      if (after && wholeUpdated) after.set(c.tableId, wholeUpdated);
      for (const cond of onTable) {
        const m = pre?.matches.get(cond.key) ?? {before: new Set<number>(), after: new Set<number>()};
        matched!.set(cond.key, m);
        match(source, cond, [...c.added, ...c.updated], 'after', matched!, failed);
      }
      const updated = wholeUpdated
        ? [...c.updated]
            .sort((a, b) => a - b)
            .flatMap((id) => {
              const row = wholeUpdated.get(id);
              return row ? [{id, fields: pick(row, c.columns)}] : [];
            })
        : readChanged(write.read, c.tableId, c.updated, c.columns);
      const old = before?.get(c.tableId);
      if (old) for (const r of updated) withPrevious(r, old.get(r.id));
      tables.push({
        tableId: c.tableId,
        added,
        updated,
        removed: [...c.removed].sort((a, b) => a - b),
        columns: c.columns,
      });
    }
    if (!tables.length && !schemaChanged) return null;
    const change: DocChange = {
      kind: 'change',
      id: `${this.epoch}.${this.seq + 1}`,
      docId: this.docId,
      time: new Date().toISOString(),
      actor: write.actor,
      schemaChanged,
      tables,
    };
    return {
      seq: this.seq + 1,
      change,
      json: JSON.stringify(change),
      after,
      before: rules ? before : null,
      matched,
      failed: failed.size ? failed : null,
    };
  }

  /** After COMMIT: numbered for good, kept, and handed to subscribers in order. */
  private publish(stored: StoredChange): void {
    this.seq = stored.seq;
    this.history.push(stored);
    this.bytes += stored.json.length;
    while (this.history.length > this.settings.historyEvents) this.trimOldest();
    this.onGrow(this);
    for (const s of this.subscribers) s.deliver(stored);
  }
}

/** What a feed keeps of rows before a write touched them. */
interface Before {
  rows: Map<string, Map<number, RowValues>>;
  matches: Map<string, ConditionMatches>;
  /** Conditions that could not be evaluated, with why (their subscriptions end). */
  failed: Map<string, string>;
}

/**
 * Evaluates a condition on rows as they are now, for its caller, adding those it holds for to
 * `into`; a condition that fails (its time budget, a column gone, rules broken) is noted in
 * `failed` and the write goes on.
 */
function match(
  source: FeedSource,
  cond: FeedCondition,
  ids: number[],
  phase: keyof ConditionMatches,
  into: Map<string, ConditionMatches>,
  failed: Map<string, string>,
): void {
  if (failed.has(cond.key) || !ids.length) return;
  let m = into.get(cond.key);
  if (!m) into.set(cond.key, (m = {before: new Set(), after: new Set()}));
  try {
    for (const id of source.grist.matchingAmong(cond.guard(), cond.tableId, cond.where, ids)) m[phase].add(id);
  } catch (e) {
    failed.set(cond.key, (e as Error).message);
  }
}

function readChanged(read: RowReader, tableId: string, ids: number[], cols: string[] | null): ChangedRow[] {
  if (!ids.length) return [];
  const rows = read(tableId, ids, cols ? new Set(cols) : null);
  const out: ChangedRow[] = [];
  for (const id of [...ids].sort((a, b) => a - b)) {
    const row = rows.get(id);
    if (row) out.push({id, fields: publicFields(row)});
  }
  return out;
}

/** Gives an updated row the values its columns held before the write (when they were kept). */
function withPrevious(r: ChangedRow, old: RowValues | undefined): void {
  if (!old) return;
  const previous: ChangedRow['fields'] = {};
  for (const k of Object.keys(r.fields)) if (k in old) previous[k] = old[k];
  r.previous = previous;
}

function pick(row: RowValues, cols: string[] | null): ChangedRow['fields'] {
  const all = publicFields(row);
  if (!cols) return all;
  const out: ChangedRow['fields'] = {};
  for (const c of cols) if (c in all) out[c] = all[c];
  return out;
}
