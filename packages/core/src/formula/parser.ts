/**
 * Recursive-descent parser for the Python subset, producing the AST below. Operator precedence
 * follows Python's grammar (lambda < if-else < or < and < not < comparisons < | < ^ < & < shifts
 * < +,- < *,/,//,%,@ < unary < ** < primaries).
 */
import {type Token, tokenize, syntaxError, decodeEscapes} from './lexer.js';
import type {PyException, Value} from './values.js';
import {PY_KEYWORDS} from '../doc/identifiers.js';

export type Expr =
  | {k: 'const'; value: Value; pos: number; end: number}
  | {k: 'name'; id: string; pos: number; end: number; dollar?: boolean}
  | {k: 'attr'; obj: Expr; name: string; pos: number; end: number; dollar?: boolean}
  | {k: 'sub'; obj: Expr; index: Expr}
  | {k: 'slice'; lo: Expr | null; hi: Expr | null; step: Expr | null}
  | {k: 'call'; fn: Expr; args: Arg[]}
  | {k: 'bin'; op: string; l: Expr; r: Expr}
  | {k: 'unary'; op: string; v: Expr}
  | {k: 'not'; v: Expr}
  | {k: 'and' | 'or'; vals: Expr[]}
  | {k: 'cmp'; ops: string[]; vals: Expr[]}
  | {k: 'ifexp'; test: Expr; body: Expr; orelse: Expr}
  | {k: 'lambda'; params: Param[]; body: Expr}
  | {k: 'list' | 'tuple' | 'set'; elts: Expr[]}
  | {k: 'dict'; keys: Array<Expr | null>; values: Expr[]}
  | {k: 'listcomp' | 'setcomp' | 'genexp'; elt: Expr; gens: Gen[]}
  | {k: 'dictcomp'; key: Expr; value: Expr; gens: Gen[]}
  | {k: 'star'; v: Expr}
  | {k: 'walrus'; target: string; value: Expr}
  | {k: 'fstr'; parts: FPart[]; pos: number; end: number};

export type FPart = string | {expr: Expr; conv: string | null; spec: Expr | null};
export interface Arg {
  kind: 'pos' | 'star' | 'kw' | 'dstar';
  name?: string;
  value: Expr;
  pos?: number;
  end?: number;
}
export interface Param {
  name: string;
  kind: 'normal' | 'star' | 'dstar' | 'kwonly';
  def?: Expr;
}
export interface Gen {
  target: Expr;
  iter: Expr;
  ifs: Expr[];
}
export interface Handler {
  type: Expr | null;
  name: string | null;
  body: Stmt[];
}

export type Stmt = {line: number} & (
  | {k: 'expr'; v: Expr}
  | {k: 'assign'; targets: Expr[]; value: Expr}
  | {k: 'augassign'; target: Expr; op: string; value: Expr}
  | {k: 'annassign'; target: Expr; value: Expr | null}
  | {k: 'if'; test: Expr; body: Stmt[]; orelse: Stmt[]}
  | {k: 'for'; target: Expr; iter: Expr; body: Stmt[]; orelse: Stmt[]}
  | {k: 'while'; test: Expr; body: Stmt[]; orelse: Stmt[]}
  | {k: 'break'}
  | {k: 'continue'}
  | {k: 'pass'}
  | {k: 'return'; v: Expr | null}
  | {k: 'def'; name: string; params: Param[]; body: Stmt[]; decorators: Expr[]}
  | {k: 'try'; body: Stmt[]; handlers: Handler[]; orelse: Stmt[]; final: Stmt[]}
  | {k: 'raise'; exc: Expr | null; cause: Expr | null}
  | {k: 'assert'; test: Expr; msg: Expr | null}
  | {k: 'del'; targets: Expr[]}
  | {k: 'global' | 'nonlocal'; names: string[]}
  | {k: 'import'; names: Array<[string, string | null]>}
  | {k: 'from'; module: string; names: Array<[string, string | null]>}
  | {k: 'unsupported'; what: string}
);

const COMPARE_OPS = new Set(['<', '>', '==', '>=', '<=', '!=', '<>', 'in', 'is']);
const AUG_OPS = new Set(['+=', '-=', '*=', '/=', '//=', '%=', '**=', '&=', '|=', '^=', '<<=', '>>=']);
// Python 3's keywords: never names.
const KEYWORDS = PY_KEYWORDS;

