/**
 * Python 3.11's statements, as a multi-line Grist formula may hold them (Grist compiles a formula
 * as the body of a function). Compound statements and their blocks, simple statements on a line
 * separated by `;`, and CPython's errors for them: a forced `:` ("expected ':'"), a missing
 * indented block, an invalid assignment target.
 */
import type {Expr, Handler, Stmt} from './ast.js';
import {indentationError, syntaxError} from './errors.js';
import {ExprParser} from './expressions.js';
import {AUGASSIGN, type Token} from './tokens.js';

/** What CPython calls an expression in its errors (`cannot assign to function call`). */
export function exprName(e: Expr): string {
  switch (e.k) {
    case 'attr':
      return 'attribute';
    case 'sub':
      return 'subscript';
    case 'star':
      return 'starred';
    case 'name':
      return 'name';
    case 'list':
      return 'list';
    case 'tuple':
      return 'tuple';
    case 'lambda':
      return 'lambda';
    case 'call':
      return 'function call';
    case 'and':
    case 'or':
    case 'bin':
    case 'unary':
    case 'not':
      return 'expression';
    case 'genexp':
      return 'generator expression';
    case 'await':
      return 'await expression';
    case 'listcomp':
      return 'list comprehension';
    case 'setcomp':
      return 'set comprehension';
    case 'dictcomp':
      return 'dict comprehension';
    case 'dict':
      return 'dict literal';
    case 'set':
      return 'set display';
    case 'fstr':
      return 'f-string expression';
    case 'const':
      if (e.negated) return 'expression';
      if (e.lit === 'ellipsis') return 'ellipsis';
      return e.value === null ? 'None' : e.value === true ? 'True' : e.value === false ? 'False' : 'literal';
    case 'cmp':
      return 'comparison';
    case 'ifexp':
      return 'conditional expression';
    case 'walrus':
      return 'named expression';
    case 'slice':
      return 'slice';
  }
}

/** The first part of `e` that cannot be assigned to (or deleted), or null. */
function invalidTarget(e: Expr, del = false): Expr | null {
  switch (e.k) {
    case 'name':
    case 'attr':
    case 'sub':
      return null;
    case 'tuple':
    case 'list':
      for (const x of e.elts) {
        const bad = invalidTarget(x, del);
        if (bad) return bad;
      }
      return null;
    case 'star':
      return del ? e : invalidTarget(e.v, del);
    default:
      return e;
  }
}

const BLOCK_OWNER: Record<string, string> = {def: 'function definition', class: 'class definition'};
const FORCED_COLON = new Set(['def', 'else', 'try', 'finally']);

export class Parser extends ExprParser {
  /** The whole text as a module (`exec` mode). */
  parseModule(): Stmt[] {
    return this.run(() => {
      this.names.length = 0;
      const out: Stmt[] = [];
      while (this.peek().kind !== 'eof') out.push(...this.statement());
      return out;
    });
  }

  /** An assignment's or a `for`'s target, checked as CPython checks it. */
  private checkTarget(e: Expr, how: 'first' | 'chain' | 'for' | 'del'): void {
    const bad = invalidTarget(e, how === 'del');
    if (!bad) return;
    const what = exprName(bad);
    const col = bad.bcol + 1;
    if (how === 'del') throw syntaxError(`cannot delete ${what}`, bad.line, col);
    if (bad.k === 'const' && !bad.negated && (bad.value === null || typeof bad.value === 'boolean') && !bad.lit)
      throw syntaxError(`cannot assign to ${what}`, bad.line, col);
    // CPython suggests `==` when a value follows the `=` and no other `=` does.
    const save = this.pos;
    const value = how === 'first' && this.isOp('=') && this.after(1, () => this.parseBinary(0));
    const suggest = value && !this.isOp('=') && !this.isOp(':=');
    this.pos = save;
    const here = suggest ? " here. Maybe you meant '==' instead of '='?" : '';
    throw syntaxError(`cannot assign to ${what}${here}`, bad.line, col);
  }

