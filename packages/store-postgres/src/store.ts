/**
 * The home store on PostgreSQL: `HomeStore` over a `pg` pool, in a schema of its own, for several
 * gristlite processes or machines sharing one home.
 *
 * One thing: one implementation of the HomeStore interface, a method per operation, sharing the
 * pool, the schema name and the error mapping; the HomeStore conformance suite tests it as a
 * whole, as it does the SQLite store.
 */
import pg from 'pg';
import {
  Conflict,
  makeId,
  rowCodec,
  type HomeRow,
  type AclChange,
  type DocApiKey,
  type DocPatch,
  type HomeStore,
  type NewDoc,
  type Org,
  type OrgPatch,
  type ResourceKind,
  type WorkspacePatch,
} from '@gristlite/core/internal';
import {
  DEFAULT_HOME_CACHE_ENTRIES,
  DEFAULT_HOME_CACHE_MS,
  HOME_CHANNEL,
  type HomeCacheOptions,
  HomeReadCache,
} from './cache.js';
import {MIGRATIONS} from './migrations.js';

type Row = HomeRow;
type Queryable = pg.Pool | pg.PoolClient;

export interface PostgresHomeStoreOptions {
  /**
   * Schema holding the tables (created if missing). Default: the `schema` query parameter of the
   * URL, else `public`. Lower-case letters, digits and `_` only.
   */
  schema?: string;
  /** Maximum connections in the pool (default 10). */
  max?: number;
  /**
   * The per-process cache of API-key users, documents, workspaces, orgs and access lists (D177):
   * default 5000 ms, 10,000 entries; `ttlMs: 0` turns it off. Changes made through any
   * `PostgresHomeStore` on the same schema drop it at once (LISTEN/NOTIFY).
   */
  cache?: Partial<HomeCacheOptions>;
  /** Background failures of the cache's LISTEN connection (it reconnects). */
  onError?: (err: unknown, what: string) => void;
}

/** Advisory lock class ids (the first key of the two-key form), "gl" + a number. */
export const LOCK_CLASS_MIGRATE = 0x676c0001;
export const LOCK_CLASS_DOC_LEASE = 0x676c0002;

const SCHEMA_RE = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * Splits a connection URL into the URL for `pg` (with `search_path` set through the startup
 * `options`) and the schema. A `schema` query parameter is ours and is removed.
 */
export function connectionConfig(url: string, schemaOpt?: string): {connectionString: string; schema: string} {
  const u = new URL(url);
  const fromUrl = u.searchParams.get('schema');
  u.searchParams.delete('schema');
  const schema = schemaOpt ?? fromUrl ?? 'public';
  if (!SCHEMA_RE.test(schema))
    throw new Error(`invalid schema name ${JSON.stringify(schema)}: use lower-case letters, digits and _`);
  const existing = u.searchParams.get('options');
  u.searchParams.set('options', [existing, `-c search_path=${schema}`].filter(Boolean).join(' '));
  return {connectionString: u.toString(), schema};
}

// pg returns timestamptz as Date, jsonb already parsed, and boolean as boolean.
const rows = rowCodec({
  time: (v) => (v === null || v === undefined ? null : v instanceof Date ? v.toISOString() : String(v)),
  json: (v) => (v ?? null) as Record<string, unknown> | null,
  bool: (v) => v as boolean,
});

const UNIQUE_CONSTRAINTS: Record<string, Conflict['what']> = {
  users_email_norm_key: 'email',
  users_api_key_hash_key: 'apiKey',
  orgs_domain_key: 'domain',
  docs_org_url_id_key: 'urlId',
};

/** Maps a unique violation of one of our named constraints to `Conflict`; anything else is returned as is. */
function mapError(e: unknown): unknown {
  const err = e as {code?: string; constraint?: string};
  if (err && err.code === '23505' && err.constraint && UNIQUE_CONSTRAINTS[err.constraint]) {
    return new Conflict(UNIQUE_CONSTRAINTS[err.constraint]);
  }
  return e;
}

/** JSON values go to jsonb columns as text, so that arrays are not turned into PostgreSQL arrays. */
const json = (v: unknown) => (v === null || v === undefined ? null : JSON.stringify(v));

