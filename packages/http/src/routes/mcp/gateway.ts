/**
 * What the MCP tools ask of gristlite, and its two implementations: over an HTTP request (the
 * REST routes' own path: `openDocFor`, the SQL route's checks) and over an embedder's `Session`.
 * Either way the caller's identity and access rules apply as for the REST call the tool mirrors.
 */
import {
  type ApiRecord,
  BadRequest,
  type ColumnInfo,
  type Engine,
  type Fields,
  type OrgContext,
  type Principal,
  type RecordQuery,
  type Session,
  type SqlResult,
} from '@gristlite/core/internal';
import type {RequestContext} from '../../types.js';
import {openDocFor, SHARE_KEY_PREFIX, type Need} from '../doc-common.js';
import {sqlCaller, sqlDoc} from '../sql.js';

/** A document as `list_documents` shows it. */
export interface McpDocEntry {
  id: string;
  name: string;
  urlId: string | null;
  access: string | null;
}

/** An org with its workspaces and documents, as the caller sees them (`GET /api/orgs` then `/workspaces`). */
export interface McpOrgEntry {
  id: number;
  name: string;
  domain: string | null;
  access: string | null;
  workspaces: Array<{id: number; name: string; access: string | null; docs: McpDocEntry[]}>;
}

/** A table and its columns, as `GET /tables` and `GET /columns` list them. */
export interface McpTableEntry {
  id: string;
  columns: ColumnInfo[];
}

/** The operations the tools use; each is the core call of one REST route, as one caller. */
export interface McpGateway {
  /** Orgs, one at a time (`GET /api/orgs`), so a listing cut by size reads no more of them. */
  orgs(): Promise<Array<{id: number; name: string; domain: string | null; access: string | null}>>;
  /** One org's workspaces and documents (`GET /api/orgs/{org}/workspaces`). */
  workspaces(orgId: number): Promise<McpOrgEntry['workspaces']>;
  /** The tables of a document and their columns (`GET /tables`, `GET /columns`). */
  describe(docId: string): Promise<McpTableEntry[]>;
  /** Records (`POST /records/list`). */
  read(docId: string, tableId: string, query: RecordQuery): Promise<ApiRecord[]>;
  /** How many records a read would answer (`POST /records/list` with `"count": true`). */
  count(docId: string, tableId: string, query: RecordQuery): Promise<number>;
  /** `POST /records`; the new row ids. */
  add(docId: string, tableId: string, rows: Fields[]): Promise<number[]>;
  /** `PATCH /records`. */
  update(docId: string, tableId: string, records: Array<{id: number; fields: Fields}>): Promise<void>;
  /** `POST /records/delete`. */
  remove(docId: string, tableId: string, ids: unknown[]): Promise<void>;
  /** `POST /sql`. */
  sql(docId: string, sql: string, args: unknown[] | null, timeoutMs: number | undefined): Promise<SqlResult>;
}

/**
 * A share key (`s.<key>`) is a REST path's way in for anonymous form users, with its own rate
 * limit and route list (issue 41): a tool names documents by id or urlId only.
 */
function checkDocId(docId: string): void {
  if (docId.startsWith(SHARE_KEY_PREFIX)) throw new BadRequest('docId must be a document id or urlId, not a share key');
}

/** The orgs and workspaces part, the same for both: the home service's calls as one principal. */
function homeCalls(engine: Engine, principal: Principal, org: OrgContext): Pick<McpGateway, 'orgs' | 'workspaces'> {
  return {
    async orgs() {
      const orgs = (await engine.home.listOrgs(principal, org, false)) as Array<Record<string, unknown>>;
      return orgs.map((o) => ({
        id: o.id as number,
        name: o.name as string,
        domain: (o.domain as string | null) ?? null,
        access: (o.access as string | null) ?? null,
      }));
    },
    async workspaces(orgId) {
      const wss = (await engine.home.listWorkspaces(String(orgId), principal, org, false)) as Array<
        Record<string, unknown>
      >;
      return wss.map((w) => ({
        id: w.id as number,
        name: w.name as string,
        access: (w.access as string | null) ?? null,
        docs: ((w.docs as Array<Record<string, unknown>>) ?? []).map((d) => ({
          id: d.id as string,
          name: d.name as string,
          urlId: (d.urlId as string | null) ?? null,
          access: (d.access as string | null) ?? null,
        })),
      }));
    },
  };
}

