/**
 * A recursive-descent parser for Python 3.11 expressions, enough of the language that every
 * expression CPython accepts is accepted here (so that Grist's "Unsupported syntax" is reported
 * for the same node Grist reports it for), and that the common syntax errors carry CPython's
 * wording and position. The tree keeps, for each node, its line and its UTF-8 byte column.
 */
import {PredicateFormulaError, syntaxErrorAt} from './errors.js';
import {decodeStringBody, numberValue} from './literals.js';
import type {Keyword, Pos, PyNode} from './pyast.js';
import {PY_KEYWORDS} from '../../doc/identifiers.js';
import {type Token, TokenizeError, Tokenizer} from './tokenize.js';

/** Python 3's keywords (identifiers.ts holds the one list). */
const KEYWORDS = PY_KEYWORDS;
const COMPARE_OPS: Record<string, string> = {'==': 'Eq', '!=': 'NotEq', '<': 'Lt', '<=': 'LtE', '>': 'Gt', '>=': 'GtE'};
const BIN_OPS: Record<string, string> = {
  '+': 'Add',
  '-': 'Sub',
  '*': 'Mult',
  '/': 'Div',
  '%': 'Mod',
  '//': 'FloorDiv',
  '@': 'MatMult',
  '|': 'BitOr',
  '^': 'BitXor',
  '&': 'BitAnd',
  '<<': 'LShift',
  '>>': 'RShift',
  '**': 'Pow',
};

/** The tokens do not fit the grammar here: this alternative fails (as in a PEG parser). */
class NoParse extends Error {}

export interface ParseResult {
  tree: PyNode;
  /** The tokens of every Name node, including those inside unsupported expressions. */
  names: Token[];
  /** The text of the first comment, after its `#`, or null. */
  comment: string | null;
}

/**
 * Parses `text` as CPython 3.11's `ast.parse(text, mode)` does: `exec` accepts a few simple
 * statements (an expression, assignments, `pass`, `return`), `eval` one expression. Throws a
 * PredicateFormulaError with CPython's message for a syntax error.
 *
 * Like CPython, a failed parse is followed by a second pass that looks for the mistakes CPython
 * words specifically ("Perhaps you forgot a comma?"); without one, the error is "invalid syntax"
 * at the furthest token read, unless the rest of the text holds a tokenizer error.
 */
export function parsePython(text: string, mode: 'exec' | 'eval'): ParseResult {
  return new Parser(text, mode).run();
}

const LEGACY = new Set(['print', 'exec']);
const SOFT_KEYWORDS = new Set(['match', 'case', '_']);
const AUGASSIGN = new Set(['+=', '-=', '*=', '/=', '//=', '%=', '@=', '&=', '|=', '^=', '>>=', '<<=', '**=']);
const LEVELS = [['|'], ['^'], ['&'], ['<<', '>>'], ['+', '-'], ['*', '/', '//', '%', '@']];

class Parser {
  private readonly tokenizer: Tokenizer;
  private readonly toks: Token[] = [];
  private pos = 0;
  /** The second pass, where CPython's "invalid_" rules word specific errors. */
  private second = false;
  /** The tokenizer's error, once met: no token after it can be read. */
  private tokError: TokenizeError | null = null;
  private readonly names: Token[] = [];

  constructor(
    text: string,
    private readonly mode: 'exec' | 'eval',
  ) {
    this.tokenizer = new Tokenizer(text);
  }

  run(): ParseResult {
    let firstError: unknown;
    try {
      const tree = this.pass();
      return {tree, names: this.names, comment: this.tokenizer.firstComment};
    } catch (e) {
      if (!(e instanceof NoParse || e instanceof TokenizeError || e instanceof PredicateFormulaError)) throw e;
      firstError = e;
    }
    // An error met in the first pass stops CPython's parser there (its second pass does nothing).
    if (firstError instanceof TokenizeError) throw firstError.error;
    if (firstError instanceof PredicateFormulaError) return this.throwWithLaterTokenizerError(firstError);
    const lastToken = this.toks[this.toks.length - 1];
    this.second = true;
    this.pos = 0;
    try {
      this.pass();
    } catch (e) {
      if (e instanceof PredicateFormulaError) return this.throwWithLaterTokenizerError(e);
      if (e instanceof TokenizeError) throw e.error;
      if (!(e instanceof NoParse)) throw e;
    }
    if (!lastToken) throw syntaxErrorAt('invalid syntax', 1, 1);
    if (lastToken.kind === 'indent') throw syntaxErrorAt('unexpected indent', lastToken.line, lastToken.col + 1);
    return this.throwWithLaterTokenizerError(
      syntaxErrorAt('invalid syntax', lastToken.line, this.tokenizer.errorColumn(lastToken, lastToken.endLine)),
    );
  }

