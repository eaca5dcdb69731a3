/**
 * Records each committed write in `_gristsys_ActionHistory` as Grist does (ActionHistoryImpl,
 * Sharing): one bundle per write, in the write's own transaction, numbered after the branch tip,
 * hashed over its parent's hash, appended to the `shared`, `local_sent` and `local_unsent`
 * branches together (Grist's recordNextShared, as a document that does not share), and the
 * history pruned to its limits every tenth action.
 *
 * gristlite's writes are not Grist doc actions, so the stored actions are rebuilt from what the
 * write changed: rows removed, added and updated per table (the values read before and after),
 * and schema actions (AddTable, AddColumn, RenameColumn, ...) read from the metadata rows the write
 * changed. Undo actions are their inverses, in the order of the actions (as Grist stores them: it
 * reverses them when it applies them). docs/decisions.md D120.
 */
import type Database from 'better-sqlite3';
import {intFromEnv} from '../../base/index.js';
import type {TableChange, WriteActor} from '../changes.js';
import type {ColumnMeta, DocMeta, TableMeta} from '../meta.js';
import type {CellValue} from '../types.js';
import {quoteIdent} from '../identifiers.js';
import {COLUMNAR_ROWS, columnsOf, groupChanged, readRows, sameCell} from './rows.js';
import {captureColumns, Snapshot} from './snapshot.js';
import {HandedOver, type InsertedRows, engineCells, insertedAsStored, updatesAsColumns} from './updates.js';
import {type Dropped, schemaActions, simplify} from './schema-actions.js';
import {ALL_RECIPIENTS, type ActionBundle, type ActionInfo, type DocActionTuple, hashAndEncode} from './format.js';

/** How a document records its history (docs/operations.md, `GRISTLITE_HISTORY*`). */
export interface HistorySettings {
  /** Whether writes are recorded (default true). */
  enabled?: boolean;
  /** Actions kept (Grist's GRIST_ACTION_HISTORY_MAX_ROWS, 1000). */
  maxRows?: number;
  /** Bytes of bodies kept (Grist's GRIST_ACTION_HISTORY_MAX_BYTES, 1e9). */
  maxBytes?: number;
  /**
   * Most cells a removed table or column keeps in its undo action (D124; Grist keeps them all);
   * beyond it the undo restores the structure alone.
   */
  maxUndoCells?: number;
}

/**
 * The settings from the environment: `GRISTLITE_HISTORY` (`0` or `false` turns recording off),
 * `GRISTLITE_HISTORY_MAX_ROWS` and `GRISTLITE_HISTORY_MAX_BYTES` (Grist's
 * `GRIST_ACTION_HISTORY_MAX_ROWS` and `GRIST_ACTION_HISTORY_MAX_BYTES` also accepted).
 */
export function historySettingsFromEnv(env: Record<string, string | undefined>): HistorySettings {
  const flag = (env.GRISTLITE_HISTORY ?? '').trim().toLowerCase();
  const rowsName =
    env.GRISTLITE_HISTORY_MAX_ROWS !== undefined ? 'GRISTLITE_HISTORY_MAX_ROWS' : 'GRIST_ACTION_HISTORY_MAX_ROWS';
  const bytesName =
    env.GRISTLITE_HISTORY_MAX_BYTES !== undefined ? 'GRISTLITE_HISTORY_MAX_BYTES' : 'GRIST_ACTION_HISTORY_MAX_BYTES';
  return {
    enabled: !(flag === '0' || flag === 'false' || flag === 'off'),
    maxRows: intFromEnv(env, rowsName, HISTORY_DEFAULTS.maxRows, 1),
    maxBytes: intFromEnv(env, bytesName, HISTORY_DEFAULTS.maxBytes, 1),
    maxUndoCells: intFromEnv(env, 'GRISTLITE_HISTORY_MAX_UNDO_CELLS', HISTORY_DEFAULTS.maxUndoCells, 0),
  };
}

