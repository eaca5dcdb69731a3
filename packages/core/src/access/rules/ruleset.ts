/**
 * A document's access rules, read from `_grist_ACLResources` and `_grist_ACLRules`, checked as
 * Grist checks them (ACLRuleCollection / ACLRulesReader) and compiled once per document version.
 * Rules are grouped by resource and ordered by `rulePos`; Grist's built-in rules follow the
 * document's own `*:*` rules.
 */
import type Database from 'better-sqlite3';
import {ApiError} from '../../base/index.js';
import {quoteIdent} from '../../doc/query.js';
import {compilePredicate, type PredicateInput} from './evaluate.js';
import {readParsedFormula} from './parse.js';
import {type Bit, parsePermissions, restrictBits, type RulePermissions} from './permissions.js';

/** One compiled rule: when it matches (`null`: always), and what it allows and denies. */
export interface Rule {
  id: number;
  aclFormula: string;
  /** Whether it applies to an input; null for the catch-all rule with an empty formula. */
  match: ((input: PredicateInput) => unknown) | null;
  /** The parsed formula (`JSON.parse(aclFormulaParsed)`), null for the catch-all rule. */
  parsed: unknown;
  perms: RulePermissions;
  memo: string;
}

/** The rules of one resource, in order. */
export interface RuleList {
  tableId: string;
  /** `*` or the columns named. */
  colIds: '*' | string[];
  rules: Rule[];
}

/** A user attribute: `user[name]` is the first row of `tableId` whose `lookupColId` equals `user[charId]`. */
export interface UserAttribute {
  name: string;
  tableId: string;
  lookupColId: string;
  charId: string;
}

/** How many per-user answers a rule set keeps (`RuleSet.memo`). */
const MEMO_ENTRIES = 1000;

const TABLE_BITS = new Set<Bit>(['create', 'read', 'update', 'delete']);
const COLUMN_BITS = new Set<Bit>(['read', 'update']);

function builtin(id: number, formula: string, match: Rule['match'], text: string): Rule {
  return {id, aclFormula: formula, match, parsed: null, perms: parsePermissions(text), memo: ''};
}
const role =
  (...roles: string[]) =>
  (input: PredicateInput) =>
    roles.includes(input.user.Access as string);

/** Grist's built-in document rules, after the user's own `*:*` rules (ACLRuleCollection's defaults). */
const DEFAULT_RULES: Rule[] = [
  builtin(-1, 'user.Access in [EDITOR, OWNER]', role('editors', 'owners'), 'all'),
  builtin(-2, 'user.Access in [VIEWER]', role('viewers'), '+R-CUDS'),
  builtin(-3, '', null, 'none'),
];
/** Built-in rules of the special resources (AccessRules and FullCopies: owners may read). */
const SPECIAL_DEFAULTS: Record<string, Rule[]> = {
  AccessRules: [builtin(-4, 'user.Access in [OWNER]', role('owners'), '+R'), builtin(-5, '', null, '-R')],
  FullCopies: [builtin(-6, 'user.Access in [OWNER]', role('owners'), '+R'), builtin(-7, '', null, '-R')],
  DocCopies: [builtin(-8, '', null, '+R')],
};

interface RuleRow {
  id: number;
  resource: number;
  aclFormula: string | null;
  aclFormulaParsed: string | null;
  permissionsText: string | null;
  rulePos: number | null;
  memo: string | null;
  userAttributes: string | null;
}

/** A document's compiled rules; `RuleSet.read` returns null when it has none beyond Grist's defaults. */
export class RuleSet {
  /** Column rules by `table:col`. */
  private readonly columnRules = new Map<string, RuleList>();
  /** Every column rule list of a table. */
  private readonly tableColumnRules = new Map<string, RuleList[]>();
  /** `T:*` rules. */
  private readonly tableRules = new Map<string, RuleList>();
  /** The document's `*:*` rules followed by the built-in ones. */
  readonly docRules: Rule[];
  private readonly specials = new Map<string, Rule[]>();
  readonly userAttributes: UserAttribute[];