export function parseModule(src: string): Stmt[] {
  return new Parser(tokenize(src), src).module();
}

export function parseExpression(src: string): Expr {
  const p = new Parser(tokenize(src), src);
  const e = p.testlist();
  p.skipNewlines();
  p.expectKind('eof');
  return e;
}

export class Parser {
  private i = 0;
  constructor(
    private readonly toks: Token[],
    _src: string,
  ) {}

  private get t(): Token {
    return this.toks[this.i] as Token;
  }
  private kind(): Token['kind'] {
    return this.toks[this.i].kind;
  }
  private peek(o = 1): Token {
    return this.toks[Math.min(this.i + o, this.toks.length - 1)];
  }
  private isOp(v: string): boolean {
    return this.t.kind === 'op' && this.t.value === v;
  }
  private isKw(v: string): boolean {
    return this.t.kind === 'name' && this.t.value === v;
  }
  private err(msg = 'invalid syntax', tok = this.t): PyException {
    return syntaxError(msg, tok.line, tok.col);
  }
  private eatOp(v: string): boolean {
    if (this.isOp(v)) {
      this.i++;
      return true;
    }
    return false;
  }
  private eatKw(v: string): boolean {
    if (this.isKw(v)) {
      this.i++;
      return true;
    }
    return false;
  }
  private expectOp(v: string): Token {
    if (!this.isOp(v)) {
      if (this.t.kind === 'eof' || this.t.kind === 'newline')
        throw this.err(
          v === ')' || v === ']' || v === '}' ? `'${this.openerFor(v)}' was never closed` : 'invalid syntax',
        );
      throw this.err();
    }
    return this.toks[this.i++];
  }
  private openerFor(v: string): string {
    return v === ')' ? '(' : v === ']' ? '[' : '{';
  }
  private expectKw(v: string): void {
    if (!this.eatKw(v)) throw this.err();
  }
  expectKind(k: Token['kind']): Token {
    if (this.t.kind !== k) throw this.err();
    return this.toks[this.i++];
  }
  private identifier(): Token {
    if (this.t.kind !== 'name' || KEYWORDS.has(this.t.value)) throw this.err();
    return this.toks[this.i++];
  }
  skipNewlines(): void {
    while (this.t.kind === 'newline') this.i++;
  }

  module(): Stmt[] {
    const out: Stmt[] = [];
    this.skipNewlines();
    if (this.kind() === 'indent') throw this.err('unexpected indent');
    while (this.kind() !== 'eof') {
      out.push(...this.statement());
      this.skipNewlines();
      if (this.kind() === 'indent') throw this.err('unexpected indent');
    }
    return out;
  }

  private block(): Stmt[] {
    this.expectOp(':');
    if (this.t.kind !== 'newline') return this.simpleStatements();
    this.skipNewlines();
    if (this.kind() !== 'indent') throw this.err('expected an indented block');
    this.i++;
    const out: Stmt[] = [];
    while (this.kind() !== 'dedent' && this.kind() !== 'eof') {
      out.push(...this.statement());
      this.skipNewlines();
      if (this.kind() === 'indent') throw this.err('unexpected indent');
    }
    if (this.kind() === 'dedent') this.i++;
    return out;
  }