/** Grist's defaults: 1000 actions, 1 GB of bodies; pruned when 1.25 times over, checked every 10th action. */
export const HISTORY_DEFAULTS = {maxRows: 1000, maxBytes: 1e9, maxUndoCells: 1_000_000} as const;
const GRACE_FACTOR = 1.25;
const CHECK_PERIOD = 10;
/** Prepared statements kept per document. */
const MAX_STATEMENTS = 256;
const BRANCHES = ['shared', 'local_sent', 'local_unsent'] as const;

/** What a write recorded: the action's number and hash (`/apply`'s answer). */
export interface RecordedAction {
  actionNum: number;
  actionHash: string;
}

interface Tip {
  ref: number | null;
  num: number;
  hash: string | null;
}

/** One document's history recorder (the document's connection; writes run synchronously). */
export class HistoryRecorder {
  readonly enabled: boolean;
  private readonly maxRows: number;
  private readonly maxBytes: number;
  private readonly maxUndoCells: number;
  /** Per table (by tableRef for user tables, so that renames are followed; by tableId for metadata). */
  private readonly before = new Map<string | number, Snapshot>();
  /** The user actions of the current write, when it was a bundle of them (`/apply`). */
  userActions: unknown[][] | null = null;
  private tablesFound = false;
  /** Rows the last `record` inserted, updated or deleted (so that caches of user tables can discount them). */
  rowsChanged = 0;
  /** Prepared statements by SQL (better-sqlite3 prepares anew on each `prepare`: ~14% of a one-cell write). */
  private readonly stmts = new Map<string, Database.Statement>();
  /**
   * Actions and body bytes of the chain, counted as actions are appended, so that the check every
   * tenth action costs nothing. Read from the file when not known (null): at first, and whenever
   * the tip found is not the one the last append left (a write rolled back, another connection
   * appended). A count left high (`/states/remove`) is read again before it prunes. (It was
   * recounted every hundredth action: reading a 1,250-action chain took 3.5 ms, one write in a
   * hundred paying it.)
   */
  private chain: {count: number; bytes: number} | null = null;
  /** The tip as this recorder's last append left it. */
  private appended: Tip | null = null;
  /** Whether the current write is the document's own (formulas computed on import): user `grist`, as Grist's system actions. */
  system = false;

  constructor(
    private readonly db: Database.Database,
    settings: HistorySettings = {},
  ) {
    this.enabled = settings.enabled ?? true;
    this.maxRows = settings.maxRows ?? HISTORY_DEFAULTS.maxRows;
    this.maxBytes = settings.maxBytes ?? HISTORY_DEFAULTS.maxBytes;
    this.maxUndoCells = settings.maxUndoCells ?? HISTORY_DEFAULTS.maxUndoCells;
  }

  private stmt(sql: string): Database.Statement {
    let st = this.stmts.get(sql);
    if (!st) {
      // Row reads differ by table and columns: the cache is bounded (schema changes make new ones).
      if (this.stmts.size >= MAX_STATEMENTS) this.stmts.clear();
      st = this.db.prepare(sql);
      this.stmts.set(sql, st);
    }
    return st;
  }

  /**
   * Rows the current write inserted, per table, with their cells as stored, so that the bundle is
   * made without reading them back (reading 500 rows back cost more than inserting them). Kept only
   * while nothing else touched the table in the write (`tainted`); else the rows are read back.
   */
  private readonly inserted = new Map<string, InsertedRows>();
  private readonly tainted = new Set<string>();

  /** Cells of many rows the current write stored, handed over by the writer (updates.ts). */
  readonly handed = new HandedOver();

  /** Called after an insert (storage's `afterInsert`). */
  insertedRows(
    meta: DocMeta,
    tableId: string,
    ids: readonly number[],
    cols: readonly string[],
    values: readonly CellValue[][],
  ): void {
    this.dropFresh(meta.tables.get(tableId));
    this.handed.forget(tableId);
    if (this.inserted.has(tableId) || this.tainted.has(tableId)) {
      // A second insert into the table: read back (kept simple).
      this.inserted.delete(tableId);
      this.tainted.add(tableId);
      return;
    }
    this.inserted.set(tableId, {ids, cols, values, version: meta.version});
  }

