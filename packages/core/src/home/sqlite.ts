/**
 * The embedded home store: `HomeStore` on one SQLite file (users and API keys, orgs, workspaces,
 * documents, access lists, shares), with its schema and its migrations.
 *
 * One thing: one implementation of the HomeStore interface, a method per operation, sharing one
 * connection and its statements; the HomeStore conformance suite tests it as a whole, as it does
 * the PostgreSQL store.
 */
import Database from 'better-sqlite3';
import {makeId, nowIso} from '../base/index.js';
import {rowCodec, type HomeRow} from './rows.js';
import {Conflict} from './types.js';
import type {
  AclChange,
  DocApiKey,
  DocPatch,
  HomeStore,
  NewDoc,
  Org,
  OrgPatch,
  ResourceKind,
  WorkspacePatch,
} from './types.js';

/** Versioned migrations; index + 1 is the schema version recorded in `user_version`. */
export const MIGRATIONS: string[] = [
  `
  CREATE TABLE users (
    id INTEGER PRIMARY KEY,
    email TEXT NOT NULL,
    email_norm TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL DEFAULT '',
    ref TEXT NOT NULL,
    picture TEXT,
    api_key_hash TEXT UNIQUE,
    api_key_prefix TEXT,
    created_at TEXT NOT NULL
  );
  CREATE TABLE orgs (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    domain TEXT UNIQUE,
    owner_id INTEGER UNIQUE REFERENCES users(id) ON DELETE CASCADE,
    host TEXT,
    org_prefs TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  );
  CREATE TABLE prefs (
    org_id INTEGER NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
    user_id INTEGER NOT NULL DEFAULT 0,
    prefs TEXT NOT NULL,
    PRIMARY KEY (org_id, user_id)
  );
  CREATE TABLE workspaces (
    id INTEGER PRIMARY KEY,
    org_id INTEGER NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    max_inherited_role TEXT DEFAULT 'owners',
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    removed_at TEXT
  );
  CREATE INDEX workspaces_org ON workspaces(org_id);
  CREATE TABLE docs (
    id TEXT PRIMARY KEY,
    workspace_id INTEGER NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    url_id TEXT,
    is_pinned INTEGER NOT NULL DEFAULT 0,
    options TEXT,
    type TEXT,
    max_inherited_role TEXT DEFAULT 'owners',
    created_by INTEGER,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    removed_at TEXT
  );
  CREATE INDEX docs_ws ON docs(workspace_id);
  CREATE TABLE aliases (
    org_id INTEGER NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
    url_id TEXT NOT NULL,
    doc_id TEXT NOT NULL REFERENCES docs(id) ON DELETE CASCADE,
    created_at TEXT NOT NULL,
    PRIMARY KEY (org_id, url_id)
  );
  CREATE INDEX aliases_doc ON aliases(doc_id);
  CREATE TABLE acl (
    kind TEXT NOT NULL CHECK (kind IN ('org', 'ws', 'doc')),
    resource_id TEXT NOT NULL,
    user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    role TEXT NOT NULL,
    PRIMARY KEY (kind, resource_id, user_id)
  );
  CREATE INDEX acl_user ON acl(user_id);
  `,
  // 2: AUTOINCREMENT on users, orgs and workspaces, so that the id of a deleted row (the newest
  // one, in particular) is never given to a new one. Rebuilt as SQLite documents it (new table,
  // copy, drop, rename), with foreign keys off during the migration.
  `
  CREATE TABLE users_new (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    email TEXT NOT NULL,
    email_norm TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL DEFAULT '',
    ref TEXT NOT NULL,
    picture TEXT,
    api_key_hash TEXT UNIQUE,
    api_key_prefix TEXT,
    created_at TEXT NOT NULL
  );
  INSERT INTO users_new (id, email, email_norm, name, ref, picture, api_key_hash, api_key_prefix, created_at)
    SELECT id, email, email_norm, name, ref, picture, api_key_hash, api_key_prefix, created_at FROM users;
  DROP TABLE users;
  ALTER TABLE users_new RENAME TO users;
  CREATE TABLE orgs_new (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL,
    domain TEXT UNIQUE,
    owner_id INTEGER UNIQUE REFERENCES users(id) ON DELETE CASCADE,
    host TEXT,
    org_prefs TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  );
  INSERT INTO orgs_new (id, name, domain, owner_id, host, org_prefs, created_at, updated_at)
    SELECT id, name, domain, owner_id, host, org_prefs, created_at, updated_at FROM orgs;
  DROP TABLE orgs;
  ALTER TABLE orgs_new RENAME TO orgs;
  CREATE TABLE workspaces_new (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    org_id INTEGER NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    max_inherited_role TEXT DEFAULT 'owners',
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    removed_at TEXT
  );
  INSERT INTO workspaces_new (id, org_id, name, max_inherited_role, created_at, updated_at, removed_at)
    SELECT id, org_id, name, max_inherited_role, created_at, updated_at, removed_at FROM workspaces;
  DROP TABLE workspaces;
  ALTER TABLE workspaces_new RENAME TO workspaces;
  CREATE INDEX workspaces_org ON workspaces(org_id);
  `,
  // 3 (issue 30): document API keys, kept hashed; they go with their document and their creator.
  `
  CREATE TABLE doc_api_keys (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    doc_id TEXT NOT NULL REFERENCES docs(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    access TEXT NOT NULL CHECK (access IN ('viewers', 'editors')),
    key_hash TEXT NOT NULL UNIQUE,
    created_by INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created_at TEXT NOT NULL,
    expires_at TEXT,
    last_used_at TEXT
  );
  CREATE INDEX doc_api_keys_doc ON doc_api_keys(doc_id);
  CREATE INDEX doc_api_keys_creator ON doc_api_keys(created_by);
  `,
  // 4 (issue 41): shares of documents, as Grist's home database keeps them (key, linkId, options).
  `
  CREATE TABLE shares (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    key TEXT NOT NULL UNIQUE,
    link_id TEXT NOT NULL,
    doc_id TEXT NOT NULL REFERENCES docs(id) ON DELETE CASCADE,
    options TEXT NOT NULL DEFAULT '{}',
    UNIQUE (doc_id, link_id)
  );
  `,
];

