/**
 * Shares (issue 41): what a caller who comes through a share link (`/api/s/<key>/...`) may do, as
 * Grist 1.7.17 decides it. Grist adds virtual rules on top of a document's own when it has rows in
 * `_grist_Shares` (its ACLRulesReader with `addShareRules`), and turns every rule of the document
 * off for share callers (each gets `user.ShareRef is None and (...)` in front). So a share caller
 * is judged by the virtual rules and Grist's built-in ones only, and everyone else by the
 * document's own rules only (their `user.ShareRef` is None). gristlite therefore compiles the
 * virtual rules into a rule set of their own, used for share callers, and leaves the document's
 * rule set as it is for everyone else; the outcome is the same.
 *
 * The virtual rules, in Grist's order:
 * - an unpublished share (`options.publish` not true): `*:*` denies everything to its callers;
 * - a published share: for each table of a form section on one of its pages (pages whose
 *   `shareRef` is the share; sections whose `shareOptions` have `publish` and `form`), the table
 *   allows create, and read of no row (`rec.id == 0`, so the table and its columns are described
 *   but no record is read); each Reference field's shown column (or `id`) is readable;
 * - then every user table denies everything to share callers, and `*:*` denies structure changes.
 */
import type Database from 'better-sqlite3';
import {compilePredicate} from './evaluate.js';
import {parsePermissions, restrictBits, type Bit} from './permissions.js';
import {type Rule, type RuleList, RuleSet} from './ruleset.js';

/** One row of `_grist_Shares`. */
export interface ShareRow {
  id: number;
  linkId: string;
  /** `options` parsed (`{}` when it is not a JSON object). */
  options: Record<string, unknown>;
}

/** What a document's shares give their callers. */
export interface ShareRules {
  shares: ShareRow[];
  /** The rules share callers are judged by (the document's own rules never apply to them). */
  rules: RuleSet;
  /**
   * Per share row id, per table: the columns its published forms ask (their fields), the only
   * columns a record added through that share may name (beyond Grist: D96).
   */
  formColumns: Map<number, Map<string, Set<string>>>;
  /** Per share row id: its published form sections. */
  formSections: Map<number, Set<number>>;
  /** Share row ids whose published forms ask for an Attachments column (uploads allowed: D101). */
  takesAttachments: Set<number>;
  /** Every view section: its page (view) and parsed `shareOptions` (for `checkPublishedForm`). */
  sections: Map<number, {parentId: number; options: Record<string, unknown>}>;
  /** Per view, the `shareRef` of its first page (Grist finds the page that way). */
  pageShare: Map<number, number>;
}

/** A JSON object stored as text (options, widgetOptions): `{}` for anything else. */
export function parseObject(text: unknown): Record<string, unknown> {
  if (typeof text !== 'string' || !text) return {};
  try {
    const v = JSON.parse(text);
    return v && typeof v === 'object' && !Array.isArray(v) ? v : {};
  } catch {
    return {};
  }
}

function columnsOf(db: Database.Database, table: string): Set<string> {
  return new Set(
    (db.prepare(`pragma table_info(${JSON.stringify(table)})`).all() as Array<{name: string}>).map((c) => c.name),
  );
}

/** The rows of `_grist_Shares` (none in a document without the table). */
export function readShareRows(db: Database.Database): ShareRow[] {
  const cols = columnsOf(db, '_grist_Shares');
  if (!cols.has('linkId') || !cols.has('options')) return [];
  return (
    db.prepare('select id, linkId, options from _grist_Shares order by id').all() as Array<Record<string, unknown>>
  ).map((r) => ({id: Number(r.id), linkId: String(r.linkId ?? ''), options: parseObject(r.options)}));
}

const REF_JSON = ['Attr', ['Name', 'user'], 'ShareRef'];

/** Makes virtual rules, numbered downwards from -1000 (below Grist's built-in ones). */
function ruleMaker() {
  let next = -1000;
  return (formula: string, parsed: unknown, text: string, bits?: ReadonlySet<Bit>): Rule => {
    let perms = parsePermissions(text);
    if (bits) perms = restrictBits(perms, bits);
    return {id: next--, aclFormula: formula, match: compilePredicate(parsed), parsed, perms, memo: ''};
  };
}
const isShare = (shareRef: number) => ['Eq', REF_JSON, ['Const', shareRef]];
const TABLE_BITS = new Set<Bit>(['create', 'read', 'update', 'delete']);
const COLUMN_BITS = new Set<Bit>(['read', 'update']);

