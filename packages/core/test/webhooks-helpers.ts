// Shared helpers of the webhooks*.test.ts suites: a document, writes that record events the way
// the document engine does, and a receiver on loopback.
import Database from 'better-sqlite3';
import {createServer, type IncomingHttpHeaders, type Server} from 'node:http';
import type {AddressInfo} from 'node:net';
import {createDocFile} from '../src/doc/index.js';
import {
  captureBefore,
  recordEvents as recordOutboxEvents,
  type RowChange,
  type WebhookDelivery,
} from '../src/webhooks/index.js';
import {tempPath} from './doc-helpers.js';
import {WAIT_MS} from '../src/testing/index.js';

/** A new document whose Table1 has A (Any), B (Bool, the usual ready column) and C (Any). */
export function newDoc(): {db: Database.Database; path: string} {
  const path = tempPath();
  createDocFile(path);
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.prepare(`UPDATE _grist_Tables_column SET type = 'Bool' WHERE colId = 'B'`).run();
  return {db, path};
}

/** The delivery running for a test document, woken after each write as attachWebhooks does. */
const deliveries = new WeakMap<Database.Database, WebhookDelivery>();
export function deliverFrom(db: Database.Database, delivery: WebhookDelivery): WebhookDelivery {
  deliveries.set(db, delivery);
  return delivery;
}

function recordEvents(db: Database.Database, change: RowChange): void {
  if (recordOutboxEvents(db, change).length) deliveries.get(db)?.scheduleWake();
}

type Cells = Record<string, unknown>;
const bind = (v: unknown) => (typeof v === 'boolean' ? (v ? 1 : 0) : v === undefined ? null : v);

/** Adds rows in one transaction, recording events as GristDoc's onChange would. Returns the ids. */
export function addRows(
  db: Database.Database,
  rows: Cells[],
  table = 'Table1',
  actor: {apiKeyId?: number} | null = null,
): number[] {
  return db.transaction(() => {
    const ids: number[] = [];
    for (const row of rows) {
      const cols = Object.keys(row);
      const sql = cols.length
        ? `INSERT INTO "${table}" (${cols.map((c) => `"${c}"`).join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`
        : `INSERT INTO "${table}" DEFAULT VALUES`;
      const id = Number(db.prepare(sql).run(...cols.map((c) => bind(row[c]))).lastInsertRowid);
      db.prepare(`UPDATE "${table}" SET manualSort = ? WHERE id = ?`).run(id, id);
      ids.push(id);
    }
    recordEvents(db, {tableId: table, added: ids, actor});
    return ids;
  })();
}

/** Updates rows (`{id, ...cells}`) in one transaction, capturing old values first. */
export function updateRows(db: Database.Database, rows: ({id: number} & Cells)[], table = 'Table1'): void {
  db.transaction(() => {
    const ids = rows.map((r) => r.id);
    const before = captureBefore(db, table, ids, []);
    for (const {id, ...cells} of rows) {
      const cols = Object.keys(cells);
      db.prepare(`UPDATE "${table}" SET ${cols.map((c) => `"${c}" = ?`).join(', ')} WHERE id = ?`).run(
        ...cols.map((c) => bind(cells[c])),
        id,
      );
    }
    recordEvents(db, {tableId: table, updated: ids, before});
  })();
}

export function removeRows(db: Database.Database, ids: number[], table = 'Table1'): void {
  db.transaction(() => {
    const before = captureBefore(db, table, [], ids);
    db.prepare(`DELETE FROM "${table}" WHERE id IN (SELECT value FROM json_each(?))`).run(JSON.stringify(ids));
    recordEvents(db, {tableId: table, removed: ids, before});
  })();
}

/** Runs a write with an explicit change description (for mixed bundles). */
export function write(db: Database.Database, fn: () => RowChange): void {
  db.transaction(() => {
    recordEvents(db, fn());
  })();
}

export function outbox(db: Database.Database): {webhookId: string; eventType: string; row: Cells}[] {
  return (
    db.prepare('SELECT webhookId, eventType, payload FROM _gristlite_webhook_outbox ORDER BY id').all() as {
      webhookId: string;
      eventType: string;
      payload: string;
    }[]
  ).map((r) => ({webhookId: r.webhookId, eventType: r.eventType, row: JSON.parse(r.payload)}));
}

export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** When it arrived (performance.now()). */
  at: number;
}

/** An HTTP receiver on 127.0.0.1. `respond` decides each answer (default 200). */
export class Receiver {
  readonly requests: Received[] = [];
  /** Requests the client closed before their answer was sent. */
  aborted = 0;
  /** Answers whose status and headers went out ahead of a delayed body (`bodyDelayMs`). */
  headersSent = 0;
  private readonly timers = new Set<NodeJS.Timeout>();
  respond: (req: Received, n: number) => {status: number; body?: string; delayMs?: number; bodyDelayMs?: number} =
    () => ({status: 200});
  private server!: Server;
  port = 0;

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const received = {
          path: req.url ?? '',
          headers: req.headers,
          body: Buffer.concat(chunks).toString(),
          at: performance.now(),
        };
        const answer = this.respond(received, this.requests.length);
        this.requests.push(received);
        const send = () => {
          if (res.destroyed) return;
          res.statusCode = answer.status;
          res.end(answer.body ?? '');
        };
        // The client gave up before the answer (an aborted request in flight).
        res.on('close', () => {
          if (!res.writableFinished) this.aborted++;
        });
        // Unref'd and cleared on close: a delayed answer nobody waits for must not keep the process.
        if (answer.delayMs) this.timers.add(setTimeout(send, answer.delayMs).unref());
        else if (answer.bodyDelayMs) {
          res.writeHead(answer.status, {'Content-Length': String(Buffer.byteLength(answer.body ?? ''))});
          res.flushHeaders();
          this.headersSent++;
          this.timers.add(setTimeout(() => res.destroyed || res.end(answer.body ?? ''), answer.bodyDelayMs).unref());
        } else send();
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  url(path = '/hook'): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  bodies(): unknown[] {
    return this.requests.map((r) => JSON.parse(r.body));
  }

  async close(): Promise<void> {
    for (const t of this.timers) clearTimeout(t);
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** Waits for `cond`; the deadline is generous (WAIT_MS at least): it is never a speed check. */
export async function waitFor(cond: () => boolean, timeoutMs = WAIT_MS, what = 'condition'): Promise<void> {
  const end = Date.now() + Math.max(timeoutMs, WAIT_MS);
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