type Row = HomeRow;

// better-sqlite3 returns TEXT timestamps and JSON, and 0/1 for booleans.
const rows = rowCodec({
  time: (v) => (v === null || v === undefined ? null : String(v)),
  json: (v) => (v ? JSON.parse(v as string) : null),
  bool: Boolean,
});

/** Reads the home store remembers between two changes (entries of `SqliteHomeStore.reads`). */
const MAX_MEMO_READS = 5000;

/** A statement's remembered reads: by its one plain argument, or by its arguments as text. */
interface MemoReads {
  one: Map<unknown, Row | Row[] | undefined>;
  many: Map<unknown, Row | Row[] | undefined>;
}

/** Named parameters (an object) and buffers as memo key text. */
function argJson(a: object): string {
  return JSON.stringify(a, (_k, v) => (typeof v === 'bigint' ? `${v}n` : v));
}

function freezeRow(r: Row | undefined): Row | undefined {
  return r === undefined ? r : Object.freeze(r);
}

function isUnique(e: unknown, column: string): boolean {
  return e instanceof Error && /UNIQUE constraint failed/.test(e.message) && e.message.includes(column);
}

/** The embedded home store: one SQLite file, WAL, foreign keys on. Safe for several processes. */
export class SqliteHomeStore implements HomeStore {
  private db: Database.Database;

  constructor(path: string) {
    this.db = new Database(path);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    this.db.pragma('foreign_keys = ON');
    this.db.pragma('busy_timeout = 5000');
    this.migrate();
  }

  private migrate(): void {
    if ((this.db.pragma('user_version', {simple: true}) as number) >= MIGRATIONS.length) return;
    // Table rebuilds need foreign keys off, which SQLite only allows outside a transaction; the
    // migration checks them itself before committing.
    this.db.pragma('foreign_keys = OFF');
    try {
      // IMMEDIATE so that two processes starting at once do not both migrate.
      this.db
        .transaction(() => {
          const version = this.db.pragma('user_version', {simple: true}) as number;
          for (let v = version; v < MIGRATIONS.length; v++) this.db.exec(MIGRATIONS[v]);
          if (version < MIGRATIONS.length) {
            const broken = this.db.pragma('foreign_key_check') as unknown[];
            if (broken.length) throw new Error(`home database migration broke ${broken.length} foreign keys`);
            this.db.pragma(`user_version = ${MIGRATIONS.length}`);
          }
        })
        .immediate();
    } finally {
      this.db.pragma('foreign_keys = ON');
    }
  }

