/**
 * What a change feed reports (beyond Grist, issue 23): one item per committed write of a document,
 * in commit order, as `SessionDoc.subscribe` and `GET /api/docs/{doc}/changes` deliver it.
 */
import type {CellValue, WriteActor} from '../doc/index.js';

/** A row a write added or updated, with its cells as `GET /records` gives them. */
export interface ChangedRow {
  id: number;
  /** Added rows: every column; updated rows: the columns the write set (formula results included). */
  fields: Record<string, CellValue>;
  /**
   * Updated rows only (beyond Grist, issue 42, D106): the same columns as `fields`, with the values
   * they held before the write. Absent on added rows, and on a row that only now became readable
   * (it arrives as added).
   */
  previous?: Record<string, CellValue>;
}

/** What one write did to one table. */
export interface TableChanges {
  tableId: string;
  added: ChangedRow[];
  updated: ChangedRow[];
  removed: number[];
  /** The columns set in updated rows, or null when any column may have changed. */
  columns: string[] | null;
  /**
   * Present when the write changed more rows than an event carries (`GRISTLITE_FEED_MAX_ROWS`):
   * the lists are then empty and this says how many rows each held; read the table again. Under
   * row rules the counts are null: they would count rows the subscriber may not read.
   */
  truncated?: {added: number | null; updated: number | null; removed: number | null};
}

/**
 * One item of a document's feed. `kind: 'change'` is a committed write; `kind: 'reset'` says that
 * changes may have been missed (a resume position the feed no longer holds, or a subscriber too
 * slow to keep up): read what you keep of the document again, then carry on from this item.
 */
export interface DocChange {
  kind: 'change' | 'reset';
  /** The item's position; pass it as `after` (or SSE `Last-Event-ID`) to resume after it. */
  id: string;
  docId: string;
  /** When the write committed (ISO 8601). */
  time: string;
  /** Who made the write (null for writes made in-process without a user, and for resets). */
  actor: WriteActor | null;
  /** The document's structure (tables, columns, rules, views) changed: read it again. */
  schemaChanged: boolean;
  /** Per table, what changed that the subscriber may read (hidden tables, columns and rows left out). */
  tables: TableChanges[];
  /** For a reset: why. */
  reason?: string;
}

/** A `reset` item at position `id`: the subscriber may have missed changes (`reason` says why). */
export function resetItem(docId: string, id: string, reason: string): DocChange {
  return {
    kind: 'reset',
    id,
    docId,
    time: new Date().toISOString(),
    actor: null,
    schemaChanged: true,
    tables: [],
    reason,
  };
}

/** Bounds of change feeds (docs/operations.md lists their environment settings). */
export interface FeedSettings {
  /** Rows whose values one event carries at most; beyond, the table's entry is `truncated`. */
  maxRows: number;
  /** Events each document keeps for resuming. */
  historyEvents: number;
  /** Bytes of events (as JSON) all documents keep together for resuming. */
  historyBytes: number;
  /** How long a document's history is kept after its last subscriber left (ms). */
  lingerMs: number;
  /** Subscriptions open at once in this process (more: 503). */
  maxSubscribers: number;
  /**
   * Distinct `where` conditions (table, text, caller) one document's feed evaluates at each write
   * (more: 503); each costs its rows' evaluation inside every write's transaction.
   */
  maxConditions: number;
  /** Events waiting for one subscriber; a subscriber further behind is sent a reset. */
  maxQueued: number;
  /** How often each subscription's access is checked again (ms). */
  recheckMs: number;
  /** How often an idle Server-Sent Events stream sends a comment (ms). */
  heartbeatMs: number;
}

/** The bounds used when no GRISTLITE_FEED_* setting says otherwise. */
export const DEFAULT_FEED_SETTINGS: FeedSettings = {
  maxRows: 1000,
  historyEvents: 1000,
  historyBytes: 64 * 1024 * 1024,
  lingerMs: 10 * 60_000,
  maxSubscribers: 1000,
  maxConditions: 50,
  maxQueued: 1000,
  recheckMs: 30_000,
  heartbeatMs: 15_000,
};