  /** CPython prefers a tokenizer error in the rest of the text to an error of the parser. */
  private throwWithLaterTokenizerError(error: PredicateFormulaError): never {
    if (this.tokError) throw error;
    const errLine = this.toks[this.toks.length - 1]?.line ?? 1;
    for (;;) {
      let t: Token;
      try {
        t = this.tokenizer.next();
      } catch (e) {
        if (!(e instanceof TokenizeError)) throw e;
        if (e.kind === 'raise' || (e.kind === 'eof-in-brackets' && errLine > e.openLine)) throw e.error;
        throw error;
      }
      if (t.kind === 'end') throw error;
    }
  }

  private peek(k = 0): Token {
    const idx = this.pos + k;
    while (this.toks.length <= idx) {
      const last = this.toks[this.toks.length - 1];
      if (last && last.kind === 'end') return last;
      if (this.tokError) throw this.tokError;
      try {
        this.toks.push(this.tokenizer.next());
      } catch (e) {
        if (e instanceof TokenizeError) this.tokError = e;
        throw e;
      }
    }
    return this.toks[idx];
  }

  /** The last token read (where CPython places errors that name no position). */
  private lastRead(): Token {
    return this.toks[this.toks.length - 1];
  }

  private fail(): never {
    throw new NoParse();
  }

  /** A specific error in the second pass; in the first, this alternative just fails. */
  private invalid(message: string, at: Token): never {
    if (this.second) throw syntaxErrorAt(message, at.line, this.column(at));
    return this.fail();
  }

  /** The column CPython reports for an error of the parser at a token. */
  private column(t: Token): number {
    const last = this.toks[this.toks.length - 1];
    return this.tokenizer.errorColumn(t, last ? last.endLine : t.line);
  }

  /** Runs fn; if it fails, rewinds and returns null. */
  private attempt<T>(fn: () => T): T | null {
    const save = this.pos;
    try {
      return fn();
    } catch (e) {
      if (!(e instanceof NoParse)) throw e;
      this.pos = save;
      return null;
    }
  }

  /** Skips n tokens then runs fn; if it fails, rewinds to before the n tokens. */
  private after<T>(n: number, fn: () => T): T | null {
    const save = this.pos;
    this.pos += n;
    const r = this.attempt(fn);
    if (r === null) this.pos = save;
    return r;
  }

  private isOp(op: string, k = 0): boolean {
    const t = this.peek(k);
    return t.kind === 'op' && t.text === op;
  }

  private isKw(kw: string, k = 0): boolean {
    const t = this.peek(k);
    return t.kind === 'name' && t.text === kw;
  }

  private eatOp(op: string): boolean {
    if (!this.isOp(op)) return false;
    this.pos++;
    return true;
  }

  private eatKw(kw: string): boolean {
    if (!this.isKw(kw)) return false;
    this.pos++;
    return true;
  }

  private expectOp(op: string): Token {
    const t = this.peek();
    if (t.kind !== 'op' || t.text !== op) this.fail();
    this.pos++;
    return t;
  }

  private at(t: Token): Pos {
    return {line: t.line, bcol: t.bcol};
  }

  private pass(): PyNode {
    this.names.length = 0;
    if (this.mode === 'exec') {
      let first: PyNode | null = null;
      while (this.peek().kind !== 'end') {
        for (;;) {
          const st = this.parseStatement();
          first ??= st;
          if (!this.eatOp(';')) break;
          if (this.peek().kind === 'newline' || this.peek().kind === 'end') break;
        }
        if (this.peek().kind === 'newline') this.pos++;
        else if (this.peek().kind !== 'end') this.fail();
      }
      return first ?? {line: 1, bcol: 0, k: 'Constant', value: {t: 'none'}};
    }
    if (this.peek().kind === 'end') {
      throw syntaxErrorAt('invalid syntax', this.tokenizer.lineCountForEmpty(), 0);
    }
    const tree = this.parseExpressions();
    if (this.peek().kind === 'newline') this.pos++;
    if (this.peek().kind !== 'end') this.fail();
    return tree;
  }