  /** `:` then a block: statements on the same line, or an indented block on the next ones. */
  private block(owner: Token): Stmt[] {
    const colon = this.peek();
    if (colon.kind !== 'op' || colon.value !== ':') {
      // CPython's grammar forces the `:` after `def ...`, `else`, `try` and `finally` (`&&':'`), and
      // words a line ending where the `:` should be for the others; anything else is invalid syntax.
      if (FORCED_COLON.has(owner.value) || colon.kind === 'newline') this.forced("expected ':'", colon);
      this.fail();
    }
    this.pos++;
    if (this.peek().kind !== 'newline') return this.simpleStatements();
    this.pos++;
    const next = this.peek();
    if (next.kind !== 'indent') {
      const what = BLOCK_OWNER[owner.value] ?? `'${owner.value}' statement`;
      throw indentationError(`expected an indented block after ${what} on line ${owner.line}`, next.line, next.col + 1);
    }
    this.pos++;
    const out: Stmt[] = [];
    while (this.peek().kind !== 'dedent' && this.peek().kind !== 'eof') out.push(...this.statement());
    if (this.peek().kind === 'dedent') this.pos++;
    return out;
  }

  private statement(): Stmt[] {
    const t = this.peek();
    const line = t.line;
    if (t.kind === 'op' && t.value === '@') {
      const decorators: Expr[] = [];
      while (this.eatOp('@')) {
        decorators.push(this.parseNamedExpression());
        if (this.peek().kind !== 'newline') this.fail();
        this.pos++;
      }
      if (!this.isKw('def') && !this.isKw('class')) this.fail();
      const d = this.statement()[0];
      if (d.k === 'def') d.decorators = decorators;
      return [d];
    }
    if (t.kind !== 'name' || t.dollar) return this.simpleStatements();
    switch (t.value) {
      case 'if':
        this.pos++;
        return [this.ifRest(t)];
      case 'while': {
        this.pos++;
        const test = this.condition();
        const body = this.block(t);
        return [{k: 'while', test, body, orelse: this.elseBlock(), line}];
      }
      case 'for': {
        this.pos++;
        const target = this.parseTargets(() => this.isKw('in'));
        if (!this.isKw('in')) this.fail();
        this.checkTarget(target, 'for');
        this.pos++;
        const iter = this.parseExpressions();
        const body = this.block(t);
        return [{k: 'for', target, iter, body, orelse: this.elseBlock(), line}];
      }
      case 'def': {
        this.pos++;
        const name = this.identifier().value;
        this.expectOp('(');
        const params = this.parseParams(')');
        this.expectOp(')');
        if (this.eatOp('->')) this.parseExpression();
        const body = this.block(t);
        return [{k: 'def', name, params, body, decorators: [], line}];
      }
      case 'try':
        this.pos++;
        return [this.tryRest(t)];
      case 'with': {
        this.pos++;
        const paren = this.isOp('(');
        do {
          this.parseExpression();
          if (this.eatKw('as')) this.parseTargets(() => this.isOp(':') || this.isOp(')'));
        } while (this.eatOp(','));
        if (paren && this.isOp(')')) this.pos++;
        this.block(t);
        return [{k: 'unsupported', what: 'with statement', line}];
      }
      case 'class': {
        this.pos++;
        this.identifier();
        if (this.eatOp('(')) {
          // The bases are read, not built: a class is refused when it runs.
          const level = this.toks[this.pos - 1].level;
          while (!(this.isOp(')') && this.peek().level === level - 1)) {
            if (this.peek().kind === 'eof') this.fail();
            this.pos++;
          }
          this.pos++;
        }
        this.block(t);
        return [{k: 'unsupported', what: 'class statement', line}];
      }
      case 'async': {
        this.pos++;
        if (!this.isKw('def') && !this.isKw('for') && !this.isKw('with')) this.fail();
        this.statement();
        return [{k: 'unsupported', what: 'async statement', line}];
      }
    }
    return this.simpleStatements();
  }

