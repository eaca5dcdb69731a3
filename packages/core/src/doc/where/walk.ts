/** Visiting every node of the one syntax tree (`@gristlite/formula`'s `Expr` and `Stmt`). */
import type {Expr} from '@gristlite/formula';
import type {Stmt} from '@gristlite/formula/internal';

/** The expressions directly inside an expression. */
export function childExprs(e: Expr): Expr[] {
  switch (e.k) {
    case 'const':
    case 'name':
      return [];
    case 'attr':
      return [e.obj];
    case 'sub':
      return [e.obj, e.index];
    case 'slice':
      return [e.lo, e.hi, e.step].filter((x): x is Expr => x !== null);
    case 'call':
      return [e.fn, ...e.args.map((a) => a.value)];
    case 'bin':
      return [e.l, e.r];
    case 'unary':
    case 'not':
    case 'star':
    case 'await':
      return [e.v];
    case 'and':
    case 'or':
    case 'cmp':
      return e.vals;
    case 'ifexp':
      return [e.test, e.body, e.orelse];
    case 'lambda':
      return [...e.params.flatMap((p) => (p.def ? [p.def] : [])), e.body];
    case 'list':
    case 'tuple':
    case 'set':
      return e.elts;
    case 'dict':
      return [...e.keys.filter((k): k is Expr => k !== null), ...e.values];
    case 'listcomp':
    case 'setcomp':
    case 'genexp':
      return [e.elt, ...e.gens.flatMap((g) => [g.target, g.iter, ...g.ifs])];
    case 'dictcomp':
      return [e.key, e.value, ...e.gens.flatMap((g) => [g.target, g.iter, ...g.ifs])];
    case 'walrus':
      return [e.value];
    case 'fstr':
      return e.parts.flatMap((p) => (typeof p === 'string' ? [] : [p.expr, ...(p.spec ? [p.spec] : [])]));
  }
}

/** Every expression of a body, statements' and nested ones, each once, parents first. */
export function* allExprs(body: Stmt[]): Generator<Expr> {
  const stack: Expr[] = [];
  const stmts = [...body];
  while (stmts.length) {
    const s = stmts.pop()!;
    stack.push(...stmtExprs(s));
    stmts.push(...childStmts(s));
  }
  while (stack.length) {
    const e = stack.pop()!;
    yield e;
    stack.push(...childExprs(e));
  }
}

function stmtExprs(s: Stmt): Expr[] {
  switch (s.k) {
    case 'expr':
      return [s.v];
    case 'assign':
      return [...s.targets, s.value];
    case 'augassign':
      return [s.target, s.value];
    case 'annassign':
      return s.value ? [s.target, s.value] : [s.target];
    case 'if':
    case 'while':
      return [s.test];
    case 'for':
      return [s.target, s.iter];
    case 'return':
      return s.v ? [s.v] : [];
    case 'def':
      return [...s.decorators, ...s.params.flatMap((p) => (p.def ? [p.def] : []))];
    case 'try':
      return s.handlers.flatMap((h) => (h.type ? [h.type] : []));
    case 'raise':
      return [s.exc, s.cause].filter((x): x is Expr => x !== null);
    case 'assert':
      return [s.test, ...(s.msg ? [s.msg] : [])];
    case 'del':
      return s.targets;
    default:
      return [];
  }
}

function childStmts(s: Stmt): Stmt[] {
  switch (s.k) {
    case 'if':
    case 'for':
    case 'while':
      return [...s.body, ...s.orelse];
    case 'def':
      return s.body;
    case 'try':
      return [...s.body, ...s.handlers.flatMap((h) => h.body), ...s.orelse, ...s.final];
    default:
      return [];
  }
}

/**
 * Names a body binds anywhere (assignments, loop and comprehension targets, parameters,
 * functions, imports, handlers, `:=`): they are not globals, whatever scope binds them.
 */
export function boundNames(body: Stmt[]): Set<string> {
  const out = new Set<string>();
  const target = (t: Expr): void => {
    if (t.k === 'name') out.add(t.id);
    else if (t.k === 'tuple' || t.k === 'list') t.elts.forEach(target);
    else if (t.k === 'star') target(t.v);
  };
  const stmts = [...body];
  while (stmts.length) {
    const s = stmts.pop()!;
    switch (s.k) {
      case 'assign':
        s.targets.forEach(target);
        break;
      case 'augassign':
      case 'annassign':
        target(s.target);
        break;
      case 'for':
        target(s.target);
        break;
      case 'def':
        out.add(s.name);
        for (const p of s.params) out.add(p.name);
        break;
      case 'import':
      case 'from':
        for (const [name, as] of s.names) out.add(as ?? name.split('.')[0]);
        break;
      case 'try':
        for (const h of s.handlers) if (h.name) out.add(h.name);
        break;
      case 'global':
      case 'nonlocal':
        for (const n of s.names) out.add(n);
        break;
    }
    stmts.push(...childStmts(s));
  }
  for (const e of allExprs(body)) {
    if (e.k === 'lambda') for (const p of e.params) out.add(p.name);
    else if (e.k === 'walrus') out.add(e.target);
    else if (e.k === 'listcomp' || e.k === 'setcomp' || e.k === 'genexp' || e.k === 'dictcomp') {
      for (const g of e.gens) target(g.target);
    }
  }
  return out;
}