  /** Statements are prepared once: every request runs several of these lookups. */
  private readonly statements = new Map<string, Database.Statement>();
  private stmt(sql: string): Database.Statement {
    let s = this.statements.get(sql);
    if (!s) this.statements.set(sql, (s = this.db.prepare(sql)));
    return s;
  }
  /**
   * Reads answered from memory while nothing changed the database (issue 28): every request looks
   * up its API key, document, workspace, org and their ACLs, about 0.15 ms of SQLite per request.
   * This connection's own writes empty the memo; another process's commit moves SQLite's data
   * version, read at most once per turn of the event loop (so a request may see a commit made
   * elsewhere a turn late, as if it had arrived a moment earlier).
   */
  private readonly reads = {get: new Map<string, MemoReads>(), all: new Map<string, MemoReads>()};
  /** Entries in `reads` (all statements). */
  private readCount = 0;
  private dataVersion = -1;
  private versionChecked = false;
  private versionStmt: Database.Statement | null = null;
  private forgetReads(): void {
    this.reads.get.clear();
    this.reads.all.clear();
    this.readCount = 0;
  }
  private memo<T extends Row | Row[] | undefined>(kind: 'get' | 'all', sql: string, args: unknown[]): T {
    const stmt = this.stmt(sql);
    // Closed: the statement reports it (a health check must fail, not be answered from memory).
    if (!stmt.readonly || !this.db.open) {
      this.forgetReads();
      return (kind === 'get' ? stmt.get(...args) : stmt.all(...args)) as T;
    }
    if (!this.versionChecked) {
      this.versionStmt ??= this.db.prepare('PRAGMA data_version').pluck();
      const version = this.versionStmt.get() as number;
      if (version !== this.dataVersion) {
        this.forgetReads();
        this.dataVersion = version;
      }
      this.versionChecked = true;
      setImmediate(() => {
        this.versionChecked = false;
      }).unref();
    }
    if (this.readCount >= MAX_MEMO_READS) this.forgetReads();
    // Kept per statement text (a constant string, its hash kept by V8), then by the argument itself
    // when it is one plain value: a key made of the SQL text and the arguments was a new string
    // hashed whole on every lookup, 4.6% of a 304's server CPU (issue 43). A statement's text
    // fixes how many arguments it takes, so the two maps never hold keys of one statement alike.
    const bySql = this.reads[kind];
    let memo = bySql.get(sql);
    if (memo === undefined) bySql.set(sql, (memo = {one: new Map(), many: new Map()}));
    let key: unknown;
    let within: Map<unknown, Row | Row[] | undefined>;
    const a0 = args[0];
    if (args.length === 1 && (a0 === null || typeof a0 !== 'object')) {
      key = a0; // Map keys compare as SameValueZero: 1, '1' and 1n stay apart, as typeof did
      within = memo.one;
    } else {
      let joined = '';
      for (const a of args)
        joined += `\u0000${typeof a}:${a !== null && typeof a === 'object' ? argJson(a) : String(a)}`;
      key = joined;
      within = memo.many;
    }
    if (within.has(key)) return within.get(key) as T;
    // Frozen: a caller that changed a remembered row would change the next caller's answer.
    const value =
      kind === 'get'
        ? freezeRow(stmt.get(...args) as Row | undefined)
        : Object.freeze((stmt.all(...args) as Row[]).map((r) => freezeRow(r)!));
    within.set(key, value as Row | Row[]);
    this.readCount++;
    return value as T;
  }
  private get(sql: string, ...args: unknown[]): Row | undefined {
    return this.memo('get', sql, args);
  }
  private all(sql: string, ...args: unknown[]): Row[] {
    return this.memo<Row[]>('all', sql, args);
  }
  private run(sql: string, ...args: unknown[]): Database.RunResult {
    this.forgetReads();
    return this.stmt(sql).run(...args);
  }
  private tx<T>(fn: () => T): T {
    try {
      return this.db.transaction(fn).immediate();
    } finally {
      // Reads inside saw its rows; a rollback undid them.
      this.forgetReads();
    }
  }