  private statement(): Stmt[] {
    const line = this.t.line;
    if (this.t.kind === 'op' && this.t.value === '@') {
      const decorators: Expr[] = [];
      while (this.eatOp('@')) {
        decorators.push(this.test());
        this.expectKind('newline');
        this.skipNewlines();
      }
      if (!this.isKw('def')) throw this.err();
      const d = this.statement()[0] as Extract<Stmt, {k: 'def'}>;
      d.decorators = decorators;
      return [d];
    }
    if (this.t.kind === 'name') {
      switch (this.t.value) {
        case 'if': {
          this.i++;
          return [this.ifRest(line)];
        }
        case 'while': {
          this.i++;
          const test = this.namedTest();
          const body = this.block();
          const orelse = this.elseBlock();
          return [{k: 'while', test, body, orelse, line}];
        }
        case 'for': {
          this.i++;
          const target = this.targetList();
          this.expectKw('in');
          const iter = this.testlist();
          const body = this.block();
          const orelse = this.elseBlock();
          return [{k: 'for', target, iter, body, orelse, line}];
        }
        case 'def': {
          this.i++;
          const name = this.identifier().value;
          this.expectOp('(');
          const params = this.params(')');
          this.expectOp(')');
          if (this.eatOp('->')) this.test();
          const body = this.block();
          return [{k: 'def', name, params, body, decorators: [], line}];
        }
        case 'try': {
          this.i++;
          const body = this.block();
          const handlers: Handler[] = [];
          this.skipNewlines();
          while (this.isKw('except')) {
            this.i++;
            let type: Expr | null = null;
            let name: string | null = null;
            if (!this.isOp(':')) {
              type = this.test();
              if (this.eatOp(',')) {
                // Python 2's `except X, e` is a syntax error in Python 3.
                throw this.err();
              }
              if (this.eatKw('as')) name = this.identifier().value;
            }
            handlers.push({type, name, body: this.block()});
            this.skipNewlines();
          }
          const orelse = handlers.length ? this.elseBlock() : [];
          this.skipNewlines();
          let final: Stmt[] = [];
          if (this.eatKw('finally')) final = this.block();
          if (!handlers.length && !final.length) throw this.err("expected 'except' or 'finally' block");
          return [{k: 'try', body, handlers, orelse, final, line}];
        }
        case 'with':
        case 'class':
        case 'async': {
          const what = this.t.value;
          // Skip the whole compound statement: it compiles to an error naming the construct.
          this.i++;
          while (!this.isOp(':') && this.kind() !== 'eof') this.i++;
          this.block();
          return [{k: 'unsupported', what: `${what} statement`, line}];
        }
      }
    }
    return this.simpleStatements();
  }

  private elseBlock(): Stmt[] {
    this.skipNewlines();
    if (this.eatKw('else')) return this.block();
    return [];
  }

  private ifRest(line: number): Stmt {
    const test = this.namedTest();
    const body = this.block();
    this.skipNewlines();
    let orelse: Stmt[] = [];
    if (this.isKw('elif')) {
      const l2 = this.t.line;
      this.i++;
      orelse = [this.ifRest(l2)];
    } else if (this.eatKw('else')) {
      orelse = this.block();
    }
    return {k: 'if', test, body, orelse, line};
  }

  private simpleStatements(): Stmt[] {
    const out: Stmt[] = [this.simpleStatement()];
    while (this.eatOp(';')) {
      if (this.t.kind === 'newline' || this.t.kind === 'eof') break;
      out.push(this.simpleStatement());
    }
    if (this.t.kind !== 'eof' && this.t.kind !== 'dedent') this.expectKind('newline');
    return out;
  }