/**
 * The home store on PostgreSQL. Every method that touches several rows runs in one transaction;
 * uniqueness (emails, API keys, domains, one urlId per org) is enforced by constraints.
 */
export class PostgresHomeStore implements HomeStore {
  private closed = false;
  /** @internal The read cache (tests look at its counters). */
  readonly cache: HomeReadCache;
  private listener: pg.Client | null = null;
  private listenRetry: NodeJS.Timeout | null = null;

  private constructor(
    readonly pool: pg.Pool,
    readonly schema: string,
    private readonly connectionString: string,
    private readonly opts: PostgresHomeStoreOptions,
  ) {
    this.cache = new HomeReadCache({
      ttlMs: opts.cache?.ttlMs ?? DEFAULT_HOME_CACHE_MS,
      maxEntries: opts.cache?.maxEntries ?? DEFAULT_HOME_CACHE_ENTRIES,
    });
  }

  /** Connects, creates the schema if needed and applies pending migrations (once, under a lock). */
  static async connect(url: string, opts: PostgresHomeStoreOptions = {}): Promise<PostgresHomeStore> {
    const {connectionString, schema} = connectionConfig(url, opts.schema);
    const pool = new pg.Pool({connectionString, max: opts.max ?? 10});
    // An idle client losing its connection must not crash the process; the pool replaces it.
    pool.on('error', () => {});
    const store = new PostgresHomeStore(pool, schema, connectionString, opts);
    try {
      await migrate(pool, schema);
      if (store.cache.opts.ttlMs > 0) await store.listen();
    } catch (e) {
      await pool.end();
      throw e;
    }
    return store;
  }

  /**
   * The connection that hears other processes' changes. Caching is on only while it is up: when
   * it ends, the cache is dropped and stays off until a new one listens (retried every second).
   */
  private async listen(): Promise<void> {
    const client = new pg.Client({
      connectionString: this.connectionString,
      keepAlive: true,
      keepAliveInitialDelayMillis: 1000,
    });
    let gone = false;
    const onGone = (e?: Error) => {
      if (gone) return;
      gone = true;
      if (this.listener === client) this.listener = null;
      this.cache.setListening(false);
      void client.end().catch(() => {});
      if (this.closed) return;
      this.opts.onError?.(e ?? new Error('connection ended'), 'home cache: LISTEN connection lost; caching off');
      this.retryListen();
    };
    client.on('error', onGone);
    client.on('end', () => onGone());
    client.on('notification', (n) => {
      if (n.channel === HOME_CHANNEL && n.payload === this.schema) this.cache.invalidate();
    });
    await client.connect();
    try {
      await client.query(`LISTEN ${HOME_CHANNEL}`);
    } catch (e) {
      await client.end().catch(() => {});
      throw e;
    }
    if (this.closed) {
      await client.end().catch(() => {});
      return;
    }
    this.listener = client;
    this.cache.setListening(true);
  }

  private retryListen(): void {
    if (this.closed || this.listenRetry) return;
    this.listenRetry = setTimeout(() => {
      this.listenRetry = null;
      this.listen().catch((e) => {
        this.opts.onError?.(e, 'home cache: LISTEN connection');
        this.retryListen();
      });
    }, 1000);
    this.listenRetry.unref();
  }

  /** A read every request makes, through the cache. */
  private cached<T>(key: string, load: () => Promise<T>, keep: (v: T) => boolean = (v) => v !== null): Promise<T> {
    return this.cache.get(key, load, keep);
  }

  /**
   * A change to cached rows, in one transaction that notifies every process on this schema when
   * it commits; this process forgets its cache before and after (a read under way keeps nothing).
   */
  private async change<T>(fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
    this.cache.invalidate();
    try {
      return await this.tx(async (c) => {
        const r = await fn(c);
        await c.query('SELECT pg_notify($1, $2)', [HOME_CHANNEL, this.schema]);
        return r;
      });
    } finally {
      this.cache.invalidate();
    }
  }

  private async q(sql: string, args: unknown[] = [], db: Queryable = this.pool): Promise<Row[]> {
    try {
      return (await db.query(sql, args)).rows;
    } catch (e) {
      throw mapError(e);
    }
  }
  private async one(sql: string, args: unknown[] = [], db: Queryable = this.pool): Promise<Row | undefined> {
    return (await this.q(sql, args, db))[0];
  }
  private async tx<T>(fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
    try {
      return await inTransaction(this.pool, fn);
    } catch (e) {
      throw mapError(e);
    }
  }