  async getUser(id: number) {
    const r = this.get('SELECT * FROM users WHERE id = ?', id);
    return r ? rows.user(r) : null;
  }
  async getUsers(ids: number[]) {
    if (ids.length === 0) return [];
    return this.all(`SELECT * FROM users WHERE id IN (SELECT value FROM json_each(?))`, JSON.stringify(ids)).map(
      rows.user,
    );
  }
  async getUserByEmail(email: string) {
    const r = this.get('SELECT * FROM users WHERE email_norm = ?', email.toLowerCase());
    return r ? rows.user(r) : null;
  }
  async getUserByApiKeyHash(hash: string) {
    const r = this.get('SELECT * FROM users WHERE api_key_hash = ?', hash);
    return r ? rows.user(r) : null;
  }
  async createUser(u: {email: string; name: string; personalOrg: boolean}) {
    return this.tx(() => {
      let id: number;
      try {
        id = Number(
          this.run(
            'INSERT INTO users (email, email_norm, name, ref, created_at) VALUES (?, ?, ?, ?, ?)',
            u.email,
            u.email.toLowerCase(),
            u.name,
            makeId(),
            nowIso(),
          ).lastInsertRowid,
        );
      } catch (e) {
        if (isUnique(e, 'email_norm')) throw new Conflict('email');
        throw e;
      }
      if (u.personalOrg) this.createOrgSync({name: 'Personal', domain: null, ownerUserId: id, personal: true});
      return rows.user(this.get('SELECT * FROM users WHERE id = ?', id)!);
    });
  }
  async updateUser(id: number, patch: {name?: string}) {
    if (patch.name !== undefined) this.run('UPDATE users SET name = ? WHERE id = ?', patch.name, id);
  }
  async setApiKey(id: number, hash: string | null, prefix: string | null) {
    try {
      this.run('UPDATE users SET api_key_hash = ?, api_key_prefix = ? WHERE id = ?', hash, prefix, id);
    } catch (e) {
      if (isUnique(e, 'api_key_hash')) throw new Conflict('apiKey');
      throw e;
    }
  }
  async createDocApiKey(k: Omit<DocApiKey, 'id' | 'createdAt' | 'lastUsedAt'> & {keyHash: string}) {
    const id = this.run(
      'INSERT INTO doc_api_keys (doc_id, name, access, key_hash, created_by, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
      k.docId,
      k.name,
      k.access,
      k.keyHash,
      k.createdBy,
      nowIso(),
      k.expiresAt,
    ).lastInsertRowid;
    return rows.docApiKey(this.get('SELECT * FROM doc_api_keys WHERE id = ?', id)!);
  }
  async listDocApiKeys(docId: string) {
    return this.all('SELECT * FROM doc_api_keys WHERE doc_id = ? ORDER BY id', docId).map(rows.docApiKey);
  }
  async getDocApiKeyByHash(hash: string) {
    const r = this.get('SELECT * FROM doc_api_keys WHERE key_hash = ?', hash);
    return r ? rows.docApiKey(r) : null;
  }
  async deleteDocApiKey(docId: string, id: number) {
    return this.run('DELETE FROM doc_api_keys WHERE doc_id = ? AND id = ?', docId, id).changes > 0;
  }
  async touchDocApiKey(id: number, at: string) {
    this.run('UPDATE doc_api_keys SET last_used_at = ? WHERE id = ?', at, id);
  }
  async syncShares(
    docId: string,
    shares: Array<{linkId: string; options: Record<string, unknown>}>,
    makeKey: () => string,
  ) {
    this.tx(() => {
      const keep = new Set<string>();
      for (const sh of shares) {
        keep.add(sh.linkId);
        this.stmt(
          'INSERT INTO shares (key, link_id, doc_id, options) VALUES (?, ?, ?, ?) ON CONFLICT (doc_id, link_id) DO UPDATE SET options = excluded.options',
        ).run(makeKey(), sh.linkId, docId, JSON.stringify(sh.options));
      }
      const known = this.stmt('SELECT id, link_id FROM shares WHERE doc_id = ?').all(docId) as Row[];
      for (const r of known) if (!keep.has(r.link_id as string)) this.stmt('DELETE FROM shares WHERE id = ?').run(r.id);
    });
  }
  async getShareByKey(key: string) {
    const r = this.get('SELECT * FROM shares WHERE key = ?', key);
    return r ? rows.share(r) : null;
  }
  async listShares(docId: string) {
    return this.all('SELECT * FROM shares WHERE doc_id = ? ORDER BY id', docId).map(rows.share);
  }
  async deleteUser(id: number) {
    return this.tx(() => {
      const org = this.get('SELECT id FROM orgs WHERE owner_id = ?', id);
      const docIds = org ? this.deleteOrgSync(org.id) : [];
      this.run('UPDATE docs SET created_by = NULL WHERE created_by = ?', id);
      this.run('DELETE FROM prefs WHERE user_id = ?', id);
      this.run('DELETE FROM acl WHERE user_id = ?', id);
      this.run('DELETE FROM users WHERE id = ?', id);
      return {docIds};
    });
  }