  /**
   * Columns (by colRef) added by this write whose cells nobody has written since: each holds its
   * type's default in every row, so a first change of them is captured without reading them (the
   * history read 100k defaults back when a formula column was added: most of that write's time).
   * A column stops being fresh when it is captured, when its metadata row is about to change (a
   * type conversion rewrites its cells), and when rows are inserted into its table.
   */
  private readonly fresh = new Set<number>();

  /** Called after a user column was added (storage's `afterAddColumn`). */
  columnAdded(_tableId: string, colRef: number): void {
    this.fresh.add(colRef);
  }

  private dropFresh(table: TableMeta | undefined): void {
    if (table && this.fresh.size) for (const c of table.columns) this.fresh.delete(c.colRef);
  }

  /**
   * Cells of removed tables and columns, as they were: by tableRef for a table, by
   * `tableRef:colId` for a column (null: more than `maxUndoCells`, not kept).
   */
  private readonly dropped = new Map<string, Dropped | null>();

  /**
   * Called before user columns (or a whole table, `colIds` null) are dropped: keeps their cells
   * for the undo Grist records (as Grist 1.7.17 stored it: a removed column, formula columns too,
   * is undone by its cells that are not the default, a removed table by all its rows).
   */
  dropping(meta: DocMeta, tableId: string, colIds: readonly string[] | null): void {
    const table = meta.tables.get(tableId);
    if (!table || table.isMeta) return;
    const cols = colIds ? table.columns.filter((c) => colIds.includes(c.colId)) : table.columns;
    const keys = colIds ? cols.map((c) => `${table.tableRef}:${c.colId}`) : [String(table.tableRef)];
    if (!cols.length) return;
    const from = quoteIdent(table.tableId);
    const count = Number(this.stmt(`SELECT count(*) FROM ${from}`).pluck().get());
    if (count * cols.length > this.maxUndoCells) {
      for (const k of keys) this.dropped.set(k, null);
      return;
    }
    const ids = (this.stmt(`SELECT id FROM ${from} ORDER BY id`).pluck().all() as Array<number | bigint>).map(Number);
    const rows = readRows(
      (sql) => this.stmt(sql),
      table,
      ids,
      cols.map((c) => c.colId),
    );
    if (!colIds) {
      this.dropped.set(keys[0], {
        ids,
        cells: columnsOf(
          cols.map((c) => c.colId),
          rows,
        ),
      });
      return;
    }
    cols.forEach((c, i) => {
      const kept = rows.filter((r) => !sameCell(r[c.colId], c.ct.defaultValue));
      this.dropped.set(keys[i], {ids: kept.map((r) => r.id as number), cells: columnsOf([c.colId], kept)});
    });
  }

  /** Forgets what the last write captured (a write starts, or rolled back). */
  reset(): void {
    this.before.clear();
    this.dropped.clear();
    this.inserted.clear();
    this.tainted.clear();
    this.handed.clear();
    this.fresh.clear();
    this.userActions = null;
    this.system = false;
  }

