/**
 * The read pipeline of a document: tables, columns and records as the REST API lists them, and,
 * under access rules (the `DocGuard` of the current call), the same filtered: tables and columns a
 * user cannot see left out, row rules applied (in SQL where `access/rules/sql.ts` can express them,
 * else row by row), cells censored, metadata about hidden things left out. `GristDoc` delegates to
 * it; the write pipeline reads rows through it (`readRows`) for the access checks.
 *
 * One thing: the one place a read of rows is planned. Every read (whole, paged, streamed,
 * columnar, counted, aggregated, by condition) starts from the `RowScope` that only `scope()`
 * makes from the caller's rules, so no read path can leave the rules out (issue 37: a large
 * table's streamed read once did); the pieces that need none of that state are read-json.ts.
 */
import type Database from 'better-sqlite3';
import {BadRequest, NotFound} from '../base/index.js';
import {
  type AggregateQuery,
  type AggregateRecord,
  type AggregateSource,
  planAggregate,
  runAggregate,
} from './aggregate/index.js';
import type {ApiRecord, ColumnInfo, PageEnd, RecordQuery, TableInfo} from './api-types.js';
import {cellDisplay, displayDiffers} from './cell-display.js';
import {type BudgetSettings, type CellFormatter, DEFAULT_BUDGET} from '@gristlite/formula';
import type {DataStamp} from './colstats.js';
import type {DocGuard, RowValues, TableReadFilter} from './guard.js';
import type {ColumnMeta, TableMeta} from './meta.js';
import {
  MAX_CURSOR_TERMS,
  buildRecordQuery,
  parseSortParam,
  quoteIdent,
  recordCondition,
  sortColumns,
  sortTerms,
} from './query.js';
import type {ReadCache} from './readcache.js';
import {recordJsonSql} from './recordsjson.js';
import {andScope, RowScope, type TableAccess} from './rowscope.js';
import {type JsonPart, JsonStream, STREAM_DEFAULTS, type StreamKeep, type StreamOptions} from './stream.js';
import type {DocStorage} from './storage.js';
import type {CellValue} from './types.js';
import {
  parseWhere,
  type ResolveOptions,
  resolveWhere,
  type WhereSettings,
  type WhereSource,
  type WhereState,
} from './where/index.js';
import {
  batchJson,
  JSON_BATCH,
  rangeBatches,
  rangeJson,
  checkQueryColumns,
  columnInfo,
  columnList,
  encodePosition,
  hasLimitOrFilter,
  isCensored,
  KEEP_CHARS_PER_CELL,
  keysetBatches,
  openStream,
  pagedBody,
  pageLimit,
  recordBuilder,
  recordsCacheKey,
  SKIP,
  withExtras,
} from './read-json.js';

export {columnInfo} from './read-json.js';

/** What the read pipeline needs of its document. */
export interface ReadSource {
  readonly storage: DocStorage;
  readonly db: Database.Database;
  /** The document's file (streamed reads open their own connection to it). */
  readonly path: string;
  /** The access rules of the current call (`GristDoc.as`), or null: nothing filtered. */
  readonly guard: DocGuard | null;
  readonly readCache: ReadCache;
  /** This document's key in the read cache. */
  readonly cacheOwner: string;
  readonly dataStamp: DataStamp;
  /** How many `fetchRecordsJson` answers SQLite wrote, and how many were built in JS. */
  readonly recordsJsonPaths: {sql: number; js: number};
  /** A table by id (404 `Table not found` otherwise). */
  table(tableId: string): TableMeta;
  /** A user table by id (400 for metadata tables). */
  userTable(tableId: string): TableMeta;
  /** What the document keeps for `where` conditions, and their bounds. */
  readonly where: WhereState;
  readonly whereSettings: WhereSettings;
  /** Formula budgets over the defaults (conditions the engine evaluates are bounded by them). */
  readonly formulaBudget?: Partial<BudgetSettings>;
  /** Columns in the order `GET /columns` lists them (Grist's in-memory order: colorder.ts). */
  columnOrder(cols: ColumnMeta[]): ColumnMeta[];
  /** Tables in the order `GET /tables` lists them (Grist's in-memory order: colorder.ts). */
  tableOrder<T extends {tableRef: number}>(tables: T[]): T[];
}

export class DocReads {
  constructor(private readonly src: ReadSource) {}

  /** Every row: the scope of reads without access rules. */
  private readonly everyRow = RowScope.make(null, false);

  /**
   * The rows of `table` the caller may read (rowscope.ts), the one place where access rules
   * become rows for every read path: every row without rules; under rules, the rules' condition
   * in SQL where `access/rules/sql.ts` can write it, else rows checked one by one (`inJs`).
   */
  scope(table: TableMeta): RowScope {
    const guard = this.src.guard;
    if (!guard) return this.everyRow;
    const metaRow = table.isMeta ? this.metaRowFilter(table.tableId, guard) : null;
    return this.scopeOf(
      guard.readTable(table.tableId, (c) => table.byId.get(c)?.type),
      metaRow,
    );
  }

  /**
   * How the caller reads a user table, for reads that run on a connection of their own (exports
   * on their snapshot): the columns denied outright, the rows' scope, and, when the scope is
   * `inJs`, the check of each row (null drops it, else the columns censored in it). Null without
   * rules. Throws 403 when the table cannot be read.
   */
  tableAccess(tableId: string): TableAccess | null {
    const guard = this.src.guard;
    if (!guard) return null;
    const table = this.src.userTable(tableId);
    const filter = guard.readTable(table.tableId, (c) => table.byId.get(c)?.type);
    const scope = this.scopeOf(filter, null);
    return {hiddenCols: filter.hiddenCols, scope, row: scope.inJs ? (filter.row ?? null) : null};
  }

