/**
 * Document data endpoints (SPEC §8-§11): tables, columns, records, the deprecated columnar /data
 * form, and POST /apply. Handlers check access, parse parameters as Grist does, and call the
 * open document's GristDoc.
 *
 * Record bodies are checked by core's `recordsBody` (shared with Session), in Grist's wording.
 */
import * as v from 'valibot';
import {
  type AggregateQuery,
  BadRequest,
  type CellValue,
  type GristDoc,
  type PageEnd,
  type RecordQuery,
  type Role,
  recordsBody,
} from '@gristlite/core/internal';
import {cursorParam, nextLink, type PageQuery} from '../paging.js';
import {flag, oneOf, type Route} from '../route.js';
import {RawResponse, type RequestContext} from '../types.js';
import {ref} from '../openapi-schemas.js';
import {CellValue as CellValueSchema, nonEmptyArray, type TypeNames, validate} from '../validate.js';
import {docRoute, openDocFor, type Need} from './doc-common.js';

// ---------------------------------------------------------------------------------------------
// Record bodies, with Grist's error texts.

function isObject(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

/** A JSON text the engine already produced (cached reads, or streamed), sent as it is. */
function jsonText(text: string | AsyncIterable<Uint8Array>): RawResponse {
  return new RawResponse(200, text, {'Content-Type': 'application/json; charset=utf-8'});
}

// ---------------------------------------------------------------------------------------------
// Other bodies (valibot; also documents the routes in the OpenAPI output).

const Fields = v.record(v.string(), CellValueSchema);
const ColumnSpec = v.looseObject({id: v.optional(v.string()), fields: v.optional(Fields)}, 'is not an object');
const ColumnUpdate = v.looseObject({id: v.string(), fields: Fields}, 'is not an object');
const TablesPost = v.looseObject({
  tables: nonEmptyArray(
    v.looseObject({id: v.optional(v.string()), columns: nonEmptyArray(ColumnSpec)}, 'is not an object'),
  ),
});
const TablesPatch = v.looseObject({tables: nonEmptyArray(ColumnUpdate)});
const ColumnsPost = v.looseObject({columns: nonEmptyArray(ColumnSpec)});
const ColumnsPatch = v.looseObject({columns: nonEmptyArray(ColumnUpdate)});
// Grist's type names along the way (app/plugin/DocApiTypes.ts), for its error messages.
const TABLES_POST: TypeNames = [
  ['tables[]', 'TablePost'],
  ['tables[].columns[]', 'NewRecordWithStringId'],
];
const TABLES_PATCH: TypeNames = [['tables[]', 'RecordWithStringId']];
const COLUMNS_POST: TypeNames = [['columns[]', 'NewRecordWithStringId']];
const COLUMNS_PATCH: TypeNames = [['columns[]', 'RecordWithStringId']];
/** The body of `POST /records/list` (the MCP `read_records` tool checks its input with it too). */
export const RecordsListPost = v.looseObject({
  filter: v.optional(v.record(v.string(), v.array(v.unknown()))),
  sort: v.optional(v.array(v.string())),
  // A whole number (a fraction would cut a page at no row: issue 40's fuzz found a 500).
  limit: v.optional(v.pipe(v.number(), v.integer('is not an integer'))),
  hidden: v.optional(v.boolean()),
  immediate: v.optional(v.boolean()),
  cellFormat: v.optional(v.picklist(['normal', 'typed'])),
  display: v.optional(v.boolean()),
  where: v.optional(v.string()),
  count: v.optional(v.boolean()),
});
/** The body of an update by condition (`PATCH /records?where=...`). */
const FieldsBody = v.looseObject({fields: v.record(v.string(), v.unknown())});
const CellValues = v.record(v.string(), v.unknown());
const RecordsBody = v.looseObject({
  records: v.array(v.looseObject({id: v.optional(v.number()), fields: v.optional(CellValues)})),
});
const UpsertBody = v.looseObject({
  records: v.array(v.looseObject({require: CellValues, fields: v.optional(CellValues)})),
});
const ColumnarBody = v.record(v.string(), v.array(v.unknown()));
const RowIds = v.array(v.unknown());
const UserActions = v.array(v.array(v.unknown()));

// ---------------------------------------------------------------------------------------------
// Parameters

/** The document, after the access check. */
async function gristFor(ctx: RequestContext, need: Need): Promise<GristDoc> {
  return (await openDocFor(ctx, need)).grist;
}

/** The document for a record write, with the caller's role (metadata tables have rules by role). */
async function writerFor(ctx: RequestContext): Promise<{doc: GristDoc; role: 'owners' | 'editors'}> {
  const {grist, role} = await openDocFor(ctx, 'editors');
  return {doc: grist, role: writerRole(role)};
}

/** The role metadata rules see for a caller with write access. */
function writerRole(role: Role): 'owners' | 'editors' {
  return role === 'owners' ? 'owners' : 'editors';
}

function tableParam(ctx: RequestContext, doc: GristDoc): string {
  return doc.resolveTableId(ctx.params.tableId);
}

/** Comma-separated names of a query parameter (absent or empty: none). */
function listParam(ctx: RequestContext, name: string): string[] | undefined {
  const text = ctx.query.get(name);
  return text ? text.split(',').map((s) => s.trim()) : undefined;
}

/**
 * Beyond Grist (issue 40 §2, D116): `GET /aggregate`'s parameters, checked further by core
 * (column names, functions, having) before any row is read.
 */
function aggregateQuery(ctx: RequestContext): AggregateQuery {
  const q: AggregateQuery = {
    groupBy: listParam(ctx, 'group_by'),
    agg: listParam(ctx, 'agg'),
    sort: listParam(ctx, 'sort'),
  };
  const where = ctx.query.get('where');
  if (where) q.where = where;
  const having = ctx.query.get('having');
  if (having) q.having = having;
  const limit = ctx.query.get('limit');
  if (limit !== null && limit !== '') {
    if (!/^\d{1,15}$/.test(limit)) throw new BadRequest('Invalid limit: a positive integer');
    q.limit = Number(limit);
  }
  return q;
}

/** filter/sort/limit from the query string (or X-Sort/X-Limit headers, the query winning). */
function readQuery(ctx: RequestContext): RecordQuery {
  const q: RecordQuery = {};
  const filter = ctx.query.get('filter');
  if (filter !== null && filter !== '') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(filter);
    } catch (e) {
      throw new BadRequest(`Invalid query: filter is not valid JSON (${(e as Error).message})`);
    }
    if (parsed === null) {
      throw new BadRequest('Invalid query: filter must be a JSON object');
    }
    // Grist reads any other JSON value by its keys: a list's are its indexes, a number has none.
    q.filter = isObject(parsed) ? parsed : Object.fromEntries(Object.entries(parsed as object));
  }
  const sort = ctx.query.get('sort') ?? ctx.headers['x-sort'];
  if (sort) {
    q.sort = sort;
  }
  const limit = ctx.query.get('limit') ?? ctx.headers['x-limit'];
  if (limit !== null && limit !== undefined && limit !== '') {
    const n = Number(limit);
    if (Number.isNaN(n)) {
      throw new BadRequest('limit is not a number');
    }
    q.limit = Math.trunc(n);
  }
  q.hidden = flag(ctx.query, 'hidden');
  q.cellFormat = oneOf('cellFormat', ctx.query.get('cellFormat'), ['normal', 'typed'] as const, 'normal');
  const where = ctx.query.get('where');
  if (where) q.where = where;
  return q;
}

