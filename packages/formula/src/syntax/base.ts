/**
 * The parser's machinery: tokens read on demand, trial parses that rewind, and CPython's way of
 * reporting a syntax error. Like CPython's PEG parser, a failed parse is followed by a second
 * pass in which the checks for the mistakes CPython words specifically ("Perhaps you forgot a
 * comma?") are on; without one of them, the error is "invalid syntax" at the furthest token read,
 * unless the rest of the text holds a tokenizer error (which CPython reports instead).
 */
import {PySyntaxError, indentationError, syntaxError} from './errors.js';
import {TokenizeError, Tokenizer, type TokenizerOptions} from './tokenizer.js';
import type {At} from './ast.js';
import type {Token} from './tokens.js';

/** The tokens do not fit the grammar here: this alternative fails (as in a PEG parser). */
export class NoParse extends Error {}

export interface ParserOptions extends TokenizerOptions {
  /** Strings' `\N{...}` kept as written (formulas) instead of refused (Grist's rule writer). */
  keepNamedEscapes?: boolean;
}

export class ParserBase {
  protected readonly tokenizer: Tokenizer;
  protected readonly toks: Token[] = [];
  protected pos = 0;
  /** The second pass, where CPython's "invalid_" rules word specific errors. */
  protected second = false;
  /** The tokenizer's error, once met: no token after it can be read. */
  private tokError: TokenizeError | null = null;
  /** The tokens of every Name node read (the rule writer finds Grist's `DOLLAR` names there). */
  readonly names: Token[] = [];

  constructor(
    text: string,
    protected readonly options: ParserOptions = {},
  ) {
    this.tokenizer = new Tokenizer(text, options);
  }

  /** The first comment's text (after `#`), or null. */
  get comment(): string | null {
    return this.tokenizer.firstComment;
  }

  /** Runs a pass of the parser as CPython does: on failure, a second pass, then the error. */
  protected run<T>(pass: () => T): T {
    let firstError: unknown;
    try {
      return pass();
    } catch (e) {
      if (!(e instanceof NoParse || e instanceof TokenizeError || e instanceof PySyntaxError)) throw e;
      firstError = e;
    }
    // An error met in the first pass stops CPython's parser there (its second pass does nothing).
    if (firstError instanceof TokenizeError) throw firstError.error;
    if (firstError instanceof PySyntaxError) return this.throwWithLaterTokenizerError(firstError);
    const lastToken = this.toks[this.toks.length - 1];
    this.second = true;
    this.pos = 0;
    this.names.length = 0;
    try {
      pass();
    } catch (e) {
      if (e instanceof PySyntaxError) return this.throwWithLaterTokenizerError(e);
      if (e instanceof TokenizeError) throw e.error;
      if (!(e instanceof NoParse)) throw e;
    }
    if (!lastToken) throw syntaxError('invalid syntax', 1, 1);
    if (lastToken.kind === 'indent') throw indentationError('unexpected indent', lastToken.line, lastToken.col + 1);
    return this.throwWithLaterTokenizerError(
      syntaxError('invalid syntax', lastToken.line, this.tokenizer.errorColumn(lastToken, lastToken.endLine)),
    );
  }

  /** CPython prefers a tokenizer error in the rest of the text to an error of the parser. */
  private throwWithLaterTokenizerError(error: PySyntaxError): never {
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
      if (t.kind === 'eof') throw error;
    }
  }

  protected peek(k = 0): Token {
    const idx = this.pos + k;
    if (idx < this.toks.length) return this.toks[idx];
    while (this.toks.length <= idx) {
      const last = this.toks[this.toks.length - 1];
      if (last && last.kind === 'eof') return last;
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
  protected lastRead(): Token {
    return this.toks[this.toks.length - 1];
  }

  protected fail(): never {
    throw new NoParse();
  }

  /** A specific error in the second pass; in the first, this alternative just fails. */
  protected invalid(message: string, at: Token): never {
    if (this.second) throw syntaxError(message, at.line, this.column(at));
    return this.fail();
  }

  /** An error CPython raises at once, in either pass (its forced tokens, `&&':'`), at a token. */
  protected forced(message: string, at: Token): never {
    throw syntaxError(message, at.line, this.column(at));
  }

  /** The column CPython reports for an error of the parser at a token. */
  protected column(t: Token): number {
    const last = this.toks[this.toks.length - 1];
    return this.tokenizer.errorColumn(t, last ? last.endLine : t.line);
  }

  /** Runs fn; if it fails, rewinds and returns null. */
  protected attempt<T>(fn: () => T): T | null {
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
  protected after<T>(n: number, fn: () => T): T | null {
    const save = this.pos;
    this.pos += n;
    const r = this.attempt(fn);
    if (r === null) this.pos = save;
    return r;
  }

  /**
   * Runs fn with the second pass's checks off (CPython's expression_without_invalid; elsewhere
   * so that trial parses inside checks cannot multiply).
   */
  protected withoutChecks<T>(fn: () => T): T {
    const second = this.second;
    this.second = false;
    try {
      return fn();
    } finally {
      this.second = second;
    }
  }

  protected isOp(op: string, k = 0): boolean {
    const t = this.peek(k);
    return t.kind === 'op' && t.value === op;
  }

  protected isKw(kw: string, k = 0): boolean {
    const t = this.peek(k);
    return t.kind === 'name' && t.value === kw && !t.dollar;
  }

  protected eatOp(op: string): boolean {
    if (!this.isOp(op)) return false;
    this.pos++;
    return true;
  }

  protected eatKw(kw: string): boolean {
    if (!this.isKw(kw)) return false;
    this.pos++;
    return true;
  }

  protected expectOp(op: string): Token {
    const t = this.peek();
    if (t.kind !== 'op' || t.value !== op) this.fail();
    this.pos++;
    return t;
  }

  protected at(t: Token): At {
    return {line: t.line, bcol: t.bcol};
  }
}