  /** The scope of a read filter (and of a metadata table's row filter). */
  private scopeOf(filter: TableReadFilter, metaRow: unknown): RowScope {
    let byFilter = this.scopes.get(filter);
    if (!byFilter) {
      byFilter = [RowScope.make(filter.sql ?? null, Boolean(filter.row)), RowScope.make(filter.sql ?? null, true)];
      this.scopes.set(filter, byFilter);
    }
    return byFilter[metaRow ? 1 : 0];
  }
  private readonly scopes = new WeakMap<TableReadFilter, [RowScope, RowScope]>();

  /** Rows by id, decoded, every column (what rules see as `rec`). */
  readRows(tableId: string, ids: readonly number[], only?: ReadonlySet<string> | null): Map<number, RowValues> {
    const table = this.src.storage.meta.tables.get(tableId);
    const out = new Map<number, RowValues>();
    if (!table || !ids.length) return out;
    const cols = only ? table.columns.filter((c) => only.has(c.colId)) : table.columns;
    // One statement whatever the number of ids (json_each), not one per IN-list length.
    const rows = this.src.storage
      .stmt(`SELECT ${columnList(cols)} FROM ${quoteIdent(tableId)} WHERE id IN (SELECT value FROM json_each(?))`)
      .raw(true)
      .all(JSON.stringify(ids)) as unknown[][];
    for (const row of rows) {
      const values: RowValues = {};
      cols.forEach((c, j) => {
        values[c.colId] = c.decode(row[j + 1]);
      });
      out.set(row[0] as number, values);
    }
    return out;
  }

  /**
   * Under access rules, the attachments held by a cell the user can read (Grist lets a user reach
   * those only); null when there are no rules or the user may read everything.
   */
  readableAttachments(): ReadonlySet<number> | null {
    const guard = this.src.guard;
    if (!guard || guard.canReadEverything()) return null;
    const out = new Set<number>();
    for (const t of this.src.storage.meta.userTables) {
      if (!guard.tableVisible(t.tableId)) continue;
      const cols = t.columns.filter((c) => c.type === 'Attachments').map((c) => c.colId);
      if (!cols.length) continue;
      for (const r of this.fetchGuarded(t, {hidden: true})) {
        for (const c of cols) {
          const v = r.fields[c];
          if (Array.isArray(v) && v[0] === 'L') for (const id of v.slice(1)) if (typeof id === 'number') out.add(id);
        }
      }
    }
    return out;
  }

  /** The first row of a table whose column equals `value` (user attributes of access rules). */
  lookupRow(tableId: string, colId: string, value: CellValue, caseInsensitive: boolean): RowValues | null {
    const table = this.src.storage.meta.tables.get(tableId);
    const col = table?.byId.get(colId);
    if (!table || !col || table.isMeta) return null;
    const where =
      caseInsensitive && typeof value === 'string'
        ? `lower(${quoteIdent(colId)}) = lower(?)`
        : `${quoteIdent(colId)} = ?`;
    const row = this.src.storage
      .stmt(`SELECT id FROM ${quoteIdent(tableId)} WHERE ${where} ORDER BY id LIMIT 1`)
      .raw(true)
      .get(typeof value === 'boolean' ? Number(value) : value) as [number] | undefined;
    if (!row) return null;
    const found = this.readRows(tableId, [row[0]]).get(row[0]) ?? null;
    return found ? {...found, id: row[0]} : null;
  }

  /** Every user table, as `GET /tables` lists them. */
  listTables(): TableInfo[] {
    const guard = this.src.guard;
    const tables = guard
      ? this.src.storage.meta.userTables.filter((t) => guard.tableVisible(t.tableId))
      : this.src.storage.meta.userTables;
    return this.src.tableOrder(tables).map((t) => ({
      id: t.tableId,
      fields: {
        tableRef: t.tableRef,
        primaryViewId: Number(t.fields.primaryViewId),
        summarySourceTable: Number(t.fields.summarySourceTable),
        onDemand: Boolean(t.fields.onDemand),
        rawViewSectionRef: Number(t.fields.rawViewSectionRef),
        recordCardViewSectionRef: Number(t.fields.recordCardViewSectionRef),
      },
    }));
  }

  /** A table's columns, as `GET /columns` lists them (hidden ones with `hidden`). */
  listColumns(tableId: string, options: {hidden?: boolean} = {}): ColumnInfo[] {
    const table = this.src.userTable(tableId);
    let cols = table.columns.filter((c) => options.hidden || !c.hidden);
    if (this.src.guard) {
      // A table the user cannot read is as if absent; columns denied outright are left out (Grist).
      if (!this.src.guard.tableVisible(tableId)) throw new NotFound(`Table not found "${tableId}"`);
      const {hiddenCols} = this.src.guard.readTable(tableId);
      cols = cols.filter((c) => !hiddenCols.has(c.colId));
    }
    return this.src.columnOrder(cols).map((c) => columnInfo(c));
  }

  // -------------------------------------------------------------------------------------------
  // Reading records

  /**
   * GET /records (and POST /records/list). With `page`, a positive limit also tells where the read
   * stopped (`page.next`, null when no row is left), for cursor pagination.
   */
  fetchRecords(tableId: string, q: RecordQuery = {}, page?: PageEnd): {records: ApiRecord[]} {
    const table = this.readableTable(tableId);
    q = this.resolved(table, q);
    const limit = pageLimit(q, page);
    const query = limit ? {...q, limit: limit + 1} : q;
    if (this.src.guard) {
      return {records: this.pageEnd(table, q, page, this.fetchGuarded(table, query), (r) => r.id)};
    }
    const cols = table.columns.filter((c) => q.hidden || !c.hidden);
    const rows = this.rawRows(table, cols, q, query, page);
    const build = recordBuilder(
      cols,
      q.cellFormat === 'typed',
      q.display ? this.displays(cols, () => this.src.db) : null,
    );
    const records = new Array<ApiRecord>(rows.length);
    for (let i = 0; i < rows.length; i++) records[i] = build(rows[i]);
    return {records};
  }