  /**
   * Called before rows are updated or removed: keeps each row's cells as they were, once per write.
   * `colIds`: the write changes only these, so only they are kept (a formula column's recalc of
   * 100k rows read every column of every row: most of adding a formula column); a row's other
   * cells are read when a later change of the same write needs them, still unchanged then.
   * `cells`: the cells of `colIds` as the formula engine holds them (a recalc's), taken for many
   * rows instead of a read where they are what a read gives (`engineCells`).
   */
  capture(
    meta: DocMeta,
    tableId: string,
    rowIds: readonly number[],
    colIds?: readonly string[],
    cells?: ReadonlyArray<readonly CellValue[]>,
  ): void {
    const table = meta.tables.get(tableId);
    if (!table || !rowIds.length) return;
    if (this.fresh.size && tableId === '_grist_Tables_column') for (const ref of rowIds) this.fresh.delete(ref);
    if (this.inserted.delete(tableId)) this.tainted.add(tableId);
    this.handed.forget(tableId, colIds);
    const key = table.isMeta ? table.tableId : table.tableRef;
    let snap = this.before.get(key);
    if (!snap) {
      snap = new Snapshot();
      this.before.set(key, snap);
    }
    const wanted = snap.empty ? rowIds : rowIds.filter((id) => !snap.has(id));
    const fresh = !table.isMeta && colIds?.length ? this.freshColumns(table, colIds) : null;
    const known =
      cells && colIds && !fresh && !table.isMeta && wanted.length === rowIds.length
        ? engineCells(table, colIds, wanted, cells)
        : null;
    if (captureColumns(snap, table, wanted, colIds, fresh, (sql) => this.stmt(sql), known)) {
      // Many rows of a user table: kept as columns.
    } else if (fresh && wanted.length) {
      // Every cell holds its default: the rows need not be read (the callers pass existing rows).
      for (const id of wanted) {
        const row: Record<string, CellValue> = {id};
        for (const c of fresh) row[c.colId] = c.ct.defaultValue;
        snap.set(id, row);
      }
    } else if (known && colIds) {
      // The cells given, as the file holds them (a recalc's few rows).
      for (let i = 0; i < wanted.length; i++) {
        const row: Record<string, CellValue> = {id: wanted[i]};
        for (let j = 0; j < colIds.length; j++) row[colIds[j]] = known[j][i];
        snap.set(wanted[i], row);
      }
    } else if (wanted.length) {
      for (const row of readRows((sql) => this.stmt(sql), table, wanted, colIds)) snap.set(row.id as number, row);
    }
    if (wanted.length === rowIds.length) return;
    // Rows kept before with fewer columns: the missing cells, in the table's column order.
    const cols = (colIds ?? table.columns.map((c) => c.colId)).filter((c) => table.byId.has(c));
    const partial = snap.lacking(rowIds, cols);
    if (!partial.length) return;
    for (const fresh of readRows((sql) => this.stmt(sql), table, partial, cols)) {
      const id = fresh.id as number;
      const row = snap.get(id)!;
      const merged: Record<string, CellValue> = {id};
      for (const c of table.columns) {
        if (c.colId in row) merged[c.colId] = row[c.colId];
        else if (c.colId in fresh) merged[c.colId] = fresh[c.colId];
      }
      // A column this write removed since keeps the cell it had.
      for (const k of Object.keys(row)) if (!(k in merged)) merged[k] = row[k];
      snap.set(id, merged);
    }
  }

  /** The columns `colIds` when every one is fresh (forgotten as fresh now), else null. */
  private freshColumns(table: TableMeta, colIds: readonly string[]): ColumnMeta[] | null {
    if (!this.fresh.size) return null;
    const cols = colIds.map((c) => table.byId.get(c));
    if (!cols.every((c) => c !== undefined && this.fresh.has(c.colRef))) return null;
    for (const c of cols) this.fresh.delete(c!.colRef);
    return cols as ColumnMeta[];
  }

  /** Whether the document has Grist's history tables (every document of schema 46 does); true is remembered. */
  private hasTables(): boolean {
    if (this.tablesFound) return true;
    const n = this.stmt(
      `SELECT count(*) AS n FROM sqlite_master WHERE type = 'table'
         AND name IN ('_gristsys_ActionHistory', '_gristsys_ActionHistoryBranch')`,
    ).get() as {n: number};
    this.tablesFound = n.n === 2;
    return this.tablesFound;
  }

  private snapshotOf(table: TableMeta): Snapshot | undefined {
    return this.before.get(table.isMeta ? table.tableId : table.tableRef);
  }

