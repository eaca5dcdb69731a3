/**
 * Python 3.11's expressions, following CPython's grammar (PEG: an alternative that does not fit
 * rewinds), so that what CPython accepts is accepted and its common errors carry its wording.
 * One thing: the one class `ExprParser`, CPython's expression grammar rule by rule (the statements
 * extend it in statements.ts); its rules call each other, so splitting it would cut the grammar.
 */
import {NoParse, ParserBase} from './base.js';
import type {Arg, At, BinOp, CmpOp, Expr, FPart, Gen, Param} from './ast.js';
import {syntaxError} from './errors.js';
import {bodyOffset, fstringParts} from './fstrings.js';
import {decodeEscapes, numberValue, stringBody, stringPrefix} from './strings.js';
import {KEYWORDS, type Token, isIdentifier} from './tokens.js';

const COMPARE_OPS: Record<string, CmpOp> = {'==': '==', '!=': '!=', '<': '<', '<=': '<=', '>': '>', '>=': '>='};
const LEVELS: BinOp[][] = [['|'], ['^'], ['&'], ['<<', '>>'], ['+', '-'], ['*', '/', '//', '%', '@']];
const PRECEDENCE = new Map<string, number>(
  LEVELS.flatMap((ops, prec) => ops.map((op) => [op, prec] as [string, number])),
);
const LEGACY = new Set(['print', 'exec']);
const SOFT_KEYWORDS = new Set(['match', 'case', '_']);

export class ExprParser extends ParserBase {
  /** An identifier, or this alternative fails. */
  protected identifier(): Token {
    const t = this.peek();
    if (!isIdentifier(t)) this.fail();
    this.pos++;
    return t;
  }

  /** star_expressions: a bare tuple when there are commas. */
  parseExpressions(): Expr {
    const first = this.peek();
    const e = this.parseStarOrExpression();
    if (!this.isOp(',')) return e;
    const elts = [e];
    while (this.isOp(',')) {
      const next = this.after(1, () => this.parseStarOrExpression());
      if (!next) {
        this.pos++;
        break;
      }
      elts.push(next);
    }
    return {line: first.line, bcol: first.bcol, k: 'tuple', elts};
  }

  protected parseStarOrExpression(): Expr {
    const t = this.peek();
    if (this.eatOp('*')) return {line: t.line, bcol: t.bcol, k: 'star', v: this.parseBinary(0)};
    return this.parseExpression();
  }

  protected parseStarOrNamed(): Expr {
    return this.isOp('*') ? this.parseStarOrExpression() : this.parseNamedExpression();
  }

  /** named_expression: NAME ':=' expression | expression */
  protected parseNamedExpression(): Expr {
    const t = this.peek();
    if (isIdentifier(t) && this.isOp(':=', 1)) {
      this.pos += 2;
      return {line: t.line, bcol: t.bcol, k: 'walrus', target: t.value, value: this.parseExpression()};
    }
    return this.parseExpression();
  }

  parseExpression(): Expr {
    const t = this.peek();
    if (this.eatKw('lambda')) {
      const params = this.isOp(':') ? [] : this.parseParams(':');
      this.expectOp(':');
      return {line: t.line, bcol: t.bcol, k: 'lambda', params, body: this.parseExpression()};
    }
    const start = this.pos;
    const a = this.parseDisjunction();
    if (this.second) {
      this.checkMissingComma(t, start, a);
      this.checkIfWithoutElse(t);
      this.checkLegacyStatement(t, start);
    }
    if (this.isKw('if')) {
      const r = this.after(1, () => {
        const test = this.parseDisjunction();
        if (!this.eatKw('else')) this.fail();
        return {test, orelse: this.parseExpression()};
      });
      if (r) return {line: t.line, bcol: t.bcol, k: 'ifexp', test: r.test, body: a, orelse: r.orelse};
    }
    return a;
  }