  /** The display text of each of `cols` (`display=true`), references looked up in `db()`. */
  private displays(cols: ColumnMeta[], db: () => Database.Database): CellFormatter[] {
    const meta = this.src.storage.meta;
    return cols.map((c) => cellDisplay(db, meta, c));
  }

  /** The rows of a read as stored (id, then `cols`), over the caller's scope, cut to its page. */
  private rawRows(
    table: TableMeta,
    cols: ColumnMeta[],
    q: RecordQuery,
    query: RecordQuery,
    page: PageEnd | undefined,
  ): unknown[][] {
    const {sql, params} = buildRecordQuery(
      this.src.db,
      this.src.storage.classes,
      table,
      columnList(cols),
      query,
      this.scope(table),
    );
    const rows = this.src.storage.stmt(sql).raw(true).all(params) as unknown[][];
    return this.pageEnd(table, q, page, rows, (r) => r[0] as number);
  }

  /**
   * GET /records as the JSON text of its body, exactly `fetchRecords`'s, stringified. SQLite writes
   * the text where it is provably the same (recordsjson.ts), else the records are built in JS. The
   * same read of unchanged data is answered from a cache (readcache.ts) without running it again.
   */
  fetchRecordsJson(tableId: string, q: RecordQuery = {}, page?: PageEnd): string {
    // Answers filtered for one user are neither cached nor shared.
    if (this.src.guard) return this.fetchGuardedJson(tableId, q, page);
    const paging = pageLimit(q, page) !== null;
    // An answer that may change with the clock alone is not kept with the data's stamp.
    if (q.where && !q.whereSql && this.parsedWhere(tableId, q.where).volatile) {
      const table = this.readableTable(tableId);
      return JSON.stringify(this.fetchRecords(tableId, this.resolved(table, q), page));
    }
    const key = recordsCacheKey(tableId, q, paging);
    const text = this.src.readCache.get(this.src.cacheOwner, this.src.dataStamp.now().join(','), key, () => {
      const table = this.readableTable(tableId);
      q = this.resolved(table, q);
      const cols = table.columns.filter((c) => q.hidden || !c.hidden);
      const wholeTable = !hasLimitOrFilter(q);
      const recordSql = q.display
        ? null
        : recordJsonSql(table, cols, q.cellFormat === 'typed', this.src.storage.classes, wholeTable);
      // A paging answer is kept with where it stopped: the position's JSON, a newline, the body.
      const end: PageEnd = {next: null};
      let body: string;
      if (recordSql === null) {
        this.src.recordsJsonPaths.js++;
        body = JSON.stringify(this.fetchRecords(tableId, q, end));
      } else {
        this.src.recordsJsonPaths.sql++;
        body = this.recordsJsonBySql(table, recordSql, q, end, this.scope(table));
      }
      return paging ? `${end.next ? encodePosition(end.next) : ''}\n${body}` : body;
    });
    return paging ? pagedBody(text, page!) : text;
  }

  /** The JSON of records SQLite writes (`recordSql`), limited to a page when `page` is asked. */
  private recordsJsonBySql(
    table: TableMeta,
    recordSql: string,
    q: RecordQuery,
    page: PageEnd | undefined,
    scope: RowScope,
  ): string {
    const limit = pageLimit(q, page);
    const query = limit ? {...q, limit: limit + 1} : q;
    const select = limit ? `"id", ${recordSql}` : recordSql;
    const {sql, params} = buildRecordQuery(this.src.db, this.src.storage.classes, table, select, query, scope);
    if (!limit) {
      const records = this.src.storage.stmt(sql).pluck().all(params) as string[];
      return `{"records":[${records.join(',')}]}`;
    }
    const rows = this.src.storage.stmt(sql).raw(true).all(params) as [number, string][];
    const kept = this.pageEnd(table, q, page, rows, (r) => r[0]);
    return `{"records":[${kept.map((r) => r[1]).join(',')}]}`;
  }

  // -------------------------------------------------------------------------------------------
  // `where` conditions (doc/where/, docs/queries.md)

  /** What resolving a condition needs of this document, for the current caller. */
  whereSource(): WhereSource {
    const src = this.src;
    return {
      db: src.db,
      meta: src.storage.meta,
      classes: src.storage.classes,
      guard: src.guard,
      state: src.where,
      settings: src.whereSettings,
      budget: {
        ...src.formulaBudget,
        maxRecalcMs: Math.min(src.formulaBudget?.maxRecalcMs ?? DEFAULT_BUDGET.maxRecalcMs, src.whereSettings.maxMs),
      },
      readRows: (tableId, ids, cols) => this.readRows(tableId, ids, cols),
      stamp: () => src.dataStamp.now().join(','),
    };
  }

  /** A condition parsed and checked against a table (400 when it is malformed). */
  private parsedWhere(tableId: string, text: string) {
    return parseWhere(this.whereSource(), this.readableTable(tableId), text);
  }

  /**
   * Whether the answer to `where` may change with the clock alone (NOW(), TODAY(), random): such a
   * read is neither cached nor revalidated. False for a condition that does not parse: its read
   * answers the error.
   */
  whereIsVolatile(tableId: string, text: string): boolean {
    try {
      return this.parsedWhere(tableId, text).volatile;
    } catch {
      return false;
    }
  }

  /** `q` with its `where` resolved into `whereSql` for a read of `table` by the current caller. */
  resolved(table: TableMeta, q: RecordQuery, opts: ResolveOptions = {}): RecordQuery {
    if (!q.where || q.whereSql) return q;
    const {sql, params} = resolveWhere(this.whereSource(), table, q.where, this.scope(table), opts).sql;
    return {...q, whereSql: {sql, params}};
  }

  /** A condition on a user table resolved for the caller (exports read it on their own connection). */
  whereCondition(tableId: string, where: string): {sql: string; params: unknown[]} {
    const table = this.src.userTable(tableId);
    const w = this.resolved(table, {where}).whereSql!;
    return {sql: w.sql, params: [...w.params]};
  }