  /**
   * Appends the bundle of the write that changed `changes` (nothing when it changed nothing), in
   * the caller's transaction. `time` in ms since the epoch.
   */
  record(
    meta: DocMeta,
    changes: TableChange[],
    actor: WriteActor | null,
    time: number,
    recordEmpty = false,
  ): RecordedAction | null {
    this.rowsChanged = 0;
    if (!this.hasTables()) return null;
    const {stored, undo} = changes.length ? this.docActions(meta, changes) : {stored: [], undo: []};
    if (!stored.length && !recordEmpty) return null;
    let tip = this.tip();
    const a = this.appended;
    if (!a || a.ref !== tip.ref || a.num !== tip.num || a.hash !== tip.hash) this.chain = null;
    if (tip.num === 0) {
      // Grist's _initDoc records an empty first action in a document without history.
      this.append(
        {
          actionNum: 1,
          actionHash: null,
          parentActionHash: null,
          envelopes: [],
          info: [0, makeInfo('grist', time, undefined)],
          stored: [],
          calc: [],
          userActions: [],
          undo: [],
        },
        tip,
      );
      tip = this.tip();
    }
    const bundle: ActionBundle = {
      actionNum: tip.num + 1,
      actionHash: null,
      parentActionHash: null,
      envelopes: [{recipients: [ALL_RECIPIENTS]}],
      info: [0, this.system ? makeInfo('grist', time, undefined) : makeInfo(actor?.email ?? '', time, actor?.apiKeyId)],
      stored: stored.map((a) => [0, a] as [number, DocActionTuple]),
      calc: [],
      userActions: this.userActions ?? stored,
      undo,
    };
    const recorded = this.append(bundle, tip);
    if (bundle.actionNum % CHECK_PERIOD === 0) this.prune();
    return recorded;
  }

  /** The tip of `local_unsent` (all three branches move together here). */
  private tip(): Tip {
    const row = this.stmt(
      `SELECT b.actionRef AS ref, h.actionNum AS num, h.actionHash AS hash FROM _gristsys_ActionHistoryBranch b
       LEFT JOIN _gristsys_ActionHistory h ON h.id = b.actionRef WHERE b.name = 'local_unsent'`,
    ).get() as {ref: number | null; num: number | null; hash: string | null} | undefined;
    if (row?.ref != null && row.num != null) return {ref: row.ref, num: row.num, hash: row.hash};
    // No tip (a pruned or emptied history): numbering still follows what is stored, as Grist's
    // initialize reads the branch (whose tip is then null) and starts again from 1 only when empty.
    const max = this.stmt('SELECT max(actionNum) AS n FROM _gristsys_ActionHistory').get() as {n: number | null};
    return {ref: null, num: max.n ?? 0, hash: null};
  }

  private append(bundle: ActionBundle, parent: Tip): RecordedAction {
    bundle.parentActionHash = parent.hash;
    const body = hashAndEncode(bundle);
    const actionHash = bundle.actionHash!;
    const id = this.stmt(
      'INSERT INTO _gristsys_ActionHistory (actionHash, parentRef, actionNum, body) VALUES (?, ?, ?, ?)',
    ).run(actionHash, parent.ref, bundle.actionNum, body).lastInsertRowid;
    this.rowsChanged += 1;
    const moved = this.stmt(
      `UPDATE _gristsys_ActionHistoryBranch SET actionRef = ? WHERE name IN ('shared', 'local_sent', 'local_unsent')`,
    ).run(id).changes;
    this.rowsChanged += moved;
    if (moved < BRANCHES.length) {
      // A file without some branch row (Grist makes all three): added, as Grist's _addAction would need them.
      for (const name of BRANCHES) {
        this.rowsChanged += this.stmt(
          'INSERT OR IGNORE INTO _gristsys_ActionHistoryBranch (name, actionRef) VALUES (?, ?)',
        ).run(name, id).changes;
      }
    }
    if (this.chain) {
      this.chain.count++;
      this.chain.bytes += body.length;
    }
    this.appended = {ref: Number(id), num: bundle.actionNum, hash: actionHash};
    return {actionNum: bundle.actionNum, actionHash};
  }