  /** The statements a module may hold that matter here (others fail, as they would in eval mode). */
  private parseStatement(): PyNode {
    const t = this.peek();
    const none: PyNode = {...this.at(t), k: 'Constant', value: {t: 'none'}};
    if (t.kind === 'name' && ['pass', 'break', 'continue'].includes(t.text)) {
      this.pos++;
      return none;
    }
    if (t.kind === 'name' && t.text === 'return') {
      this.pos++;
      if (this.startsExpression()) this.parseExpressions();
      return none;
    }
    const e = this.parseExpressions();
    const op = this.peek();
    if (op.kind === 'op' && AUGASSIGN.has(op.text)) {
      this.pos++;
      this.parseExpressions();
    } else {
      while (this.eatOp('=')) this.parseExpressions();
    }
    return e;
  }

  private startsExpression(k = 0): boolean {
    const t = this.peek(k);
    if (t.kind === 'number' || t.kind === 'string') return true;
    if (t.kind === 'name') {
      return !KEYWORDS.has(t.text) || ['not', 'lambda', 'await', 'True', 'False', 'None'].includes(t.text);
    }
    return t.kind === 'op' && ['(', '[', '{', '-', '+', '~', '...'].includes(t.text);
  }

  /** star_expressions: a bare tuple when there are commas. */
  private parseExpressions(): PyNode {
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
    return {...this.at(first), k: 'Tuple', elts};
  }

  private parseStarOrExpression(): PyNode {
    const t = this.peek();
    if (this.eatOp('*')) {
      this.parseBinary(0);
      return {...this.at(t), k: 'Other', what: 'Starred'};
    }
    return this.parseExpression();
  }

  private parseStarOrNamed(): PyNode {
    return this.isOp('*') ? this.parseStarOrExpression() : this.parseNamedExpression();
  }

  /** named_expression: NAME ':=' expression | expression */
  private parseNamedExpression(): PyNode {
    const t = this.peek();
    if (t.kind === 'name' && !KEYWORDS.has(t.text) && this.isOp(':=', 1)) {
      this.pos += 2;
      this.parseExpression();
      return {...this.at(t), k: 'Other', what: 'NamedExpr'};
    }
    return this.parseExpression();
  }

  private parseExpression(): PyNode {
    const t = this.peek();
    if (this.eatKw('lambda')) {
      // Parameters: names, defaults, `*`, `**`, `/`.
      if (!this.isOp(':')) {
        do {
          if (this.isOp(':')) break;
          if (this.eatOp('/')) continue;
          const star = this.eatOp('**') || this.eatOp('*');
          const n = this.peek();
          if (n.kind === 'name' && !KEYWORDS.has(n.text)) {
            this.pos++;
            if (this.eatOp('=')) this.parseExpression();
          } else if (!star) {
            this.fail();
          }
        } while (this.eatOp(','));
      }
      this.expectOp(':');
      this.parseExpression();
      return {...this.at(t), k: 'Other', what: 'Lambda'};
    }
    const start = this.pos;
    const a = this.parseDisjunction();
    if (this.second) {
      this.checkMissingComma(t, start, a);
      this.checkIfWithoutElse(t);
      this.checkLegacyStatement(t, start);
    }
    if (this.isKw('if')) {
      const ok = this.after(1, () => {
        this.parseDisjunction();
        if (!this.eatKw('else')) this.fail();
        this.parseExpression();
        return true;
      });
      if (ok) return {...this.at(t), k: 'Other', what: 'IfExp'};
    }
    return a;
  }

  /**
   * Runs fn with the second pass's checks off (CPython's expression_without_invalid; elsewhere
   * so that trial parses inside checks cannot multiply).
   */
  private withoutChecks<T>(fn: () => T): T {
    const second = this.second;
    this.second = false;
    try {
      return fn();
    } finally {
      this.second = second;
    }
  }