  /**
   * The ids of the rows of a user table the caller can read for which `where` holds (a write by
   * condition), ascending; 400 beyond `whereSettings.maxRows`.
   */
  matchingIds(tableId: string, where: string, opts: ResolveOptions & {unbounded?: boolean} = {}): number[] {
    const table = this.src.userTable(tableId);
    if (!where.trim()) throw new BadRequest('A where condition is required (where=True names every row)');
    const q = this.resolved(table, {where}, opts);
    const max = opts.unbounded ? Number.MAX_SAFE_INTEGER - 1 : this.src.whereSettings.maxRows;
    let ids: number[];
    const scope = this.scope(table);
    if (scope.inJs) {
      ids = this.fetchGuarded(table, {...q, hidden: true}).map((r) => r.id);
    } else {
      const cond = recordCondition(this.src.storage.classes, table, q, scope);
      const t = quoteIdent(table.tableId);
      ids = (
        this.src.storage
          .stmt(`SELECT ${t}."id" FROM ${t}${cond.sql ? ` WHERE ${cond.sql}` : ''} ORDER BY ${t}."id" LIMIT ?`)
          .pluck()
          .all(...cond.params, max + 1) as Array<number | bigint>
      ).map(Number);
    }
    if (ids.length > max) {
      throw new BadRequest(
        `The condition matches more than ${max} rows, the most one write by condition may change ` +
          '(GRISTLITE_WHERE_MAX_ROWS); nothing was written',
      );
    }
    return ids;
  }

  /**
   * Beyond Grist (a change feed's `where`, D123): which of `ids` the condition holds for, as the
   * rows are now (a write's own transaction reads them as it leaves them). Rows the caller's row
   * rules hide are left to the feed's own filter; only the rows asked about are read, so a
   * condition the formula engine evaluates costs those rows, not the table.
   */
  matchingAmong(tableId: string, where: string, ids: readonly number[]): Set<number> {
    const table = this.src.userTable(tableId);
    if (!ids.length) return new Set();
    const base = this.scope(table);
    const among = {
      sql: `${quoteIdent(table.tableId)}."id" IN (SELECT value FROM json_each(?))`,
      params: [JSON.stringify(ids)],
    };
    const scope = RowScope.make(andScope(base, among), base.inJs);
    const cond = resolveWhere(this.whereSource(), table, where, scope).sql;
    const both = andScope(scope, {sql: cond.sql, params: [...cond.params]});
    const t = quoteIdent(table.tableId);
    const found = this.src.storage.stmt(`SELECT ${t}."id" FROM ${t} WHERE ${both.sql}`).pluck().all(both.params);
    return new Set((found as Array<number | bigint>).map(Number));
  }

  /** Checks a condition on a user table the caller can read (400 when malformed; 404, 403). */
  checkWhere(tableId: string, where: string): void {
    const table = this.src.userTable(tableId);
    this.src.guard?.readTable(table.tableId);
    parseWhere(this.whereSource(), table, where);
  }

  /**
   * How many rows a read would return (`count=true`): `filter` and `where` apply, `sort`, `limit`
   * and the cursor do not. SQLite counts them (`count(*)`) unless access rules check rows one by
   * one, which are then counted as the read would return them.
   */
  countRecords(tableId: string, q: RecordQuery = {}): number {
    const table = this.readableTable(tableId);
    const query: RecordQuery = this.resolved(table, {filter: q.filter, where: q.where});
    const scope = this.scope(table);
    if (this.src.guard) {
      const filter = this.src.guard.readTable(table.tableId, (c) => table.byId.get(c)?.type);
      checkQueryColumns(query, filter);
      if (scope.inJs || table.isMeta) return this.fetchGuarded(table, {...query, hidden: true}).length;
    }
    const where = recordCondition(this.src.storage.classes, table, query, scope);
    const from = `${quoteIdent(table.tableId)}${where.sql ? ` WHERE ${where.sql}` : ''}`;
    return Number(this.src.storage.stmt(`SELECT count(*) FROM ${from}`).pluck().get(where.params));
  }

  /**
   * Beyond Grist (issue 40 §2): the groups of an aggregate (doc/aggregate/), over the rows the
   * caller can read: in SQL where access rules decide rows there, else over the rows they allow
   * one by one (as the read under the same rules checks them), censored cells left out.
   */
  aggregate(tableId: string, q: AggregateQuery): AggregateRecord[] {
    const table = this.readableTable(tableId);
    this.src.userTable(tableId);
    const guard = this.src.guard;
    const filter = guard ? guard.readTable(table.tableId, (c) => table.byId.get(c)?.type) : null;
    const src: AggregateSource = {
      db: this.src.db,
      meta: this.src.storage.meta,
      classes: this.src.storage.classes,
      hiddenCols: filter?.hiddenCols ?? new Set(),
      maxGroups: this.src.whereSettings.maxGroups,
      maxChars: this.src.whereSettings.maxChars,
    };
    const plan = planAggregate(src, table, q);
    const query = this.resolved(table, {where: q.where || undefined});
    const scope = this.scope(table);
    const used = [...plan.groups, ...plan.aggs.flatMap((a) => (a.col ? [a.col] : []))];
    if (!scope.inJs && !used.some((c) => filter?.censoredCols?.has(c.colId))) {
      return runAggregate(src, plan, {
        kind: 'sql',
        where: recordCondition(this.src.storage.classes, table, query, scope),
      });
    }
    const records = this.fetchGuarded(table, {...query, hidden: true});
    const censored = new Map<string, number[]>();
    for (const c of used) {
      const ids = records.filter((r) => isCensored(r.fields[c.colId])).map((r) => r.id);
      if (ids.length) censored.set(c.colId, ids);
    }
    return runAggregate(src, plan, {kind: 'ids', ids: records.map((r) => r.id), censored});
  }