  private createOrgSync(o: {name: string; domain: string | null; ownerUserId: number; personal: boolean}): Org {
    const now = nowIso();
    let id: number;
    try {
      id = Number(
        this.run(
          'INSERT INTO orgs (name, domain, owner_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?)',
          o.name,
          o.domain,
          o.personal ? o.ownerUserId : null,
          now,
          now,
        ).lastInsertRowid,
      );
    } catch (e) {
      if (isUnique(e, 'orgs.domain')) throw new Conflict('domain');
      throw e;
    }
    this.run(
      "INSERT INTO acl (kind, resource_id, user_id, role) VALUES ('org', ?, ?, 'owners')",
      String(id),
      o.ownerUserId,
    );
    this.run('INSERT INTO workspaces (org_id, name, created_at, updated_at) VALUES (?, ?, ?, ?)', id, 'Home', now, now);
    return rows.org(this.get('SELECT * FROM orgs WHERE id = ?', id)!);
  }
  async createOrg(o: {name: string; domain: string | null; ownerUserId: number; personal: boolean}) {
    return this.tx(() => this.createOrgSync(o));
  }
  async getOrg(id: number) {
    const r = this.get('SELECT * FROM orgs WHERE id = ?', id);
    return r ? rows.org(r) : null;
  }
  async getOrgByDomain(domain: string) {
    const r = this.get('SELECT * FROM orgs WHERE domain = ?', domain);
    return r ? rows.org(r) : null;
  }
  async getPersonalOrg(userId: number) {
    const r = this.get('SELECT * FROM orgs WHERE owner_id = ?', userId);
    return r ? rows.org(r) : null;
  }
  async updateOrg(id: number, patch: OrgPatch) {
    const sets: string[] = [];
    const args: unknown[] = [];
    if (patch.name !== undefined) sets.push('name = ?'), args.push(patch.name);
    if (patch.domain !== undefined) sets.push('domain = ?'), args.push(patch.domain);
    if (patch.orgPrefs !== undefined)
      sets.push('org_prefs = ?'), args.push(patch.orgPrefs ? JSON.stringify(patch.orgPrefs) : null);
    sets.push('updated_at = ?');
    args.push(nowIso(), id);
    try {
      this.run(`UPDATE orgs SET ${sets.join(', ')} WHERE id = ?`, ...args);
    } catch (e) {
      if (isUnique(e, 'orgs.domain')) throw new Conflict('domain');
      throw e;
    }
  }
  private deleteOrgSync(id: number): string[] {
    const docIds = this.all(
      'SELECT d.id FROM docs d JOIN workspaces w ON d.workspace_id = w.id WHERE w.org_id = ?',
      id,
    ).map((r) => r.id as string);
    const wsIds = this.all('SELECT id FROM workspaces WHERE org_id = ?', id).map((r) => String(r.id));
    this.deleteAclFor('doc', docIds);
    this.deleteAclFor('ws', wsIds);
    this.deleteAclFor('org', [String(id)]);
    this.run('DELETE FROM orgs WHERE id = ?', id);
    return docIds;
  }
  private deleteAclFor(kind: ResourceKind, ids: string[]) {
    if (ids.length) {
      this.run(
        'DELETE FROM acl WHERE kind = ? AND resource_id IN (SELECT value FROM json_each(?))',
        kind,
        JSON.stringify(ids),
      );
    }
  }
  async deleteOrg(id: number) {
    return this.tx(() => ({docIds: this.deleteOrgSync(id)}));
  }
  async listOrgsForUsers(userIds: number[]) {
    const ids = JSON.stringify(userIds);
    return this.all(
      `SELECT * FROM orgs WHERE id IN (
         SELECT CAST(resource_id AS INTEGER) FROM acl WHERE kind = 'org' AND user_id IN (SELECT value FROM json_each(@ids))
         UNION SELECT w.org_id FROM acl a JOIN workspaces w ON a.kind = 'ws' AND w.id = CAST(a.resource_id AS INTEGER)
           WHERE a.user_id IN (SELECT value FROM json_each(@ids))
         UNION SELECT w.org_id FROM acl a JOIN docs d ON a.kind = 'doc' AND d.id = a.resource_id
           JOIN workspaces w ON w.id = d.workspace_id WHERE a.user_id IN (SELECT value FROM json_each(@ids)))
       ORDER BY id`,
      {ids},
    ).map(rows.org);
  }
  async getPrefs(orgId: number, userId: number | null) {
    const r = this.get('SELECT prefs FROM prefs WHERE org_id = ? AND user_id = ?', orgId, userId ?? 0);
    return r ? JSON.parse(r.prefs) : null;
  }
  async setPrefs(orgId: number, userId: number | null, prefs: Record<string, unknown> | null) {
    if (prefs === null) this.run('DELETE FROM prefs WHERE org_id = ? AND user_id = ?', orgId, userId ?? 0);
    else {
      this.run(
        'INSERT INTO prefs (org_id, user_id, prefs) VALUES (?, ?, ?) ON CONFLICT (org_id, user_id) DO UPDATE SET prefs = excluded.prefs',
        orgId,
        userId ?? 0,
        JSON.stringify(prefs),
      );
    }
  }

