/**
 * One user's view of a document's rules: what they may read (tables, columns, rows, cells) and
 * whether a write may stand. Made per request (user attributes are looked up then), over a
 * `RuleSet` compiled once per rules version. Implements `DocGuard`, the stage a `GristDoc`'s read
 * and write pipelines call.
 *
 * Precedence follows Grist (PermissionInfo.ts): for a cell, the column's rules, then the table's
 * `*` rules, then the document's; for a row, the table's `*` rules then the document's; a table
 * reads as the merge of its columns. Owners are not exempt.
 */
import {Forbidden} from '../../base/index.js';
import type {DocGuard, RowValues, TableReadFilter, WriteRows} from '../../doc/guard.js';
import type {CellValue} from '../../doc/types.js';
import {isNeedRowData, type PredicateInput, type RowView} from './evaluate.js';
import {type Answer, applyBit, type Bit, BITS, type BitState, mergeAnswers, settle} from './permissions.js';
import type {Rule, RuleSet} from './ruleset.js';
import {rowRuleSql} from './sql.js';

/** Who is asking, as rules see it (`user.*`). */
export interface RuleUser {
  /** The document role: owners, editors, viewers, or null. */
  access: string | null;
  userId: number | null;
  email: string | null;
  name: string | null;
  userRef: string | null;
  /** Query parameters ending in `_` (Grist's link keys). */
  linkKey?: Record<string, string>;
  /** The `_grist_Shares` row a caller came through (`/api/s/<key>/...`), else null. */
  shareRef?: number | null;
  /**
   * For a caller through a share: per table, the columns a record it adds may name (the fields
   * of the share's published forms; D96). Absent: no such limit.
   */
  createColumns?: ReadonlyMap<string, ReadonlySet<string>>;
}

/** Finds the first row of `tableId` whose `colId` equals `value` (case-insensitively when asked). */
export type AttributeLookup = (
  tableId: string,
  colId: string,
  value: CellValue,
  caseInsensitive: boolean,
) => RowValues | null;

type States = Record<Bit, BitState>;
const ALL_BITS = new Set<Bit>(BITS);

/** A view over a row's values for rule formulas (cells as Grist encodes them; the evaluator decodes). */
export function rowView(values: RowValues & {id?: number}): RowView {
  return {
    get(colId: string) {
      if (colId === 'id') return values.id;
      return Object.hasOwn(values, colId) ? values[colId] : undefined;
    },
  };
}

/** Applies one chain of rule lists to an input, for the bits asked; stops once all are settled. */
function evaluate(chain: readonly Rule[][], input: PredicateInput, bits: ReadonlySet<Bit> = ALL_BITS): States {
  const out = {} as States;
  let open = bits.size;
  for (const rules of chain) {
    for (const rule of rules) {
      let matched: boolean;
      let some = false;
      let errored = false;
      if (rule.match === null) matched = true;
      else {
        try {
          matched = Boolean(rule.match(input));
        } catch (e) {
          if (isNeedRowData(e)) {
            matched = true;
            some = true;
          } else {
            // Grist: an erroring rule keeps its denies and loses its allows.
            matched = true;
            errored = true;
          }
        }
      }
      if (!matched) continue;
      for (const b of bits) {
        const before = out[b];
        if (rule.perms.deny.has(b)) out[b] = applyBit(out[b], 'deny', some);
        else if (rule.perms.allow.has(b) && !errored) out[b] = applyBit(out[b], 'allow', some);
        if (before !== out[b] && (out[b] === 'allow' || out[b] === 'deny' || out[b] === 'mixed')) open--;
      }
      if (open <= 0) return out;
    }
  }
  return out;
}

/**
 * The memos shown with a denial of `bit` (Grist's extractMemos): those of rules that matched and
 * deny it (reasons), and of rules that did not match but would have allowed it (remedies), unless
 * an earlier matching rule had already settled the bit. Rules that cannot be evaluated say nothing.
 */
