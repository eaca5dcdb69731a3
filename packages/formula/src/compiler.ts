/**
 * Compiles the AST to JS closures (no eval, no Function constructor). Names are resolved at compile
 * time to frame slots (locals of a function, lambda or comprehension; enclosing scopes through the
 * frame chain) or to the globals the caller provides. Control flow inside statements is returned as
 * a code (normal/break/continue/return), not thrown.
 *
 * One thing: one pass over one syntax tree, a case per node type sharing the scope analysis;
 * the node types are the language's, so the file grows only with the language.
 */
import {
  type Kwargs,
  PyCallable,
  PyDict,
  PyException,
  type PyObject,
  PySet,
  PyTuple,
  type Value,
  hashKey,
  raise,
  repr,
  str,
  truthy,
  typeName,
} from './values.js';
import type {Expr, Stmt, Param, Gen, FPart, Arg} from './syntax/index.js';
import {
  ExcObject,
  PyIterator,
  PySlice,
  PyType,
  appendAll,
  binop,
  callValue,
  compareOp,
  delitem,
  excToValue,
  getitem,
  isSubclass,
  iterate,
  setitem,
  toArray,
  unaryop,
} from './ops.js';
import {getattr} from './methods.js';
import {formatSpec} from './pyformat.js';
import {currentBudget} from './budget.js';

export interface Frame {
  v: Array<Value | undefined>;
  up: Frame | null;
  ret?: Value;
  /** The exception being handled (for bare `raise`). */
  exc?: PyException;
}

type Ev = (f: Frame) => Value;
type Ex = (f: Frame) => number;
const NORMAL = 0,
  BREAK = 1,
  CONTINUE = 2,
  RETURN = 3;

/** Where names not local to any function come from. */
export interface Globals {
  /** Names assigned with `global` (per compiled formula). */
  vars: Map<string, Value>;
  /** Builtins, Grist functions, tables, ... (undefined: NameError). */
  resolve(name: string): Value | undefined;
  /** `import name`: a module or ImportError. */
  importModule(name: string): Value;
}

/** Functions whose given positional arguments are passed as zero-argument thunks (Grist's lazy args). */
export const LAZY_ARGS: Record<string, [number, number]> = {
  IF: [1, 3],
  ISERR: [0, 1],
  ISERROR: [0, 1],
  IFERROR: [0, 1],
  PEEK: [0, 1],
};

export class UnsupportedError extends PyException {}

// ---- scopes -----------------------------------------------------------------------------------

class Scope {
  readonly slots = new Map<string, number>();
  readonly globalNames = new Set<string>();
  readonly nonlocalNames = new Set<string>();
  constructor(
    readonly parent: Scope | null,
    readonly kind: 'function' | 'comp',
  ) {}
  declare(name: string): number {
    let i = this.slots.get(name);
    if (i === undefined) {
      i = this.slots.size;
      this.slots.set(name, i);
    }
    return i;
  }
  /** [depth, slot] of a name, or null for a global. */
  find(name: string): [number, number] | null {
    let depth = 0;
    for (let s: Scope | null = this; s; s = s.parent, depth++) {
      if (s.globalNames.has(name)) return null;
      if (s.nonlocalNames.has(name)) continue;
      const i = s.slots.get(name);
      if (i !== undefined) return [depth, i];
    }
    return null;
  }
}

