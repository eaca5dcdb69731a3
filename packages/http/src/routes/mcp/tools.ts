/**
 * The MCP tools (issue 42 §4): each checks its arguments as the REST route it mirrors checks its
 * body (the route's valibot schema, or core's record checks), calls the gateway, and answers JSON
 * text cut to the configured size with a note telling the agent how to narrow the query.
 */
import * as v from 'valibot';
import {toJsonSchema} from '@valibot/to-json-schema';
import {BadRequest, checkRecords, type Fields, type RecordQuery} from '@gristlite/core/internal';
import {RecordsListPost, withDisplayIf} from '../docdata.js';
import {SqlPost} from '../sql.js';
import {validate} from '../../validate.js';
import type {McpGateway, McpOrgEntry} from './gateway.js';
import type {McpSettings} from './settings.js';

/** One tool: its name and description for `tools/list`, its input schema, and what it does. */
export interface McpTool {
  name: string;
  description: string;
  /** Documents the input (`inputSchema`, JSON Schema); checking is `run`'s, in the route's words. */
  input: v.GenericSchema;
  /** Whether the tool changes the document (`annotations.readOnlyHint`). */
  writes: boolean;
  run(args: Record<string, unknown>, gw: McpGateway, settings: McpSettings): Promise<unknown>;
}

const PREFIX = 'arguments';
const DocId = v.pipe(v.string(), v.minLength(1, 'is empty'));
const TableId = v.pipe(v.string(), v.minLength(1, 'is empty'));
const DocArgs = v.looseObject({docId: DocId});
const TableArgs = v.looseObject({docId: DocId, tableId: TableId});
const FieldValues = v.record(v.string(), v.unknown());

/**
 * `read_records` takes the body of `POST /records/list` beside docId and tableId: a field added
 * there (issue 40's `where`) is accepted here by the same schema, and passed on in `readQuery`.
 */
const ReadArgs = v.looseObject({...TableArgs.entries, ...RecordsListPost.entries});
const SqlArgs = v.looseObject({...DocArgs.entries, ...SqlPost.entries});
const DeleteArgs = v.looseObject({...TableArgs.entries, rowIds: v.array(v.unknown())});

/** The fields of the `POST /records/list` body that `readQuery` passes on (`immediate` means nothing here either). */
const PASSED_ON: ReadonlySet<string> = new Set([
  'filter',
  'sort',
  'limit',
  'hidden',
  'cellFormat',
  'display',
  'immediate',
  'where',
  'count',
]);

/**
 * Fields of the `POST /records/list` body that `read_records` accepts (the schema is the route's)
 * but does not pass on yet: refused when given rather than ignored, and listed by a test so that
 * a field added to the route (issue 40's `where`) is wired here too (D132).
 */
export function fieldsNotPassedOn(): string[] {
  return Object.keys(RecordsListPost.entries).filter((k) => !PASSED_ON.has(k));
}

/** The record query of `read_records`, as `POST /records/list` builds it from its body. */
function readQuery(a: v.InferOutput<typeof ReadArgs>, limit: number): RecordQuery {
  for (const k of fieldsNotPassedOn()) {
    if ((a as Record<string, unknown>)[k] !== undefined) throw new BadRequest(`read_records does not take ${k} yet`);
  }
  return withDisplayIf(a.display, {
    filter: a.filter,
    sort: a.sort,
    limit,
    hidden: a.hidden,
    cellFormat: a.cellFormat,
    where: a.where || undefined,
  });
}