  // ---------------------------------------------------------------- users

  async getUser(id: number) {
    return this.cached(`user ${id}`, async () => {
      const r = await this.one('SELECT * FROM users WHERE id = $1', [id]);
      return r ? rows.user(r) : null;
    });
  }
  async getUsers(ids: number[]) {
    if (ids.length === 0) return [];
    return (await this.q('SELECT * FROM users WHERE id = ANY($1::int[]) ORDER BY id', [ids])).map(rows.user);
  }
  async getUserByEmail(email: string) {
    const r = await this.one('SELECT * FROM users WHERE email_norm = $1', [email.toLowerCase()]);
    return r ? rows.user(r) : null;
  }
  async getUserByApiKeyHash(hash: string) {
    return this.cached(`key ${hash}`, async () => {
      const r = await this.one('SELECT * FROM users WHERE api_key_hash = $1', [hash]);
      return r ? rows.user(r) : null;
    });
  }
  async createUser(u: {email: string; name: string; personalOrg: boolean}) {
    return this.change(async (c) => {
      const r = (await this.one(
        'INSERT INTO users (email, email_norm, name, ref) VALUES ($1, $2, $3, $4) RETURNING *',
        [u.email, u.email.toLowerCase(), u.name, makeId()],
        c,
      ))!;
      if (u.personalOrg) await this.createOrgIn(c, {name: 'Personal', domain: null, ownerUserId: r.id, personal: true});
      return rows.user(r);
    });
  }
  async updateUser(id: number, patch: {name?: string}) {
    if (patch.name !== undefined)
      await this.change((c) => this.q('UPDATE users SET name = $1 WHERE id = $2', [patch.name, id], c));
  }
  async setApiKey(id: number, hash: string | null, prefix: string | null) {
    await this.change((c) =>
      this.q('UPDATE users SET api_key_hash = $1, api_key_prefix = $2 WHERE id = $3', [hash, prefix, id], c),
    );
  }
  async createDocApiKey(k: Omit<DocApiKey, 'id' | 'createdAt' | 'lastUsedAt'> & {keyHash: string}) {
    const r = await this.one(
      'INSERT INTO doc_api_keys (doc_id, name, access, key_hash, created_by, expires_at) VALUES ($1, $2, $3, $4, $5, $6) RETURNING *',
      [k.docId, k.name, k.access, k.keyHash, k.createdBy, k.expiresAt],
    );
    return rows.docApiKey(r!);
  }
  async listDocApiKeys(docId: string) {
    return (await this.q('SELECT * FROM doc_api_keys WHERE doc_id = $1 ORDER BY id', [docId])).map(rows.docApiKey);
  }
  async getDocApiKeyByHash(hash: string) {
    const r = await this.one('SELECT * FROM doc_api_keys WHERE key_hash = $1', [hash]);
    return r ? rows.docApiKey(r) : null;
  }
  async deleteDocApiKey(docId: string, id: number) {
    return (
      (await this.q('DELETE FROM doc_api_keys WHERE doc_id = $1 AND id = $2 RETURNING id', [docId, id])).length > 0
    );
  }
  async touchDocApiKey(id: number, at: string) {
    await this.q('UPDATE doc_api_keys SET last_used_at = $1 WHERE id = $2', [at, id]);
  }
  async syncShares(
    docId: string,
    shares: Array<{linkId: string; options: Record<string, unknown>}>,
    makeKey: () => string,
  ) {
    await this.tx(async (c) => {
      for (const sh of shares) {
        await this.q(
          'INSERT INTO shares (key, link_id, doc_id, options) VALUES ($1, $2, $3, $4::jsonb) ON CONFLICT (doc_id, link_id) DO UPDATE SET options = EXCLUDED.options',
          [makeKey(), sh.linkId, docId, JSON.stringify(sh.options)],
          c,
        );
      }
      await this.q(
        'DELETE FROM shares WHERE doc_id = $1 AND NOT (link_id = ANY($2::text[]))',
        [docId, shares.map((s) => s.linkId)],
        c,
      );
    });
  }
  async getShareByKey(key: string) {
    const r = await this.one('SELECT * FROM shares WHERE key = $1', [key]);
    return r ? rows.share(r) : null;
  }
  async listShares(docId: string) {
    return (await this.q('SELECT * FROM shares WHERE doc_id = $1 ORDER BY id', [docId])).map(rows.share);
  }
  async deleteUser(id: number) {
    return this.change(async (c) => {
      const org = await this.one('SELECT id FROM orgs WHERE owner_id = $1', [id], c);
      const docIds = org ? await this.deleteOrgIn(c, org.id) : [];
      await this.q('UPDATE docs SET created_by = NULL WHERE created_by = $1', [id], c);
      await this.q('DELETE FROM prefs WHERE user_id = $1', [id], c);
      await this.q('DELETE FROM acl WHERE user_id = $1', [id], c);
      await this.q('DELETE FROM users WHERE id = $1', [id], c);
      return {docIds};
    });
  }