/**
 * The gateway of one MCP HTTP request: each document call is made as the matching REST route
 * makes it, on a context naming the tool's document (`ctx.params.docId`), so forwarding to the
 * worker holding a document and the vouched access of a forwarded request work as for REST.
 */
export function requestGateway(ctx: RequestContext): McpGateway {
  const asDoc = (docId: string, need: Need): RequestContext => {
    checkDocId(docId);
    // The method says whether the call writes (openDocFor reads it: the document's URL, replicas).
    return {...ctx, params: {docId}, method: need === 'viewers' ? 'GET' : 'POST'};
  };
  // Each call holds one of its document's request slots while it runs, as a REST request to the
  // document does (GRISTLITE_MAX_PARALLEL_REQUESTS_PER_DOC): tools are not a way around the cap.
  const slot = <T>(docId: string, fn: () => Promise<T>) => ctx.docSlot(docId, fn);
  const open = (docId: string, need: Need) => openDocFor(asDoc(docId, need), need);
  const writer = async (docId: string) => {
    const {grist, role} = await open(docId, 'editors');
    return {grist, role: role === 'owners' ? ('owners' as const) : ('editors' as const)};
  };
  return {
    ...homeCalls(ctx.engine, ctx.principal, ctx.org),
    describe: (docId) =>
      slot(docId, async () => {
        const {grist} = await open(docId, 'viewers');
        return grist.listTables().map((t) => ({id: t.id, columns: grist.listColumns(t.id)}));
      }),
    read: (docId, tableId, query) =>
      slot(docId, async () => {
        const {grist} = await open(docId, 'viewers');
        return grist.fetchRecords(grist.resolveTableId(tableId), query).records;
      }),
    count: (docId, tableId, query) =>
      slot(docId, async () => {
        const {grist} = await open(docId, 'viewers');
        return grist.countRecords(grist.resolveTableId(tableId), query);
      }),
    add: (docId, tableId, rows) =>
      slot(docId, async () => {
        const {grist, role} = await writer(docId);
        return grist.addRecords(grist.resolveTableId(tableId), rows, {parse: true, role});
      }),
    update: (docId, tableId, records) =>
      slot(docId, async () => {
        const {grist, role} = await writer(docId);
        grist.updateRecords(grist.resolveTableId(tableId), records, {parse: true, role});
      }),
    remove: (docId, tableId, ids) =>
      slot(docId, async () => {
        const {grist, role} = await writer(docId);
        grist.removeRecords(grist.resolveTableId(tableId), ids, {role});
      }),
    sql: (docId, sql, args, timeoutMs) =>
      slot(docId, async () => {
        const sub = asDoc(docId, 'viewers');
        const {meta} = await sqlDoc(sub);
        return ctx.engine.runSql(meta.id, sql, args, timeoutMs, sqlCaller(sub));
      }),
  };
}

/** The gateway of an embedder's `Session`: the same calls, checked by `Session` as over HTTP. */
export function sessionGateway(session: Session): McpGateway {
  const doc = (docId: string) => {
    checkDocId(docId);
    return session.doc(docId);
  };
  return {
    ...homeCalls(session.engine, session.principal, session.org),
    async describe(docId) {
      const d = await doc(docId);
      const tables = await d.listTables();
      const out: McpTableEntry[] = [];
      for (const t of tables) out.push({id: t.id, columns: await d.listColumns(t.id)});
      return out;
    },
    async read(docId, tableId, query) {
      return (await doc(docId)).fetchRecords(tableId, query);
    },
    async count(docId, tableId, query) {
      return (await doc(docId)).countRecords(tableId, query);
    },
    async add(docId, tableId, rows) {
      return (await doc(docId)).addRecords(tableId, rows);
    },
    async update(docId, tableId, records) {
      await (await doc(docId)).updateRecords(tableId, records);
    },
    async remove(docId, tableId, ids) {
      await (await doc(docId)).removeRecords(tableId, ids as number[]);
    },
    async sql(docId, sql, args, timeoutMs) {
      checkDocId(docId);
      return session.runSql(docId, sql, {args: args ?? undefined, timeoutMs});
    },
  };
}