/** The tools `/api/mcp` and `mcpServerFor` serve, in `tools/list` order (docs/mcp.md). */
export const TOOLS: readonly McpTool[] = [
  {
    name: 'list_documents',
    description:
      'Lists the orgs (team sites), workspaces and documents the caller can see, with the access of each. ' +
      'Document ids (or urlIds) are what the other tools take as docId.',
    input: v.looseObject({}),
    writes: false,
    async run(_args, gw, settings) {
      const orgs: McpOrgEntry[] = [];
      let bytes = 0;
      for (const org of await gw.orgs()) {
        // Stop asking for more once the listing cannot be shown whole anyway.
        if (bytes > settings.maxBytes) break;
        const entry = {...org, workspaces: await gw.workspaces(org.id)};
        bytes += Buffer.byteLength(JSON.stringify(entry));
        orgs.push(entry);
      }
      return bounded(settings, 'orgs', orgs, {}, {what: 'orgs', narrow: 'ask for one document by id instead'});
    },
  },
  {
    name: 'describe_document',
    description:
      "Describes a document's tables and their columns: id, label, type (Text, Numeric, Ref:Table, ...), " +
      'whether the column is a formula and its formula, and the choices of choice columns. Columns the ' +
      "caller's access rules hide are not listed.",
    input: DocArgs,
    writes: false,
    async run(args, gw, settings) {
      const {docId} = validate(DocArgs, args, PREFIX);
      const tables = (await gw.describe(docId)).map((t) => ({id: t.id, columns: t.columns.map(columnSummary)}));
      return bounded(settings, 'tables', tables, {docId}, {what: 'tables', narrow: 'read one table with read_records'});
    },
  },
  {
    name: 'read_records',
    description:
      "Reads a table's records, as GET /records does: filter is {colId: [allowed values]}, sort a list of " +
      'column ids (prefix "-" for descending), limit a number of records. Rows and cells hidden by access ' +
      'rules are left out. where is a condition in Grist\'s formula language ($Price > 10 and $Status == "Open"); ' +
      'count: true answers how many records match instead of the records. ' +
      'Results are cut at a configured size, with a note saying so.',
    input: ReadArgs,
    writes: false,
    async run(args, gw, settings) {
      const a = validate(ReadArgs, args, PREFIX);
      if (a.limit !== undefined && a.limit < 0) {
        // Grist's negative limit drops rows from the end: it reads the whole table, which a bounded
        // answer cannot promise.
        throw new BadRequest('limit must be 0 (no limit) or positive here');
      }
      if (a.count) return {count: await gw.count(a.docId, a.tableId, {filter: a.filter, where: a.where || undefined})};
      const asked = a.limit !== undefined && a.limit >= 1 ? Math.trunc(a.limit) : Number.POSITIVE_INFINITY;
      // One record beyond the bound, read only to know that the answer was cut.
      const records = await gw.read(a.docId, a.tableId, readQuery(a, Math.min(asked, settings.maxRows + 1)));
      return bounded(
        settings,
        'records',
        records,
        {},
        {what: 'records', narrow: 'use filter, sort and limit', moreThan: records.length > settings.maxRows},
      );
    },
  },
  {
    name: 'run_sql',
    description:
      "Runs one read-only SQL SELECT on a document (SQLite dialect; tables are the document's tables, " +
      'columns as named in describe_document), with optional args for ? placeholders and a timeout in ms. ' +
      'Needs access to the whole document when it has access rules. Use LIMIT: results are cut at a configured size.',
    input: SqlArgs,
    writes: false,
    async run(args, gw, settings) {
      const a = validate(SqlArgs, args, PREFIX);
      const result = await gw.sql(a.docId, a.sql, a.args ?? null, a.timeout);
      const records = result.records.slice(0, settings.maxRows);
      return bounded(
        settings,
        'records',
        records,
        {statement: result.statement},
        {what: 'rows', narrow: 'add a LIMIT or a WHERE clause', moreThan: result.records.length > settings.maxRows},
      );
    },
  },
  {
    name: 'add_records',
    description:
      'Adds records to a table: records is a list of {"fields": {colId: value}}. Text is parsed into ' +
      "each column's type as the REST API does. Answers the new row ids. Needs edit access.",
    input: v.looseObject({
      ...TableArgs.entries,
      records: v.array(v.looseObject({fields: v.optional(FieldValues)})),
    }),
    writes: true,
    async run(args, gw) {
      const {docId, tableId} = validate(TableArgs, args, PREFIX);
      const records = checkRecords<{fields?: Fields}>('NewRecord', args.records, `${PREFIX}.records`);
      const ids = await gw.add(
        docId,
        tableId,
        records.map((r) => r.fields ?? {}),
      );
      return {records: ids.map((id) => ({id}))};
    },
  },
  {
    name: 'update_records',
    description:
      'Changes records of a table by row id: records is a list of {"id": rowId, "fields": {colId: value}}. ' +
      'Needs edit access.',
    input: v.looseObject({
      ...TableArgs.entries,
      records: v.array(v.looseObject({id: v.number(), fields: FieldValues})),
    }),
    writes: true,
    async run(args, gw) {
      const {docId, tableId} = validate(TableArgs, args, PREFIX);
      const records = checkRecords<{id: number; fields: Fields}>('Record', args.records, `${PREFIX}.records`);
      await gw.update(docId, tableId, records);
      return {updated: records.length};
    },
  },
  {
    name: 'delete_records',
    description: 'Removes records of a table by row id: rowIds is a list of row ids. Needs edit access.',
    input: v.looseObject({...TableArgs.entries, rowIds: v.array(v.number())}),
    writes: true,
    async run(args, gw) {
      const a = validate(DeleteArgs, args, PREFIX);
      await gw.remove(a.docId, a.tableId, a.rowIds);
      return {deleted: a.rowIds.length};
    },
  },
];

/** The tools by name. */
export const TOOLS_BY_NAME: ReadonlyMap<string, McpTool> = new Map(TOOLS.map((t) => [t.name, t]));