function denialMemos(chain: readonly Rule[][], input: PredicateInput, bit: Bit): string[] {
  const memos: string[] = [];
  let settled = false;
  for (const rules of chain) {
    for (const rule of rules) {
      let passing: boolean;
      try {
        passing = rule.match === null || Boolean(rule.match(input));
      } catch {
        continue;
      }
      const allows = rule.perms.allow.has(bit);
      const denies = rule.perms.deny.has(bit);
      if (rule.memo) {
        if (passing && denies) memos.push(rule.memo);
        else if (!passing && allows && !settled) memos.push(rule.memo);
      }
      if (passing && (allows || denies)) settled = true;
    }
  }
  return memos;
}

export class AccessContext implements DocGuard {
  private readonly user: Record<string, unknown>;
  private readonly createColumns: ReadonlyMap<string, ReadonlySet<string>> | null;
  private readonly answers = new Map<string, Answer>();
  private pending: Array<{
    kind: 'add' | 'update' | 'remove';
    tableId: string;
    ids: readonly number[];
    cols: readonly string[];
    before?: Map<number, RowValues>;
  }> = [];

  constructor(
    readonly rules: RuleSet,
    who: RuleUser,
    lookup: AttributeLookup,
  ) {
    const user: Record<string, unknown> = Object.create(null);
    user.Access = who.access;
    user.UserID = who.userId;
    user.Email = who.email;
    user.Name = who.name;
    user.UserRef = who.userRef;
    user.IsLoggedIn = who.userId !== null;
    user.LinkKey = Object.assign(Object.create(null), who.linkKey ?? {});
    user.SessionID = who.userId !== null ? `u${who.userId}` : null;
    user.Origin = null;
    // Grist's User.ShareRef: the share's row id for a caller through a share, else None, so that
    // rules may test it (`user.ShareRef is None`).
    user.ShareRef = who.shareRef ?? null;
    this.user = user;
    this.createColumns = who.createColumns ?? null;
    for (const attr of rules.userAttributes) {
      const key = user[attr.charId];
      let found: RowValues | null = null;
      if (key !== undefined && key !== null && typeof key !== 'object') {
        found = lookup(attr.tableId, attr.lookupColId, key as CellValue, attr.charId === 'Email');
      }
      // No match: every field reads as null, as Grist's empty record does.
      user[attr.name] = found ? rowView(found) : {get: () => null};
    }
  }

  private input(rec?: RowView | null, newRec?: RowView | null): PredicateInput {
    return {user: this.user, rec, newRec};
  }

  // -------------------------------------------------------------------------------------------
  // Chains: which rule lists apply, in order.

  private tableChain(tableId: string): Rule[][] {
    const t = this.rules.tableRuleList(tableId);
    return t ? [t.rules, this.rules.docRules] : [this.rules.docRules];
  }

  private columnChain(tableId: string, colId: string): Rule[][] {
    const c = this.rules.columnRuleList(tableId, colId);
    return c ? [c.rules, ...this.tableChain(tableId)] : this.tableChain(tableId);
  }

  private answer(key: string, chain: Rule[][], bit: Bit): Answer {
    let a = this.answers.get(key);
    if (a === undefined) {
      a = settle(evaluate(chain, this.input(), new Set([bit]))[bit]);
      this.answers.set(key, a);
    }
    return a;
  }

  /** A bit for the whole document (`*:*` rules only). */
  docAnswer(bit: Bit): Answer {
    return this.answer(`*:${bit}`, [this.rules.docRules], bit);
  }

  /** A bit for a table's rows (table `*` rules, then the document's). */
  rowAnswer(tableId: string, bit: Bit): Answer {
    return this.answer(`t:${tableId}:${bit}`, this.tableChain(tableId), bit);
  }