  private constructor(lists: RuleList[], docOwn: Rule[], specials: Map<string, Rule[]>, attrs: UserAttribute[]) {
    for (const list of lists) {
      if (list.colIds === '*') this.tableRules.set(list.tableId, list);
      else {
        let all = this.tableColumnRules.get(list.tableId);
        if (!all) this.tableColumnRules.set(list.tableId, (all = []));
        all.push(list);
        for (const c of list.colIds) this.columnRules.set(`${list.tableId}:${c}`, list);
      }
    }
    this.docRules = [...docOwn, ...DEFAULT_RULES];
    for (const [name, defaults] of Object.entries(SPECIAL_DEFAULTS)) {
      this.specials.set(name, [...(specials.get(name) ?? []), ...defaults]);
    }
    this.userAttributes = attrs;
  }

  /** The rules of the column set naming this column, if any. */
  columnRuleList(tableId: string, colId: string): RuleList | undefined {
    return this.columnRules.get(`${tableId}:${colId}`);
  }
  /** Every column set of a table that has rules. */
  columnRuleLists(tableId: string): RuleList[] {
    return this.tableColumnRules.get(tableId) ?? [];
  }
  /** The table's `*` rules, if any. */
  tableRuleList(tableId: string): RuleList | undefined {
    return this.tableRules.get(tableId);
  }
  /**
   * The columns of a table that its rules (and the document's) read through `rec` or `newRec`:
   * what a write check reads of each row. Null when a rule reads rows in a way not known in
   * advance (then every column is read).
   */
  columnsRead(tableId: string): ReadonlySet<string> | null {
    let found = this.readCache.get(tableId);
    if (found === undefined) {
      const out = new Set<string>();
      const lists = [
        this.tableRules.get(tableId)?.rules ?? [],
        this.docRules,
        ...this.columnRuleLists(tableId).map((l) => l.rules),
      ];
      let known = true;
      const walk = (node: unknown): void => {
        if (!Array.isArray(node)) return;
        if (node[0] === 'Attr' && Array.isArray(node[1]) && node[1][0] === 'Name') {
          if (node[1][1] === 'rec' || node[1][1] === 'newRec') {
            out.add(String(node[2]));
            return;
          }
        } else if (node[0] === 'Name' && (node[1] === 'rec' || node[1] === 'newRec')) {
          known = false; // The row itself (passed along whole): read everything.
        }
        for (const child of node.slice(1)) walk(child);
      };
      for (const rules of lists) for (const r of rules) walk(r.parsed);
      found = known ? out : null;
      this.readCache.set(tableId, found);
    }
    return found;
  }
  private readonly readCache = new Map<string, ReadonlySet<string> | null>();

  /**
   * A value derived from these rules and a key (per user answers that do not depend on rows), kept
   * while the rules are: at most MEMO_ENTRIES, the oldest dropped first.
   */
  memo<T>(key: string, make: () => T): T {
    if (this.memos.has(key)) return this.memos.get(key) as T;
    const value = make();
    if (this.memos.size >= MEMO_ENTRIES) this.memos.delete(this.memos.keys().next().value!);
    this.memos.set(key, value);
    return value;
  }
  private readonly memos = new Map<string, unknown>();

  /** Tables with rules of their own (`T:*` or columns). */
  ruledTables(): string[] {
    return [...new Set([...this.tableRules.keys(), ...this.tableColumnRules.keys()])];
  }
  /** A special resource's rules, the built-in ones last. */
  special(name: 'AccessRules' | 'FullCopies' | 'DocCopies'): Rule[] {
    return this.specials.get(name)!;
  }