  private simpleStatement(): Stmt {
    const line = this.t.line;
    if (this.t.kind === 'name') {
      switch (this.t.value) {
        case 'pass':
          this.i++;
          return {k: 'pass', line};
        case 'break':
          this.i++;
          return {k: 'break', line};
        case 'continue':
          this.i++;
          return {k: 'continue', line};
        case 'return': {
          this.i++;
          const v = this.atStmtEnd() ? null : this.testlistStar();
          return {k: 'return', v, line};
        }
        case 'raise': {
          this.i++;
          if (this.atStmtEnd()) return {k: 'raise', exc: null, cause: null, line};
          const exc = this.test();
          const cause = this.eatKw('from') ? this.test() : null;
          return {k: 'raise', exc, cause, line};
        }
        case 'assert': {
          this.i++;
          const test = this.test();
          const msg = this.eatOp(',') ? this.test() : null;
          return {k: 'assert', test, msg, line};
        }
        case 'del': {
          this.i++;
          const targets = [this.expr()];
          while (this.eatOp(',')) {
            if (this.atStmtEnd()) break;
            targets.push(this.expr());
          }
          return {k: 'del', targets, line};
        }
        case 'global':
        case 'nonlocal': {
          const k = this.t.value as 'global' | 'nonlocal';
          this.i++;
          const names = [this.identifier().value];
          while (this.eatOp(',')) names.push(this.identifier().value);
          return {k, names, line};
        }
        case 'import': {
          this.i++;
          const names: Array<[string, string | null]> = [];
          do {
            const mod = this.dottedName();
            names.push([mod, this.eatKw('as') ? this.identifier().value : null]);
          } while (this.eatOp(','));
          return {k: 'import', names, line};
        }
        case 'from': {
          this.i++;
          let dots = '';
          while (this.isOp('.') || this.isOp('...')) {
            dots += this.t.value;
            this.i++;
          }
          const module = dots + (this.isKw('import') ? '' : this.dottedName());
          this.expectKw('import');
          const names: Array<[string, string | null]> = [];
          const paren = this.eatOp('(');
          if (this.eatOp('*')) names.push(['*', null]);
          else {
            do {
              if (paren && this.isOp(')')) break;
              const nm = this.identifier().value;
              names.push([nm, this.eatKw('as') ? this.identifier().value : null]);
            } while (this.eatOp(','));
          }
          if (paren) this.expectOp(')');
          return {k: 'from', module, names, line};
        }
        case 'yield':
        case 'await':
          throw this.err(`'${this.t.value}' outside function`);
      }
    }
    const first = this.testlistStar();
    if (this.isOp('=')) {
      const targets = [first];
      let value = first;
      while (this.eatOp('=')) {
        value = this.testlistStar();
        targets.push(value);
      }
      targets.pop();
      for (const t of targets) this.checkTarget(t);
      return {k: 'assign', targets, value, line};
    }
    if (this.t.kind === 'op' && AUG_OPS.has(this.t.value)) {
      const op = this.t.value.slice(0, -1);
      this.i++;
      if (first.k !== 'name' && first.k !== 'attr' && first.k !== 'sub')
        throw this.err("'expression' is an illegal expression for augmented assignment");
      const value = this.testlistStar();
      return {k: 'augassign', target: first, op, value, line};
    }
    if (this.isOp(':')) {
      this.i++;
      this.test();
      const value = this.eatOp('=') ? this.testlistStar() : null;
      this.checkTarget(first);
      return {k: 'annassign', target: first, value, line};
    }
    return {k: 'expr', v: first, line};
  }

  private checkTarget(t: Expr): void {
    switch (t.k) {
      case 'name':
      case 'attr':
      case 'sub':
        return;
      case 'tuple':
      case 'list':
        t.elts.forEach((e) => this.checkTarget(e));
        return;
      case 'star':
        this.checkTarget(t.v);
        return;
    }
    const what = t.k === 'call' ? 'function call' : t.k === 'const' ? 'literal' : 'expression';
    throw this.err(`cannot assign to ${what}`);
  }

  private atStmtEnd(): boolean {
    return this.t.kind === 'newline' || this.t.kind === 'eof' || this.isOp(';') || this.t.kind === 'dedent';
  }

  private dottedName(): string {
    let s = this.identifier().value;
    while (this.eatOp('.')) s += '.' + this.identifier().value;
    return s;
  }

  private params(close: string): Param[] {
    const out: Param[] = [];
    let kwonly = false;
    while (!this.isOp(close)) {
      if (this.eatOp('**')) {
        out.push({name: this.identifier().value, kind: 'dstar'});
      } else if (this.eatOp('*')) {
        if (this.isOp(',') || this.isOp(close)) kwonly = true;
        else out.push({name: this.identifier().value, kind: 'star'});
        kwonly = true;
      } else if (this.eatOp('/')) {
        // positional-only marker: ignored
      } else {
        const name = this.identifier().value;
        if (close === ')' && this.eatOp(':')) this.test();
        const def = this.eatOp('=') ? this.test() : undefined;
        out.push({name, kind: kwonly ? 'kwonly' : 'normal', def});
      }
      if (!this.eatOp(',')) break;
    }
    return out;
  }

  // ---- expressions ---------------------------------------------------------------------------

  /** A comma-separated list of tests; a tuple when there is a comma. */
  testlist(): Expr {
    const first = this.test();
    if (!this.isOp(',')) return first;
    const elts = [first];
    while (this.eatOp(',')) {
      if (this.atExprEnd()) break;
      elts.push(this.test());
    }
    return {k: 'tuple', elts};
  }