/** Collects names bound in a function body (Python's rule: any binding makes a name local). */
function collectLocals(body: Stmt[], scope: Scope): void {
  const target = (e: Expr): void => {
    switch (e.k) {
      case 'name':
        if (!scope.globalNames.has(e.id) && !scope.nonlocalNames.has(e.id)) scope.declare(e.id);
        break;
      case 'tuple':
      case 'list':
        e.elts.forEach(target);
        break;
      case 'star':
        target(e.v);
        break;
    }
  };
  const walrus = (e: Expr | null | undefined): void => {
    if (!e || typeof e !== 'object') return;
    if (e.k === 'walrus') {
      scope.declare(e.target);
      walrus(e.value);
      return;
    }
    if (e.k === 'lambda') return;
    // The commonest nodes first, without walking their fields (leaves, and `$col`'s attribute chains).
    if (e.k === 'const' || e.k === 'name') return;
    if (e.k === 'attr') {
      walrus(e.obj);
      return;
    }
    for (const v of Object.values(e)) {
      if (Array.isArray(v))
        v.forEach((x) => {
          if (x && typeof x === 'object' && 'k' in x) walrus(x as Expr);
          else if (x && typeof x === 'object')
            Object.values(x).forEach((y) => {
              if (y && typeof y === 'object' && 'k' in (y as object)) walrus(y as Expr);
            });
        });
      else if (v && typeof v === 'object' && 'k' in v) walrus(v as Expr);
    }
  };
  const visit = (stmts: Stmt[]): void => {
    for (const s of stmts) {
      switch (s.k) {
        case 'global':
          s.names.forEach((n) => scope.globalNames.add(n));
          break;
        case 'nonlocal':
          s.names.forEach((n) => scope.nonlocalNames.add(n));
          break;
      }
    }
    for (const s of stmts) {
      switch (s.k) {
        case 'assign':
          s.targets.forEach(target);
          walrus(s.value);
          break;
        case 'augassign':
          target(s.target);
          break;
        case 'annassign':
          target(s.target);
          break;
        case 'for':
          target(s.target);
          walrus(s.iter);
          visit(s.body);
          visit(s.orelse);
          break;
        case 'while':
          walrus(s.test);
          visit(s.body);
          visit(s.orelse);
          break;
        case 'if':
          walrus(s.test);
          visit(s.body);
          visit(s.orelse);
          break;
        case 'try':
          visit(s.body);
          visit(s.orelse);
          visit(s.final);
          s.handlers.forEach((h) => {
            if (h.name) target({k: 'name', id: h.name, pos: 0, end: 0, line: 0, bcol: 0});
            visit(h.body);
          });
          break;
        case 'def':
          target({k: 'name', id: s.name, pos: 0, end: 0, line: 0, bcol: 0});
          break;
        case 'import':
          s.names.forEach(([m, as]) =>
            target({k: 'name', id: as ?? m.split('.')[0], pos: 0, end: 0, line: 0, bcol: 0}),
          );
          break;
        case 'from':
          s.names.forEach(([n, as]) => {
            if (n !== '*') target({k: 'name', id: as ?? n, pos: 0, end: 0, line: 0, bcol: 0});
          });
          break;
        case 'del':
          s.targets.forEach(target);
          break;
        case 'expr':
          walrus(s.v);
          break;
        case 'return':
          walrus(s.v);
          break;
      }
    }
  };
  visit(body);
}

// ---- Python functions -------------------------------------------------------------------------

export class PyFunction implements PyObject {
  readonly pyType = 'function';
  constructor(
    readonly name: string,
    private readonly params: Param[],
    private readonly defaults: Array<Value | undefined>,
    private readonly nslots: number,
    private readonly closure: Frame | null,
    private readonly body: (f: Frame) => Value,
  ) {}

  call(args: Value[], kwargs: Kwargs | null): Value {
    const b = currentBudget;
    b.enter();
    try {
      const f: Frame = {v: new Array(this.nslots), up: this.closure};
      this.bind(f, args, kwargs);
      return this.body(f);
    } finally {
      b.leave();
    }
  }

  private bind(f: Frame, args: Value[], kwargs: Kwargs | null): void {
    const ps = this.params;
    let ai = 0;
    let extraKw: PyDict | null = null;
    for (let i = 0; i < ps.length; i++) {
      const p = ps[i];
      if (p.kind === 'normal') {
        if (ai < args.length) f.v[i] = args[ai++];
      } else if (p.kind === 'star') {
        f.v[i] = new PyTuple(args.slice(ai));
        ai = args.length;
      } else if (p.kind === 'dstar') {
        extraKw = new PyDict();
        f.v[i] = extraKw;
      }
    }
    if (ai < args.length) {
      const npos = ps.filter((p) => p.kind === 'normal').length;
      raise(
        'TypeError',
        `${this.name}() takes ${npos} positional argument${npos === 1 ? '' : 's'} but ${args.length} ${args.length === 1 ? 'was' : 'were'} given`,
      );
    }
    if (kwargs) {
      for (const k of Object.keys(kwargs)) {
        const idx = ps.findIndex((p) => p.name === k && (p.kind === 'normal' || p.kind === 'kwonly'));
        if (idx < 0) {
          if (extraKw) {
            extraKw.set(k, kwargs[k]);
            continue;
          }
          raise('TypeError', `${this.name}() got an unexpected keyword argument '${k}'`);
        }
        if (f.v[idx] !== undefined) raise('TypeError', `${this.name}() got multiple values for argument '${k}'`);
        f.v[idx] = kwargs[k];
      }
    }
    for (let i = 0; i < ps.length; i++) {
      if (f.v[i] !== undefined) continue;
      const d = this.defaults[i];
      if (d !== undefined) f.v[i] = d;
      else if (ps[i].kind === 'normal' || ps[i].kind === 'kwonly') {
        raise('TypeError', `${this.name}() missing 1 required positional argument: '${ps[i].name}'`);
      }
    }
  }

  repr(): string {
    return `<function ${this.name}>`;
  }
}

// ---- the compiler -----------------------------------------------------------------------------

export interface CompiledBody {
  /** Runs the body with the given arguments bound to the parameters. */
  run(args: Value[]): Value;
  nslots: number;
}

/**
 * Compiles a function body with the given parameter names (Grist formulas: `rec`, `table`).
 */