/**
 * Beyond Grist (issue 40 §3, docs/queries.md): `?where=` of a write by condition. A write that
 * names no condition is refused: `where=True` is how every row is named.
 */
function writeWhere(ctx: RequestContext): string | null {
  const where = ctx.query.get('where');
  if (where === null) return null;
  if (!where.trim()) throw new BadRequest('A where condition is required (where=True names every row)');
  return where;
}

/** The ids a write by condition touched, in the shape of POST /records' answer. */
function touched(ids: number[]): {records: Array<{id: number}>} {
  return {records: ids.map((id) => ({id}))};
}

/**
 * `display=true` (the name) or `includeDisplay=1` (the name grist-core #880 proposes):
 * each record gains the text Grist shows for its formatted cells (D88). Not with typed cells,
 * whose encoding already says what each value is.
 */
function displayParam(ctx: RequestContext, q: RecordQuery): RecordQuery {
  return withDisplayIf(flag(ctx.query, 'display') || flag(ctx.query, 'includeDisplay'), q);
}

export function withDisplayIf(display: boolean | undefined, q: RecordQuery): RecordQuery {
  if (!display) return q;
  if (q.cellFormat === 'typed') throw new BadRequest('display cannot be combined with cellFormat=typed');
  return {...q, display: true};
}

/** readQuery, plus the position of `?cursor=` (beyond Grist: cursor pagination, paging.ts). */
function pagedQuery(ctx: RequestContext, docId: string, tableId: string): {q: RecordQuery; where: PageQuery} {
  const q = readQuery(ctx);
  // A cursor is bound to the condition too (with none, to the filter alone, as before conditions).
  const where: PageQuery = {docId, tableId, filter: q.where ? [q.filter ?? null, q.where] : q.filter, sort: q.sort};
  const after = cursorParam(ctx, where);
  return {q: after ? {...q, after} : q, where};
}