/** The virtual rules of a document's shares, or null when it has none. */
export function readShareRules(db: Database.Database): ShareRules | null {
  const shares = readShareRows(db);
  if (!shares.length) return null;
  const pageCols = columnsOf(db, '_grist_Pages');
  const sectionCols = columnsOf(db, '_grist_Views_section');
  const pages = pageCols.has('shareRef')
    ? (db.prepare('select viewRef, shareRef from _grist_Pages order by id').all() as Array<{
        viewRef: number;
        shareRef: number;
      }>)
    : [];
  const sections = sectionCols.has('shareOptions')
    ? (db.prepare('select id, parentId, tableRef, shareOptions from _grist_Views_section').all() as Array<{
        id: number;
        parentId: number;
        tableRef: number;
        shareOptions: unknown;
      }>)
    : [];
  const fields = db.prepare('select parentId, colRef from _grist_Views_section_field').all() as Array<{
    parentId: number;
    colRef: number;
  }>;
  const tables = db.prepare('select id, tableId from _grist_Tables').all() as Array<{id: number; tableId: string}>;
  const tableById = new Map(tables.map((t) => [t.id, t]));
  const columns = db.prepare('select id, parentId, colId, type, visibleCol from _grist_Tables_column').all() as Array<{
    id: number;
    parentId: number;
    colId: string;
    type: string;
    visibleCol: number;
  }>;
  const columnById = new Map(columns.map((c) => [c.id, c]));

  const rule = ruleMaker();
  const docOwn: Rule[] = [];
  const tableRules = new Map<string, Rule[]>();
  const columnRules = new Map<string, {tableId: string; colId: string; rules: Rule[]}>();
  const formColumns = new Map<number, Map<string, Set<string>>>();
  const formSections = new Map<number, Set<number>>();
  const takesAttachments = new Set<number>();
  for (const share of shares) {
    if (share.options.publish !== true) {
      docOwn.push(rule(`user.ShareRef == ${share.id}`, isShare(share.id), '-CRUDS'));
      continue;
    }
    const views = new Set(pages.filter((p) => p.shareRef === share.id).map((p) => p.viewRef));
    const published = sections.filter((s) => {
      if (!views.has(s.parentId)) return false;
      const o = parseObject(s.shareOptions);
      return Boolean(o.publish) && Boolean(o.form);
    });
    const ids = new Set(published.map((s) => s.id));
    formSections.set(share.id, ids);
    const shareCols = new Set(fields.filter((f) => ids.has(f.parentId)).map((f) => f.colRef));
    const perTable = new Map<string, Set<string>>();
    formColumns.set(share.id, perTable);
    // Tables in the order of _grist_Tables (Grist filters that table's records).
    const tableRefs = new Set(published.map((s) => s.tableRef));
    for (const table of tables) {
      if (!tableRefs.has(table.id)) continue;
      const list = tableRules.get(table.tableId) ?? [];
      tableRules.set(table.tableId, list);
      list.push(rule(`user.ShareRef == ${share.id}`, isShare(share.id), '+C', TABLE_BITS));
      list.push(
        rule(
          `user.ShareRef == ${share.id} and rec.id == 0`,
          ['And', isShare(share.id), ['Eq', ['Attr', ['Name', 'rec'], 'id'], ['Const', 0]]],
          '+R',
          TABLE_BITS,
        ),
      );
      const asked = new Set<string>();
      perTable.set(table.tableId, asked);
      for (const colRef of shareCols) {
        const col = columnById.get(colRef);
        if (!col || col.parentId !== table.id) continue;
        asked.add(col.colId);
        const type = String(col.type ?? '');
        if (type === 'Attachments') takesAttachments.add(share.id);
        if (!type.startsWith('Ref:') && !type.startsWith('RefList:')) continue;
        let target: {tableId: string; colId: string} | null = null;
        if (col.visibleCol) {
          const shown = columnById.get(col.visibleCol);
          const shownTable = shown ? tableById.get(shown.parentId) : undefined;
          if (shown && shownTable) target = {tableId: shownTable.tableId, colId: shown.colId};
        } else target = {tableId: type.slice(type.indexOf(':') + 1), colId: 'id'};
        if (!target) continue;
        const key = `${target.tableId}:${target.colId}`;
        const entry = columnRules.get(key) ?? {...target, rules: []};
        columnRules.set(key, entry);
        entry.rules.push(rule(`user.ShareRef == ${share.id}`, isShare(share.id), '+R', COLUMN_BITS));
      }
    }
  }
  const notNone = ['NotEq', REF_JSON, ['Const', null]];
  for (const tableId of tables
    .map((t) => t.tableId)
    .filter((t) => !t.startsWith('_grist_'))
    .sort()) {
    const list = tableRules.get(tableId) ?? [];
    tableRules.set(tableId, list);
    list.push(rule('user.ShareRef is not None', notNone, '-CRUDS', TABLE_BITS));
  }
  docOwn.push(rule('user.ShareRef is not None', notNone, '-S'));
  const lists: RuleList[] = [
    ...[...tableRules].map(([tableId, rules]) => ({tableId, colIds: '*' as const, rules})),
    ...[...columnRules.values()].map((c) => ({tableId: c.tableId, colIds: [c.colId], rules: c.rules})),
  ];
  const pageShare = new Map<number, number>();
  for (const p of pages) if (!pageShare.has(p.viewRef)) pageShare.set(p.viewRef, p.shareRef);
  return {
    shares,
    rules: RuleSet.of(lists, docOwn),
    formColumns,
    formSections,
    takesAttachments,
    sections: new Map(sections.map((x) => [x.id, {parentId: x.parentId, options: parseObject(x.shareOptions)}])),
    pageShare,
  };
}
