/**
 * Dependencies read off a formula's syntax tree, for formulas whose reads are all of a few shapes:
 * `$A` (a column of the same row), `$Ref.B` (a column through a Ref/RefList of the same row) and
 * `Table.lookupRecords(K=$x, ...)` / `Table.lookupOne(...)` with `.B` read from the result. Such a
 * formula needs no evaluation to learn what it depends on, so a document whose stored formula
 * values are current opens without computing it (issue 26 §2). Anything else (a record or table
 * object that escapes into a function call, chains of references, comprehensions, statements,
 * `order_by`, `CONTAINS`, `Table.all`, `rec` itself) makes the formula dynamic: the engine then
 * learns its dependencies by evaluating it, as before.
 *
 * The plan must name every read evaluation could make (a superset is harmless, a missing read is
 * a stale cell); `test/formula-oracle-incremental.test.ts` checks it on every fixture document.
 */
import {parseFormula} from './grist.js';
import type {Arg, Expr, Stmt} from './syntax/index.js';
import {refTarget} from './cells/types.js';
import type {Value} from './values.js';

/** A key of a static lookup: the looked-up column, and the own-row column (or `id`) or constant giving its value. */
export interface StaticKey {
  key: string;
  from: {col: string} | {value: Value};
}

export interface StaticLookup {
  table: string;
  keys: StaticKey[];
  /** Columns read from the looked-up records. */
  cols: string[];
}

export interface StaticPlan {
  /** Columns of the same row. */
  cols: string[];
  /** Columns read through a Ref/RefList column of the same row. */
  refs: Array<{ref: string; col: string}>;
  lookups: StaticLookup[];
}

/** What the analysis needs of the document's schema. */
export interface StaticSchema {
  /** The type of a column (`Ref:T`, `Text`, ...), undefined if there is no such column. */
  colType(tableId: string, colId: string): string | undefined;
  isTable(name: string): boolean;
}

/**
 * What an expression's value may be: `plain` cannot be a record, record set or table (no column
 * is read through it); `ref` is a record or record set reached through a Ref/RefList column of the
 * same row; `lookup` a lookup's result; `any` possibly a record (only compared or returned).
 */
type Kind =
  | {k: 'plain'}
  | {k: 'ref'; ref: string; table: string}
  | {k: 'lookup'; index: number; table: string}
  | {k: 'any'};

/**
 * Functions that use records only as values (their id, truth, equality, repr) and never read a
 * column of one: records may be passed to them. Their result may hold the records again.
 */
const VALUE_FUNCTIONS = new Set([
  'SUM',
  'MAX',
  'MIN',
  'AVERAGE',
  'COUNT',
  'ROUND',
  'int',
  'float',
  'str',
  'bool',
  'abs',
  'repr',
  'IF',
  'IFERROR',
  'ISERROR',
  'ISERR',
  'ISBLANK',
  'NOT',
  'AND',
  'OR',
  'list',
  'tuple',
  'set',
]);

const PLAIN: Kind = {k: 'plain'};
const ANY: Kind = {k: 'any'};

/** Thrown inside the analysis: the formula is dynamic. */
const DYNAMIC = Symbol('dynamic');

function dynamic(): never {
  throw DYNAMIC;
}

/** The plan of a formula column of `tableId`, or null when its dependencies must be learnt by evaluating it. */
export function staticPlan(text: string, tableId: string, colId: string, schema: StaticSchema): StaticPlan | null {
  let body: Stmt[];
  try {
    body = parseFormula(text);
  } catch {
    return null;
  }
  if (body.length !== 1 || body[0].k !== 'return' || !body[0].v) return null;
  const plan: StaticPlan = {cols: [], refs: [], lookups: []};
  const a = new Analysis(plan, tableId, colId, schema);
  try {
    a.expr(body[0].v);
  } catch (e) {
    if (e === DYNAMIC) return null;
    throw e;
  }
  return plan;
}

/** Value kind of a column's cells: records for Ref/RefList (Attachments too), `any` for Any. */
function cellKind(type: string): 'plain' | 'ref' | 'any' {
  if (refTarget(type) !== null) return 'ref';
  if (type === 'Any' || type === '') return 'any';
  return 'plain';
}

class Analysis {
  constructor(
    private readonly plan: StaticPlan,
    private readonly tableId: string,
    private readonly colId: string,
    private readonly schema: StaticSchema,
  ) {}

  private addCol(col: string): void {
    if (!this.plan.cols.includes(col)) this.plan.cols.push(col);
  }

  /** `rec.X`: the kind of the same row's cell. */
  private ownColumn(col: string): Kind {
    if (col === 'id' || col === '_row_id') return PLAIN;
    const type = this.schema.colType(this.tableId, col);
    // A missing column raises AttributeError (a column added later recompiles the formula); the
    // column itself is a circular reference, which evaluation reports.
    if (type === undefined || col === this.colId) dynamic();
    this.addCol(col);
    const kind = cellKind(type);
    if (kind === 'ref') return {k: 'ref', ref: col, table: refTarget(type)!};
    return kind === 'any' ? ANY : PLAIN;
  }

  /** The kind of a value read as column `col` of records of `table`. */
  private readKind(table: string, col: string): Kind {
    if (col === 'id' || col === '_row_id') return PLAIN;
    const type = this.schema.colType(table, col);
    if (type === undefined) dynamic();
    // A Ref read through a reference is a second hop, recorded per row by evaluation: dynamic.
    return cellKind(type) === 'plain' ? PLAIN : ANY;
  }