  async createWorkspace(w: {orgId: number; name: string; ownerUserId: number}) {
    return this.tx(() => {
      const now = nowIso();
      const id = Number(
        this.run(
          'INSERT INTO workspaces (org_id, name, created_at, updated_at) VALUES (?, ?, ?, ?)',
          w.orgId,
          w.name,
          now,
          now,
        ).lastInsertRowid,
      );
      this.run(
        "INSERT INTO acl (kind, resource_id, user_id, role) VALUES ('ws', ?, ?, 'owners')",
        String(id),
        w.ownerUserId,
      );
      return rows.workspace(this.get('SELECT * FROM workspaces WHERE id = ?', id)!);
    });
  }
  async getWorkspace(id: number) {
    const r = this.get('SELECT * FROM workspaces WHERE id = ?', id);
    return r ? rows.workspace(r) : null;
  }
  async listWorkspaces(orgId: number) {
    return this.all('SELECT * FROM workspaces WHERE org_id = ? ORDER BY id', orgId).map(rows.workspace);
  }
  async updateWorkspace(id: number, patch: WorkspacePatch) {
    const sets: string[] = [];
    const args: unknown[] = [];
    if (patch.name !== undefined) sets.push('name = ?'), args.push(patch.name);
    if (patch.maxInheritedRole !== undefined) sets.push('max_inherited_role = ?'), args.push(patch.maxInheritedRole);
    if (patch.removedAt !== undefined) sets.push('removed_at = ?'), args.push(patch.removedAt);
    sets.push('updated_at = ?');
    args.push(nowIso(), id);
    this.run(`UPDATE workspaces SET ${sets.join(', ')} WHERE id = ?`, ...args);
  }
  async deleteWorkspace(id: number) {
    return this.tx(() => {
      const docIds = this.all('SELECT id FROM docs WHERE workspace_id = ?', id).map((r) => r.id as string);
      this.deleteAclFor('doc', docIds);
      this.deleteAclFor('ws', [String(id)]);
      this.run('DELETE FROM workspaces WHERE id = ?', id);
      return {docIds};
    });
  }