/** A tool's `tools/list` entry: its input as JSON Schema (an object, as MCP requires). */
export function toolListing(tool: McpTool): {
  name: string;
  description: string;
  inputSchema: {type: 'object'; [key: string]: unknown};
  annotations: {readOnlyHint: boolean; destructiveHint: boolean};
} {
  const {$schema: _, ...schema} = toJsonSchema(tool.input, {errorMode: 'ignore', target: 'draft-2020-12'}) as Record<
    string,
    unknown
  >;
  const properties = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
  for (const [name, property] of Object.entries(properties)) {
    if (ARGUMENT_HINTS[name]) properties[name] = {...property, description: ARGUMENT_HINTS[name]};
  }
  return {
    name: tool.name,
    description: tool.description,
    inputSchema: {...schema, type: 'object'},
    annotations: {readOnlyHint: !tool.writes, destructiveHint: tool.name === 'delete_records'},
  };
}

/** What each argument means, for the agent reading `tools/list` (the schemas are the routes'). */
const ARGUMENT_HINTS: Record<string, string> = {
  docId: 'A document id or urlId, as list_documents gives them',
  tableId: 'A table id, as describe_document gives them',
  filter: 'Records whose column holds one of the values: {"colId": [value, ...], ...}',
  sort: 'Column ids to sort by, "-colId" for descending',
  limit: 'At most this many records (0: no limit of your own; results are still cut at the size bound)',
  hidden: 'Include hidden columns (manualSort, helper columns)',
  immediate: "Accepted for the REST body's shape; no effect",
  cellFormat: '"typed": values in Grist\'s encoding with their types; "normal" (default): plain JSON',
  display: "Add each record's text as Grist shows it (formatted numbers, dates, references)",
  sql: 'One SELECT statement (SQLite)',
  args: 'Values for ? placeholders, in order',
  timeout: "Milliseconds at most (the server's limit applies)",
  rowIds: 'Row ids of the records to remove',
};

/** What `describe_document` says of a column: what an agent needs to read and write it. */
function columnSummary(c: {id: string; fields: Record<string, unknown>}): Record<string, unknown> {
  const f = c.fields;
  const out: Record<string, unknown> = {id: c.id, label: f.label, type: f.type, isFormula: f.isFormula};
  if (f.formula) out.formula = f.formula;
  if (f.description) out.description = f.description;
  const choices = choicesOf(f.widgetOptions);
  if (choices) out.choices = choices;
  return out;
}

function choicesOf(widgetOptions: unknown): unknown[] | null {
  if (typeof widgetOptions !== 'string' || !widgetOptions.includes('choices')) return null;
  try {
    const choices = (JSON.parse(widgetOptions) as {choices?: unknown}).choices;
    return Array.isArray(choices) ? choices : null;
  } catch {
    return null;
  }
}

interface CutNote {
  /** What the items are called in the note (`records`, `rows`, `tables`, `orgs`). */
  what: string;
  /** How to ask for less. */
  narrow: string;
  /** More items existed than were handed in (the row bound, or the query's own cut). */
  moreThan?: boolean;
}

/**
 * `{...extra, [key]: items}`, with as many leading items as fit in `settings.maxBytes` (and at
 * most `settings.maxRows`); when any are left out, `truncated` says how many were kept and how to
 * narrow the query. The whole text stays within `maxBytes`.
 */
export function bounded(
  settings: McpSettings,
  key: string,
  items: readonly unknown[],
  extra: Record<string, unknown>,
  note: CutNote,
): Record<string, unknown> {
  const rowCut = note.moreThan === true || items.length > settings.maxRows;
  const shown = items.length > settings.maxRows ? items.slice(0, settings.maxRows) : items;
  const whole = {...extra, [key]: shown};
  if (!rowCut && Buffer.byteLength(JSON.stringify(whole)) <= settings.maxBytes) return whole;
  const message = (kept: number, byBytes: boolean) =>
    `Only the first ${kept} ${note.what} are shown: ` +
    (byBytes
      ? `the result passed ${settings.maxBytes} bytes (GRISTLITE_MCP_MAX_BYTES)`
      : `more than ${settings.maxRows} matched (GRISTLITE_MCP_MAX_ROWS)`) +
    `. Narrow the query: ${note.narrow}.`;
  // The longest the wrapper can be: the note with the most digits it may show.
  const frame = Buffer.byteLength(JSON.stringify({...extra, [key]: [], truncated: message(shown.length, true)}));
  let used = frame;
  let kept = 0;
  for (const item of shown) {
    const size = Buffer.byteLength(JSON.stringify(item)) + (kept ? 1 : 0);
    if (used + size > settings.maxBytes) break;
    used += size;
    kept++;
  }
  const byBytes = kept < shown.length;
  return {...extra, [key]: shown.slice(0, kept), truncated: message(kept, byBytes)};
}