  private testlistStar(): Expr {
    const one = () => (this.isOp('*') ? (this.i++, {k: 'star', v: this.expr()} as Expr) : this.test());
    const first = one();
    if (!this.isOp(',')) return first;
    const elts = [first];
    while (this.eatOp(',')) {
      if (this.atExprEnd()) break;
      elts.push(one());
    }
    return {k: 'tuple', elts};
  }

  private targetList(): Expr {
    const one = () => (this.isOp('*') ? (this.i++, {k: 'star', v: this.expr()} as Expr) : this.expr());
    const first = one();
    if (!this.isOp(',')) {
      this.checkTarget(first);
      return first;
    }
    const elts = [first];
    while (this.eatOp(',')) {
      if (this.isKw('in') || this.atExprEnd()) break;
      elts.push(one());
    }
    const t: Expr = {k: 'tuple', elts};
    this.checkTarget(t);
    return t;
  }

  private atExprEnd(): boolean {
    const t = this.t;
    if (t.kind === 'newline' || t.kind === 'eof' || t.kind === 'dedent') return true;
    return (
      (t.kind === 'op' && [')', ']', '}', '=', ':', ';'].includes(t.value)) || (t.kind === 'op' && AUG_OPS.has(t.value))
    );
  }

  private namedTest(): Expr {
    if (this.t.kind === 'name' && this.peek().kind === 'op' && this.peek().value === ':=') {
      const target = this.identifier().value;
      this.i++;
      return {k: 'walrus', target, value: this.test()};
    }
    return this.test();
  }

  test(): Expr {
    if (this.isKw('lambda')) {
      this.i++;
      const params = this.params(':');
      this.expectOp(':');
      return {k: 'lambda', params, body: this.test()};
    }
    const e = this.orTest();
    if (this.isKw('if')) {
      this.i++;
      const test = this.orTest();
      if (!this.isKw('else')) throw this.err("expected 'else' after 'if' expression");
      this.i++;
      const orelse = this.test();
      return {k: 'ifexp', test, body: e, orelse};
    }
    return e;
  }

  private testNoCond(): Expr {
    if (this.isKw('lambda')) return this.test();
    return this.orTest();
  }

  private orTest(): Expr {
    const first = this.andTest();
    if (!this.isKw('or')) return first;
    const vals = [first];
    while (this.eatKw('or')) vals.push(this.andTest());
    return {k: 'or', vals};
  }

  private andTest(): Expr {
    const first = this.notTest();
    if (!this.isKw('and')) return first;
    const vals = [first];
    while (this.eatKw('and')) vals.push(this.notTest());
    return {k: 'and', vals};
  }

  private notTest(): Expr {
    if (this.eatKw('not')) return {k: 'not', v: this.notTest()};
    return this.comparison();
  }

  private compOp(): string | null {
    const t = this.t;
    if (t.kind === 'op' && COMPARE_OPS.has(t.value)) {
      this.i++;
      return t.value === '<>' ? '!=' : t.value;
    }
    if (t.kind === 'name') {
      if (t.value === 'in') {
        this.i++;
        return 'in';
      }
      if (t.value === 'not' && this.peek().kind === 'name' && this.peek().value === 'in') {
        this.i += 2;
        return 'not in';
      }
      if (t.value === 'is') {
        this.i++;
        if (this.eatKw('not')) return 'is not';
        return 'is';
      }
    }
    return null;
  }

  private comparison(): Expr {
    const first = this.expr();
    let op = this.compOp();
    if (op === null) return first;
    const ops: string[] = [];
    const vals = [first];
    while (op !== null) {
      ops.push(op);
      vals.push(this.expr());
      op = this.compOp();
    }
    return {k: 'cmp', ops, vals};
  }

  /** Bitwise or and everything tighter. */
  expr(): Expr {
    return this.binLevel(0);
  }

  private static LEVELS: string[][] = [['|'], ['^'], ['&'], ['<<', '>>'], ['+', '-'], ['*', '/', '//', '%', '@']];

  private binLevel(level: number): Expr {
    if (level >= Parser.LEVELS.length) return this.factor();
    const ops = Parser.LEVELS[level];
    let l = this.binLevel(level + 1);
    while (this.t.kind === 'op' && ops.includes(this.t.value)) {
      const op = this.t.value;
      this.i++;
      const r = this.binLevel(level + 1);
      l = {k: 'bin', op, l, r};
    }
    return l;
  }