export function compileFunctionBody(body: Stmt[], paramNames: string[], globals: Globals): CompiledBody {
  const c = new Compiler(globals);
  const scope = new Scope(null, 'function');
  paramNames.forEach((p) => scope.declare(p));
  collectLocals(body, scope);
  const ex = c.block(body, scope);
  const nslots = scope.slots.size;
  return {
    nslots,
    run(args: Value[]): Value {
      const f: Frame = {v: new Array(nslots), up: null};
      for (let i = 0; i < args.length; i++) f.v[i] = args[i];
      const code = ex(f);
      return code === RETURN ? f.ret! : null;
    },
  };
}

class Compiler {
  constructor(private readonly g: Globals) {}

  block(stmts: Stmt[], scope: Scope): Ex {
    const parts = stmts.map((s) => this.stmt(s, scope));
    if (parts.length === 1) return parts[0];
    return (f) => {
      for (let i = 0; i < parts.length; i++) {
        const r = parts[i](f);
        if (r !== NORMAL) return r;
      }
      return NORMAL;
    };
  }

  stmt(s: Stmt, scope: Scope): Ex {
    switch (s.k) {
      case 'expr': {
        const e = this.expr(s.v, scope);
        return (f) => {
          e(f);
          return NORMAL;
        };
      }
      case 'pass':
      case 'global':
      case 'nonlocal':
        return () => NORMAL;
      case 'break':
        return () => BREAK;
      case 'continue':
        return () => CONTINUE;
      case 'return': {
        const e = s.v ? this.expr(s.v, scope) : () => null;
        return (f) => {
          f.ret = e(f);
          return RETURN;
        };
      }
      case 'assign': {
        const v = this.expr(s.value, scope);
        const ts = s.targets.map((t) => this.assignTarget(t, scope));
        if (ts.length === 1) {
          const t = ts[0];
          return (f) => {
            t(f, v(f));
            return NORMAL;
          };
        }
        return (f) => {
          const val = v(f);
          for (const t of ts) t(f, val);
          return NORMAL;
        };
      }
      case 'annassign': {
        if (!s.value) return () => NORMAL;
        const v = this.expr(s.value, scope);
        const t = this.assignTarget(s.target, scope);
        return (f) => {
          t(f, v(f));
          return NORMAL;
        };
      }
      case 'augassign':
        return this.augassign(s, scope);
      case 'if': {
        const test = this.expr(s.test, scope);
        const body = this.block(s.body, scope);
        const orelse = s.orelse.length ? this.block(s.orelse, scope) : null;
        return (f) => (truthy(test(f)) ? body(f) : orelse ? orelse(f) : NORMAL);
      }
      case 'while': {
        const test = this.expr(s.test, scope);
        const body = this.block(s.body, scope);
        const orelse = s.orelse.length ? this.block(s.orelse, scope) : null;
        return (f) => {
          const b = currentBudget;
          while (truthy(test(f))) {
            b.tick();
            const r = body(f);
            if (r === BREAK) return NORMAL;
            if (r === RETURN) return r;
          }
          return orelse ? orelse(f) : NORMAL;
        };
      }
      case 'for': {
        const iter = this.expr(s.iter, scope);
        const target = this.assignTarget(s.target, scope);
        const body = this.block(s.body, scope);
        const orelse = s.orelse.length ? this.block(s.orelse, scope) : null;
        return (f) => {
          const b = currentBudget;
          for (const x of iterate(iter(f))) {
            b.tick();
            target(f, x);
            const r = body(f);
            if (r === BREAK) return NORMAL;
            if (r === RETURN) return r;
          }
          return orelse ? orelse(f) : NORMAL;
        };
      }
      case 'def': {
        const slot = this.assignTarget({k: 'name', id: s.name, pos: 0, end: 0, line: 0, bcol: 0}, scope);
        const make = this.makeFunction(s.name, s.params, s.body, null, scope);
        const decos = s.decorators.map((d) => this.expr(d, scope));
        return (f) => {
          let fn: Value = make(f);
          for (let i = decos.length - 1; i >= 0; i--) fn = callValue(decos[i](f), [fn], null);
          slot(f, fn);
          return NORMAL;
        };
      }
      case 'try':
        return this.tryStmt(s, scope);
      case 'raise': {
        const exc = s.exc ? this.expr(s.exc, scope) : null;
        const cause = s.cause ? this.expr(s.cause, scope) : null;
        return (f) => {
          if (!exc) {
            for (let fr: Frame | null = f; fr; fr = fr.up) if (fr.exc) throw fr.exc;
            throw new PyException('RuntimeError', 'No active exception to reraise');
          }
          if (cause) cause(f);
          throw toPyException(exc(f));
        };
      }
      case 'assert': {
        const test = this.expr(s.test, scope);
        const msg = s.msg ? this.expr(s.msg, scope) : null;
        return (f) => {
          if (!truthy(test(f))) throw new PyException('AssertionError', msg ? str(msg(f)) : '');
          return NORMAL;
        };
      }
      case 'del': {
        const ds = s.targets.map((t) => this.delTarget(t, scope));
        return (f) => {
          ds.forEach((d) => d(f));
          return NORMAL;
        };
      }
      case 'import': {
        const parts = s.names.map(([mod, as]) => {
          const top = mod.split('.')[0];
          const t = this.assignTarget({k: 'name', id: as ?? top, pos: 0, end: 0, line: 0, bcol: 0}, scope);
          return (f: Frame) => {
            const m = this.g.importModule(mod);
            t(f, as ? m : this.g.importModule(top));
          };
        });
        return (f) => {
          parts.forEach((p) => p(f));
          return NORMAL;
        };
      }
      case 'from': {
        if (s.names.some(([n]) => n === '*')) {
          return () => raise('SyntaxError', 'import * only allowed at module level');
        }
        const parts = s.names.map(([name, as]) => {
          const t = this.assignTarget({k: 'name', id: as ?? name, pos: 0, end: 0, line: 0, bcol: 0}, scope);
          return (f: Frame) => {
            const m = this.g.importModule(s.module);
            let v: Value;
            try {
              v = getattr(m, name);
            } catch (e) {
              if (e instanceof PyException && e.type === 'AttributeError') {
                try {
                  v = this.g.importModule(`${s.module}.${name}`);
                } catch {
                  throw new PyException('ImportError', `cannot import name '${name}' from '${s.module}'`);
                }
              } else throw e;
            }
            t(f, v);
          };
        });
        return (f) => {
          parts.forEach((p) => p(f));
          return NORMAL;
        };
      }
      case 'unsupported': {
        const what = s.what;
        return () => {
          throw new PyException('UnsupportedError', `${what} is not supported by gristlite's formula engine`);
        };
      }
    }
  }