  /** A bit for one column. */
  columnAnswer(tableId: string, colId: string, bit: Bit): Answer {
    if (!this.rules.columnRuleList(tableId, colId)) return this.rowAnswer(tableId, bit);
    return this.answer(`c:${tableId}:${colId}:${bit}`, this.columnChain(tableId, colId), bit);
  }

  /** A bit for a table as a whole: its columns' rules merged with its own. */
  tableAnswer(tableId: string, bit: Bit): Answer {
    const lists = this.rules.columnRuleLists(tableId);
    if (!lists.length) return this.rowAnswer(tableId, bit);
    return mergeAnswers([
      this.rowAnswer(tableId, bit),
      ...lists.map((l) => this.answer(`cl:${tableId}:${l.colIds}:${bit}`, [l.rules, ...this.tableChain(tableId)], bit)),
    ]);
  }

  /** A bit for everything: every ruled table merged with the document's rules. */
  fullAnswer(bit: Bit): Answer {
    return mergeAnswers([this.docAnswer(bit), ...this.rules.ruledTables().map((t) => this.tableAnswer(t, bit))]);
  }

  private special(name: 'AccessRules' | 'FullCopies' | 'DocCopies'): Answer {
    return this.answer(`s:${name}`, [this.rules.special(name)], 'read');
  }

  /** Whether the user may copy everything (SQL, `.grist` downloads): Grist's `canCopyEverything`. */
  canCopyEverything(): boolean {
    if (this.special('FullCopies') === 'allow') return true;
    return (
      this.fullAnswer('read') === 'allow' &&
      this.special('AccessRules') === 'allow' &&
      this.special('DocCopies') === 'allow'
    );
  }

  /** Whether every table, column and row is readable (attachments need no cell check then). */
  canReadEverything(): boolean {
    return this.fullAnswer('read') === 'allow';
  }

  canReadRules(): boolean {
    return this.special('AccessRules') === 'allow';
  }

  // -------------------------------------------------------------------------------------------
  // Reads

  requireWholeRead(tableId: string): void {
    // Grist's throwIfNotFullyAllowed: refused unless every row and column reads.
    if (this.tableAnswer(tableId, 'read') !== 'allow') {
      // The memos of the column rules that deny too (recorded from Grist 1.7.17: an editor's
      // add-or-update on a table with an owners-only column carries that column rule's memo).
      const chain = this.tableChain(tableId);
      const memos = new Set(denialMemos(chain, this.input(), 'read'));
      for (const list of this.rules.columnRuleLists(tableId)) {
        for (const m of denialMemos([list.rules, ...chain], this.input(), 'read')) memos.add(m);
      }
      throw new Forbidden('Blocked by table read access rules', {memos: [...memos]});
    }
  }

  tableVisible(tableId: string): boolean {
    return this.tableAnswer(tableId, 'read') !== 'deny';
  }

  readTable(tableId: string, colType?: (colId: string) => string | undefined): TableReadFilter {
    // The same for the whole request (the user and rules do not change): made once per table.
    const key = `${tableId}:${colType ? 'sql' : 'js'}`;
    let filter = this.filters.get(key);
    if (!filter) this.filters.set(key, (filter = this.makeReadFilter(tableId, colType)));
    return filter;
  }
  private readonly filters = new Map<string, TableReadFilter>();