  /** Parameters of a lambda (up to `:`) or a def (up to `)`): names, defaults, `*`, `**`, `/`. */
  protected parseParams(close: string): Param[] {
    const out: Param[] = [];
    let kwonly = false;
    while (!this.isOp(close)) {
      if (this.eatOp('**')) {
        out.push({name: this.identifier().value, kind: 'dstar'});
      } else if (this.eatOp('*')) {
        if (!this.isOp(',') && !this.isOp(close)) out.push({name: this.identifier().value, kind: 'star'});
        kwonly = true;
      } else if (this.eatOp('/')) {
        // Positional-only marker: nothing to record.
      } else {
        const name = this.identifier().value;
        if (close === ')' && this.eatOp(':')) this.parseExpression();
        const def = this.eatOp('=') ? this.parseExpression() : undefined;
        out.push({name, kind: kwonly ? 'kwonly' : 'normal', def});
      }
      if (!this.eatOp(',')) break;
    }
    return out;
  }

  /** "Perhaps you forgot a comma?": two expressions in a row inside brackets. */
  private checkMissingComma(t: Token, start: number, a: Expr) {
    const nameThenString = t.kind === 'name' && this.toks[start + 1]?.kind === 'string';
    if (nameThenString || (t.kind === 'name' && SOFT_KEYWORDS.has(t.value))) return;
    const save = this.pos;
    const b = this.attempt(() => this.withoutChecks(() => this.parseExpression()));
    const level = this.toks[this.pos - 1]?.level ?? 0;
    this.pos = save;
    if (b && !(a.k === 'name' && LEGACY.has(a.id)) && level > 0) {
      this.invalid('invalid syntax. Perhaps you forgot a comma?', t);
    }
  }

  private checkIfWithoutElse(t: Token) {
    if (!this.isKw('if')) return;
    const save = this.pos;
    const b = this.after(1, () => this.withoutChecks(() => this.parseDisjunction()));
    const next = this.peek();
    this.pos = save;
    if (b && !(next.kind === 'name' && next.value === 'else') && !(next.kind === 'op' && next.value === ':')) {
      this.invalid("expected 'else' after 'if' expression", t);
    }
  }

  /** `print x`: "Missing parentheses in call to 'print'". */
  private checkLegacyStatement(t: Token, start: number) {
    if (t.kind !== 'name' || !LEGACY.has(t.value) || this.toks[start + 1]?.value === '(') return;
    const save = this.pos;
    this.pos = start + 1;
    const b = this.attempt(() => this.withoutChecks(() => this.parseExpressions()));
    this.pos = save;
    if (b) this.invalid(`Missing parentheses in call to '${t.value}'. Did you mean ${t.value}(...)?`, t);
  }

  protected parseDisjunction(): Expr {
    const t = this.peek();
    const first = this.parseConjunction();
    if (!this.isKw('or')) return first;
    const vals = [first];
    while (this.isKw('or')) {
      const v = this.after(1, () => this.parseConjunction());
      if (!v) break;
      vals.push(v);
    }
    return vals.length > 1 ? {line: t.line, bcol: t.bcol, k: 'or', vals} : first;
  }

  private parseConjunction(): Expr {
    const t = this.peek();
    const first = this.parseInversion();
    if (!this.isKw('and')) return first;
    const vals = [first];
    while (this.isKw('and')) {
      const v = this.after(1, () => this.parseInversion());
      if (!v) break;
      vals.push(v);
    }
    return vals.length > 1 ? {line: t.line, bcol: t.bcol, k: 'and', vals} : first;
  }

  private parseInversion(): Expr {
    const t = this.peek();
    if (this.eatKw('not')) return {line: t.line, bcol: t.bcol, k: 'not', v: this.parseInversion()};
    return this.parseComparison();
  }

  /** The comparison operator at the current token and its length in tokens, or null. */
  private compareOp(): [CmpOp, number] | null {
    const t = this.peek();
    if (t.kind === 'op') return COMPARE_OPS[t.value] ? [COMPARE_OPS[t.value], 1] : null;
    if (t.kind !== 'name' || t.dollar) return null;
    if (t.value === 'in') return ['in', 1];
    if (t.value === 'not' && this.isKw('in', 1)) return ['not in', 2];
    if (t.value === 'is') return this.isKw('not', 1) ? ['is not', 2] : ['is', 1];
    return null;
  }