  /** An `if`/`elif`/`while` condition, with CPython's word for `=` written for `==`. */
  private condition(): Expr {
    const test = this.parseNamedExpression();
    if (this.isOp('=')) {
      // Grist first parses `$name` as one name (`DOLLARname`), and reports that parse's error.
      const dollar = test.k === 'attr' && test.dollar && test.obj.k === 'name' && test.obj.dollar;
      if (test.k === 'name' || dollar) {
        throw syntaxError("invalid syntax. Maybe you meant '==' or ':=' instead of '='?", test.line, test.bcol + 1);
      }
      const what = exprName(test);
      throw syntaxError(
        `cannot assign to ${what} here. Maybe you meant '==' instead of '='?`,
        test.line,
        test.bcol + 1,
      );
    }
    return test;
  }

  private ifRest(owner: Token): Stmt {
    const test = this.condition();
    const body = this.block(owner);
    let orelse: Stmt[] = [];
    const next = this.peek();
    if (this.isKw('elif')) {
      this.pos++;
      orelse = [this.ifRest(next)];
    } else if (this.isKw('else')) {
      this.pos++;
      orelse = this.block(next);
    }
    return {k: 'if', test, body, orelse, line: owner.line};
  }

  private elseBlock(): Stmt[] {
    const t = this.peek();
    return this.eatKw('else') ? this.block(t) : [];
  }

  private tryRest(owner: Token): Stmt {
    const body = this.block(owner);
    const handlers: Handler[] = [];
    while (this.isKw('except')) {
      const t = this.peek();
      this.pos++;
      let type: Expr | null = null;
      let name: string | null = null;
      if (!this.isOp(':')) {
        type = this.parseExpression();
        if (this.isOp(',')) {
          // Python 2's `except X, e`.
          throw syntaxError('multiple exception types must be parenthesized', type.line, type.bcol + 1);
        }
        if (this.eatKw('as')) name = this.identifier().value;
      }
      handlers.push({type, name, body: this.block(t)});
    }
    const orelse = handlers.length ? this.elseBlock() : [];
    let final: Stmt[] = [];
    const f = this.peek();
    const hasFinally = this.eatKw('finally');
    if (hasFinally) final = this.block(f);
    if (!handlers.length && !hasFinally) {
      throw syntaxError("expected 'except' or 'finally' block", f.line, this.column(f));
    }
    return {k: 'try', body, handlers, orelse, final, line: owner.line};
  }

  /** simple_stmts: simple statements separated by `;`, then NEWLINE. */
  private simpleStatements(): Stmt[] {
    const out: Stmt[] = [this.simpleStatement()];
    while (this.eatOp(';')) {
      if (this.peek().kind === 'newline' || this.peek().kind === 'eof') break;
      out.push(this.simpleStatement());
    }
    const t = this.peek();
    if (t.kind === 'newline') this.pos++;
    else if (t.kind !== 'eof') this.fail();
    return out;
  }

  private atStatementEnd(): boolean {
    const t = this.peek();
    return t.kind === 'newline' || t.kind === 'eof' || (t.kind === 'op' && t.value === ';');
  }