  /** The chain from the `shared` tip, newest first: row ids and body sizes. */
  private chainRows(): Array<[number, number]> {
    return this.stmt(
      `WITH RECURSIVE actions(id) AS (
         SELECT actionRef FROM _gristsys_ActionHistoryBranch WHERE name = 'shared' AND actionRef IS NOT NULL
         UNION ALL
         SELECT parentRef FROM _gristsys_ActionHistory h, actions WHERE h.id = actions.id AND parentRef IS NOT NULL)
       SELECT h.id, length(h.body) AS bytes FROM actions JOIN _gristsys_ActionHistory h ON h.id = actions.id
       ORDER BY h.actionNum DESC`,
    )
      .raw(true)
      .all() as Array<[number, number]>;
  }

  /**
   * Grist's _pruneLargeHistory: when the chain is over 1.25 times a limit, the oldest actions go,
   * keeping the newest that fit both limits (at least one).
   */
  private prune(): void {
    const over = (count: number, bytes: number) =>
      count > this.maxRows * GRACE_FACTOR || bytes > this.maxBytes * GRACE_FACTOR;
    if (this.chain && !over(this.chain.count, this.chain.bytes)) return;
    const rows = this.chainRows();
    const totalBytes = rows.reduce((n, [, b]) => n + b, 0);
    this.chain = {count: rows.length, bytes: totalBytes};
    if (!over(rows.length, totalBytes)) return;
    let bytes = 0;
    let first = -1;
    for (let i = 0; i < rows.length; i++) {
      bytes += rows[i][1];
      if (i > 0 && (bytes > this.maxBytes || i + 1 > this.maxRows)) {
        first = i;
        break;
      }
    }
    if (first < 0) return;
    this.chain = {count: first, bytes: bytes - rows[first][1]};
    const ids = JSON.stringify(rows.slice(first).map(([id]) => id));
    this.rowsChanged += this.stmt(
      'DELETE FROM _gristsys_ActionHistory WHERE id IN (SELECT value FROM json_each(?))',
    ).run(ids).changes;
    this.rowsChanged += this.stmt(
      'UPDATE _gristsys_ActionHistoryBranch SET actionRef = NULL WHERE actionRef IN (SELECT value FROM json_each(?))',
    ).run(ids).changes;
  }