  private parseComparison(): Expr {
    const t = this.peek();
    const left = this.parseBinary(0);
    let op = this.compareOp();
    if (!op) return left;
    const ops: CmpOp[] = [];
    const vals = [left];
    for (; op; op = this.compareOp()) {
      const right = this.after(op[1], () => this.parseBinary(0));
      if (!right) break;
      ops.push(op[0]);
      vals.push(right);
    }
    return ops.length ? {line: t.line, bcol: t.bcol, k: 'cmp', ops, vals} : left;
  }

  /**
   * The binary operators from `|` (precedence 0) to `*` (5), all left-associative, by precedence
   * climbing: `min` is the lowest precedence this call may take.
   */
  protected parseBinary(min: number): Expr {
    const t = this.peek();
    let left = this.parseFactor();
    for (;;) {
      const op = this.peek();
      const prec = op.kind === 'op' ? PRECEDENCE.get(op.value) : undefined;
      if (prec === undefined || prec < min) return left;
      // Inline `after` (no closure): this is the hottest loop of the parser.
      const save = this.pos++;
      let right: Expr;
      try {
        right = this.parseBinary(prec + 1);
      } catch (e) {
        if (!(e instanceof NoParse)) throw e;
        this.pos = save;
        return left;
      }
      left = {line: t.line, bcol: t.bcol, k: 'bin', op: op.value as BinOp, l: left, r: right};
    }
  }

  private parseFactor(): Expr {
    const t = this.peek();
    if (t.kind === 'op' && (t.value === '-' || t.value === '+' || t.value === '~')) {
      this.pos++;
      const v = this.parseFactor();
      // `-1` is a constant, as after CPython's optimizer (the rule writer still sees the minus).
      if (
        t.value === '-' &&
        v.k === 'const' &&
        !v.lit &&
        (typeof v.value === 'bigint' || typeof v.value === 'number')
      ) {
        const value = -v.value as bigint | number;
        return {line: t.line, bcol: t.bcol, k: 'const', value, pos: v.pos, end: v.end, negated: (v.negated ?? 0) + 1};
      }
      return {line: t.line, bcol: t.bcol, k: 'unary', op: t.value, v};
    }
    let base: Expr;
    if (this.eatKw('await')) base = {line: t.line, bcol: t.bcol, k: 'await', v: this.parsePrimary()};
    else base = this.parsePrimary();
    if (this.isOp('**')) {
      const right = this.after(1, () => this.parseFactor());
      if (right) return {line: t.line, bcol: t.bcol, k: 'bin', op: '**', l: base, r: right};
    }
    return base;
  }

  protected parsePrimary(): Expr {
    const t = this.peek();
    let node = this.parseAtom();
    for (;;) {
      let next: Expr | null = null;
      if (this.isOp('.')) {
        const name = this.peek(1);
        if (isIdentifier(name)) {
          this.pos += 2;
          next = {line: t.line, bcol: t.bcol, k: 'attr', obj: node, name: name.value, pos: name.start, end: name.end};
        }
      } else if (this.isOp('(')) {
        const fn = node;
        next = this.attempt(() => this.parseCall(t, fn));
      } else if (this.isOp('[')) {
        const obj = node;
        next = this.attempt(() => {
          this.pos++;
          const index = this.parseSlices();
          this.expectOp(']');
          return {line: t.line, bcol: t.bcol, k: 'sub', obj, index} as Expr;
        });
      }
      if (!next) return node;
      node = next;
    }
  }

