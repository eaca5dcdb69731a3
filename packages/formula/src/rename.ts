/**
 * Formula rewriting for renames, from the parser's tree and the column types (not by pattern):
 * a column rename edits `$col`, `rec.col`, `$ref.col` / `x.col` wherever `x` is known to be a
 * record or RecordSet of the table (through Ref/RefList types, lookups, `Table.all`, comprehension
 * variables over them), lookup keyword arguments and `order_by` strings; a table rename edits
 * names that refer to the table.
 */
import {type Arg, type Expr, type Stmt, parseModule} from './syntax/index.js';
import {dedent} from './grist.js';

/** A column of the schema a rename is applied to. */
export interface SchemaColumn {
  colId: string;
  type: string;
  formula: string;
}
/** A table of the schema a rename is applied to: its columns with their formulas. */
export interface SchemaTable {
  tableId: string;
  columns: SchemaColumn[];
}
/** A table or column renamed. */
export type Rename =
  | {kind: 'table'; oldId: string; newId: string}
  | {kind: 'column'; tableId: string; oldId: string; newId: string};
/** A formula rewritten by a rename: its column and its new text. */
export interface FormulaEdit {
  tableId: string;
  colId: string;
  formula: string;
}

type Ty = {k: 'rec' | 'set' | 'table'; table: string} | null;

/** The formula edits a rename implies (formulas that do not change are not listed). */
export function formulaRenames(schema: SchemaTable[], rename: Rename): FormulaEdit[] {
  const tables = new Map(schema.map((t) => [t.tableId, new Map(t.columns.map((c) => [c.colId, c.type]))]));
  const out: FormulaEdit[] = [];
  for (const t of schema) {
    for (const c of t.columns) {
      // Every edit replaces a written occurrence of the old id: a formula without one is left unparsed.
      if (!c.formula?.trim() || !c.formula.includes(rename.oldId)) continue;
      const next = renameInFormula(c.formula, t.tableId, tables, rename);
      if (next !== null && next !== c.formula) out.push({tableId: t.tableId, colId: c.colId, formula: next});
    }
  }
  return out;
}