  // -------------------------------------------------------------------------------------------
  // Streamed answers (stream.ts, D61, D62)

  /**
   * GET /records as `fetchRecordsJson` writes it, byte for byte, but for a large answer (more
   * than `minCells` cells, estimated) as a stream read from one snapshot of the document; smaller
   * answers, and large ones the read cache holds (a stream read to its end is kept there when it
   * fits), are the text itself. Errors of the query are thrown here, before any byte.
   */
  streamRecordsJson(
    tableId: string,
    q: RecordQuery = {},
    page?: PageEnd,
    opts: StreamOptions = {},
  ): string | AsyncIterable<Uint8Array> {
    const table = this.readableTable(tableId);
    const volatile = !!q.where && !q.whereSql && this.parsedWhere(tableId, q.where).volatile;
    q = this.resolved(table, q);
    const guard = this.src.guard;
    let plan: {
      select: string;
      scope: RowScope;
      map: ((row: unknown[]) => ApiRecord | null) | null;
      query: RecordQuery;
    } | null = null;
    let keep: StreamKeep | undefined;
    // The snapshot the stream reads from, once open: display texts look references up there.
    let streamDb: Database.Database = this.src.db;
    if (!guard) {
      const cols = table.columns.filter((c) => q.hidden || !c.hidden);
      const cells = this.streamedCells(table, q, cols.length, opts);
      if (cells) {
        const kept = volatile ? undefined : this.cachedStream(tableId, q, page, cells);
        if (typeof kept === 'string') return kept;
        keep = kept;
        const recordSql = q.display
          ? null
          : recordJsonSql(table, cols, q.cellFormat === 'typed', this.src.storage.classes, !hasLimitOrFilter(q));
        const scope = this.scope(table);
        if (recordSql !== null) {
          this.src.recordsJsonPaths.sql++;
          plan = {select: recordSql, scope, map: null, query: q};
        } else {
          this.src.recordsJsonPaths.js++;
          const shows = q.display ? this.displays(cols, () => streamDb) : null;
          plan = {select: columnList(cols), scope, map: recordBuilder(cols, q.cellFormat === 'typed', shows), query: q};
        }
      }
    } else if (!table.isMeta) {
      const filter = guard.readTable(table.tableId, (c) => table.byId.get(c)?.type);
      checkQueryColumns(q, filter);
      const cols = table.columns.filter((c) => (q.hidden || !c.hidden) && !filter.hiddenCols.has(c.colId));
      const scope = this.scope(table);
      // Rows filtered in JS with a limit: the limit counts rows after filtering; built whole.
      if (this.streamedCells(table, q, cols.length, opts) && !(scope.inJs && q.limit)) {
        const recordSql =
          scope.inJs || q.display
            ? null
            : recordJsonSql(table, cols, q.cellFormat === 'typed', this.src.storage.classes, !hasLimitOrFilter(q));
        if (recordSql !== null) {
          plan = {select: recordSql, scope, map: null, query: q};
        } else {
          const read = this.guardedRead(table, q, () => streamDb)!;
          plan = {select: read.select, scope: read.scope, map: read.map, query: read.query};
        }
      }
    }
    if (!plan)
      return volatile ? JSON.stringify(this.fetchRecords(tableId, q, page)) : this.fetchRecordsJson(tableId, q, page);
    const {select, scope, map, query} = plan;
    const {db, release} = openStream(this.src.path, opts);
    streamDb = db;
    try {
      let items: () => Iterator<string | null>;
      if (map) {
        const source = this.orderedSource(db, table, query, page, scope);
        const {sql, params} = source
          ? {sql: `SELECT ${select}${source.from}`, params: source.params}
          : buildRecordQuery(db, this.src.storage.classes, table, select, query, scope);
        const stmt = db.prepare(sql).raw(true);
        items = () => batchJson(stmt.iterate(params) as IterableIterator<unknown[]>, (row) => map(row) ?? SKIP);
      } else {
        // SQLite joins the records of each batch of rows: one string per batch crosses into JS,
        // not one per row (fewer, smaller allocations: see BATCH_CHARS).
        const plain = !query.limit && !hasLimitOrFilter(query) && !query.sort?.length && !query.after;
        const source = plain ? null : this.orderedSource(db, table, query, page, scope, true);
        if (plain && page) page.next = null;
        const t = quoteIdent(table.tableId);
        // The rows after the last batch's key, of those the scope allows (its parameters follow the key's).
        const after = andScope(scope, {sql: `${t}."id" > ?`, params: []});
        const inner = source
          ? `SELECT "gristlite pos" AS k, ${select} AS j${source.from}`
          : `SELECT ${t}."id" AS k, ${select} AS j FROM ${t} WHERE ${after.sql} ORDER BY ${t}."id"`;
        // No ORDER BY inside group_concat: it made SQLite sort every batch again (a quarter of the
        // read). The subquery has a LIMIT, so SQLite never flattens it into the aggregate; it runs
        // as a co-routine yielding its rows in its own ORDER BY, in which the aggregate takes them.
        // The fixture tests compare every streamed answer with the one built whole, byte for byte.
        const batch = db.prepare(`SELECT group_concat(j, ','), max(k) FROM (${inner} LIMIT ?)`).raw(true);
        items = () => keysetBatches(batch, source ? source.params.slice(1) : after.params);
      }
      return new JsonStream([{open: '{"records":[', items}], '}', release, opts, keep);
    } catch (e) {
      release();
      throw e;
    }
  }