  private simpleStatement(): Stmt {
    const t = this.peek();
    const line = t.line;
    if (t.kind === 'name' && !t.dollar) {
      switch (t.value) {
        case 'pass':
        case 'break':
        case 'continue':
          this.pos++;
          return {k: t.value, line};
        case 'return': {
          this.pos++;
          const v = this.atStatementEnd() ? null : this.parseExpressions();
          return {k: 'return', v, line};
        }
        case 'raise': {
          this.pos++;
          if (this.atStatementEnd()) return {k: 'raise', exc: null, cause: null, line};
          const exc = this.parseExpression();
          const cause = this.eatKw('from') ? this.parseExpression() : null;
          return {k: 'raise', exc, cause, line};
        }
        case 'assert': {
          this.pos++;
          const test = this.parseExpression();
          const msg = this.eatOp(',') ? this.parseExpression() : null;
          return {k: 'assert', test, msg, line};
        }
        case 'del': {
          this.pos++;
          const target = this.parseTargets(() => this.atStatementEnd());
          this.checkTarget(target, 'del');
          return {
            k: 'del',
            targets: target.k === 'tuple' && !this.isParenthesized(target) ? target.elts : [target],
            line,
          };
        }
        case 'global':
        case 'nonlocal': {
          this.pos++;
          const names = [this.identifier().value];
          while (this.eatOp(',')) names.push(this.identifier().value);
          return {k: t.value, names, line};
        }
        case 'import': {
          this.pos++;
          const names: Array<[string, string | null]> = [];
          do {
            const mod = this.dottedName();
            names.push([mod, this.eatKw('as') ? this.identifier().value : null]);
          } while (this.eatOp(','));
          return {k: 'import', names, line};
        }
        case 'from':
          this.pos++;
          return this.fromImport(line);
      }
    }
    const first = this.parseExpressions();
    if (this.isOp('=')) {
      // Each target is checked when its `=` is read, as CPython does (`x + 1 =` is refused as such).
      const targets: Expr[] = [];
      let value = first;
      while (this.isOp('=')) {
        this.checkTarget(value, targets.length === 0 ? 'first' : 'chain');
        targets.push(value);
        this.pos++;
        value = this.parseExpressions();
      }
      return {k: 'assign', targets, value, line};
    }
    const op = this.peek();
    if (op.kind === 'op' && AUGASSIGN.has(op.value)) {
      // CPython words a bad target only when an annotation follows.
      if (
        first.k !== 'name' &&
        first.k !== 'attr' &&
        first.k !== 'sub' &&
        this.after(1, () => this.parseExpression())
      ) {
        throw syntaxError(
          `'${exprName(first)}' is an illegal expression for augmented assignment`,
          first.line,
          first.bcol + 1,
        );
      }
      this.pos++;
      return {k: 'augassign', target: first, op: op.value.slice(0, -1), value: this.parseExpressions(), line};
    }
    if (this.isOp(':')) {
      // CPython words a bad target only when an annotation follows.
      if (
        first.k !== 'name' &&
        first.k !== 'attr' &&
        first.k !== 'sub' &&
        this.after(1, () => this.parseExpression())
      ) {
        const what =
          first.k === 'tuple' || first.k === 'list'
            ? `only single target (not ${first.k}) can be annotated`
            : 'illegal target for annotation';
        throw syntaxError(what, first.line, first.bcol + 1);
      }
      this.pos++;
      this.parseExpression();
      const value = this.eatOp('=') ? this.parseExpressions() : null;
      return {k: 'annassign', target: first, value, line};
    }
    return {k: 'expr', v: first, line};
  }

  /** Whether a tuple was written in parentheses (its node starts at the `(`). */
  private isParenthesized(e: Expr & {elts: Expr[]}): boolean {
    const first = e.elts[0];
    return !first || first.line !== e.line || first.bcol !== e.bcol;
  }

  private dottedName(): string {
    let s = this.identifier().value;
    while (this.eatOp('.')) s += '.' + this.identifier().value;
    return s;
  }

  private fromImport(line: number): Stmt {
    let dots = '';
    while (this.isOp('.') || this.isOp('...')) {
      dots += this.peek().value;
      this.pos++;
    }
    const module = dots + (this.isKw('import') ? '' : this.dottedName());
    if (!this.eatKw('import')) this.fail();
    const names: Array<[string, string | null]> = [];
    const paren = this.eatOp('(');
    if (!paren && this.eatOp('*')) names.push(['*', null]);
    else {
      do {
        if (paren && this.isOp(')')) break;
        const name = this.identifier().value;
        names.push([name, this.eatKw('as') ? this.identifier().value : null]);
      } while (this.eatOp(','));
    }
    if (paren) this.expectOp(')');
    return {k: 'from', module, names, line};
  }
}