  private makeReadFilter(tableId: string, colType?: (colId: string) => string | undefined): TableReadFilter {
    // Grist checks every fetch, metadata tables included, against the table's read access
    // (ActiveDoc.fetchQuery -> assertCanRead): a document-wide deny refuses them too.
    if (this.tableAnswer(tableId, 'read') === 'deny') {
      throw new Forbidden(
        'Blocked by table read access rules',
        this.memoDetails(this.tableChain(tableId), this.input(), 'read'),
      );
    }
    if (tableId.startsWith('_grist_')) return {hiddenCols: new Set()};
    const hiddenCols = new Set<string>();
    const perRowCols: Array<{colId: string; chain: Rule[][]}> = [];
    for (const list of this.rules.columnRuleLists(tableId)) {
      for (const colId of list.colIds as string[]) {
        const a = this.columnAnswer(tableId, colId, 'read');
        if (a === 'deny') hiddenCols.add(colId);
        else if (a === 'mixed') perRowCols.push({colId, chain: this.columnChain(tableId, colId)});
      }
    }
    const rowRule = this.rowAnswer(tableId, 'read');
    if (rowRule === 'deny') {
      // Rows denied, but some columns with rules of their own allowed (in some rows at least):
      // Grist keeps a row when any of its columns reads (its per-row table access merges the
      // columns), and shows only those columns (the others follow the row's deny).
      const open = this.rules
        .columnRuleLists(tableId)
        .flatMap((l) => l.colIds as string[])
        .filter((c) => !hiddenCols.has(c));
      if (open.length) {
        const shown = new Set(open);
        const hideOthers = new OnlySet(shown, hiddenCols);
        const mixed = perRowCols.filter((c) => shown.has(c.colId));
        if (!mixed.length) return {hiddenCols: hideOthers};
        const read = new Set<Bit>(['read']);
        return {
          hiddenCols: hideOthers,
          censoredCols: new Set(mixed.map((c) => c.colId)),
          row: (values) => {
            const rec = rowView(values);
            const input = this.input(rec, rec);
            let censored: Set<string> | null = null;
            for (const {colId, chain} of mixed) {
              if (settle(evaluate(chain, input, read).read) !== 'allow') (censored ??= new Set()).add(colId);
            }
            if (censored && censored.size === shown.size) return null;
            return censored ?? EMPTY;
          },
        };
      }
    }
    if (rowRule !== 'mixed' && !perRowCols.length) {
      // Rows all read alike; cells of columns without their own rules follow the rows.
      return rowRule === 'deny' ? {hiddenCols, row: () => null} : {hiddenCols};
    }
    const rowChain = this.tableChain(tableId);
    if (!perRowCols.length && colType) {
      const sql = this.rowSql(tableId, 'read', colType);
      if (sql) return {hiddenCols, sql};
    }
    const read = new Set<Bit>(['read']);
    return {
      hiddenCols,
      censoredCols: new Set(perRowCols.map((c) => c.colId)),
      row: (values) => {
        const rec = rowView(values);
        const input = this.input(rec, rec);
        if (rowRule === 'deny' || (rowRule === 'mixed' && settle(evaluate(rowChain, input, read).read) !== 'allow')) {
          return null;
        }
        let censored: Set<string> | null = null;
        for (const {colId, chain} of perRowCols) {
          if (settle(evaluate(chain, input, read).read) !== 'allow') (censored ??= new Set()).add(colId);
        }
        return censored ?? EMPTY;
      },
    };
  }

  // -------------------------------------------------------------------------------------------
  // Writes: the direct changes are collected, then checked once the write's recalculation is done,
  // with `rec` the row before the whole write and `newRec` the row after it (Grist's canApplyBundle).

  private rows: WriteRows | null = null;

  beginWrite(rows: WriteRows): void {
    this.rows = rows;
    this.pending = [];
  }

  updating(tableId: string, ids: readonly number[], colIds: readonly string[]): void {
    if (tableId.startsWith('_grist')) return;
    this.precheck(tableId, 'update');
    // Rules that read none of the columns written see the same `rec` before and after (formula
    // columns aside, which a write may change indirectly): the old rows need not be read.
    const read = this.rules.columnsRead(tableId);
    const untouched =
      read !== null &&
      !colIds.some((c) => read.has(c)) &&
      ![...read].some((c) => this.rows?.column(tableId, c)?.isFormula !== false);
    this.pending.push({
      kind: 'update',
      tableId,
      ids,
      cols: colIds,
      before: untouched ? undefined : this.beforeRows(tableId, ids, 'update'),
    });
  }