  // ---------------------------------------------------------------- orgs

  private async createOrgIn(
    c: pg.PoolClient,
    o: {name: string; domain: string | null; ownerUserId: number; personal: boolean},
  ): Promise<Org> {
    const org = (await this.one(
      'INSERT INTO orgs (name, domain, owner_id) VALUES ($1, $2, $3) RETURNING *',
      [o.name, o.domain, o.personal ? o.ownerUserId : null],
      c,
    ))!;
    await this.q(
      "INSERT INTO acl (kind, resource_id, user_id, role) VALUES ('org', $1, $2, 'owners')",
      [String(org.id), o.ownerUserId],
      c,
    );
    await this.q("INSERT INTO workspaces (org_id, name) VALUES ($1, 'Home')", [org.id], c);
    return rows.org(org);
  }
  async createOrg(o: {name: string; domain: string | null; ownerUserId: number; personal: boolean}) {
    return this.change((c) => this.createOrgIn(c, o));
  }
  async getOrg(id: number) {
    return this.cached(`org ${id}`, async () => {
      const r = await this.one('SELECT * FROM orgs WHERE id = $1', [id]);
      return r ? rows.org(r) : null;
    });
  }
  async getOrgByDomain(domain: string) {
    const r = await this.one('SELECT * FROM orgs WHERE domain = $1', [domain]);
    return r ? rows.org(r) : null;
  }
  async getPersonalOrg(userId: number) {
    const r = await this.one('SELECT * FROM orgs WHERE owner_id = $1', [userId]);
    return r ? rows.org(r) : null;
  }
  async updateOrg(id: number, patch: OrgPatch) {
    const sets: string[] = [];
    const args: unknown[] = [];
    const put = (col: string, v: unknown) => (args.push(v), sets.push(`${col} = $${args.length}`));
    if (patch.name !== undefined) put('name', patch.name);
    if (patch.domain !== undefined) put('domain', patch.domain);
    if (patch.orgPrefs !== undefined) put('org_prefs', json(patch.orgPrefs));
    sets.push('updated_at = now()');
    args.push(id);
    await this.change((c) => this.q(`UPDATE orgs SET ${sets.join(', ')} WHERE id = $${args.length}`, args, c));
  }
  private async deleteOrgIn(c: pg.PoolClient, id: number): Promise<string[]> {
    // Lock the org row first so that concurrent changes inside it wait for the delete.
    await this.q('SELECT id FROM orgs WHERE id = $1 FOR UPDATE', [id], c);
    const docIds = (await this.q('SELECT id FROM docs WHERE org_id = $1 ORDER BY id', [id], c)).map(
      (r) => r.id as string,
    );
    const wsIds = (await this.q('SELECT id FROM workspaces WHERE org_id = $1', [id], c)).map((r) => String(r.id));
    await this.deleteAclFor(c, 'doc', docIds);
    await this.deleteAclFor(c, 'ws', wsIds);
    await this.deleteAclFor(c, 'org', [String(id)]);
    await this.q('DELETE FROM orgs WHERE id = $1', [id], c);
    return docIds;
  }
  private async deleteAclFor(c: pg.PoolClient, kind: ResourceKind, ids: string[]) {
    if (ids.length) await this.q('DELETE FROM acl WHERE kind = $1 AND resource_id = ANY($2::text[])', [kind, ids], c);
  }
  async deleteOrg(id: number) {
    return this.change(async (c) => ({docIds: await this.deleteOrgIn(c, id)}));
  }
  async listOrgsForUsers(userIds: number[]) {
    if (userIds.length === 0) return [];
    return (
      await this.q(
        `SELECT * FROM orgs WHERE id IN (
           SELECT o.id FROM acl a JOIN orgs o ON a.kind = 'org' AND a.resource_id = o.id::text WHERE a.user_id = ANY($1::int[])
           UNION SELECT w.org_id FROM acl a JOIN workspaces w ON a.kind = 'ws' AND a.resource_id = w.id::text WHERE a.user_id = ANY($1::int[])
           UNION SELECT d.org_id FROM acl a JOIN docs d ON a.kind = 'doc' AND a.resource_id = d.id WHERE a.user_id = ANY($1::int[]))
         ORDER BY id`,
        [userIds],
      )
    ).map(rows.org);
  }
  async getPrefs(orgId: number, userId: number | null) {
    const r = await this.one('SELECT prefs FROM prefs WHERE org_id = $1 AND user_id = $2', [orgId, userId ?? 0]);
    return r ? r.prefs : null;
  }
  async setPrefs(orgId: number, userId: number | null, prefs: Record<string, unknown> | null) {
    if (prefs === null) await this.q('DELETE FROM prefs WHERE org_id = $1 AND user_id = $2', [orgId, userId ?? 0]);
    else {
      await this.q(
        `INSERT INTO prefs (org_id, user_id, prefs) VALUES ($1, $2, $3)
         ON CONFLICT (org_id, user_id) DO UPDATE SET prefs = excluded.prefs`,
        [orgId, userId ?? 0, json(prefs)],
      );
    }
  }