function parseOpts(ctx: RequestContext): {parse: boolean} {
  return {parse: !flag(ctx.query, 'noparse')};
}

const DATA = '/api/docs/:docId/tables/:tableId';

export const docDataRoutes: Route[] = [
  // Tables (§8)
  docRoute({
    method: 'GET',
    path: '/api/docs/:docId/tables',
    tag: 'tables',
    summary: 'List tables',
    revalidate: true,
    query: ['expand'],
    need: 'viewers',
    handler: async (ctx, {grist: doc}) => {
      const expand = ctx.query.get('expand');
      if (expand !== null && expand !== 'column') {
        throw new BadRequest(`expand parameter ${expand} should be one of column`);
      }
      const tables = doc.listTables();
      if (!expand) {
        return {tables};
      }
      return {tables: tables.map((t) => ({...t, columns: doc.listColumns(t.id)}))};
    },
  }),
  docRoute({
    method: 'POST',
    path: '/api/docs/:docId/tables',
    tag: 'tables',
    summary: 'Add tables',
    need: 'editors',
    body: {schema: TablesPost, names: TABLES_POST},
    handler: async (_ctx, {grist: doc}, body) => ({tables: doc.addTables(body.tables)}),
  }),
  docRoute({
    method: 'PATCH',
    path: '/api/docs/:docId/tables',
    tag: 'tables',
    summary: 'Update tables (rename)',
    need: 'editors',
    body: {schema: TablesPatch, names: TABLES_PATCH},
    handler: async (_ctx, {grist: doc}, body) => {
      doc.updateTables(body.tables);
      return null;
    },
  }),

  // Columns (§9)
  docRoute({
    method: 'GET',
    path: `${DATA}/columns`,
    tag: 'columns',
    summary: 'List columns',
    revalidate: true,
    query: ['hidden'],
    need: 'viewers',
    handler: async (ctx, {grist: doc}) => {
      return {columns: doc.listColumns(tableParam(ctx, doc), {hidden: flag(ctx.query, 'hidden')})};
    },
  }),
  docRoute({
    method: 'POST',
    path: `${DATA}/columns`,
    tag: 'columns',
    summary: 'Add columns',
    need: 'editors',
    body: {schema: ColumnsPost, names: COLUMNS_POST},
    handler: async (ctx, {grist: doc}, body) => {
      return {columns: doc.addColumns(tableParam(ctx, doc), body.columns)};
    },
  }),
  docRoute({
    method: 'PATCH',
    path: `${DATA}/columns`,
    tag: 'columns',
    summary: 'Update columns',
    need: 'editors',
    body: {schema: ColumnsPatch, names: COLUMNS_PATCH},
    handler: async (ctx, {grist: doc}, body) => {
      const tableId = tableParam(ctx, doc);
      doc.updateColumns(tableId, body.columns);
      return null;
    },
  }),
  docRoute({
    method: 'PUT',
    path: `${DATA}/columns`,
    tag: 'columns',
    summary: 'Add or update columns',
    query: ['noadd', 'noupdate', 'replaceall'],
    need: 'editors',
    body: {schema: ColumnsPatch, prefix: 'value', names: COLUMNS_PATCH},
    handler: async (ctx, {grist: doc}, body) => {
      doc.replaceColumns(tableParam(ctx, doc), body.columns, {
        noadd: flag(ctx.query, 'noadd'),
        noupdate: flag(ctx.query, 'noupdate'),
        replaceall: flag(ctx.query, 'replaceall'),
      });
      return null;
    },
  }),
  {
    method: 'DELETE',
    path: `${DATA}/columns/:colId`,
    tag: 'columns',
    summary: 'Remove a column',
    handler: async (ctx) => {
      const doc = await gristFor(ctx, 'editors');
      let tableId = ctx.params.tableId;
      try {
        tableId = doc.resolveTableId(tableId);
      } catch {
        // Reported below, with the column, in Grist's "table or column" wording.
      }
      doc.removeColumn(tableId, ctx.params.colId);
      return null;
    },
  },

  // Records (§10)
  docRoute({
    method: 'GET',
    path: `${DATA}/records`,
    tag: 'records',
    summary: 'Fetch records',
    revalidate: true,
    query: [
      'filter',
      'where',
      'sort',
      'limit',
      'hidden',
      'cellFormat',
      'display',
      'includeDisplay',
      'immediate',
      'cursor',
      'count',
    ],
    need: 'viewers',
    response: {
      description: 'The records (with count=true, how many there are)',
      schema: {oneOf: [ref('Records'), ref('RecordCount')]},
    },
    handler: async (ctx, {grist: doc, meta}) => {
      if (flag(ctx.query, 'count')) {
        // Beyond Grist (issue 40 §2): how many rows the read would return, without them.
        return {count: doc.countRecords(tableParam(ctx, doc), readQuery(ctx))};
      }
      const {q, where} = pagedQuery(ctx, meta.id, tableParam(ctx, doc));
      const page: PageEnd = {next: null};
      const body = doc.streamRecordsJson(where.tableId, displayParam(ctx, q), page, ctx.options.stream);
      return new RawResponse(200, body, {
        'Content-Type': 'application/json; charset=utf-8',
        ...nextLink(ctx, where, page),
      });
    },
  }),
  docRoute({
    method: 'GET',
    path: `${DATA}/aggregate`,
    tag: 'records',
    summary: 'Aggregate records: groups with counts, sums, averages, extremes (beyond Grist)',
    query: ['group_by', 'agg', 'where', 'having', 'sort', 'limit'],
    need: 'viewers',
    response: {description: 'One record per group: its group columns and aggregates', schema: ref('Aggregates')},
    handler: async (ctx, {grist: doc}) => doc.aggregate(tableParam(ctx, doc), aggregateQuery(ctx)),
  }),
  docRoute({
    method: 'POST',
    path: `${DATA}/records/list`,
    tag: 'records',
    summary: 'Fetch records (parameters in the body)',
    need: 'viewers',
    body: {schema: RecordsListPost},
    response: {
      description: 'The records (with "count": true, how many there are)',
      schema: {oneOf: [ref('Records'), ref('RecordCount')]},
    },
    handler: async (ctx, {grist: doc}, body) => {
      const tableId = tableParam(ctx, doc);
      if (body.count) return {count: doc.countRecords(tableId, {filter: body.filter, where: body.where || undefined})};
      return jsonText(
        doc.streamRecordsJson(
          tableId,
          withDisplayIf(body.display, {
            filter: body.filter,
            where: body.where || undefined,
            sort: body.sort,
            limit: body.limit,
            hidden: body.hidden,
            cellFormat: body.cellFormat,
          }),
          undefined,
          ctx.options.stream,
        ),
      );
    },
  }),
  {
    method: 'POST',
    path: `${DATA}/records`,
    tag: 'records',
    summary: 'Add records',
    body: RecordsBody,
    query: ['noparse', 'flat'],
    handler: async (ctx) => {
      const {doc, role} = await writerFor(ctx);
      let body = await ctx.json();
      if (flag(ctx.query, 'flat') && Array.isArray(body)) {
        body = {
          records: body.map((item) => (isObject(item) && item.fields !== undefined ? item : {fields: dropId(item)})),
        };
      }
      const records = recordsBody<{fields?: Record<string, CellValue>}>('NewRecord', body);
      const tableId = tableParam(ctx, doc);
      const ids = doc.addRecords(
        tableId,
        records.map((r) => r.fields ?? {}),
        {...parseOpts(ctx), role},
      );
      return {records: ids.map((id) => ({id}))};
    },
  },
  {
    method: 'PATCH',
    path: `${DATA}/records`,
    tag: 'records',
    summary: 'Update records (by id, or every row matching where)',
    body: v.union([RecordsBody, FieldsBody]),
    query: ['noparse', 'where'],
    response: {
      description: 'Updated (by id: no body; with where: the ids updated)',
      schema: {oneOf: [{type: 'null'}, ref('RecordIds')]},
    },
    handler: async (ctx) => {
      const {doc, role} = await writerFor(ctx);
      const where = writeWhere(ctx);
      const raw = await ctx.json();
      if (where !== null) {
        const body = validate(FieldsBody, raw, 'body');
        const fields = body.fields as Record<string, CellValue>;
        return touched(doc.updateRecordsWhere(tableParam(ctx, doc), where, fields, {...parseOpts(ctx), role}));
      }
      if (isObject(raw) && raw.fields !== undefined && raw.records === undefined) {
        throw new BadRequest('An update by condition needs a where condition (where=True updates every row)');
      }
      const records = recordsBody<{id: number; fields: Record<string, CellValue>}>('Record', raw);
      const tableId = tableParam(ctx, doc);
      doc.updateRecords(tableId, records, {...parseOpts(ctx), role});
      return null;
    },
  },
  {
    method: 'PUT',
    path: `${DATA}/records`,
    tag: 'records',
    summary: 'Add or update records',
    body: UpsertBody,
    query: ['onmany', 'noadd', 'noupdate', 'allow_empty_require', 'noparse'],
    handler: async (ctx) => {
      const {doc, role} = await writerFor(ctx);
      const onmany = oneOf('onmany', ctx.query.get('onmany'), ['first', 'none', 'all'] as const, 'first');
      const records = recordsBody<{require: Record<string, CellValue>; fields?: Record<string, CellValue>}>(
        'AddOrUpdateRecord',
        await ctx.json(),
      );
      return doc.upsertRecords(tableParam(ctx, doc), records, {
        onmany,
        noadd: flag(ctx.query, 'noadd'),
        noupdate: flag(ctx.query, 'noupdate'),
        allowEmptyRequire: flag(ctx.query, 'allow_empty_require'),
        ...parseOpts(ctx),
        role,
      });
    },
  },
  ...['records', 'data'].map(
    (form): Route => ({
      method: 'POST',
      path: `${DATA}/${form}/delete`,
      tag: form,
      summary: 'Remove records by id (or, with where and no body, every row matching it)',
      query: ['where'],
      body: RowIds,
      response: {
        description: 'Removed (by id: no body; with where: the ids removed)',
        schema: {oneOf: [{type: 'null'}, ref('RecordIds')]},
      },
      handler: async (ctx) => {
        const {grist: doc, role} = await openDocFor(ctx, 'editors');
        const where = writeWhere(ctx);
        const raw = await ctx.json();
        if (where !== null) {
          // No body (read as {}), or an empty list: the condition names the rows.
          const empty = (Array.isArray(raw) && !raw.length) || (isObject(raw) && !Object.keys(raw).length);
          if (!empty) throw new BadRequest('A removal by condition takes no row ids (the condition names the rows)');
          return touched(doc.removeRecordsWhere(tableParam(ctx, doc), where, {role: writerRole(role)}));
        }
        const ids = validate(RowIds, raw, 'body');
        doc.removeRecords(tableParam(ctx, doc), ids, {role: writerRole(role)});
        return null;
      },
    }),
  ),

  // Deprecated column-oriented form (§11)
  docRoute({
    method: 'GET',
    path: `${DATA}/data`,
    tag: 'data',
    summary: 'Fetch columns (deprecated form)',
    revalidate: true,
    query: ['filter', 'where', 'sort', 'limit', 'cellFormat', 'immediate', 'cursor'],
    need: 'viewers',
    handler: async (ctx, {grist: doc, meta}) => {
      const {q, where} = pagedQuery(ctx, meta.id, tableParam(ctx, doc));
      const page: PageEnd = {next: null};
      const body = doc.streamColumnsJson(where.tableId, q, page, ctx.options.stream);
      return new RawResponse(200, body, {
        'Content-Type': 'application/json; charset=utf-8',
        ...nextLink(ctx, where, page),
      });
    },
  }),
  docRoute({
    method: 'POST',
    path: `${DATA}/data`,
    tag: 'data',
    summary: 'Add rows (deprecated form)',
    query: ['noparse'],
    need: 'editors',
    body: {schema: ColumnarBody},
    handler: async (ctx, {grist: doc, role}, body) =>
      doc.addColumnar(tableParam(ctx, doc), body as Record<string, CellValue[]>, {
        ...parseOpts(ctx),
        role: writerRole(role),
      }),
  }),
  docRoute({
    method: 'PATCH',
    path: `${DATA}/data`,
    tag: 'data',
    summary: 'Update rows (deprecated form)',
    query: ['noparse'],
    need: 'editors',
    body: {schema: ColumnarBody},
    handler: async (ctx, {grist: doc, role}, body) => {
      if (!Array.isArray(body.id)) {
        throw new BadRequest('Invalid payload', {userError: 'Error: body.id is missing'});
      }
      doc.updateColumnar(tableParam(ctx, doc), body as Record<string, CellValue[]>, {
        ...parseOpts(ctx),
        role: writerRole(role),
      });
      return null;
    },
  }),

  // User actions (§10.7)
  docRoute({
    method: 'POST',
    path: '/api/docs/:docId/apply',
    tag: 'records',
    summary: 'Apply user actions',
    query: ['noparse'],
    need: 'editors',
    // An owner repairs rules Grist would refuse here (what Grist's recovery mode allows owners).
    ownersDespiteBrokenRules: true,
    body: {schema: UserActions},
    handler: async (ctx, {grist: doc, role}, actions) =>
      doc.applyUserActions(actions, {...parseOpts(ctx), role: writerRole(role)}),
  }),
];

function dropId(item: unknown): unknown {
  if (!isObject(item)) {
    return item;
  }
  const {id: _id, ...rest} = item;
  return rest;
}