  private parseSlices(): Expr {
    const first = this.peek();
    const one = (): Expr => {
      if (this.isOp('*')) return this.parseStarOrExpression();
      const t = this.peek();
      const lo = this.isOp(':') ? null : this.parseNamedExpression();
      if (!this.isOp(':')) return lo as Expr;
      this.pos++;
      let hi: Expr | null = null;
      let step: Expr | null = null;
      if (!this.isOp(':') && !this.isOp(',') && !this.isOp(']')) hi = this.parseExpression();
      if (this.eatOp(':') && !this.isOp(',') && !this.isOp(']')) step = this.parseExpression();
      return {line: t.line, bcol: t.bcol, k: 'slice', lo, hi, step};
    };
    const e = one();
    if (!this.isOp(',')) return e;
    const elts = [e];
    while (this.eatOp(',')) {
      if (this.isOp(']')) break;
      elts.push(one());
    }
    return {line: first.line, bcol: first.bcol, k: 'tuple', elts};
  }

  private parseCall(start: Token, fn: Expr): Expr {
    const paren = this.expectOp('(');
    const args: Arg[] = [];
    let sawKeyword = false;
    let sawDoubleStar = false;
    let count = 0;
    while (!this.isOp(')')) {
      const t = this.peek();
      count++;
      if (this.eatOp('**')) {
        args.push({kind: 'dstar', value: this.parseExpression()});
        sawDoubleStar = true;
      } else if (this.isOp('*')) {
        if (sawDoubleStar) this.invalid('iterable argument unpacking follows keyword argument unpacking', t);
        this.pos++;
        args.push({kind: 'star', value: this.parseExpression(), at: this.at(t)});
      } else if (isIdentifier(t) && this.isOp('=', 1)) {
        this.pos += 2;
        args.push({kind: 'kw', name: t.value, value: this.parseExpression(), pos: t.start, end: t.end});
        sawKeyword = true;
      } else if (t.kind === 'name' && this.isOp('=', 1) && ['True', 'False', 'None'].includes(t.value)) {
        this.invalid(`cannot assign to ${t.value}`, t);
      } else {
        const value = this.parseNamedExpression();
        if (this.isOp('=')) this.invalid('expression cannot contain assignment, perhaps you meant "=="?', t);
        if (this.isKw('for') || this.isKw('async')) {
          const gens = this.parseComprehension();
          if (count > 1 || this.isOp(',')) this.invalid('Generator expression must be parenthesized', t);
          // CPython places a generator that is the only argument at the call's `(`.
          args.push({kind: 'pos', value: {line: paren.line, bcol: paren.bcol, k: 'genexp', elt: value, gens}});
          break;
        }
        if (sawKeyword || sawDoubleStar) {
          this.peek();
          const msg = sawDoubleStar
            ? 'positional argument follows keyword argument unpacking'
            : 'positional argument follows keyword argument';
          this.invalid(msg, this.lastRead());
        }
        args.push({kind: 'pos', value});
      }
      if (!this.eatOp(',')) break;
    }
    this.expectOp(')');
    return {line: start.line, bcol: start.bcol, k: 'call', fn, args};
  }

  /** for_if_clauses: ('async'? 'for' targets 'in' disjunction ('if' disjunction)*)+ */
  protected parseComprehension(elt?: Expr): Gen[] {
    if (elt?.k === 'star') {
      if (this.second) throw syntaxError('iterable unpacking cannot be used in comprehension', elt.line, elt.bcol + 1);
      this.fail();
    }
    const gens: Gen[] = [];
    while (this.isKw('for') || (this.isKw('async') && this.isKw('for', 1))) {
      this.eatKw('async');
      this.eatKw('for');
      const target = this.parseTargets(() => this.isKw('in'));
      if (!this.eatKw('in')) this.fail();
      const iter = this.parseDisjunction();
      const ifs: Expr[] = [];
      while (this.isKw('if')) {
        const c = this.after(1, () => this.parseDisjunction());
        if (!c) break;
        ifs.push(c);
      }
      gens.push({target, iter, ifs});
    }
    return gens;
  }