  // ---------------------------------------------------------------- workspaces

  async createWorkspace(w: {orgId: number; name: string; ownerUserId: number}) {
    return this.change(async (c) => {
      const r = (await this.one(
        'INSERT INTO workspaces (org_id, name) VALUES ($1, $2) RETURNING *',
        [w.orgId, w.name],
        c,
      ))!;
      await this.q(
        "INSERT INTO acl (kind, resource_id, user_id, role) VALUES ('ws', $1, $2, 'owners')",
        [String(r.id), w.ownerUserId],
        c,
      );
      return rows.workspace(r);
    });
  }
  async getWorkspace(id: number) {
    return this.cached(`ws ${id}`, async () => {
      const r = await this.one('SELECT * FROM workspaces WHERE id = $1', [id]);
      return r ? rows.workspace(r) : null;
    });
  }
  async listWorkspaces(orgId: number) {
    return (await this.q('SELECT * FROM workspaces WHERE org_id = $1 ORDER BY id', [orgId])).map(rows.workspace);
  }
  async updateWorkspace(id: number, patch: WorkspacePatch) {
    const sets: string[] = [];
    const args: unknown[] = [];
    const put = (col: string, v: unknown) => (args.push(v), sets.push(`${col} = $${args.length}`));
    if (patch.name !== undefined) put('name', patch.name);
    if (patch.maxInheritedRole !== undefined) put('max_inherited_role', patch.maxInheritedRole);
    if (patch.removedAt !== undefined) put('removed_at', patch.removedAt);
    sets.push('updated_at = now()');
    args.push(id);
    await this.change((c) => this.q(`UPDATE workspaces SET ${sets.join(', ')} WHERE id = $${args.length}`, args, c));
  }
  async deleteWorkspace(id: number) {
    return this.change(async (c) => {
      await this.q('SELECT id FROM workspaces WHERE id = $1 FOR UPDATE', [id], c);
      const docIds = (await this.q('SELECT id FROM docs WHERE workspace_id = $1 ORDER BY id', [id], c)).map(
        (r) => r.id as string,
      );
      await this.deleteAclFor(c, 'doc', docIds);
      await this.deleteAclFor(c, 'ws', [String(id)]);
      await this.q('DELETE FROM workspaces WHERE id = $1', [id], c);
      return {docIds};
    });
  }

  // ---------------------------------------------------------------- docs