  private augassign(s: Extract<Stmt, {k: 'augassign'}>, scope: Scope): Ex {
    const op = s.op;
    const value = this.expr(s.value, scope);
    const inplace = (cur: Value, v: Value): Value => {
      if (Array.isArray(cur) && op === '+') {
        // toArray copies first: `x += x` reads x whole before it grows.
        return appendAll(cur, toArray(v));
      }
      if (Array.isArray(cur) && op === '*') {
        const r = binop('*', cur, v) as Value[];
        cur.length = 0;
        return appendAll(cur, r);
      }
      if (cur instanceof PySet && cur.pyType === 'set' && v instanceof PySet && '|&-^'.includes(op)) {
        const r = binop(op, cur, v) as PySet;
        cur.map.clear();
        for (const x of r.values()) cur.add(x);
        return cur;
      }
      if (cur instanceof PyDict && op === '|' && v instanceof PyDict) {
        for (const [k, x] of v.entries()) cur.set(k, x);
        return cur;
      }
      return binop(op, cur, v);
    };
    const t = s.target;
    if (t.k === 'name') {
      const load = this.expr(t, scope);
      const store = this.assignTarget(t, scope);
      return (f) => {
        store(f, inplace(load(f), value(f)));
        return NORMAL;
      };
    }
    if (t.k === 'attr') {
      const obj = this.expr(t.obj, scope);
      return (f) => {
        const o = obj(f);
        setattr(o, t.name, inplace(getattr(o, t.name), value(f)));
        return NORMAL;
      };
    }
    if (t.k === 'sub') {
      const obj = this.expr(t.obj, scope);
      const idx = this.expr(t.index, scope);
      return (f) => {
        const o = obj(f),
          k = idx(f);
        setitem(o, k, inplace(getitem(o, k), value(f)));
        return NORMAL;
      };
    }
    return () => raise('SyntaxError', 'illegal expression for augmented assignment');
  }

  private tryStmt(s: Extract<Stmt, {k: 'try'}>, scope: Scope): Ex {
    const body = this.block(s.body, scope);
    const handlers = s.handlers.map((h) => ({
      type: h.type ? this.expr(h.type, scope) : null,
      bindName: h.name ? this.assignTarget({k: 'name', id: h.name, pos: 0, end: 0, line: 0, bcol: 0}, scope) : null,
      unbind: h.name ? this.delTarget({k: 'name', id: h.name, pos: 0, end: 0, line: 0, bcol: 0}, scope, true) : null,
      body: this.block(h.body, scope),
    }));
    const orelse = s.orelse.length ? this.block(s.orelse, scope) : null;
    const final = s.final.length ? this.block(s.final, scope) : null;
    const runHandlers = (f: Frame, e: PyException): number => {
      for (const h of handlers) {
        if (h.type && !excMatches(e, h.type(f))) continue;
        const prev = f.exc;
        f.exc = e;
        try {
          if (h.bindName) h.bindName(f, excValue(e));
          return h.body(f);
        } finally {
          f.exc = prev;
          if (h.unbind) h.unbind(f);
        }
      }
      throw e;
    };
    const core = (f: Frame): number => {
      let r: number;
      try {
        r = body(f);
      } catch (e) {
        if (!(e instanceof PyException) || !handlers.length) throw e;
        return runHandlers(f, e);
      }
      if (r === NORMAL && orelse) return orelse(f);
      return r;
    };
    if (!final) return core;
    return (f) => {
      let r: number;
      try {
        r = core(f);
      } catch (e) {
        const fr = final(f);
        if (fr !== NORMAL) return fr; // return/break in finally swallows the exception, as Python does
        throw e;
      }
      const savedRet = f.ret;
      const fr = final(f);
      if (fr !== NORMAL) return fr;
      f.ret = savedRet;
      return r;
    };
  }