  private orgOfWorkspace(wsId: number): number {
    return this.get('SELECT org_id FROM workspaces WHERE id = ?', wsId)!.org_id;
  }
  /**
   * Records `urlId` as the doc's alias in its org. Grist's rule (`_checkForUrlIdConflict`): a urlId
   * is unique within a team site, and across all personal orgs (they are merged under `docs`).
   * Grist lets any doc take over a former alias; here only a doc of the same creator may, so that
   * an alias never moves to a document someone else created (issue 11: alias hijack).
   */
  private claimUrlId(docId: string, orgId: number, urlId: string) {
    const personal = this.get('SELECT owner_id FROM orgs WHERE id = ?', orgId)?.owner_id != null;
    const scope = personal ? 'o.owner_id IS NOT NULL' : 'o.id = ?';
    const args = personal ? [] : [orgId];
    const holder = this.get(
      `SELECT 1 FROM aliases a JOIN orgs o ON o.id = a.org_id JOIN docs h ON h.id = a.doc_id
         WHERE a.url_id = ? AND a.doc_id != ? AND ${scope}
         AND (h.url_id IS a.url_id OR h.created_by IS NULL OR h.created_by IS NOT (SELECT created_by FROM docs WHERE id = ?))
       UNION ALL
       SELECT 1 FROM docs d JOIN workspaces w ON w.id = d.workspace_id JOIN orgs o ON o.id = w.org_id
         WHERE d.url_id = ? AND d.id != ? AND ${scope}
       LIMIT 1`,
      urlId,
      docId,
      ...args,
      docId,
      urlId,
      docId,
      ...args,
    );
    if (holder) throw new Conflict('urlId');
    // What is left are former aliases of the same creator's docs: this doc takes them over.
    this.run(
      `DELETE FROM aliases WHERE url_id = ? AND doc_id != ? AND org_id IN (SELECT o.id FROM orgs o WHERE ${scope})`,
      urlId,
      docId,
      ...args,
    );
    this.run(
      `INSERT INTO aliases (org_id, url_id, doc_id, created_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (org_id, url_id) DO UPDATE SET doc_id = excluded.doc_id, created_at = excluded.created_at`,
      orgId,
      urlId,
      docId,
      nowIso(),
    );
  }
  async createDoc(d: NewDoc) {
    return this.tx(() => {
      const now = nowIso();
      this.run(
        `INSERT INTO docs (id, workspace_id, name, url_id, is_pinned, options, type, created_by, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        d.id,
        d.workspaceId,
        d.name,
        d.urlId,
        d.isPinned ? 1 : 0,
        d.options ? JSON.stringify(d.options) : null,
        d.type ?? null,
        d.ownerUserId,
        now,
        now,
      );
      if (d.urlId) this.claimUrlId(d.id, this.orgOfWorkspace(d.workspaceId), d.urlId);
      this.run(
        "INSERT INTO acl (kind, resource_id, user_id, role) VALUES ('doc', ?, ?, 'owners')",
        d.id,
        d.ownerUserId,
      );
      return rows.doc(this.get('SELECT * FROM docs WHERE id = ?', d.id)!);
    });
  }
  async getDoc(id: string) {
    const r = this.get('SELECT * FROM docs WHERE id = ?', id);
    return r ? rows.doc(r) : null;
  }
  async getDocByUrlId(urlId: string, orgId: number | null) {
    const r =
      orgId === null
        ? this.get(
            `SELECT d.* FROM aliases a JOIN docs d ON d.id = a.doc_id JOIN orgs o ON o.id = a.org_id
             WHERE a.url_id = ? AND o.owner_id IS NOT NULL ORDER BY a.created_at, a.rowid LIMIT 1`,
            urlId,
          )
        : this.get(
            'SELECT d.* FROM aliases a JOIN docs d ON d.id = a.doc_id WHERE a.url_id = ? AND a.org_id = ?',
            urlId,
            orgId,
          );
    return r ? rows.doc(r) : null;
  }
  async listAliases(docId: string) {
    return this.all('SELECT * FROM aliases WHERE doc_id = ? ORDER BY created_at, rowid', docId).map(rows.alias);
  }
  async listDocsByUrlId(urlId: string) {
    return this.all(
      'SELECT d.* FROM aliases a JOIN docs d ON d.id = a.doc_id WHERE a.url_id = ? ORDER BY a.created_at, a.rowid',
      urlId,
    ).map(rows.doc);
  }
  async listDocs(workspaceIds: number[]) {
    if (workspaceIds.length === 0) return [];
    return this.all(
      'SELECT * FROM docs WHERE workspace_id IN (SELECT value FROM json_each(?)) ORDER BY created_at, id',
      JSON.stringify(workspaceIds),
    ).map(rows.doc);
  }
  async updateDoc(id: string, patch: DocPatch) {
    this.tx(() => {
      const sets: string[] = [];
      const args: unknown[] = [];
      const put = (col: string, v: unknown) => (sets.push(`${col} = ?`), args.push(v));
      if (patch.name !== undefined) put('name', patch.name);
      if (patch.urlId !== undefined) {
        put('url_id', patch.urlId);
        if (patch.urlId) {
          const doc = this.get('SELECT workspace_id FROM docs WHERE id = ?', id)!;
          this.claimUrlId(id, this.orgOfWorkspace(doc.workspace_id), patch.urlId);
        }
      }
      if (patch.isPinned !== undefined) put('is_pinned', patch.isPinned ? 1 : 0);
      if (patch.options !== undefined) put('options', patch.options ? JSON.stringify(patch.options) : null);
      if (patch.type !== undefined) put('type', patch.type);
      if (patch.maxInheritedRole !== undefined) put('max_inherited_role', patch.maxInheritedRole);
      if (patch.removedAt !== undefined) put('removed_at', patch.removedAt);
      if (patch.workspaceId !== undefined) put('workspace_id', patch.workspaceId);
      put('updated_at', nowIso());
      args.push(id);
      this.run(`UPDATE docs SET ${sets.join(', ')} WHERE id = ?`, ...args);
    });
  }
  async moveDoc(id: string, workspaceId: number) {
    this.tx(() => {
      const doc = this.get('SELECT workspace_id FROM docs WHERE id = ?', id)!;
      const crossOrg = this.orgOfWorkspace(doc.workspace_id) !== this.orgOfWorkspace(workspaceId);
      if (crossOrg) {
        this.run('DELETE FROM aliases WHERE doc_id = ?', id);
        this.run('UPDATE docs SET url_id = NULL WHERE id = ?', id);
      }
      this.run('UPDATE docs SET workspace_id = ?, updated_at = ? WHERE id = ?', workspaceId, nowIso(), id);
    });
  }
  async deleteDoc(id: string) {
    this.tx(() => {
      this.deleteAclFor('doc', [id]);
      this.run('DELETE FROM docs WHERE id = ?', id);
    });
  }

  async getAcl(kind: ResourceKind, resourceIds: string[]) {
    if (resourceIds.length === 0) return [];
    return this.all(
      'SELECT * FROM acl WHERE kind = ? AND resource_id IN (SELECT value FROM json_each(?)) ORDER BY user_id',
      kind,
      JSON.stringify(resourceIds),
    ).map(rows.acl);
  }
  async getAclInOrg(orgId: number, userIds: number[] | null) {
    const users = userIds === null ? null : JSON.stringify(userIds);
    return this.all(
      `SELECT * FROM acl a WHERE (@users IS NULL OR a.user_id IN (SELECT value FROM json_each(@users))) AND (
         (a.kind = 'org' AND a.resource_id = @orgText)
         OR (a.kind = 'ws' AND CAST(a.resource_id AS INTEGER) IN (SELECT id FROM workspaces WHERE org_id = @org))
         OR (a.kind = 'doc' AND a.resource_id IN (SELECT d.id FROM docs d JOIN workspaces w ON w.id = d.workspace_id WHERE w.org_id = @org)))
       ORDER BY a.user_id`,
      // better-sqlite3 binds JS numbers as REAL, so CAST(@org AS TEXT) would be '1.0': pass the text form.
      {org: orgId, orgText: String(orgId), users},
    ).map(rows.acl);
  }
  async updateAcl(kind: ResourceKind, resourceId: string, changes: AclChange[], opts: {cascade?: boolean} = {}) {
    this.tx(() => {
      for (const c of changes) {
        if (c.role === null) {
          this.run('DELETE FROM acl WHERE kind = ? AND resource_id = ? AND user_id = ?', kind, resourceId, c.userId);
          if (opts.cascade && kind === 'org') {
            this.run(
              `DELETE FROM acl WHERE user_id = ? AND (
                 (kind = 'ws' AND CAST(resource_id AS INTEGER) IN (SELECT id FROM workspaces WHERE org_id = ?))
                 OR (kind = 'doc' AND resource_id IN (SELECT d.id FROM docs d JOIN workspaces w ON w.id = d.workspace_id WHERE w.org_id = ?)))`,
              c.userId,
              Number(resourceId),
              Number(resourceId),
            );
          }
        } else {
          this.run(
            `INSERT INTO acl (kind, resource_id, user_id, role) VALUES (?, ?, ?, ?)
             ON CONFLICT (kind, resource_id, user_id) DO UPDATE SET role = excluded.role`,
            kind,
            resourceId,
            c.userId,
            c.role,
          );
        }
      }
    });
  }

  async close() {
    this.db.close();
  }
}