  /**
   * Records `urlId` as an alias of the doc in its org. Grist's rule (`_checkForUrlIdConflict`): a
   * urlId is unique within a team site, and across all personal orgs (merged under `docs`). Grist
   * lets any doc take over a former alias; here only a doc of the same creator may, so that an
   * alias never moves to a document someone else created (issue 11: alias hijack). A
   * transaction-scoped advisory lock on the urlId serialises claims across orgs, which no
   * constraint covers.
   */
  private async claimUrlId(c: pg.PoolClient, docId: string, orgId: number, urlId: string) {
    await this.q("SELECT pg_advisory_xact_lock(hashtext('gristlite urlId ' || $1))", [urlId], c);
    const org = await this.one('SELECT owner_id FROM orgs WHERE id = $1', [orgId], c);
    const personal = org?.owner_id != null;
    const scope = personal ? 'o.owner_id IS NOT NULL' : 'o.id = $3';
    const args = personal ? [urlId, docId] : [urlId, docId, orgId];
    const holder = await this.one(
      `SELECT 1 FROM aliases a JOIN orgs o ON o.id = a.org_id JOIN docs h ON h.id = a.doc_id
         WHERE a.url_id = $1 AND a.doc_id <> $2 AND ${scope}
         AND (h.url_id IS NOT DISTINCT FROM a.url_id OR h.created_by IS NULL
              OR h.created_by IS DISTINCT FROM (SELECT created_by FROM docs WHERE id = $2))
       UNION ALL
       SELECT 1 FROM docs d JOIN orgs o ON o.id = d.org_id WHERE d.url_id = $1 AND d.id <> $2 AND ${scope}
       LIMIT 1`,
      args,
      c,
    );
    if (holder) throw new Conflict('urlId');
    // What is left are former aliases of the same creator's docs: this doc takes them over.
    await this.q(
      `DELETE FROM aliases WHERE url_id = $1 AND doc_id <> $2 AND org_id IN (SELECT o.id FROM orgs o WHERE ${scope})`,
      args,
      c,
    );
    await this.q(
      `INSERT INTO aliases (org_id, url_id, doc_id) VALUES ($1, $2, $3)
       ON CONFLICT (org_id, url_id) DO UPDATE SET doc_id = excluded.doc_id, created_at = clock_timestamp()`,
      [orgId, urlId, docId],
      c,
    );
  }
  async createDoc(d: NewDoc) {
    return this.change(async (c) => {
      const r = await this.one(
        `INSERT INTO docs (id, workspace_id, org_id, name, url_id, is_pinned, options, type, created_by)
         SELECT $1, w.id, w.org_id, $3, $4, $5, $6, $7, $8 FROM workspaces w WHERE w.id = $2
         RETURNING *`,
        [d.id, d.workspaceId, d.name, d.urlId, Boolean(d.isPinned), json(d.options), d.type ?? null, d.ownerUserId],
        c,
      );
      if (!r) throw new Error(`workspace ${d.workspaceId} does not exist`);
      if (d.urlId) await this.claimUrlId(c, d.id, r.org_id, d.urlId);
      await this.q(
        "INSERT INTO acl (kind, resource_id, user_id, role) VALUES ('doc', $1, $2, 'owners')",
        [d.id, d.ownerUserId],
        c,
      );
      return rows.doc(r);
    });
  }
  async getDoc(id: string) {
    return this.cached(`doc ${id}`, async () => {
      const r = await this.one('SELECT * FROM docs WHERE id = $1', [id]);
      return r ? rows.doc(r) : null;
    });
  }
  async getDocByUrlId(urlId: string, orgId: number | null) {
    const r =
      orgId === null
        ? await this.one(
            `SELECT d.* FROM aliases a JOIN docs d ON d.id = a.doc_id JOIN orgs o ON o.id = a.org_id
             WHERE a.url_id = $1 AND o.owner_id IS NOT NULL ORDER BY a.created_at, a.doc_id LIMIT 1`,
            [urlId],
          )
        : await this.one(
            'SELECT d.* FROM aliases a JOIN docs d ON d.id = a.doc_id WHERE a.url_id = $1 AND a.org_id = $2',
            [urlId, orgId],
          );
    return r ? rows.doc(r) : null;
  }
  async listAliases(docId: string) {
    const found = await this.q('SELECT * FROM aliases WHERE doc_id = $1 ORDER BY created_at, url_id', [docId]);
    return found.map(rows.alias);
  }
  async listDocsByUrlId(urlId: string) {
    const found = await this.q(
      'SELECT d.* FROM aliases a JOIN docs d ON d.id = a.doc_id WHERE a.url_id = $1 ORDER BY a.created_at, a.doc_id',
      [urlId],
    );
    return found.map(rows.doc);
  }
  async listDocs(workspaceIds: number[]) {
    if (workspaceIds.length === 0) return [];
    return (
      await this.q('SELECT * FROM docs WHERE workspace_id = ANY($1::int[]) ORDER BY created_at, id', [workspaceIds])
    ).map(rows.doc);
  }
  async updateDoc(id: string, patch: DocPatch) {
    await this.change(async (c) => {
      const sets: string[] = [];
      const args: unknown[] = [];
      const put = (col: string, v: unknown) => (args.push(v), sets.push(`${col} = $${args.length}`));
      if (patch.name !== undefined) put('name', patch.name);
      if (patch.urlId !== undefined) put('url_id', patch.urlId);
      if (patch.isPinned !== undefined) put('is_pinned', patch.isPinned);
      if (patch.options !== undefined) put('options', json(patch.options));
      if (patch.type !== undefined) put('type', patch.type);
      if (patch.maxInheritedRole !== undefined) put('max_inherited_role', patch.maxInheritedRole);
      if (patch.removedAt !== undefined) put('removed_at', patch.removedAt);
      if (patch.workspaceId !== undefined) {
        put('workspace_id', patch.workspaceId);
        sets.push(`org_id = (SELECT org_id FROM workspaces WHERE id = $${args.length})`);
      }
      sets.push('updated_at = now()');
      args.push(id);
      const r = await this.one(
        `UPDATE docs SET ${sets.join(', ')} WHERE id = $${args.length} RETURNING org_id`,
        args,
        c,
      );
      if (r && patch.urlId) await this.claimUrlId(c, id, r.org_id, patch.urlId);
    });
  }
  async moveDoc(id: string, workspaceId: number) {
    await this.change(async (c) => {
      const doc = await this.one('SELECT org_id FROM docs WHERE id = $1 FOR UPDATE', [id], c);
      const dest = await this.one('SELECT org_id FROM workspaces WHERE id = $1', [workspaceId], c);
      if (!doc || !dest) throw new Error(`moveDoc: no doc ${id} or workspace ${workspaceId}`);
      if (doc.org_id !== dest.org_id) {
        await this.q('DELETE FROM aliases WHERE doc_id = $1', [id], c);
        await this.q('UPDATE docs SET url_id = NULL WHERE id = $1', [id], c);
      }
      await this.q(
        'UPDATE docs SET workspace_id = $1, org_id = $2, updated_at = now() WHERE id = $3',
        [workspaceId, dest.org_id, id],
        c,
      );
    });
  }
  async deleteDoc(id: string) {
    await this.change(async (c) => {
      await this.deleteAclFor(c, 'doc', [id]);
      await this.q('DELETE FROM docs WHERE id = $1', [id], c);
    });
  }