  private factor(): Expr {
    if (this.t.kind === 'op' && (this.t.value === '-' || this.t.value === '+' || this.t.value === '~')) {
      const op = this.t.value;
      this.i++;
      const v = this.factor();
      // Fold negative numeric literals (so that -1 is a constant, as in Python's AST optimizer).
      if (op === '-' && v.k === 'const' && (typeof v.value === 'bigint' || typeof v.value === 'number')) {
        return {k: 'const', value: -v.value as bigint | number, pos: v.pos, end: v.end};
      }
      return {k: 'unary', op, v};
    }
    return this.power();
  }

  private power(): Expr {
    if (this.isKw('await')) throw this.err();
    const base = this.primary();
    if (this.eatOp('**')) {
      const exp = this.factor();
      return {k: 'bin', op: '**', l: base, r: exp};
    }
    return base;
  }

  private primary(): Expr {
    let e = this.atom();
    for (;;) {
      if (this.isOp('.')) {
        const dotTok = this.t;
        this.i++;
        const nameTok = this.identifierOrKeywordAttr();
        e = {k: 'attr', obj: e, name: nameTok.value, pos: nameTok.start, end: nameTok.end, dollar: dotTok.dollar};
      } else if (this.isOp('(')) {
        this.i++;
        const args = this.callArgs();
        this.expectOp(')');
        e = {k: 'call', fn: e, args};
      } else if (this.isOp('[')) {
        this.i++;
        const index = this.subscriptList();
        this.expectOp(']');
        e = {k: 'sub', obj: e, index};
      } else {
        return e;
      }
    }
  }

  private identifierOrKeywordAttr(): Token {
    if (this.t.kind !== 'name' || KEYWORDS.has(this.t.value)) throw this.err();
    return this.toks[this.i++];
  }

  private subscriptList(): Expr {
    const one = (): Expr => {
      let lo: Expr | null = null;
      if (!this.isOp(':')) {
        lo = this.isOp('*') ? (this.i++, {k: 'star', v: this.expr()}) : this.namedTest();
        if (!this.isOp(':')) return lo;
      }
      this.expectOp(':');
      const hi = this.isOp(':') || this.isOp(']') || this.isOp(',') ? null : this.test();
      let step: Expr | null = null;
      if (this.eatOp(':')) step = this.isOp(']') || this.isOp(',') ? null : this.test();
      return {k: 'slice', lo, hi, step};
    };
    const first = one();
    if (!this.isOp(',')) return first;
    const elts = [first];
    while (this.eatOp(',')) {
      if (this.isOp(']')) break;
      elts.push(one());
    }
    return {k: 'tuple', elts};
  }

  private callArgs(): Arg[] {
    const args: Arg[] = [];
    let sawKw = false;
    while (!this.isOp(')')) {
      if (this.eatOp('*')) {
        args.push({kind: 'star', value: this.test()});
      } else if (this.eatOp('**')) {
        args.push({kind: 'dstar', value: this.test()});
        sawKw = true;
      } else if (this.t.kind === 'name' && this.peek().kind === 'op' && this.peek().value === '=') {
        const nameTok = this.identifier();
        this.i++;
        args.push({kind: 'kw', name: nameTok.value, value: this.test(), pos: nameTok.start, end: nameTok.end});
        sawKw = true;
      } else {
        const v = this.namedTest();
        if (this.isKw('for')) {
          const gens = this.compFor();
          args.push({kind: 'pos', value: {k: 'genexp', elt: v, gens}});
        } else {
          if (sawKw) throw this.err('positional argument follows keyword argument');
          args.push({kind: 'pos', value: v});
        }
      }
      if (!this.eatOp(',')) break;
    }
    return args;
  }

  private compFor(): Gen[] {
    const gens: Gen[] = [];
    while (this.isKw('for') || (this.isKw('async') && false)) {
      this.i++;
      const target = this.targetList();
      this.expectKw('in');
      const iter = this.orTest();
      const ifs: Expr[] = [];
      while (this.isKw('if')) {
        this.i++;
        ifs.push(this.testNoCond());
      }
      gens.push({target, iter, ifs});
    }
    return gens;
  }