  private makeFunction(
    name: string,
    params: Param[],
    body: Stmt[] | null,
    exprBody: Expr | null,
    scope: Scope,
  ): (f: Frame) => PyFunction {
    const inner = new Scope(scope, 'function');
    params.forEach((p) => inner.declare(p.name));
    if (body) collectLocals(body, inner);
    const defaults = params.map((p) => (p.def ? this.expr(p.def, scope) : null));
    let run: (f: Frame) => Value;
    if (body) {
      const ex = this.block(body, inner);
      run = (f) => (ex(f) === RETURN ? f.ret! : null);
    } else {
      run = this.expr(exprBody!, inner);
    }
    const nslots = () => inner.slots.size;
    return (f) =>
      new PyFunction(
        name,
        params,
        defaults.map((d) => (d ? d(f) : undefined)),
        nslots(),
        f,
        run,
      );
  }

  // ---- assignment ---------------------------------------------------------------------------

  private assignTarget(t: Expr, scope: Scope): (f: Frame, v: Value) => void {
    switch (t.k) {
      case 'name': {
        const loc = scope.find(t.id);
        if (!loc) {
          const g = this.g;
          const name = t.id;
          return (_f, v) => {
            g.vars.set(name, v);
          };
        }
        const [depth, slot] = loc;
        if (depth === 0)
          return (f, v) => {
            f.v[slot] = v;
          };
        return (f, v) => {
          let fr = f;
          for (let i = 0; i < depth; i++) fr = fr.up!;
          fr.v[slot] = v;
        };
      }
      case 'attr': {
        const obj = this.expr(t.obj, scope);
        const name = t.name;
        return (f, v) => setattr(obj(f), name, v);
      }
      case 'sub': {
        const obj = this.expr(t.obj, scope);
        const idx = this.expr(t.index, scope);
        return (f, v) => setitem(obj(f), idx(f), v);
      }
      case 'tuple':
      case 'list': {
        const starAt = t.elts.findIndex((e) => e.k === 'star');
        const targets = t.elts.map((e) => this.assignTarget(e.k === 'star' ? e.v : e, scope));
        const n = targets.length;
        return (f, v) => {
          const items = toArray(v);
          if (starAt < 0) {
            if (items.length !== n) {
              if (items.length > n) raise('ValueError', `too many values to unpack (expected ${n})`);
              raise('ValueError', `not enough values to unpack (expected ${n}, got ${items.length})`);
            }
            for (let i = 0; i < n; i++) targets[i](f, items[i]);
            return;
          }
          if (items.length < n - 1)
            raise('ValueError', `not enough values to unpack (expected at least ${n - 1}, got ${items.length})`);
          const after = n - 1 - starAt;
          for (let i = 0; i < starAt; i++) targets[i](f, items[i]);
          targets[starAt](f, items.slice(starAt, items.length - after));
          for (let i = 0; i < after; i++) targets[starAt + 1 + i](f, items[items.length - after + i]);
        };
      }
      case 'star':
        return this.assignTarget(t.v, scope);
    }
    return () => raise('SyntaxError', 'cannot assign to expression');
  }

  private delTarget(t: Expr, scope: Scope, quiet = false): (f: Frame) => void {
    switch (t.k) {
      case 'name': {
        const loc = scope.find(t.id);
        const name = t.id;
        if (!loc)
          return () => {
            if (!this.g.vars.delete(name) && !quiet) raise('NameError', `name '${name}' is not defined`);
          };
        const [depth, slot] = loc;
        return (f) => {
          let fr = f;
          for (let i = 0; i < depth; i++) fr = fr.up!;
          if (fr.v[slot] === undefined && !quiet) raise('NameError', `name '${name}' is not defined`);
          fr.v[slot] = undefined;
        };
      }
      case 'sub': {
        const obj = this.expr(t.obj, scope);
        const idx = this.expr(t.index, scope);
        return (f) => delitem(obj(f), idx(f));
      }
      case 'tuple':
      case 'list': {
        const ds = t.elts.map((e) => this.delTarget(e, scope));
        return (f) => ds.forEach((d) => d(f));
      }
      case 'attr':
        return () => raise('AttributeError', `cannot delete attribute '${t.name}'`);
    }
    return () => raise('SyntaxError', 'cannot delete expression');
  }

  // ---- expressions --------------------------------------------------------------------------