  /** A rule set of given rule lists and `*:*` rules (the built-in ones follow), no user attributes. */
  static of(lists: RuleList[], docOwn: Rule[]): RuleSet {
    return new RuleSet(lists, docOwn, new Map(), []);
  }

  /**
   * Grist's emergency rule set (ACLRuleCollection.ts:113-129), which recovery mode puts in place of
   * rules Grist refuses: owners may do everything, everyone else nothing.
   */
  static emergency(): RuleSet {
    return new RuleSet(
      [],
      [builtin(-10, 'user.Access in [OWNER]', role('owners'), 'all'), builtin(-11, '', null, 'none')],
      new Map(),
      [],
    );
  }

  /**
   * Reads and compiles the rules of a document; null when it has none of its own (only Grist's
   * default resource rows). A rule set Grist would refuse throws `BrokenRules` with Grist's message.
   */
  static read(db: Database.Database): RuleSet | null {
    const hasTable = (t: string) =>
      db.prepare("select 1 from sqlite_master where type = 'table' and name = ?").get(t) !== undefined;
    if (!hasTable('_grist_ACLRules') || !hasTable('_grist_ACLResources')) return null;
    const cols = new Set(
      (db.prepare('pragma table_info("_grist_ACLRules")').all() as Array<{name: string}>).map((c) => c.name),
    );
    const col = (c: string) => (cols.has(c) ? quoteIdent(c) : 'null');
    const rows = db
      .prepare(
        `select id, ${col('resource')} as resource, ${col('aclFormula')} as aclFormula,
           ${col('aclFormulaParsed')} as aclFormulaParsed, ${col('permissionsText')} as permissionsText,
           ${col('rulePos')} as rulePos, ${col('memo')} as memo, ${col('userAttributes')} as userAttributes
         from _grist_ACLRules order by rulePos is null, rulePos, id`,
      )
      .all() as RuleRow[];
    const resources = new Map(
      (
        db.prepare('select id, tableId, colIds from _grist_ACLResources').all() as Array<{
          id: number;
          tableId: string | null;
          colIds: string | null;
        }>
      ).map((r) => [r.id, r]),
    );
    // Duplicate resources break the document for everyone (ACLRulesReader).
    const seen = new Set<string>();
    for (const r of resources.values()) {
      const key = `${r.tableId}:${r.colIds}`;
      if (seen.has(key)) {
        throw new BrokenRules(
          `Duplicate ACLResource ${r.id}: an ACLResource with the same tableId and colIds already exists`,
        );
      }
      seen.add(key);
    }
    const byResource = new Map<number, RuleRow[]>();
    for (const row of rows) {
      let list = byResource.get(row.resource);
      if (!list) byResource.set(row.resource, (list = []));
      list.push(row);
    }
    const lists: RuleList[] = [];
    let docOwn: Rule[] = [];
    const specials = new Map<string, Rule[]>();
    const attrs: UserAttribute[] = [];
    let any = false;
    for (const [resourceId, ruleRows] of byResource) {
      const res = resources.get(resourceId);
      if (!res) throw new BrokenRules(`ACLRule ${ruleRows[0].id} refers to an invalid ACLResource ${resourceId}`);
      if (!res.tableId || !res.colIds) continue; // Grist's legacy empty resource row.
      any = true;
      const tableId = res.tableId;
      const colIds: '*' | string[] = res.colIds === '*' ? '*' : res.colIds.split(',');
      const rules: Rule[] = [];
      for (const row of ruleRows) {
        if (row.userAttributes) {
          if (tableId !== '*' || colIds !== '*') {
            throw new BrokenRules(`ACLRule ${row.id} invalid; user attributes must be on the default resource`);
          }
          attrs.push(parseUserAttribute(row));
          continue;
        }
        if (rules.length && !rules[rules.length - 1].aclFormula) {
          throw new BrokenRules(`ACLRule ${row.id} invalid because listed after default rule`);
        }
        if (row.aclFormula && !row.aclFormulaParsed) {
          throw new BrokenRules(`ACLRule ${row.id} invalid because missing its parsed formula`);
        }
        let perms = parsePermissionsOf(row);
        if (tableId !== '*' && tableId !== '*SPECIAL')
          perms = restrictBits(perms, colIds === '*' ? TABLE_BITS : COLUMN_BITS);
        rules.push({
          id: row.id,
          aclFormula: row.aclFormula ?? '',
          ...(row.aclFormula ? compileRow(row) : {match: null, parsed: null}),
          perms,
          memo: row.memo ?? '',
        });
      }
      if (tableId === '*') {
        if (colIds !== '*') throw new BrokenRules(`Invalid rule for tableId ${tableId}, colIds ${res.colIds}`);
        docOwn = rules;
      } else if (tableId === '*SPECIAL') {
        specials.set(res.colIds, rules);
      } else {
        lists.push({tableId, colIds, rules});
      }
    }
    if (!any) return null;
    for (const list of lists) if (list.colIds !== '*') list.colIds = [...list.colIds, ...helperColumns(db, list)];
    return new RuleSet(lists, docOwn, specials, attrs);
  }
}