  /**
   * For a streamed read not filtered for one user: its answer from the read cache (the text), or
   * how to keep it there as it streams when it may fit (estimated at KEEP_CHARS_PER_CELL
   * characters a cell at least, so that an answer too large for the cache is not copied while it
   * streams), or undefined. The stamp is read before the snapshot is taken: a write between them
   * makes the answer newer than its stamp, which no later read matches, never older.
   */
  private cachedStream(tableId: string, q: RecordQuery, page: PageEnd | undefined, cells: number) {
    const {readCache, cacheOwner} = this.src;
    if (cells * KEEP_CHARS_PER_CELL > readCache.maxChars) return undefined;
    const paging = pageLimit(q, page) !== null;
    const key = recordsCacheKey(tableId, q, paging);
    const stamp = this.src.dataStamp.now().join(',');
    const cached = readCache.peek(cacheOwner, stamp, key);
    if (cached !== undefined) return paging ? pagedBody(cached, page!) : cached;
    const keep: StreamKeep = {
      maxChars: readCache.maxChars,
      done: (text) => {
        const next = paging && page!.next ? encodePosition(page!.next) : '';
        readCache.put(cacheOwner, stamp, key, paging ? `${next}\n${text}` : text);
      },
    };
    return keep;
  }

  /**
   * GET /data as `JSON.stringify(fetchColumns(...))` writes it, streamed column by column from one
   * snapshot when the answer is large (else the text itself). The rows' order is found once (into
   * a temporary table of ids, unless it is the table's own id order), then each column is read in
   * that order. Under access rules that check rows one by one, the answer is built whole.
   */
  streamColumnsJson(
    tableId: string,
    q: RecordQuery = {},
    page?: PageEnd,
    opts: StreamOptions = {},
  ): string | AsyncIterable<Uint8Array> {
    const table = this.readableTable(tableId);
    q = this.resolved(table, q);
    const guard = this.src.guard;
    let cols = table.columns;
    if (guard) {
      if (table.isMeta) return JSON.stringify(this.fetchColumns(tableId, q, page));
      const filter = guard.readTable(table.tableId, (c) => table.byId.get(c)?.type);
      checkQueryColumns(q, filter);
      cols = cols.filter((c) => !filter.hiddenCols.has(c.colId));
    }
    const scope = this.scope(table);
    if (scope.inJs || !this.streamedCells(table, q, cols.length, opts)) {
      return JSON.stringify(this.fetchColumns(tableId, q, page));
    }
    const {db, release} = openStream(this.src.path, opts);
    try {
      const source = this.orderedSource(db, table, q, page, scope, true);
      const typed = q.cellFormat === 'typed';
      const t = quoteIdent(table.tableId);
      // Each column is read JSON_BATCH rows at a time, a statement's all() per batch (2-2.5x faster
      // than iterating a 1M-row column row by row, measured): the ids' part finds the batches, as
      // ranges of the order's position or of the id, and the other columns read the same ranges.
      const ranges: Array<[number, number]> = [];
      const inRange = andScope(scope, {sql: `${t}."id" > ? AND ${t}."id" <= ?`, params: []});
      const rangeSql = source ? source.from : ` FROM ${t} WHERE ${inRange.sql} ORDER BY ${t}."id"`;
      const rangeParams = (lo: number, hi: number) => (source ? [lo, hi] : [lo, hi, ...inRange.params]);
      const idBatches = (): Iterator<string | null> => {
        if (source) {
          const stmt = db.prepare(`SELECT ${t}."id"${source.from}`).pluck();
          const end = source.params[1] as number;
          return rangeBatches(ranges, 0, (lo) => {
            const hi = Math.min(lo + JSON_BATCH, end);
            const ids = lo >= end ? [] : stmt.all(lo, hi);
            return ids.length ? [hi, ids] : null;
          });
        }
        const after = andScope(scope, {sql: `${t}."id" > ?`, params: []});
        const stmt = db
          .prepare(`SELECT ${t}."id" FROM ${t} WHERE ${after.sql} ORDER BY ${t}."id" LIMIT ${JSON_BATCH}`)
          .pluck();
        // From below any id (-Infinity binds as a REAL that every integer id is above).
        return rangeBatches(ranges, -Infinity, (lo) => {
          const ids = stmt.all(lo, ...after.params) as number[];
          return ids.length ? [ids[ids.length - 1], ids] : null;
        });
      };
      const column = (col: ColumnMeta | null): JsonPart => {
        if (!col) return {open: '"id":[', items: idBatches};
        const stmt = db.prepare(`SELECT ${t}.${quoteIdent(col.colId)}${rangeSql}`).pluck();
        const fmt = typed ? col.typed : null;
        const value = (v: unknown) => {
          const c = col.decode(v);
          return fmt && !(Array.isArray(c) && c[0] === 'E') ? fmt(c) : c;
        };
        return {
          open: `${JSON.stringify(col.colId)}:[`,
          items: () => rangeJson(ranges, (lo, hi) => stmt.all(...rangeParams(lo, hi)), value),
        };
      };
      const parts = [column(null), ...cols.map((c) => column(c))];
      parts[0].open = '{' + parts[0].open;
      return new JsonStream(parts, '}', release, opts);
    } catch (e) {
      release();
      throw e;
    }
  }

  /**
   * The estimated cells of a read of `table` that streams (0: it does not): at least `minCells`, on a
   * WAL document (a reader would block the writer otherwise) outside any open write (the
   * snapshot must be what the column statistics describe).
   */
  private streamedCells(table: TableMeta, q: RecordQuery, ncols: number, opts: StreamOptions): number {
    if (this.src.db.inTransaction || this.src.db.memory) return 0;
    const minCells = opts.minCells ?? STREAM_DEFAULTS.minCells;
    const {m} = this.src.storage.stmt(`SELECT max(id) AS m FROM ${quoteIdent(table.tableId)}`).get() as {
      m: number | null;
    };
    const rows = q.limit && q.limit > 0 ? Math.min(q.limit, m ?? 0) : (m ?? 0);
    const cells = rows * (ncols + 1);
    if (cells < minCells) return 0;
    // At least 1 when it streams: an empty table streams too when minCells is 0.
    return String(this.src.db.pragma('journal_mode', {simple: true})).toLowerCase() === 'wal' ? Math.max(1, cells) : 0;
  }