  expr(e: Expr, scope: Scope): Ev {
    switch (e.k) {
      case 'const': {
        const v = e.value;
        if (e.lit === 'complex') {
          return () => raise('UnsupportedError', "complex numbers are not supported by gristlite's formula engine");
        }
        return () => v;
      }
      case 'name':
        return this.name(e.id, scope);
      case 'attr': {
        const obj = this.expr(e.obj, scope);
        const name = e.name;
        // Every getattr answers from its own table (own-property or switch lookups), never from
        // JavaScript's properties, so any name may be asked for.
        return (f) => {
          const o = obj(f);
          // Objects with their own getattr (records, modules, dates) first: the hot path.
          if (o !== null && typeof o === 'object' && typeof (o as PyObject).getattr === 'function')
            return (o as PyObject).getattr!(name);
          return getattr(o, name);
        };
      }
      case 'sub': {
        const obj = this.expr(e.obj, scope);
        const idx = this.expr(e.index, scope);
        return (f) => getitem(obj(f), idx(f));
      }
      case 'slice': {
        const lo = e.lo ? this.expr(e.lo, scope) : null;
        const hi = e.hi ? this.expr(e.hi, scope) : null;
        const st = e.step ? this.expr(e.step, scope) : null;
        return (f) => new PySlice(lo ? lo(f) : null, hi ? hi(f) : null, st ? st(f) : null);
      }
      case 'call':
        return this.call(e, scope);
      case 'bin': {
        const l = this.expr(e.l, scope),
          r = this.expr(e.r, scope);
        const op = e.op;
        switch (op) {
          case '*':
            return (f) => {
              const a = l(f),
                b = r(f);
              return typeof a === 'number' && typeof b === 'number' ? a * b : binop('*', a, b);
            };
          case '+':
            return (f) => {
              const a = l(f),
                b = r(f);
              return typeof a === 'number' && typeof b === 'number' ? a + b : binop('+', a, b);
            };
          case '-':
            return (f) => {
              const a = l(f),
                b = r(f);
              return typeof a === 'number' && typeof b === 'number' ? a - b : binop('-', a, b);
            };
        }
        return (f) => binop(op, l(f), r(f));
      }
      case 'unary': {
        const v = this.expr(e.v, scope);
        const op = e.op;
        return (f) => unaryop(op, v(f));
      }
      case 'not': {
        const v = this.expr(e.v, scope);
        return (f) => !truthy(v(f));
      }
      case 'and': {
        const vs = e.vals.map((x) => this.expr(x, scope));
        return (f) => {
          let v: Value = null;
          for (const x of vs) {
            v = x(f);
            if (!truthy(v)) return v;
          }
          return v;
        };
      }
      case 'or': {
        const vs = e.vals.map((x) => this.expr(x, scope));
        return (f) => {
          let v: Value = null;
          for (const x of vs) {
            v = x(f);
            if (truthy(v)) return v;
          }
          return v;
        };
      }
      case 'cmp': {
        const vs = e.vals.map((x) => this.expr(x, scope));
        const ops = e.ops;
        if (ops.length === 1) {
          const [a, b] = vs;
          const op = ops[0];
          return (f) => compareOp(op, a(f), b(f));
        }
        return (f) => {
          let left = vs[0](f);
          for (let i = 0; i < ops.length; i++) {
            const right = vs[i + 1](f);
            if (!compareOp(ops[i], left, right)) return false;
            left = right;
          }
          return true;
        };
      }
      case 'ifexp': {
        const t = this.expr(e.test, scope),
          b = this.expr(e.body, scope),
          o = this.expr(e.orelse, scope);
        return (f) => (truthy(t(f)) ? b(f) : o(f));
      }
      case 'lambda': {
        const make = this.makeFunction('<lambda>', e.params, null, e.body, scope);
        return make;
      }
      case 'list': {
        const items = this.seqItems(e.elts, scope);
        return (f) => items(f);
      }
      case 'tuple': {
        const items = this.seqItems(e.elts, scope);
        return (f) => new PyTuple(items(f));
      }
      case 'set': {
        const items = this.seqItems(e.elts, scope);
        return (f) => {
          const vals = items(f);
          vals.forEach(hashKey);
          return new PySet(vals);
        };
      }
      case 'dict': {
        const keys = e.keys.map((k) => (k ? this.expr(k, scope) : null));
        const vals = e.values.map((v) => this.expr(v, scope));
        return (f) => {
          const d = new PyDict();
          for (let i = 0; i < vals.length; i++) {
            const k = keys[i];
            if (k) {
              const kv = k(f);
              hashKey(kv);
              d.set(kv, vals[i](f));
            } else {
              const src = vals[i](f);
              if (!(src instanceof PyDict)) raise('TypeError', `'${typeName(src)}' object is not a mapping`);
              for (const [kk, vv] of src.entries()) d.set(kk, vv);
            }
          }
          return d;
        };
      }
      case 'listcomp':
      case 'setcomp':
      case 'genexp':
      case 'dictcomp':
        return this.comprehension(e, scope);
      case 'star':
        return () => raise('SyntaxError', "can't use starred expression here");
      case 'walrus': {
        const v = this.expr(e.value, scope);
        let s: Scope = scope;
        while (s.kind === 'comp' && s.parent) s = s.parent;
        const t = this.assignTarget(
          {k: 'name', id: e.target, pos: 0, end: 0, line: 0, bcol: 0},
          scope.find(e.target) ? scope : s,
        );
        return (f) => {
          const x = v(f);
          t(f, x);
          return x;
        };
      }
      case 'fstr':
        return this.fstring(e.parts, scope);
      case 'await':
        // Grist runs a formula as the body of a plain function.
        return () => raise('SyntaxError', "'await' outside async function");
    }
  }