  /** "Perhaps you forgot a comma?": two expressions in a row inside brackets. */
  private checkMissingComma(t: Token, start: number, a: PyNode) {
    const nameThenString = t.kind === 'name' && this.toks[start + 1]?.kind === 'string';
    if (nameThenString || (t.kind === 'name' && SOFT_KEYWORDS.has(t.text))) return;
    const save = this.pos;
    const b = this.attempt(() => this.withoutChecks(() => this.parseExpression()));
    const level = this.toks[this.pos - 1]?.level ?? 0;
    this.pos = save;
    if (b && !(a.k === 'Name' && LEGACY.has(a.id)) && level > 0) {
      this.invalid('invalid syntax. Perhaps you forgot a comma?', t);
    }
  }

  private checkIfWithoutElse(t: Token) {
    if (!this.isKw('if')) return;
    const save = this.pos;
    const b = this.after(1, () => this.withoutChecks(() => this.parseDisjunction()));
    const next = this.peek();
    this.pos = save;
    if (b && !(next.kind === 'name' && next.text === 'else') && !(next.kind === 'op' && next.text === ':')) {
      this.invalid("expected 'else' after 'if' expression", t);
    }
  }

  /** `print x`: "Missing parentheses in call to 'print'". */
  private checkLegacyStatement(t: Token, start: number) {
    if (t.kind !== 'name' || !LEGACY.has(t.text) || this.toks[start + 1]?.text === '(') return;
    const save = this.pos;
    this.pos = start + 1;
    const b = this.attempt(() => this.withoutChecks(() => this.parseExpressions()));
    this.pos = save;
    if (b) this.invalid(`Missing parentheses in call to '${t.text}'. Did you mean ${t.text}(...)?`, t);
  }

  private parseDisjunction(): PyNode {
    const t = this.peek();
    const values = [this.parseConjunction()];
    while (this.isKw('or')) {
      const v = this.after(1, () => this.parseConjunction());
      if (!v) break;
      values.push(v);
    }
    return values.length > 1 ? {...this.at(t), k: 'BoolOp', op: 'Or', values} : values[0];
  }

  private parseConjunction(): PyNode {
    const t = this.peek();
    const values = [this.parseInversion()];
    while (this.isKw('and')) {
      const v = this.after(1, () => this.parseInversion());
      if (!v) break;
      values.push(v);
    }
    return values.length > 1 ? {...this.at(t), k: 'BoolOp', op: 'And', values} : values[0];
  }

  private parseInversion(): PyNode {
    const t = this.peek();
    if (this.eatKw('not')) return {...this.at(t), k: 'UnaryOp', op: 'Not', operand: this.parseInversion()};
    return this.parseComparison();
  }

  /** The comparison operator at the current token and its length in tokens, or null. */
  private compareOp(): [string, number] | null {
    const t = this.peek();
    if (t.kind === 'op' && COMPARE_OPS[t.text]) return [COMPARE_OPS[t.text], 1];
    if (this.isKw('in')) return ['In', 1];
    if (this.isKw('not') && this.isKw('in', 1)) return ['NotIn', 2];
    if (this.isKw('is')) return this.isKw('not', 1) ? ['IsNot', 2] : ['Is', 1];
    return null;
  }

  private parseComparison(): PyNode {
    const t = this.peek();
    const left = this.parseBinary(0);
    const ops: string[] = [];
    const comparators: PyNode[] = [];
    for (let op = this.compareOp(); op; op = this.compareOp()) {
      const right = this.after(op[1], () => this.parseBinary(0));
      if (!right) break;
      ops.push(op[0]);
      comparators.push(right);
    }
    return ops.length ? {...this.at(t), k: 'Compare', left, ops, comparators} : left;
  }

  /** The binary-operator levels from `|` down to `*`, all left-associative. */
  private parseBinary(level: number): PyNode {
    if (level === LEVELS.length) return this.parseFactor();
    const t = this.peek();
    let left = this.parseBinary(level + 1);
    for (;;) {
      const op = this.peek();
      if (op.kind !== 'op' || !LEVELS[level].includes(op.text)) return left;
      const right = this.after(1, () => this.parseBinary(level + 1));
      if (!right) return left;
      left = {...this.at(t), k: 'BinOp', op: BIN_OPS[op.text], left, right};
    }
  }