/** The rewritten formula text, or null when it does not parse (left as it is). */
export function renameInFormula(
  text: string,
  tableId: string,
  tables: Map<string, Map<string, string>>,
  rename: Rename,
): string | null {
  const src = dedent(text);
  let body: Stmt[];
  try {
    body = parseModule(src);
  } catch {
    return null;
  }
  const edits: Array<[number, number, string]> = [];
  const refTarget = (type: string | undefined): Ty => {
    if (!type) return null;
    if (type.startsWith('Ref:')) return {k: 'rec', table: type.slice(4)};
    if (type.startsWith('RefList:')) return {k: 'set', table: type.slice(8)};
    return null;
  };
  const scope = new Map<string, Ty>();

  const typeOf = (e: Expr): Ty => {
    switch (e.k) {
      case 'name':
        if (scope.has(e.id)) return scope.get(e.id)!;
        if (e.id === 'rec') return {k: 'rec', table: tableId};
        if (tables.has(e.id)) return {k: 'table', table: e.id};
        return null;
      case 'attr': {
        const o = typeOf(e.obj);
        if (!o) return null;
        if (o.k === 'table') return e.name === 'all' ? {k: 'set', table: o.table} : null;
        const t = refTarget(tables.get(o.table)?.get(e.name));
        if (!t) return null;
        return o.k === 'set' ? {k: 'set', table: t.table} : t;
      }
      case 'call': {
        if (e.fn.k === 'attr') {
          const o = typeOf(e.fn.obj);
          if (o?.k === 'table' && e.fn.name === 'lookupOne') return {k: 'rec', table: o.table};
          if (o?.k === 'table' && e.fn.name === 'lookupRecords') return {k: 'set', table: o.table};
        }
        if (e.fn.k === 'name' && (e.fn.id === 'PEEK' || e.fn.id === 'sorted' || e.fn.id === 'list') && e.args[0]) {
          const t = typeOf(e.args[0].value);
          return e.fn.id === 'PEEK' ? t : t && t.k === 'set' ? t : null;
        }
        return null;
      }
      case 'sub': {
        const o = typeOf(e.obj);
        return o?.k === 'set' ? {k: 'rec', table: o.table} : null;
      }
    }
    return null;
  };

  const renameString = (e: Expr, oldId: string, newId: string): void => {
    if (e.k === 'const' && typeof e.value === 'string') {
      const m = /^(-?)(.*)$/.exec(e.value)!;
      if (m[2] !== oldId) return;
      const lit = src.slice(e.pos, e.end);
      const i = lit.indexOf(oldId);
      if (i >= 0) edits.push([e.pos + i, e.pos + i + oldId.length, newId]);
    } else if (e.k === 'tuple' || e.k === 'list') {
      e.elts.forEach((x) => renameString(x, oldId, newId));
    }
  };

  const visitExpr = (e: Expr | null | undefined): void => {
    if (!e) return;
    switch (e.k) {
      case 'name':
        if (rename.kind === 'table' && e.id === rename.oldId && !scope.has(e.id))
          edits.push([e.pos, e.end, rename.newId]);
        return;
      case 'attr': {
        visitExpr(e.obj);
        if (rename.kind === 'column' && e.name === rename.oldId) {
          const o = typeOf(e.obj);
          if (o && o.k !== 'table' && o.table === rename.tableId) edits.push([e.pos, e.end, rename.newId]);
        }
        return;
      }
      case 'call': {
        visitExpr(e.fn);
        let lookupTable: string | null = null;
        if (e.fn.k === 'attr' && (e.fn.name === 'lookupOne' || e.fn.name === 'lookupRecords')) {
          const o = typeOf(e.fn.obj);
          if (o?.k === 'table') lookupTable = o.table;
        }
        e.args.forEach((a: Arg) => {
          visitExpr(a.value);
          if (rename.kind === 'column' && lookupTable === rename.tableId && a.kind === 'kw') {
            if (a.name === rename.oldId && a.pos !== undefined) edits.push([a.pos, a.end!, rename.newId]);
            if (a.name === 'order_by' || a.name === 'sort_by') renameString(a.value, rename.oldId, rename.newId);
          }
        });
        return;
      }
      case 'listcomp':
      case 'setcomp':
      case 'genexp':
      case 'dictcomp': {
        const saved = new Map(scope);
        for (const g of e.gens) {
          visitExpr(g.iter);
          const t = typeOf(g.iter);
          if (g.target.k === 'name') scope.set(g.target.id, t && t.k === 'set' ? {k: 'rec', table: t.table} : null);
          g.ifs.forEach(visitExpr);
        }
        if (e.k === 'dictcomp') {
          visitExpr(e.key);
          visitExpr(e.value);
        } else visitExpr(e.elt);
        scope.clear();
        saved.forEach((v, k) => scope.set(k, v));
        return;
      }
      case 'lambda': {
        const saved = new Map(scope);
        e.params.forEach((p) => {
          visitExpr(p.def);
          scope.set(p.name, null);
        });
        visitExpr(e.body);
        scope.clear();
        saved.forEach((v, k) => scope.set(k, v));
        return;
      }
      case 'fstr':
        e.parts.forEach((p) => {
          if (typeof p !== 'string') {
            visitExpr(p.expr);
            visitExpr(p.spec);
          }
        });
        return;
    }
    for (const v of Object.values(e)) {
      if (Array.isArray(v))
        v.forEach((x) => {
          if (x && typeof x === 'object' && 'k' in x) visitExpr(x as Expr);
        });
      else if (v && typeof v === 'object' && 'k' in v) visitExpr(v as Expr);
    }
  };

  const visitStmts = (stmts: Stmt[]): void => {
    for (const s of stmts) {
      switch (s.k) {
        case 'for': {
          visitExpr(s.iter);
          const t = typeOf(s.iter);
          if (s.target.k === 'name') scope.set(s.target.id, t && t.k === 'set' ? {k: 'rec', table: t.table} : null);
          visitStmts(s.body);
          visitStmts(s.orelse);
          break;
        }
        case 'assign':
          visitExpr(s.value);
          s.targets.forEach((t) => {
            if (t.k === 'name') scope.set(t.id, typeOf(s.value));
            else visitExpr(t);
          });
          break;
        case 'if':
        case 'while':
          visitExpr(s.test);
          visitStmts(s.body);
          visitStmts(s.orelse);
          break;
        case 'try':
          visitStmts(s.body);
          s.handlers.forEach((h) => {
            visitExpr(h.type);
            visitStmts(h.body);
          });
          visitStmts(s.orelse);
          visitStmts(s.final);
          break;
        case 'def':
          visitStmts(s.body);
          break;
        case 'expr':
          visitExpr(s.v);
          break;
        case 'return':
          visitExpr(s.v);
          break;
        case 'augassign':
          visitExpr(s.target);
          visitExpr(s.value);
          break;
        case 'assert':
          visitExpr(s.test);
          visitExpr(s.msg);
          break;
        case 'raise':
          visitExpr(s.exc);
          break;
        case 'del':
          s.targets.forEach(visitExpr);
          break;
      }
    }
  };
  visitStmts(body);
  if (!edits.length) return text;
  edits.sort((a, b) => b[0] - a[0]);
  let res = src;
  let last = Infinity;
  for (const [a, b, r] of edits) {
    if (b > last) continue; // overlapping (should not happen)
    res = res.slice(0, a) + r + res.slice(b);
    last = a;
  }
  return res;
}