  expr(e: Expr): Kind {
    switch (e.k) {
      case 'const':
        return PLAIN;
      case 'name':
        // `rec`, `table` and table objects are only allowed in the shapes handled by `attr` and `call`.
        if (e.id === 'rec' || e.id === 'table' || this.schema.isTable(e.id)) dynamic();
        return PLAIN;
      case 'attr':
        return this.attr(e.obj, e.name);
      case 'call':
        return this.call(e.fn, e.args);
      case 'sub':
        this.plain(e.obj);
        this.plain(e.index);
        return PLAIN;
      case 'slice':
        for (const x of [e.lo, e.hi, e.step]) if (x) this.plain(x);
        return PLAIN;
      case 'bin':
        // Operators never read a record's columns, but `[rec] * 2` still holds records.
        return this.join([this.value(e.l), this.value(e.r)]);
      case 'unary':
        return this.join([this.value(e.v)]);
      case 'not':
        this.value(e.v);
        return PLAIN;
      case 'cmp':
        // Records compare by table and id: no column is read.
        for (const v of e.vals) this.expr(v);
        return PLAIN;
      case 'and':
      case 'or':
        return this.join(e.vals.map((v) => this.expr(v)));
      case 'ifexp':
        // A record's truth is its id (a record set's, its length): `$Ref.Name if $Ref else ''`.
        this.value(e.test);
        return this.join([this.expr(e.body), this.expr(e.orelse)]);
      case 'list':
      case 'tuple':
      case 'set':
        for (const v of e.elts) this.plain(v);
        return PLAIN;
      case 'dict':
        for (const v of e.keys) if (v) this.plain(v);
        for (const v of e.values) this.plain(v);
        return PLAIN;
      case 'fstr':
        for (const p of e.parts) {
          if (typeof p === 'string') continue;
          this.plain(p.expr);
          if (p.spec) this.plain(p.spec);
        }
        return PLAIN;
      default:
        // Comprehensions, lambdas, starred and walrus expressions bind names or escape: dynamic.
        return dynamic();
    }
  }

  /** An expression whose value must not be a record (it is handed to code that may read it). */
  private plain(e: Expr): void {
    if (this.expr(e).k !== 'plain') dynamic();
  }

  /** An operand: records are allowed (operators do not read their columns), table objects are not. */
  private value(e: Expr): Kind {
    return this.expr(e);
  }

  private join(kinds: Kind[]): Kind {
    return kinds.every((k) => k.k === 'plain') ? PLAIN : ANY;
  }

  private attr(obj: Expr, name: string): Kind {
    if (obj.k === 'name' && obj.id === 'rec') return this.ownColumn(name);
    const o = this.expr(obj);
    switch (o.k) {
      case 'plain':
        // A method or attribute of a plain value (`$Name.upper`, `math.pi`): no column is read.
        return PLAIN;
      case 'ref':
        if (name !== 'id' && name !== '_row_id') {
          this.readKind(o.table, name);
          if (!this.plan.refs.some((r) => r.ref === o.ref && r.col === name))
            this.plan.refs.push({ref: o.ref, col: name});
        }
        return this.readKind(o.table, name);
      case 'lookup': {
        const kind = this.readKind(o.table, name);
        const cols = this.plan.lookups[o.index].cols;
        if (name !== 'id' && name !== '_row_id' && !cols.includes(name)) cols.push(name);
        return kind;
      }
      default:
        return dynamic();
    }
  }

  private call(fn: Expr, args: Arg[]): Kind {
    if (fn.k === 'attr' && fn.obj.k === 'name' && this.schema.isTable(fn.obj.id)) {
      if (fn.name !== 'lookupRecords' && fn.name !== 'lookupOne') dynamic();
      return this.lookup(fn.obj.id, args);
    }
    // `len()` of a lookup or RefList counts records without reading them.
    if (
      fn.k === 'name' &&
      fn.id === 'len' &&
      !this.schema.isTable('len') &&
      args.length === 1 &&
      args[0].kind === 'pos'
    ) {
      const k = this.expr(args[0].value);
      if (k.k === 'any') dynamic();
      return PLAIN;
    }
    if (fn.k === 'attr') {
      // A method of a plain value (`$Name.upper()`); a method of a record is dynamic.
      this.plain(fn.obj);
    } else {
      this.plain(fn);
    }
    // Records may be handed only to functions known not to read their columns (`getattr`,
    // `str.format`'s `{0.Name}`, RECORD, PREVIOUS/NEXT/RANK, `operator.attrgetter` do).
    const recordsAllowed = fn.k === 'name' && VALUE_FUNCTIONS.has(fn.id);
    const kinds = args.map((a) => this.expr(a.value));
    if (!recordsAllowed && kinds.some((k) => k.k !== 'plain')) dynamic();
    if (kinds.some((k) => k.k === 'lookup' || k.k === 'ref') && !recordsAllowed) dynamic();
    return recordsAllowed ? this.join(kinds.map((k) => (k.k === 'plain' ? PLAIN : ANY))) : PLAIN;
  }

  private lookup(table: string, args: Arg[]): Kind {
    const keys: StaticKey[] = [];
    for (const a of args) {
      if (a.kind !== 'kw' || !a.name) dynamic();
      // Sorted lookups and CONTAINS keys are tracked by evaluation.
      if (a.name === 'order_by' || a.name === 'sort_by') dynamic();
      const v = a.value;
      if (v.k === 'const') keys.push({key: a.name, from: {value: v.value}});
      else if (v.k === 'attr' && v.obj.k === 'name' && v.obj.id === 'rec') {
        this.ownColumn(v.name);
        keys.push({key: a.name, from: {col: v.name}});
      } else dynamic();
    }
    if (!keys.length) dynamic();
    for (const k of keys) if (k.key !== 'id' && this.schema.colType(table, k.key) === undefined) dynamic();
    this.plan.lookups.push({table, keys, cols: []});
    return {k: 'lookup', index: this.plan.lookups.length - 1, table};
  }
}