  private atom(): Expr {
    const t = this.t;
    switch (t.kind) {
      case 'number':
        this.i++;
        return {k: 'const', value: t.num!, pos: t.start, end: t.end};
      case 'string':
        return this.strings();
      case 'name': {
        if (t.value === 'None' || t.value === 'True' || t.value === 'False') {
          this.i++;
          return {k: 'const', value: t.value === 'None' ? null : t.value === 'True', pos: t.start, end: t.end};
        }
        if (KEYWORDS.has(t.value)) throw this.err();
        this.i++;
        return {k: 'name', id: t.value, pos: t.start, end: t.end, dollar: t.dollar};
      }
      case 'op':
        break;
      default:
        throw this.err(
          t.kind === 'indent'
            ? 'unexpected indent'
            : t.kind === 'eof'
              ? 'unexpected EOF while parsing'
              : 'invalid syntax',
        );
    }
    if (t.value === '...') {
      this.i++;
      return {k: 'const', value: null, pos: t.start, end: t.end};
    }
    if (t.value === '(') {
      this.i++;
      if (this.eatOp(')')) return {k: 'tuple', elts: []};
      const first = this.isOp('*') ? (this.i++, {k: 'star', v: this.expr()} as Expr) : this.namedTest();
      if (this.isKw('for')) {
        const gens = this.compFor();
        this.expectOp(')');
        return {k: 'genexp', elt: first, gens};
      }
      if (this.eatOp(')'))
        return first.k === 'star'
          ? (() => {
              throw this.err('cannot use starred expression here');
            })()
          : first;
      const elts = [first];
      while (this.eatOp(',')) {
        if (this.isOp(')')) break;
        elts.push(this.isOp('*') ? (this.i++, {k: 'star', v: this.expr()} as Expr) : this.namedTest());
      }
      this.expectOp(')');
      return {k: 'tuple', elts};
    }
    if (t.value === '[') {
      this.i++;
      if (this.eatOp(']')) return {k: 'list', elts: []};
      const first = this.isOp('*') ? (this.i++, {k: 'star', v: this.expr()} as Expr) : this.namedTest();
      if (this.isKw('for')) {
        const gens = this.compFor();
        this.expectOp(']');
        return {k: 'listcomp', elt: first, gens};
      }
      const elts = [first];
      while (this.eatOp(',')) {
        if (this.isOp(']')) break;
        elts.push(this.isOp('*') ? (this.i++, {k: 'star', v: this.expr()} as Expr) : this.namedTest());
      }
      this.expectOp(']');
      return {k: 'list', elts};
    }
    if (t.value === '{') {
      this.i++;
      if (this.eatOp('}')) return {k: 'dict', keys: [], values: []};
      if (this.eatOp('**')) {
        const v = this.expr();
        return this.dictRest(null, v);
      }
      const first = this.isOp('*') ? (this.i++, {k: 'star', v: this.expr()} as Expr) : this.test();
      if (this.eatOp(':')) {
        const v = this.test();
        if (this.isKw('for')) {
          const gens = this.compFor();
          this.expectOp('}');
          return {k: 'dictcomp', key: first, value: v, gens};
        }
        return this.dictRest(first, v);
      }
      if (this.isKw('for')) {
        const gens = this.compFor();
        this.expectOp('}');
        return {k: 'setcomp', elt: first, gens};
      }
      const elts = [first];
      while (this.eatOp(',')) {
        if (this.isOp('}')) break;
        elts.push(this.isOp('*') ? (this.i++, {k: 'star', v: this.expr()} as Expr) : this.test());
      }
      this.expectOp('}');
      return {k: 'set', elts};
    }
    throw this.err();
  }

  private dictRest(k0: Expr | null, v0: Expr): Expr {
    const keys: Array<Expr | null> = [k0];
    const values: Expr[] = [v0];
    while (this.eatOp(',')) {
      if (this.isOp('}')) break;
      if (this.eatOp('**')) {
        keys.push(null);
        values.push(this.expr());
        continue;
      }
      keys.push(this.test());
      this.expectOp(':');
      values.push(this.test());
    }
    this.expectOp('}');
    return {k: 'dict', keys, values};
  }