  private seqItems(elts: Expr[], scope: Scope): (f: Frame) => Value[] {
    const hasStar = elts.some((x) => x.k === 'star');
    const parts = elts.map((x) =>
      x.k === 'star' ? {star: true, ev: this.expr(x.v, scope)} : {star: false, ev: this.expr(x, scope)},
    );
    if (!hasStar) {
      const evs = parts.map((p) => p.ev);
      return (f) => {
        const out = new Array(evs.length);
        for (let i = 0; i < evs.length; i++) out[i] = evs[i](f);
        return out;
      };
    }
    return (f) => {
      const out: Value[] = [];
      for (const p of parts) {
        if (p.star) appendAll(out, toArray(p.ev(f)));
        else out.push(p.ev(f));
      }
      return out;
    };
  }

  private fstring(parts: FPart[], scope: Scope): Ev {
    const ps = parts.map((p) => {
      if (typeof p === 'string') return () => p;
      const ev = this.expr(p.expr, scope);
      const spec = p.spec ? this.expr(p.spec, scope) : null;
      const conv = p.conv;
      return (f: Frame) => {
        let v = ev(f);
        if (conv === 'r' || conv === 'a') v = repr(v);
        else if (conv === 's') v = str(v);
        return formatSpec(v, spec ? (spec(f) as string) : '');
      };
    });
    return (f) => {
      let out = '';
      for (const p of ps) out += p(f);
      return out;
    };
  }

  private name(id: string, scope: Scope): Ev {
    const loc = scope.find(id);
    if (loc) {
      const [depth, slot] = loc;
      if (depth === 0) {
        return (f) => {
          const v = f.v[slot];
          if (v === undefined)
            raise(
              scope.parent ? 'UnboundLocalError' : 'UnboundLocalError',
              `cannot access local variable '${id}' where it is not associated with a value`,
            );
          return v as Value;
        };
      }
      return (f) => {
        let fr = f;
        for (let i = 0; i < depth; i++) fr = fr.up!;
        const v = fr.v[slot];
        if (v === undefined)
          raise(
            'NameError',
            `cannot access free variable '${id}' where it is not associated with a value in enclosing scope`,
          );
        return v as Value;
      };
    }
    const g = this.g;
    return () => {
      const v = g.vars.get(id);
      if (v !== undefined) return v;
      const r = g.resolve(id);
      if (r === undefined) raise('NameError', `name '${id}' is not defined`);
      return r as Value;
    };
  }

  private call(e: Extract<Expr, {k: 'call'}>, scope: Scope): Ev {
    const fn = this.expr(e.fn, scope);
    const lazy =
      e.fn.k === 'name' && Object.hasOwn(LAZY_ARGS, e.fn.id) && !scope.find(e.fn.id) ? LAZY_ARGS[e.fn.id] : null;
    const argEvs = e.args.map((a: Arg, i) => {
      const ev = this.expr(a.value, scope);
      if (lazy && a.kind === 'pos' && i >= lazy[0] && i < lazy[1]) {
        return {...a, ev: (f: Frame): Value => new PyCallable('<lambda>', () => ev(f))};
      }
      return {...a, ev};
    });
    const simple = argEvs.every((a) => a.kind === 'pos');
    if (simple) {
      const evs = argEvs.map((a) => a.ev);
      const n = evs.length;
      return (f) => {
        const fv = fn(f);
        const args = new Array(n);
        for (let i = 0; i < n; i++) args[i] = evs[i](f);
        return callValue(fv, args, null);
      };
    }
    return (f) => {
      const fv = fn(f);
      const args: Value[] = [];
      let kwargs: Kwargs | null = null;
      for (const a of argEvs) {
        switch (a.kind) {
          case 'pos':
            args.push(a.ev(f));
            break;
          case 'star':
            appendAll(args, toArray(a.ev(f)));
            break;
          case 'kw':
            kwargs ??= Object.create(null) as Kwargs;
            if (Object.hasOwn(kwargs, a.name!)) raise('SyntaxError', `keyword argument repeated: ${a.name}`);
            kwargs[a.name!] = a.ev(f);
            break;
          case 'dstar': {
            const d = a.ev(f);
            if (!(d instanceof PyDict)) raise('TypeError', `argument after ** must be a mapping, not ${typeName(d)}`);
            kwargs ??= Object.create(null) as Kwargs;
            for (const [k, v] of d.entries()) {
              if (typeof k !== 'string') raise('TypeError', 'keywords must be strings');
              if (Object.hasOwn(kwargs, k)) raise('TypeError', `got multiple values for keyword argument '${k}'`);
              kwargs[k] = v;
            }
          }
        }
      }
      return callValue(fv, args, kwargs);
    };
  }