  /** The write as Grist doc actions and their undo (see the module comment). */
  private docActions(meta: DocMeta, changes: TableChange[]): {stored: DocActionTuple[]; undo: DocActionTuple[]} {
    const stored: DocActionTuple[] = [];
    const undo: DocActionTuple[] = [];
    const byTable = new Map(changes.map((c) => [c.tableId, c]));
    // An action's inverses in the order Grist's docactions.py appends them, simplified as there.
    const push = (a: DocActionTuple, ...inverses: Array<DocActionTuple | null>) => {
      stored.push(a);
      for (const inverse of inverses) {
        const simple = inverse && simplify(inverse);
        if (simple) undo.push(simple);
      }
    };
    schemaActions(
      {meta, before: (tableId) => this.before.get(tableId), dropped: this.dropped, stmt: (sql) => this.stmt(sql)},
      byTable,
      push,
    );
    for (const change of changes) {
      const table = meta.tables.get(change.tableId);
      if (!table) continue;
      const snap = this.snapshotOf(table);
      if (change.removed.length) {
        const ids = change.removed.slice().sort((a, b) => a - b);
        const old = snap ? ids.map((id) => snap.get(id)) : [];
        // As Grist's BulkRemoveRecord: columns whose removed cells are all the default are left out.
        const isDefault = (c: string, v: CellValue | undefined) =>
          sameCell(v, table.byId.get(c)?.ct.defaultValue ?? null);
        const cols =
          old.length && old.every(Boolean)
            ? Object.keys(old[0]!).filter((c) => c !== 'id' && !old.every((r) => isDefault(c, r![c])))
            : null;
        push(
          ['BulkRemoveRecord', table.tableId, ids],
          cols ? ['BulkAddRecord', table.tableId, ids, columnsOf(cols, old as Array<Record<string, CellValue>>)] : null,
        );
      }
      const fast = change.added.length
        ? insertedAsStored(this.inserted.get(table.tableId), meta, table, change.added)
        : null;
      if (fast) {
        push(['BulkAddRecord', table.tableId, fast.ids, fast.cells], ['BulkRemoveRecord', table.tableId, fast.ids]);
      } else if (change.added.length) {
        const rows = readRows(
          (sql) => this.stmt(sql),
          table,
          change.added.slice().sort((a, b) => a - b),
        );
        const ids = rows.map((r) => r.id as number);
        // As Grist's engine stores them: the data columns given (here: those holding anything but
        // their default) and manualSort, then formula results as updates of the cells they set.
        const isCalc = (c: ColumnMeta) => c.isFormula && c.formula !== '';
        const data = table.columns.filter(
          (c) => !isCalc(c) && (c.colId === 'manualSort' || rows.some((r) => !sameCell(r[c.colId], c.ct.defaultValue))),
        );
        push(
          [
            'BulkAddRecord',
            table.tableId,
            ids,
            columnsOf(
              data.map((c) => c.colId),
              rows,
            ),
          ],
          ['BulkRemoveRecord', table.tableId, ids],
        );
        const calc = table.columns.filter(isCalc);
        for (const [rowIds, colIds] of groupChanged(
          calc.map((c) => c.colId),
          rows,
          (r, c) => !sameCell(r[c], table.byId.get(c)!.ct.defaultValue),
        )) {
          const sub = rows.filter((r) => rowIds.has(r.id as number));
          push(['BulkUpdateRecord', table.tableId, [...rowIds], columnsOf(colIds, sub)], null);
        }
      }
      if (change.updated.length > COLUMNAR_ROWS) {
        updatesAsColumns(table, snap, change, this.handed, meta.version, (sql) => this.stmt(sql), push);
      } else if (change.updated.length) {
        const colIds = (change.columns ?? table.columns.map((c) => c.colId)).filter((c) => table.byId.has(c));
        if (!colIds.length) continue;
        const rows = readRows(
          (sql) => this.stmt(sql),
          table,
          change.updated.slice().sort((a, b) => a - b),
          colIds,
        );
        const olds = rows.map((r) => snap?.get(r.id as number));
        // Only the cells that changed, a BulkUpdateRecord per set of rows, as Grist's engine leaves
        // unchanged cells out. A row never captured (no old value) counts as changed; a row captured
        // without a column was not changed in it (every change captures its columns first).
        const groups = groupChanged(colIds, rows, (r, c, i) => {
          const old = olds[i];
          return !old || (c in old && !sameCell(r[c], old[c]));
        });
        for (const [rowIds, cols] of groups) {
          // Every row (a formula column recomputed whole): no selection to make.
          const idx =
            rowIds.size === rows.length
              ? null
              : rows.map((r, i) => (rowIds.has(r.id as number) ? i : -1)).filter((i) => i >= 0);
          const news = idx ? idx.map((i) => rows[i]) : rows;
          const old = idx ? idx.map((i) => olds[i]) : olds;
          const ids = news.map((r) => r.id as number);
          push(
            ['BulkUpdateRecord', table.tableId, ids, columnsOf(cols, news)],
            old.every(Boolean)
              ? ['BulkUpdateRecord', table.tableId, ids, columnsOf(cols, old as Array<Record<string, CellValue>>)]
              : null,
          );
        }
      }
    }
    return {stored, undo};
  }
}

function makeInfo(user: string, time: number, apiKeyId: number | undefined): ActionInfo {
  // desc is undefined in Grist's _makeInfo unless given, marshalled as None.
  const info: ActionInfo = {time, user, inst: 'unset-inst', desc: null, otherId: 0, linkId: 0};
  // Beyond Grist: the document API key that authorised the write (issue 42), only when one did.
  if (apiKeyId !== undefined) info.apiKeyId = apiKeyId;
  return info;
}