  /** Adjacent string literals concatenate; f-strings among them make the whole an f-string. */
  private strings(): Expr {
    const parts: FPart[] = [];
    let isF = false;
    let bytes: boolean | null = null;
    const pos = this.t.start;
    let end = this.t.end;
    while (this.t.kind === 'string') {
      const t = this.toks[this.i++];
      end = t.end;
      if (bytes !== null && bytes !== Boolean(t.bytes))
        throw syntaxError('cannot mix bytes and nonbytes literals', t.line, t.col);
      bytes = Boolean(t.bytes);
      if (t.fstring) {
        isF = true;
        parts.push(...this.fstringParts(t));
      } else {
        parts.push(t.value);
      }
    }
    if (!isF) return {k: 'const', value: parts.join(''), pos, end};
    return {k: 'fstr', parts, pos, end};
  }

  private fstringParts(t: Token): FPart[] {
    const s = t.value;
    const out: FPart[] = [];
    let lit = '';
    const flush = () => {
      if (lit) out.push(t.raw ? lit : decodeEscapes(lit));
      lit = '';
    };
    let k = 0;
    while (k < s.length) {
      const c = s[k];
      if (c === '{') {
        if (s[k + 1] === '{') {
          lit += '{';
          k += 2;
          continue;
        }
        flush();
        const [part, next] = this.fstringField(s, k + 1, t);
        out.push(part);
        k = next;
        continue;
      }
      if (c === '}') {
        if (s[k + 1] === '}') {
          lit += '}';
          k += 2;
          continue;
        }
        throw syntaxError("f-string: single '}' is not allowed", t.line, t.col);
      }
      if (c === '\\' && !t.raw) {
        lit += s.slice(k, k + 2);
        k += 2;
        continue;
      }
      lit += c;
      k++;
    }
    flush();
    return out;
  }

  /** Parses `expr[!conv][:spec]}` starting at s[k]; returns the part and the index after `}`. */
  private fstringField(s: string, k: number, t: Token): [FPart, number] {
    let depth = 0;
    let j = k;
    let quote: string | null = null;
    for (; j < s.length; j++) {
      const c = s[j];
      if (quote) {
        if (c === quote) quote = null;
        continue;
      }
      if (c === '"' || c === "'") {
        quote = c;
        continue;
      }
      if ('([{'.includes(c)) depth++;
      else if (')]}'.includes(c)) {
        if (depth === 0) break;
        depth--;
      } else if (depth === 0 && (c === ':' || (c === '!' && s[j + 1] !== '='))) break;
    }
    if (j >= s.length) throw syntaxError("f-string: expecting '}'", t.line, t.col);
    let exprText = s.slice(k, j);
    let selfDoc = '';
    if (/=\s*$/.test(exprText) && !/[=!<>]=\s*$/.test(exprText)) {
      selfDoc = exprText;
      exprText = exprText.replace(/=\s*$/, '');
    }
    if (!exprText.trim()) throw syntaxError('f-string: empty expression not allowed', t.line, t.col);
    const expr = parseExpression(exprText.replace(/\n/g, ' '));
    let conv: string | null = null;
    if (s[j] === '!') {
      conv = s[j + 1];
      if (!'rsa'.includes(conv))
        throw syntaxError("f-string: invalid conversion character: expected 's', 'r', or 'a'", t.line, t.col);
      j += 2;
    }
    let spec: Expr | null = null;
    if (s[j] === ':') {
      // The spec itself may contain nested {fields}.
      let d = 0;
      let m = j + 1;
      for (; m < s.length; m++) {
        if (s[m] === '{') d++;
        else if (s[m] === '}') {
          if (d === 0) break;
          d--;
        }
      }
      const specTok = {...t, value: s.slice(j + 1, m)};
      const specParts = this.fstringParts(specTok);
      spec = {k: 'fstr', parts: specParts, pos: t.start, end: t.end};
      j = m;
    }
    if (s[j] !== '}') throw syntaxError("f-string: expecting '}'", t.line, t.col);
    if (selfDoc && conv === null && spec === null) conv = 'r';
    const part: FPart = {expr, conv, spec};
    return [
      selfDoc
        ? ({expr: {k: 'fstr', parts: [selfDoc, part], pos: t.start, end: t.end}, conv: null, spec: null} as FPart)
        : part,
      j + 1,
    ];
  }
}