  removing(tableId: string, ids: readonly number[]): void {
    if (tableId.startsWith('_grist')) return;
    this.precheck(tableId, 'delete');
    this.pending.push({kind: 'remove', tableId, ids, cols: [], before: this.beforeRows(tableId, ids, 'delete')});
  }

  added(tableId: string, ids: readonly number[], colIds: readonly string[]): void {
    if (tableId.startsWith('_grist')) return;
    this.precheck(tableId, 'create');
    const asked = this.createColumns?.get(tableId);
    if (this.createColumns) {
      // Beyond Grist (D96): a record added through a share names only the form's fields.
      const extra = colIds.find((c) => c !== 'manualSort' && !asked?.has(c));
      if (extra !== undefined) {
        throw new Forbidden(`Blocked by share: column "${extra}" is not a field of the published form`);
      }
    }
    this.pending.push({kind: 'add', tableId, ids, cols: colIds});
  }

  /** Old values of rows a write changes, when rules will need them (only the columns rules read). */
  private beforeRows(tableId: string, ids: readonly number[], bit: Bit): Map<number, RowValues> | undefined {
    const needed = this.rowAnswer(tableId, bit) !== 'allow' || this.rules.columnRuleLists(tableId).length > 0;
    return needed ? this.rows!.read(tableId, ids, this.rules.columnsRead(tableId)) : undefined;
  }

  /**
   * A table's row rule for a bit as SQL (sql.ts), or null. The same user (without user attributes,
   * whose rows may change) gets the same SQL: it is kept on the rule set, per user.
   */
  private rowSql(
    tableId: string,
    bit: Bit,
    colType: (colId: string) => string | undefined,
  ): {sql: string; params: unknown[]} | null {
    const make = () => rowRuleSql(this.tableChain(tableId), bit, this.user, colType);
    if (this.rules.userAttributes.length) return make();
    const u = this.user;
    const key = JSON.stringify([tableId, bit, u.Access, u.UserID, u.Email, u.Name, u.UserRef, u.LinkKey, u.ShareRef]);
    return this.rules.memo(key, make);
  }

  /** Grist's table-level pre-check: a bit denied for every row refuses at once. */
  private precheck(tableId: string, bit: Bit): void {
    if (this.rowAnswer(tableId, bit) === 'deny') {
      throw new Forbidden(
        `Blocked by table ${bit} access rules`,
        this.memoDetails(this.tableChain(tableId), this.input(), bit),
      );
    }
  }