  // ---------------------------------------------------------------- access lists

  async getAcl(kind: ResourceKind, resourceIds: string[]) {
    if (resourceIds.length === 0) return [];
    const load = async () =>
      (
        await this.q(
          'SELECT * FROM acl WHERE kind = $1 AND resource_id = ANY($2::text[]) ORDER BY user_id, kind, resource_id',
          [kind, resourceIds],
        )
      ).map(rows.acl);
    // One resource's list is what a request asks for (its doc, workspace, org); an empty list is
    // an answer too (nobody shares the resource directly).
    return resourceIds.length === 1 ? this.cached(`acl ${kind} ${resourceIds[0]}`, load, () => true) : load();
  }
  async getAclInOrg(orgId: number, userIds: number[] | null) {
    if (userIds !== null && userIds.length === 0) return [];
    // A guest's every request asks this (no role on the org itself: home/access.ts orgChainLevel).
    const key = userIds === null ? null : `aclInOrg ${orgId} ${userIds.join(',')}`;
    return key === null
      ? this.aclInOrg(orgId, null)
      : this.cached(
          key,
          () => this.aclInOrg(orgId, userIds),
          () => true,
        );
  }
  private async aclInOrg(orgId: number, userIds: number[] | null) {
    return (
      await this.q(
        `SELECT a.* FROM acl a WHERE ($2::int[] IS NULL OR a.user_id = ANY($2::int[])) AND (
           (a.kind = 'org' AND a.resource_id = $1::int::text)
           OR (a.kind = 'ws' AND a.resource_id IN (SELECT id::text FROM workspaces WHERE org_id = $1::int))
           OR (a.kind = 'doc' AND a.resource_id IN (SELECT id FROM docs WHERE org_id = $1::int)))
         ORDER BY a.user_id, a.kind, a.resource_id`,
        [orgId, userIds],
      )
    ).map(rows.acl);
  }
  async updateAcl(kind: ResourceKind, resourceId: string, changes: AclChange[], opts: {cascade?: boolean} = {}) {
    if (changes.length === 0) return;
    await this.change(async (c) => {
      for (const ch of changes) {
        if (ch.role === null) {
          await this.q(
            'DELETE FROM acl WHERE kind = $1 AND resource_id = $2 AND user_id = $3',
            [kind, resourceId, ch.userId],
            c,
          );
          if (opts.cascade && kind === 'org' && /^\d+$/.test(resourceId)) {
            await this.q(
              `DELETE FROM acl WHERE user_id = $1 AND (
                 (kind = 'ws' AND resource_id IN (SELECT id::text FROM workspaces WHERE org_id = $2))
                 OR (kind = 'doc' AND resource_id IN (SELECT id FROM docs WHERE org_id = $2)))`,
              [ch.userId, Number(resourceId)],
              c,
            );
          }
        } else {
          await this.q(
            `INSERT INTO acl (kind, resource_id, user_id, role) VALUES ($1, $2, $3, $4)
             ON CONFLICT (kind, resource_id, user_id) DO UPDATE SET role = excluded.role`,
            [kind, resourceId, ch.userId, ch.role],
            c,
          );
        }
      }
    });
  }

