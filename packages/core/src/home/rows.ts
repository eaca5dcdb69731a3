/**
 * The one mapping between home-store rows (snake_case columns, the same in every store's schema)
 * and the HomeStore records. Stores differ only in how a column type comes back from their
 * driver, which each says in a `RowDialect`: better-sqlite3 gives timestamps and JSON as TEXT and
 * booleans as 0/1; pg gives `timestamptz` as Date, `jsonb` parsed and `boolean` as boolean.
 */
import type {AclEntry, Doc, DocAlias, DocApiKey, DocShare, Org, User, Workspace} from './types.js';

/** A row as a driver returns it. */
export type HomeRow = Record<string, any>;

/** How a database driver returns timestamps, JSON and booleans: all a store says to use the codec. */
export interface RowDialect {
  /** A timestamp column as ISO 8601 text, null for NULL. */
  time(v: unknown): string | null;
  /** A JSON object column (prefs, options) as an object, null for NULL. */
  json(v: unknown): Record<string, unknown> | null;
  /** A boolean column. */
  bool(v: unknown): boolean;
}

/** Turns rows of either home store into the HomeStore types (one codec for SQLite and PostgreSQL). */
export interface RowCodec {
  /** A user row. */
  user(r: HomeRow): User;
  /** An org row. */
  org(r: HomeRow): Org;
  /** A workspace row. */
  workspace(r: HomeRow): Workspace;
  /** A document row. */
  doc(r: HomeRow): Doc;
  /** An alias row. */
  alias(r: HomeRow): DocAlias;
  /** An access-list row. */
  acl(r: HomeRow): AclEntry;
  /** A document API key row. */
  docApiKey(r: HomeRow): DocApiKey;
  /** A share row. */
  share(r: HomeRow): DocShare;
}

/** The codec for a driver's dialect. */
export function rowCodec(d: RowDialect): RowCodec {
  return {
    user: (r) => ({
      id: r.id,
      email: r.email,
      name: r.name,
      ref: r.ref,
      picture: r.picture ?? null,
      apiKeyPrefix: r.api_key_prefix ?? null,
      createdAt: d.time(r.created_at)!,
    }),
    org: (r) => ({
      id: r.id,
      name: r.name,
      domain: r.domain ?? null,
      ownerId: r.owner_id ?? null,
      host: r.host ?? null,
      orgPrefs: d.json(r.org_prefs),
      createdAt: d.time(r.created_at)!,
      updatedAt: d.time(r.updated_at)!,
    }),
    workspace: (r) => ({
      id: r.id,
      orgId: r.org_id,
      name: r.name,
      maxInheritedRole: r.max_inherited_role ?? null,
      createdAt: d.time(r.created_at)!,
      updatedAt: d.time(r.updated_at)!,
      removedAt: d.time(r.removed_at),
    }),
    doc: (r) => ({
      id: r.id,
      workspaceId: r.workspace_id,
      name: r.name,
      urlId: r.url_id ?? null,
      isPinned: d.bool(r.is_pinned),
      options: d.json(r.options),
      type: r.type ?? null,
      maxInheritedRole: r.max_inherited_role ?? null,
      createdBy: r.created_by ?? null,
      createdAt: d.time(r.created_at)!,
      updatedAt: d.time(r.updated_at)!,
      removedAt: d.time(r.removed_at),
    }),
    alias: (r) => ({orgId: r.org_id, urlId: r.url_id, docId: r.doc_id, createdAt: d.time(r.created_at)!}),
    acl: (r) => ({kind: r.kind, resourceId: r.resource_id, userId: r.user_id, role: r.role}),
    docApiKey: (r) => ({
      id: Number(r.id),
      docId: r.doc_id,
      name: r.name,
      access: r.access,
      createdBy: r.created_by,
      createdAt: d.time(r.created_at)!,
      expiresAt: d.time(r.expires_at),
      lastUsedAt: d.time(r.last_used_at),
    }),
    share: (r) => ({
      id: Number(r.id),
      key: r.key,
      linkId: r.link_id,
      docId: r.doc_id,
      options: (d.json(r.options) as Record<string, unknown> | null) ?? {},
    }),
  };
}