/**
 * Display helpers of the columns a rule list names (their `displayCol`, and those of their fields):
 * they show the same values, so they follow the same rules (Grist's ACLRuleCollection).
 */
function helperColumns(db: Database.Database, list: RuleList): string[] {
  const names = list.colIds as string[];
  if (!names.length) return [];
  const marks = names.map(() => '?').join(',');
  try {
    const rows = db
      .prepare(
        `SELECT h.colId FROM _grist_Tables_column c
           JOIN _grist_Tables t ON t.id = c.parentId
           JOIN _grist_Tables_column h ON h.id = c.displayCol
         WHERE t.tableId = ? AND c.colId IN (${marks})
         UNION
         SELECT h.colId FROM _grist_Views_section_field f
           JOIN _grist_Tables_column c ON c.id = f.colRef
           JOIN _grist_Tables t ON t.id = c.parentId
           JOIN _grist_Tables_column h ON h.id = f.displayCol
         WHERE t.tableId = ? AND c.colId IN (${marks})`,
      )
      .pluck()
      .all(list.tableId, ...names, list.tableId, ...names) as string[];
    return rows.filter((c) => typeof c === 'string' && !names.includes(c));
  } catch {
    return []; // A document without these metadata columns has no helpers.
  }
}

/** A rule set Grist would refuse: the document answers this error to everyone until repaired. */
export class BrokenRules extends ApiError {
  constructor(message: string) {
    super(400, message);
  }
}

function parsePermissionsOf(row: RuleRow): RulePermissions {
  try {
    return parsePermissions(row.permissionsText ?? '');
  } catch (e) {
    throw new BrokenRules((e as Error).message);
  }
}

/** A rule's parsed formula (read once) and its compiled predicate; Grist's error when either fails. */
function compileRow(row: RuleRow): Pick<Rule, 'match' | 'parsed'> {
  try {
    const parsed = readParsedFormula(row.aclFormulaParsed!);
    return {match: compilePredicate(parsed), parsed};
  } catch (e) {
    throw new BrokenRules((e as Error).message);
  }
}

function parseUserAttribute(row: RuleRow): UserAttribute {
  let parsed: unknown;
  try {
    parsed = JSON.parse(row.userAttributes!);
  } catch {
    parsed = null;
  }
  const p = parsed as Record<string, unknown> | null;
  if (
    !p ||
    typeof p !== 'object' ||
    ![p.name, p.tableId, p.lookupColId, p.charId].every((x) => x && typeof x === 'string')
  ) {
    throw new BrokenRules(`User attribute rule ${row.id} is invalid`);
  }
  return {
    name: p.name as string,
    tableId: p.tableId as string,
    lookupColId: p.lookupColId as string,
    charId: p.charId as string,
  };
}