  async close() {
    if (this.closed) return;
    this.closed = true;
    if (this.listenRetry) clearTimeout(this.listenRetry);
    this.cache.setListening(false);
    await this.listener?.end().catch(() => {});
    await this.pool.end();
  }
}

/**
 * Applies pending migrations in one transaction, under a transaction-scoped advisory lock keyed by
 * the schema, so that processes starting together migrate once and the others wait, then see it done.
 */
/** Runs `fn` in one transaction on a pooled connection: committed when it returns, rolled back when it throws. */
export async function inTransaction<T>(pool: pg.Pool, fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
  const c = await pool.connect();
  try {
    await c.query('BEGIN');
    const result = await fn(c);
    await c.query('COMMIT');
    return result;
  } catch (e) {
    await c.query('ROLLBACK').catch(() => {});
    throw e;
  } finally {
    c.release();
  }
}

export async function migrate(pool: pg.Pool, schema: string): Promise<number> {
  const c = await pool.connect();
  try {
    await c.query('BEGIN');
    await c.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [LOCK_CLASS_MIGRATE, schema]);
    await c.query(`CREATE SCHEMA IF NOT EXISTS ${pg.escapeIdentifier(schema)}`);
    await c.query(`CREATE TABLE IF NOT EXISTS ${pg.escapeIdentifier(schema)}.gristlite_migrations (
      version integer PRIMARY KEY,
      name text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`);
    const {rows} = await c.query(
      `SELECT COALESCE(max(version), 0) AS v FROM ${pg.escapeIdentifier(schema)}.gristlite_migrations`,
    );
    const current = Number(rows[0].v);
    if (current > MIGRATIONS.length) {
      throw new Error(
        `home schema ${schema} is at version ${current}, newer than this gristlite (${MIGRATIONS.length})`,
      );
    }
    for (let v = current; v < MIGRATIONS.length; v++) {
      await c.query(MIGRATIONS[v].sql);
      await c.query(`INSERT INTO ${pg.escapeIdentifier(schema)}.gristlite_migrations (version, name) VALUES ($1, $2)`, [
        v + 1,
        MIGRATIONS[v].name,
      ]);
    }
    await c.query('COMMIT');
    return MIGRATIONS.length - current;
  } catch (e) {
    await c.query('ROLLBACK').catch(() => {});
    throw e;
  } finally {
    c.release();
  }
}