  private parseFactor(): PyNode {
    const t = this.peek();
    if (t.kind === 'op' && (t.text === '-' || t.text === '+' || t.text === '~')) {
      this.pos++;
      const operand = this.parseFactor();
      const op = t.text === '-' ? 'USub' : t.text === '+' ? 'UAdd' : 'Invert';
      return {...this.at(t), k: 'UnaryOp', op, operand};
    }
    let base: PyNode;
    if (this.eatKw('await')) {
      this.parsePrimary();
      base = {...this.at(t), k: 'Other', what: 'Await'};
    } else {
      base = this.parsePrimary();
    }
    if (this.isOp('**')) {
      const right = this.after(1, () => this.parseFactor());
      if (right) return {...this.at(t), k: 'BinOp', op: 'Pow', left: base, right};
    }
    return base;
  }

  private parsePrimary(): PyNode {
    const t = this.peek();
    let node = this.parseAtom();
    for (;;) {
      let next: PyNode | null = null;
      if (this.isOp('.')) {
        const name = this.peek(1);
        if (name.kind === 'name' && !KEYWORDS.has(name.text)) {
          this.pos += 2;
          next = {...this.at(t), k: 'Attribute', value: node, attr: name.text};
        }
      } else if (this.isOp('(')) {
        const func = node;
        next = this.attempt(() => this.parseCall(t, func));
      } else if (this.isOp('[')) {
        next = this.attempt(() => {
          this.pos++;
          this.parseSlices();
          this.expectOp(']');
          return {...this.at(t), k: 'Other', what: 'Subscript'} as PyNode;
        });
      }
      if (!next) return node;
      node = next;
    }
  }

  private parseSlices() {
    do {
      if (this.isOp(']')) break;
      if (this.isOp('*')) {
        this.parseStarOrExpression();
        continue;
      }
      if (!this.isOp(':')) this.parseNamedExpression();
      if (this.eatOp(':')) {
        if (!this.isOp(':') && !this.isOp(',') && !this.isOp(']')) this.parseExpression();
        if (this.eatOp(':') && !this.isOp(',') && !this.isOp(']')) this.parseExpression();
      }
    } while (this.eatOp(','));
  }

  private parseCall(start: Token, func: PyNode): PyNode {
    const paren = this.expectOp('(');
    const args: PyNode[] = [];
    const keywords: Keyword[] = [];
    let sawKeyword = false;
    let sawDoubleStar = false;
    let count = 0;
    while (!this.isOp(')')) {
      const t = this.peek();
      count++;
      if (this.eatOp('**')) {
        keywords.push({arg: null, value: this.parseExpression()});
        sawDoubleStar = true;
      } else if (this.isOp('*')) {
        if (sawDoubleStar) this.invalid('iterable argument unpacking follows keyword argument unpacking', t);
        args.push(this.parseStarOrExpression());
      } else if (t.kind === 'name' && this.isOp('=', 1) && !KEYWORDS.has(t.text)) {
        this.pos += 2;
        keywords.push({arg: t.text, value: this.parseExpression()});
        sawKeyword = true;
      } else if (t.kind === 'name' && this.isOp('=', 1) && ['True', 'False', 'None'].includes(t.text)) {
        this.invalid(`cannot assign to ${t.text}`, t);
      } else {
        const value = this.parseNamedExpression();
        if (this.isOp('=')) this.invalid('expression cannot contain assignment, perhaps you meant "=="?', t);
        if (this.isKw('for') || this.isKw('async')) {
          this.parseComprehension();
          if (count > 1 || !this.isOp(')')) this.invalid('Generator expression must be parenthesized', t);
          args.push({...this.at(paren), k: 'Other', what: 'GeneratorExp'});
          break;
        }
        if (sawKeyword || sawDoubleStar) {
          this.peek();
          const msg = sawDoubleStar
            ? 'positional argument follows keyword argument unpacking'
            : 'positional argument follows keyword argument';
          this.invalid(msg, this.lastRead());
        }
        args.push(value);
      }
      if (!this.eatOp(',')) break;
    }
    this.expectOp(')');
    return {...this.at(start), k: 'Call', func, args, keywords};
  }

  /** for_if_clauses: ('async'? 'for' targets 'in' disjunction ('if' disjunction)*)+ */
  private parseComprehension() {
    while (this.isKw('for') || (this.isKw('async') && this.isKw('for', 1))) {
      this.eatKw('async');
      this.eatKw('for');
      do {
        if (this.isKw('in')) break;
        this.eatOp('*');
        this.parseBinary(0);
      } while (this.eatOp(','));
      if (!this.eatKw('in')) this.fail();
      this.parseDisjunction();
      while (this.isKw('if')) {
        if (!this.after(1, () => this.parseDisjunction())) break;
      }
    }
  }