  /** star_targets of a `for`: one target, or a tuple of them (until `stop`). */
  protected parseTargets(stop: () => boolean): Expr {
    const first = this.peek();
    const one = (): Expr => {
      const t = this.peek();
      if (this.eatOp('*')) return {line: t.line, bcol: t.bcol, k: 'star', v: this.parseBinary(0)};
      return this.parseBinary(0);
    };
    const e = one();
    if (!this.isOp(',')) return e;
    const elts = [e];
    while (this.eatOp(',')) {
      if (stop()) break;
      elts.push(one());
    }
    return {line: first.line, bcol: first.bcol, k: 'tuple', elts};
  }

  private parseAtom(): Expr {
    const t = this.peek();
    const p = this.at(t);
    switch (t.kind) {
      case 'name': {
        if (t.dollar) {
          // Grist's `$name`: `rec.name`, the `rec` at the `$`.
          this.pos++;
          const rec: Expr = {
            line: p.line,
            bcol: p.bcol,
            k: 'name',
            id: 'rec',
            pos: t.start,
            end: t.start + 1,
            dollar: true,
          };
          return {
            line: p.line,
            bcol: p.bcol,
            k: 'attr',
            obj: rec,
            name: t.value,
            pos: t.start + 1,
            end: t.end,
            dollar: true,
          };
        }
        if (t.value === 'True' || t.value === 'False' || t.value === 'None') {
          this.pos++;
          const value = t.value === 'None' ? null : t.value === 'True';
          return {line: p.line, bcol: p.bcol, k: 'const', value, pos: t.start, end: t.end};
        }
        if (KEYWORDS.has(t.value)) return this.fail();
        this.pos++;
        this.names.push(t);
        return {line: p.line, bcol: p.bcol, k: 'name', id: t.value, pos: t.start, end: t.end};
      }
      case 'number': {
        this.pos++;
        const n = numberValue(t.value);
        const e: Expr = {line: p.line, bcol: p.bcol, k: 'const', value: n.value, pos: t.start, end: t.end};
        if (n.complex) e.lit = 'complex';
        return e;
      }
      case 'string':
        return this.parseStrings();
      case 'op':
        break;
      default:
        return this.fail();
    }
    if (this.eatOp('...'))
      return {line: p.line, bcol: p.bcol, k: 'const', value: null, pos: t.start, end: t.end, lit: 'ellipsis'};
    if (this.eatOp('(')) {
      if (this.eatOp(')')) return {line: p.line, bcol: p.bcol, k: 'tuple', elts: []};
      if (this.isKw('yield')) return this.fail();
      const first = this.parseStarOrNamed();
      if (this.isKw('for') || this.isKw('async')) {
        const gens = this.parseComprehension(first);
        this.expectOp(')');
        return {line: p.line, bcol: p.bcol, k: 'genexp', elt: first, gens};
      }
      if (this.eatOp(')')) {
        if (first.k === 'star') this.fail();
        return first;
      }
      const elts = [first];
      this.expectOp(',');
      while (!this.isOp(')')) {
        elts.push(this.parseStarOrNamed());
        if (!this.eatOp(',')) break;
      }
      this.expectOp(')');
      return {line: p.line, bcol: p.bcol, k: 'tuple', elts};
    }
    if (this.eatOp('[')) {
      const elts: Expr[] = [];
      if (this.eatOp(']')) return {line: p.line, bcol: p.bcol, k: 'list', elts};
      elts.push(this.parseStarOrNamed());
      if (this.isKw('for') || this.isKw('async')) {
        const gens = this.parseComprehension(elts[0]);
        this.expectOp(']');
        return {line: p.line, bcol: p.bcol, k: 'listcomp', elt: elts[0], gens};
      }
      while (this.eatOp(',')) {
        if (this.isOp(']')) break;
        elts.push(this.parseStarOrNamed());
      }
      this.expectOp(']');
      return {line: p.line, bcol: p.bcol, k: 'list', elts};
    }
    if (this.eatOp('{')) return this.parseBraces(p);
    return this.fail();
  }