  private comprehension(e: Extract<Expr, {k: 'listcomp' | 'setcomp' | 'genexp' | 'dictcomp'}>, scope: Scope): Ev {
    const inner = new Scope(scope, 'comp');
    const declare = (t: Expr): void => {
      if (t.k === 'name') inner.declare(t.id);
      else if (t.k === 'tuple' || t.k === 'list') t.elts.forEach(declare);
      else if (t.k === 'star') declare(t.v);
    };
    e.gens.forEach((g) => declare(g.target));
    const firstIter = this.expr(e.gens[0].iter, scope);
    const gens = e.gens.map((g: Gen, i) => ({
      iter: i === 0 ? null : this.expr(g.iter, inner),
      target: this.assignTarget(g.target, inner),
      ifs: g.ifs.map((c) => this.expr(c, inner)),
    }));
    const nslots = () => inner.slots.size;
    const loop = function* (f: Frame, first: Value): Generator<Frame> {
      const b = currentBudget;
      const rec = function* (level: number, src: Value): Generator<Frame> {
        const g = gens[level];
        outer: for (const x of iterate(src)) {
          b.tick();
          g.target(f, x);
          for (const c of g.ifs) if (!truthy(c(f))) continue outer;
          if (level + 1 === gens.length) yield f;
          else yield* rec(level + 1, gens[level + 1].iter!(f));
        }
      };
      yield* rec(0, first);
    };
    if (e.k === 'genexp') {
      const elt = this.expr(e.elt, inner);
      return (f) => {
        const cf: Frame = {v: new Array(nslots()), up: f};
        const first = firstIter(f);
        iterate(first);
        const it = (function* () {
          for (const fr of loop(cf, first)) yield elt(fr);
        })();
        return new PyIterator(it, 'generator');
      };
    }
    if (e.k === 'dictcomp') {
      const k = this.expr(e.key, inner),
        v = this.expr(e.value, inner);
      return (f) => {
        const cf: Frame = {v: new Array(nslots()), up: f};
        const d = new PyDict();
        for (const fr of loop(cf, firstIter(f))) {
          const kv = k(fr);
          hashKey(kv);
          d.set(kv, v(fr));
        }
        return d;
      };
    }
    const elt = this.expr(e.elt, inner);
    const isSet = e.k === 'setcomp';
    // Single-generator list comprehensions avoid the generator machinery (hot in formulas).
    if (gens.length === 1) {
      const g = gens[0];
      return (f) => {
        const cf: Frame = {v: new Array(nslots()), up: f};
        const out: Value[] = [];
        const b = currentBudget;
        outer: for (const x of iterate(firstIter(f))) {
          b.tick();
          g.target(cf, x);
          for (const c of g.ifs) if (!truthy(c(cf))) continue outer;
          out.push(elt(cf));
        }
        if (isSet) {
          out.forEach(hashKey);
          return new PySet(out);
        }
        return out;
      };
    }
    return (f) => {
      const cf: Frame = {v: new Array(nslots()), up: f};
      const out: Value[] = [];
      for (const fr of loop(cf, firstIter(f))) out.push(elt(fr));
      if (isSet) {
        out.forEach(hashKey);
        return new PySet(out);
      }
      return out;
    };
  }
}

function setattr(o: Value, name: string, v: Value): void {
  const obj = o as PyObject & {setattr?(n: string, v: Value): void};
  if (obj !== null && typeof obj === 'object' && !Array.isArray(obj) && typeof obj.setattr === 'function') {
    obj.setattr(name, v);
    return;
  }
  raise('AttributeError', `'${typeName(o)}' object attribute '${name}' is read-only`);
}

/** Whether exception `e` matches an `except` clause's class (or tuple of classes). */
function excMatches(e: PyException, cls: Value): boolean {
  if (cls instanceof PyTuple) return cls.items.some((c) => excMatches(e, c));
  if (cls instanceof PyType) return isSubclass(e.type, cls.name);
  return raise('TypeError', 'catching classes that do not inherit from BaseException is not allowed');
}

const excValues = new WeakMap<PyException, ExcObject>();

function excValue(e: PyException): ExcObject {
  let v = excValues.get(e);
  if (!v) {
    v = excToValue(e);
    excValues.set(e, v);
  }
  return v;
}

/** The PyException that `raise v` throws. */
export function toPyException(v: Value): PyException {
  if (v instanceof ExcObject) {
    const e = v.toException();
    excValues.set(e, v);
    return e;
  }
  if (v instanceof PyType && (v.name === 'BaseException' || isSubclass(v.name, 'BaseException'))) {
    return toPyException(v.call([], null));
  }
  return new PyException('TypeError', 'exceptions must derive from BaseException');
}