  private parseAtom(): PyNode {
    const t = this.peek();
    const p = this.at(t);
    switch (t.kind) {
      case 'name': {
        if (t.text === 'True' || t.text === 'False') {
          this.pos++;
          return {...p, k: 'Constant', value: {t: 'bool', v: t.text === 'True'}};
        }
        if (t.text === 'None') {
          this.pos++;
          return {...p, k: 'Constant', value: {t: 'none'}};
        }
        if (KEYWORDS.has(t.text)) return this.fail();
        this.pos++;
        this.names.push(t);
        return {...p, k: 'Name', id: t.text};
      }
      case 'number':
        this.pos++;
        return {...p, k: 'Constant', value: numberValue(t.text)};
      case 'string':
        return this.parseStrings();
      case 'op':
        break;
      default:
        return this.fail();
    }
    if (this.eatOp('...')) return {...p, k: 'Constant', value: {t: 'ellipsis'}};
    if (this.eatOp('(')) {
      if (this.eatOp(')')) return {...p, k: 'Tuple', elts: []};
      if (this.isKw('yield')) return this.fail();
      const first = this.parseStarOrNamed();
      if (this.isKw('for') || this.isKw('async')) {
        this.parseComprehension();
        this.expectOp(')');
        return {...p, k: 'Other', what: 'GeneratorExp'};
      }
      if (this.eatOp(')')) {
        if (first.k === 'Other' && first.what === 'Starred') this.fail();
        return first;
      }
      const elts = [first];
      this.expectOp(',');
      while (!this.isOp(')')) {
        elts.push(this.parseStarOrNamed());
        if (!this.eatOp(',')) break;
      }
      this.expectOp(')');
      return {...p, k: 'Tuple', elts};
    }
    if (this.eatOp('[')) {
      const elts: PyNode[] = [];
      if (this.eatOp(']')) return {...p, k: 'List', elts};
      elts.push(this.parseStarOrNamed());
      if (this.isKw('for') || this.isKw('async')) {
        this.parseComprehension();
        this.expectOp(']');
        return {...p, k: 'Other', what: 'ListComp'};
      }
      while (this.eatOp(',')) {
        if (this.isOp(']')) break;
        elts.push(this.parseStarOrNamed());
      }
      this.expectOp(']');
      return {...p, k: 'List', elts};
    }
    if (this.eatOp('{')) {
      this.parseBraces();
      return {...p, k: 'Other', what: 'Dict'};
    }
    return this.fail();
  }

  /** Dict and set displays and comprehensions (all unsupported; parsed only to find errors). */
  private parseBraces() {
    if (this.eatOp('}')) return;
    let first = true;
    do {
      if (this.isOp('}')) break;
      if (this.eatOp('**')) {
        this.parseBinary(0);
      } else {
        this.parseStarOrNamed();
        if (this.eatOp(':')) this.parseExpression();
      }
      if (first && (this.isKw('for') || this.isKw('async'))) {
        this.parseComprehension();
        break;
      }
      first = false;
    } while (this.eatOp(','));
    this.expectOp('}');
  }

  private parseStrings(): PyNode {
    const first = this.peek();
    const parts: Token[] = [];
    while (this.peek().kind === 'string') {
      parts.push(this.peek());
      this.pos++;
    }
    const prefixes = parts.map((s) => s.text.slice(0, s.text.search(/["']/)).toLowerCase());
    const bytes = prefixes.map((x) => x.includes('b'));
    const last = this.lastRead();
    const where = {line: last.line, col: this.column(last) - 1};
    if (bytes.some((b) => b) && bytes.some((b) => !b)) {
      throw syntaxErrorAt('cannot mix bytes and nonbytes literals', where.line, where.col + 1);
    }
    let value = '';
    for (let k = 0; k < parts.length; k++) value += decodeStringBody(parts[k], prefixes[k], where);
    const p = this.at(first);
    if (prefixes.some((x) => x.includes('f'))) return {...p, k: 'Other', what: 'JoinedStr'};
    if (bytes[0]) return {...p, k: 'Constant', value: {t: 'bytes'}};
    return {...p, k: 'Constant', value: {t: 'str', v: value}};
  }
}