  /** Dict and set displays and comprehensions, after the `{`. */
  private parseBraces(p: At): Expr {
    if (this.eatOp('}')) return {line: p.line, bcol: p.bcol, k: 'dict', keys: [], values: []};
    const keys: Array<Expr | null> = [];
    const values: Expr[] = [];
    const elts: Expr[] = [];
    let first = true;
    do {
      if (this.isOp('}')) break;
      if (this.eatOp('**')) {
        if (elts.length) this.fail();
        keys.push(null);
        values.push(this.parseBinary(0));
      } else {
        const e = this.parseStarOrNamed();
        if (this.eatOp(':')) {
          if (elts.length) this.fail();
          keys.push(e);
          values.push(this.parseExpression());
        } else {
          if (keys.length && this.second) {
            // CPython places this error at the end of the key.
            const last = this.toks[this.pos - 1];
            throw syntaxError(
              "':' expected after dictionary key",
              last.line,
              this.column(last) + last.value.length - 1,
            );
          }
          if (keys.length) this.fail();
          elts.push(e);
        }
      }
      if (first && (this.isKw('for') || this.isKw('async'))) {
        const gens = this.parseComprehension(elts[0]);
        this.expectOp('}');
        if (elts.length) return {line: p.line, bcol: p.bcol, k: 'setcomp', elt: elts[0], gens};
        const key = keys[0];
        if (!key) this.fail();
        return {line: p.line, bcol: p.bcol, k: 'dictcomp', key, value: values[0], gens};
      }
      first = false;
    } while (this.eatOp(','));
    this.expectOp('}');
    return elts.length
      ? {line: p.line, bcol: p.bcol, k: 'set', elts}
      : {line: p.line, bcol: p.bcol, k: 'dict', keys, values};
  }

  /** Adjacent string literals concatenate; f-strings among them make the whole an f-string. */
  private parseStrings(): Expr {
    const first = this.peek();
    const tokens: Token[] = [];
    while (this.peek().kind === 'string') {
      tokens.push(this.peek());
      this.pos++;
    }
    const prefixes = tokens.map(stringPrefix);
    const bytes = prefixes.map((x) => x.includes('b'));
    const last = this.lastRead();
    const where = () => ({line: last.line, col: this.column(last) - 1});
    if (bytes.some((b) => b) && bytes.some((b) => !b)) {
      throw syntaxError('cannot mix bytes and nonbytes literals', last.line, where().col + 1);
    }
    const keepNamed = Boolean(this.options.keepNamedEscapes);
    const parts: FPart[] = [];
    let fstring = false;
    for (let k = 0; k < tokens.length; k++) {
      const body = stringBody(tokens[k], prefixes[k]);
      const raw = prefixes[k].includes('r');
      const escapes = {bytes: bytes[k], where, line: tokens[k].line, keepNamed};
      if (prefixes[k].includes('f')) {
        fstring = true;
        const tok = tokens[k];
        const parseField = (text: string, at: number | null) =>
          new ExprParser(text, at === null ? this.options : {...this.options, base: at}).parseWhole();
        parts.push(
          ...fstringParts(body, {tok, raw, escapes, at: this.at(tok), base: bodyOffset(tok, body), parseField}),
        );
      } else {
        parts.push(raw ? body : decodeEscapes(body, escapes));
      }
    }
    const line = first.line;
    const bcol = first.bcol;
    const pos = first.start;
    const end = tokens[tokens.length - 1].end;
    if (fstring) return {line, bcol, k: 'fstr', parts, pos, end};
    const value = parts.join('');
    return bytes[0]
      ? {line, bcol, k: 'const', value, lit: 'bytes', pos, end}
      : {line, bcol, k: 'const', value, pos, end};
  }

  /** The whole text as one expression (`eval` mode), as CPython reports its errors. */
  parseWhole(): Expr {
    this.tokenizer.indentAtEnd = true;
    return this.run(() => {
      this.names.length = 0;
      if (this.peek().kind === 'eof') throw syntaxError('invalid syntax', this.tokenizer.lineCountForEmpty(), 0);
      const tree = this.parseExpressions();
      while (this.peek().kind === 'newline') this.pos++;
      if (this.peek().kind !== 'eof') this.fail();
      return tree;
    });
  }
}