  /**
   * For a streamed read that is paged (the Link header must be known before the first byte) or
   * read column by column: the ids of its rows, in order, put into a temporary table of `db`,
   * with `page.next` set; the FROM clause (and its parameters: the position after which to start,
   * 0 for the first row, and the last position) that reads the table's rows in that order. Null when the rows can be read directly (not paged, not by column).
   */
  private orderedSource(
    db: Database.Database,
    table: TableMeta,
    q: RecordQuery,
    page: PageEnd | undefined,
    scope: RowScope,
    byColumn = false,
  ): {from: string; params: unknown[]} | null {
    const limit = pageLimit(q, page);
    if (page) page.next = null;
    if (limit === null && (!byColumn || !(q.limit || hasLimitOrFilter(q) || q.sort?.length || q.after))) return null;
    const query = limit ? {...q, limit: limit + 1} : q;
    const {sql, params} = buildRecordQuery(db, this.src.storage.classes, table, '"id"', query, scope);
    // Column names no Grist column can have (colIds are identifiers), so never ambiguous.
    db.exec('CREATE TEMP TABLE "gristlite order" ("gristlite pos" INTEGER PRIMARY KEY, "gristlite rid" INTEGER)');
    db.prepare(`INSERT INTO temp."gristlite order" ("gristlite rid") ${sql}`).run(params);
    let kept = Infinity;
    if (limit !== null) {
      const beyond = db.prepare(`SELECT 1 FROM temp."gristlite order" WHERE "gristlite pos" = ?`).get(limit + 1);
      if (beyond) {
        kept = limit;
        const last = db
          .prepare(`SELECT "gristlite rid" FROM temp."gristlite order" WHERE "gristlite pos" = ?`)
          .pluck()
          .get(limit) as number;
        page!.next = this.positionOf(table, q, last, db);
      }
    }
    const t = quoteIdent(table.tableId);
    return {
      from:
        ` FROM temp."gristlite order" JOIN main.${t} ON ${t}."id" = "gristlite rid"` +
        ` WHERE "gristlite pos" > ? AND "gristlite pos" <= ? ORDER BY "gristlite pos"`,
      params: [0, kept === Infinity ? Number.MAX_SAFE_INTEGER : kept],
    };
  }

  /**
   * Rows read one beyond a page's limit cut back to it, and `page.next` set: the position of the
   * last row kept when there was a row beyond (and the order is one a cursor can carry), else null.
   */
  private pageEnd<T>(
    table: TableMeta,
    q: RecordQuery,
    page: PageEnd | undefined,
    rows: T[],
    idOf: (row: T) => number,
  ): T[] {
    const limit = pageLimit(q, page);
    if (!page) return rows;
    page.next = null;
    if (limit === null || rows.length <= limit) return rows;
    const kept = rows.slice(0, limit);
    page.next = this.positionOf(table, q, idOf(kept[limit - 1]));
    return kept;
  }

  /** The stored values that place row `id` in the order of `q` (what a cursor carries), or null. */
  private positionOf(
    table: TableMeta,
    q: RecordQuery,
    id: number,
    db?: Database.Database,
  ): Record<string, unknown> | null {
    const specs = parseSortParam(q.sort);
    // Counted with every term a column could need, so that a cursor never outgrows the limit later.
    if (sortTerms(table, specs).length > MAX_CURSOR_TERMS) return null;
    const cols = sortColumns(table, specs);
    const sql = `SELECT ${cols.map(quoteIdent).join(', ')} FROM ${quoteIdent(table.tableId)} WHERE id = ?`;
    const row = (db ? db.prepare(sql) : this.src.storage.stmt(sql)).raw(true).get(id) as unknown[] | undefined;
    return row ? Object.fromEntries(cols.map((c, i) => [c, row[i]])) : null;
  }

  /** GET /data: column-oriented, always with every column; errors stay raw. */
  fetchColumns(tableId: string, q: RecordQuery = {}, page?: PageEnd): Record<string, CellValue[]> {
    const table = this.readableTable(tableId);
    q = this.resolved(table, q);
    const limit = pageLimit(q, page);
    const query = limit ? {...q, limit: limit + 1} : q;
    if (this.src.guard) {
      const records = this.pageEnd(table, q, page, this.fetchGuarded(table, {...query, hidden: true}), (r) => r.id);
      const visible = this.src.guard.readTable(table.tableId).hiddenCols;
      const out: Record<string, CellValue[]> = {id: records.map((r) => r.id)};
      for (const c of table.columns) {
        if (!visible.has(c.colId)) out[c.colId] = records.map((r) => r.fields[c.colId] ?? null);
      }
      return out;
    }
    const cols = table.columns;
    const rows = this.rawRows(table, cols, q, query, page);
    const typed = q.cellFormat === 'typed';
    const out: Record<string, CellValue[]> = {id: rows.map((r) => r[0] as number)};
    cols.forEach((c, j) => {
      const fmt = typed ? c.typed : null;
      out[c.colId] = rows.map((r) => {
        const v = c.decode(r[j + 1]);
        return fmt && !(Array.isArray(v) && v[0] === 'E') ? fmt(v) : v;
      });
    });
    return out;
  }

  /**
   * GET /records under access rules. When the rules come down to a row condition SQLite can test
   * (and no cell is censored), SQLite writes the JSON as for an unfiltered read; else the records
   * are filtered in JS.
   */
  private fetchGuardedJson(tableId: string, q: RecordQuery, page?: PageEnd): string {
    const table = this.readableTable(tableId);
    q = this.resolved(table, q);
    const guard = this.src.guard!;
    if (!table.isMeta) {
      const filter = guard.readTable(table.tableId, (c) => table.byId.get(c)?.type);
      checkQueryColumns(q, filter);
      const scope = this.scope(table);
      if (!scope.inJs && !q.display) {
        const cols = table.columns.filter((c) => (q.hidden || !c.hidden) && !filter.hiddenCols.has(c.colId));
        // A row condition still reads every row: the column statistics may be scanned, as for a whole table.
        const wholeTable = !hasLimitOrFilter(q);
        const recordSql = recordJsonSql(table, cols, q.cellFormat === 'typed', this.src.storage.classes, wholeTable);
        if (recordSql !== null) return this.recordsJsonBySql(table, recordSql, q, page, scope);
      }
    }
    return JSON.stringify(this.fetchRecords(tableId, q, page));
  }