  finishWrite(schemaTouched: readonly string[], formulas = false): void {
    const structural = schemaTouched.filter((t) => !NON_SCHEMA_META.has(t));
    if ((structural.length || formulas) && this.docAnswer('schemaEdit') !== 'allow') {
      // Grist checks formula-bearing changes against the whole document ("full"), before its
      // engine runs; other structure changes table by table.
      throw new Forbidden(
        `Blocked by ${formulas ? 'full' : 'table'} structure access rules`,
        this.memoDetails([this.rules.docRules], this.input(), 'schemaEdit'),
      );
    }
    // The first row value before the write wins (a row updated twice keeps its original `rec`).
    const firstBefore = new Map<string, Map<number, RowValues>>();
    for (const p of this.pending) {
      if (!p.before) continue;
      let m = firstBefore.get(p.tableId);
      if (!m) firstBefore.set(p.tableId, (m = new Map()));
      for (const [id, row] of p.before) if (!m.has(id)) m.set(id, row);
    }
    const afterCache = new Map<string, Map<number, RowValues>>();
    const after = (tableId: string, ids: readonly number[]) => {
      let m = afterCache.get(tableId);
      if (!m) afterCache.set(tableId, (m = new Map()));
      const missing = ids.filter((id) => !m!.has(id));
      if (missing.length) {
        for (const [id, row] of this.rows!.read(tableId, missing, this.rules.columnsRead(tableId))) m.set(id, row);
      }
      return m;
    };
    for (const p of this.pending) {
      const bit: Bit = p.kind === 'add' ? 'create' : p.kind === 'update' ? 'update' : 'delete';
      const rowRule = this.rowAnswer(p.tableId, bit);
      const colChecks = p.kind === 'update' ? p.cols.filter((c) => this.rules.columnRuleList(p.tableId, c)) : [];
      const deniedCols = colChecks.filter((c) => this.columnAnswer(p.tableId, c, 'update') === 'deny');
      if (deniedCols.length) {
        const chain = this.columnChain(p.tableId, deniedCols[0]);
        throw new Forbidden('Blocked by column update access rules', this.memoDetails(chain, this.input(), 'update'));
      }
      const mixedCols = colChecks.filter((c) => this.columnAnswer(p.tableId, c, 'update') === 'mixed');
      if (rowRule === 'allow' && !mixedCols.length) continue;
      // Rows whose `rec` is unchanged by the write (see updating): SQLite tests the rule on them all.
      if (p.kind === 'update' && !p.before && !mixedCols.length) {
        const cond = this.rowSql(p.tableId, bit, (c) => this.rows!.column(p.tableId, c)?.type);
        // On a refusal, the rows are checked one by one below, to name the rule's memos.
        if (cond && !this.rows!.anyOutside(p.tableId, p.ids, cond)) continue;
      }
      const afterRows = p.kind === 'remove' ? null : after(p.tableId, p.ids);
      const before = firstBefore.get(p.tableId);
      const chain = this.tableChain(p.tableId);
      const bits = new Set<Bit>([bit]);
      for (const id of p.ids) {
        const old = p.kind === 'add' ? afterRows!.get(id) : (before?.get(id) ?? afterRows?.get(id));
        const now = p.kind === 'remove' ? old : afterRows!.get(id);
        if (!old || !now) continue; // Removed later in the same write: checked by its removal.
        const rec = rowView({...old, id});
        const newRec = rowView({...now, id});
        const input = this.input(rec, newRec);
        if (rowRule !== 'allow' && settle(evaluate(chain, input, bits)[bit]) !== 'allow') {
          throw new Forbidden(`Blocked by row ${bit} access rules`, this.memoDetails(chain, input, bit));
        }
        for (const c of mixedCols) {
          const cchain = this.columnChain(p.tableId, c);
          if (settle(evaluate(cchain, input, bits).update) !== 'allow') {
            throw new Forbidden('Blocked by column update access rules', this.memoDetails(cchain, input, 'update'));
          }
        }
      }
    }
  }

  endWrite(): void {
    this.rows = null;
    this.pending = [];
  }

  /**
   * Grist's AccessCheck always sends `details.memos`, an empty list when no rule has a memo
   * (GranularAccess.ts:3031-3039; memos are strings in 1.7.17, decision DA7).
   */
  private memoDetails(chain: Rule[][], input: PredicateInput, bit: Bit): {memos: string[]} {
    return {memos: denialMemos(chain, input, bit)};
  }
}

const EMPTY: ReadonlySet<string> = new Set();

/**
 * The hidden columns of a table whose rows are denied but some of whose columns are allowed: every
 * column but those (`has` answers for any column name; iterating lists those known to be hidden).
 */
class OnlySet extends Set<string> {
  constructor(
    private readonly shown: ReadonlySet<string>,
    known: ReadonlySet<string>,
  ) {
    super(known);
  }
  override has(colId: string): boolean {
    return colId !== 'id' && !this.shown.has(colId);
  }
}

/**
 * Metadata tables whose changes are not structure: attachments and cell comments follow data
 * rules, and the rule tables have their own owner-only check (metarules.ts).
 */
const NON_SCHEMA_META = new Set(['_grist_Attachments', '_grist_Cells', '_grist_ACLRules', '_grist_ACLResources']);