  /**
   * A read under access rules: the table refused (403) or its rows read whole, filtered row by row
   * where rules depend on rows (cells censored as `["C"]`, denied columns left out), and `limit`
   * applied after filtering, as Grist filters before limiting.
   */
  private fetchGuarded(table: TableMeta, q: RecordQuery): ApiRecord[] {
    const read = this.guardedRead(table, q);
    if (!read) return [];
    const {sql, params} = buildRecordQuery(
      this.src.db,
      this.src.storage.classes,
      table,
      read.select,
      read.query,
      read.scope,
    );
    const rows = this.src.storage.stmt(sql).raw(true).all(params) as unknown[][];
    const out: ApiRecord[] = [];
    const inJs = read.scope.inJs;
    const limit = inJs && q.limit && q.limit > 0 ? q.limit : Infinity;
    for (const row of rows) {
      if (out.length >= limit) break;
      const r = read.map(row);
      if (r) out.push(r);
    }
    // A negative limit drops rows from the end (Grist's quirk), counted after filtering.
    if (inJs && q.limit && q.limit < 0) return out.slice(0, Math.max(0, out.length + q.limit));
    return out;
  }

  /**
   * How a read under access rules goes: the query to run (every column, over the caller's
   * `scope`) and the record each row makes, or null when it is left out. When the scope is
   * `inJs`, rows are filtered here, so `limit` is applied after them (in SQL otherwise). Null:
   * nothing to read.
   */
  private guardedRead(
    table: TableMeta,
    q: RecordQuery,
    displayDb: () => Database.Database = () => this.src.db,
  ): {
    select: string;
    query: RecordQuery;
    scope: RowScope;
    map: (row: unknown[]) => ApiRecord | null;
  } | null {
    const guard = this.src.guard!;
    if (table.tableId.startsWith('_grist_ACL') && !guard.canReadRules()) return null;
    const metaRow = table.isMeta ? this.metaRowFilter(table.tableId, guard) : null;
    const filter = guard.readTable(table.tableId, (c) => table.byId.get(c)?.type);
    checkQueryColumns(q, filter);
    const all = table.columns;
    const shown = all.filter((c) => (q.hidden || !c.hidden) && !filter.hiddenCols.has(c.colId));
    const scope = this.scopeOf(filter, metaRow);
    const typed = q.cellFormat === 'typed';
    const shows = q.display ? this.displays(shown, displayDb) : null;
    const map = (row: unknown[]): ApiRecord | null => {
      const id = row[0] as number;
      const values: RowValues & {id: number} = {id};
      for (let j = 0; j < all.length; j++) values[all[j].colId] = all[j].decode(row[j + 1]);
      if (metaRow && !metaRow(values)) return null;
      const censored = filter.row ? filter.row(values) : null;
      if (censored === null && filter.row) return null;
      const fields: Record<string, CellValue> = {};
      let errors: Record<string, string> | undefined;
      let display: Record<string, string> | undefined;
      for (let j = 0; j < shown.length; j++) {
        const c = shown[j];
        const hidden = censored?.has(c.colId);
        let v: CellValue = hidden ? ['C'] : values[c.colId];
        const text = shows ? shows[j](v) : null;
        if (hidden) {
          // censored: ["C"] in every format
        } else if (Array.isArray(v) && v[0] === 'E' && !typed) {
          (errors ??= {})[c.colId] = String(v[1]);
          v = null;
        } else if (typed && !(Array.isArray(v) && v[0] === 'E')) v = c.typed ? c.typed(v) : v;
        fields[c.colId] = v;
        if (text !== null && displayDiffers(v, text)) (display ??= {})[c.colId] = text;
      }
      return withExtras({id, fields}, errors, display);
    };
    return {
      select: columnList(all),
      query: scope.inJs ? {...q, limit: undefined} : q,
      scope,
      map,
    };
  }

  /**
   * Rows of metadata tables that describe what the user cannot see are left out (Grist censors
   * them): tables they cannot read, columns denied to them, and cell comments outside what they
   * can read in full. Null when the table needs no such filter.
   */
  private metaRowFilter(tableId: string, guard: DocGuard): ((row: RowValues) => boolean) | null {
    const meta = this.src.storage.meta;
    const tableVisible = (ref: CellValue) => {
      const t = meta.byRef.get(Number(ref));
      return !t || guard.tableVisible(t.tableId);
    };
    const colVisible = (ref: CellValue, fully: boolean) => {
      const found = meta.colsByRef.get(Number(ref));
      if (!found) return true;
      if (!guard.tableVisible(found.table.tableId)) return false;
      const f = guard.readTable(found.table.tableId);
      return !f.hiddenCols.has(found.col.colId) && (!fully || !f.row);
    };
    switch (tableId) {
      case '_grist_Tables':
        return (row) => guard.tableVisible(String(row.tableId));
      case '_grist_Tables_column':
        return (row) => tableVisible(row.parentId) && colVisible(row.id, false);
      case '_grist_Cells':
        return (row) => tableVisible(row.tableRef) && colVisible(row.colRef, true);
      case '_grist_Attachments': {
        const readable = this.readableAttachments();
        return readable ? (row) => readable.has(Number(row.id)) : null;
      }
      default:
        return null;
    }
  }

  private readableTable(tableId: string): TableMeta {
    if (tableId.startsWith('_gristsys_')) {
      throw new NotFound(`Table not found "${tableId}"`);
    }
    return this.src.table(tableId);
  }
}
