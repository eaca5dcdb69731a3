/**
 * A tokenizer for the Python expressions that access-rule formulas are written in. It follows
 * CPython 3.11's tokenizer (the one Grist's data engine parses formulas with) closely enough that
 * the syntax errors it reports carry CPython's wording and positions:
 *
 * - tokens are produced on demand, so an error late in the text is only reported when the parser
 *   gets there (or when the parser fails and the rest is scanned for tokenizer errors, as CPython
 *   does before reporting a bare "invalid syntax");
 * - columns of errors count code points (CPython's `SyntaxError.offset`), columns of nodes count
 *   UTF-8 bytes (CPython's `col_offset`), so both are kept on every token.
 */
import {type PredicateFormulaError, syntaxErrorAt} from './errors.js';

export type TokenKind = 'name' | 'number' | 'string' | 'op' | 'newline' | 'end' | 'indent';

/**
 * An error of the tokenizer. `kind` says how CPython treats it when it is met while scanning the
 * rest of the text after a parse error: `raise` errors replace the parser's error; `eof` errors
 * (a line continuation at the end, a bad line continuation) do not; `eof-in-brackets` (a bracket
 * never closed) does only when the bracket opened on an earlier line than the parser's error.
 */
export class TokenizeError extends Error {
  constructor(
    readonly error: PredicateFormulaError,
    readonly kind: 'raise' | 'quiet' | 'eof-in-brackets',
    readonly openLine = 0,
  ) {
    super(error.message);
  }
}

export interface Token {
  kind: TokenKind;
  /** The token's text (for strings: prefix and quotes included). */
  text: string;
  line: number;
  /** 0-based column in code points. */
  col: number;
  /** 0-based column in UTF-8 bytes. */
  bcol: number;
  /** 0-based offset in code points from the start of the text. */
  offset: number;
  /** The line on which the token ends (after it, CPython's tokenizer is on that line). */
  endLine: number;
  /**
   * Offset of the start of the text CPython's tokenizer holds while on this token's line: the
   * token's own line, or an earlier one when the line was reached inside a multi-line string.
   * (CPython converts error columns from bytes to characters over that text.)
   */
  bufStart: number;
  /** Nesting depth of brackets after this token. */
  level: number;
}

const OPERATORS = [
  '...',
  '<>',
  '**=',
  '//=',
  '>>=',
  '<<=',
  '->',
  '**',
  '//',
  '<<',
  '>>',
  '<=',
  '>=',
  '==',
  '!=',
  ':=',
  '+=',
  '-=',
  '*=',
  '/=',
  '%=',
  '&=',
  '|=',
  '^=',
  '@=',
  '+',
  '-',
  '*',
  '/',
  '%',
  '@',
  '&',
  '|',
  '^',
  '~',
  '<',
  '>',
  '(',
  ')',
  '[',
  ']',
  '{',
  '}',
  ',',
  ':',
  ';',
  '.',
  '=',
];
const CLOSERS: Record<string, string> = {')': '(', ']': '[', '}': '{'};
const STRING_PREFIXES = new Set(['r', 'u', 'b', 'br', 'rb', 'f', 'fr', 'rf']);

const ID_START = /[\p{ID_Start}_]/u;
const ID_CONTINUE = /[\p{ID_Continue}_]/u;
const isIdStart = (c: string | undefined) => c !== undefined && ID_START.test(c);
const isIdContinue = (c: string | undefined) => c !== undefined && ID_CONTINUE.test(c);
const isDigit = (c: string | undefined) => c !== undefined && c >= '0' && c <= '9';
const isHex = (c: string | undefined) => c !== undefined && /^[0-9a-fA-F]$/.test(c);
const isNewline = (c: string | undefined) => c === '\n' || c === '\r';
/** What may not follow a number directly (a non-ASCII character there is a token of its own). */
const isIdentChar = (c: string | undefined) => c !== undefined && /[A-Za-z0-9_]/.test(c);

/** UTF-8 length of one code point. */
export function utf8Length(c: string): number {
  const n = c.codePointAt(0) ?? 0;
  return n < 0x80 ? 1 : n < 0x800 ? 2 : n < 0x10000 ? 3 : 4;
}

export class Tokenizer {
  /** The text as code points. */
  private readonly cp: string[];
  private i = 0;
  private line = 1;
  private lineStart = 0;
  private lineStartBytes = 0;
  /** Byte offset of each code point from the start of the text. */
  private readonly bytesBefore: number[];
  private readonly parens: Array<{ch: string; line: number; col: number}> = [];
  private atLineStart = true;
  private lineHasTokens = false;
  private done = false;
  /** The first comment's text (after `#`), when the tokenizer has passed one. */
  firstComment: string | null = null;

  constructor(text: string) {
    this.cp = Array.from(text);
    this.bytesBefore = new Array(this.cp.length + 1);
    let b = 0;
    for (let k = 0; k < this.cp.length; k++) {
      this.bytesBefore[k] = b;
      b += utf8Length(this.cp[k]);
    }
    this.bytesBefore[this.cp.length] = b;
  }

  /**
   * The column CPython reports for an error of its parser at token t: the token's byte column
   * turned into characters over the text CPython's tokenizer holds, which, right after a
   * multi-line string, starts on an earlier line. `tokenizerLine` is the line the tokenizer is on.
   */
  errorColumn(t: Token, tokenizerLine: number): number {
    const lineStart = t.offset - t.col;
    if (t.bufStart >= lineStart || tokenizerLine > t.line) return t.col + 1;
    let bytes = 0;
    let chars = 0;
    for (let k = t.bufStart; k < this.cp.length && bytes < t.bcol; k++) {
      bytes += utf8Length(this.cp[k]);
      chars++;
    }
    return chars + 1;
  }

  /** The number of lines CPython counts for a text holding no tokens (for eval mode's error). */
  lineCountForEmpty(): number {
    let n = 0;
    for (const c of this.cp) if (c === '\n') n++;
    return this.cp.length && this.cp[this.cp.length - 1] !== '\n' ? n + 1 : Math.max(n, 1);
  }

  private tok(kind: TokenKind, start: number, text: string): Token {
    return {
      kind,
      text,
      line: this.line,
      col: start - this.lineStart,
      bcol: this.bytesBefore[start] - this.lineStartBytes,
      offset: start,
      endLine: this.line,
      bufStart: this.bufStart,
      level: this.parens.length,
    };
  }

  private err(message: string, col: number, line = this.line): TokenizeError {
    return new TokenizeError(syntaxErrorAt(message, line, col), 'raise');
  }

  /** Start of a comment read since the last token (CPython's NEWLINE token starts there). */
  private commentStart = -1;

  /** See Token.bufStart. */
  private bufStart = 0;
  private inString = false;

  private newLine(at: number) {
    // `at` is the index just after the line break.
    if (!this.inString) this.bufStart = at;
    this.line++;
    this.lineStart = at;
    this.lineStartBytes = this.bytesBefore[at];
  }

  /** Skips a line break at i (\n, \r\n or \r); returns false when there is none. */
  private skipNewline(): boolean {
    const c = this.cp[this.i];
    if (c === '\r' && this.cp[this.i + 1] === '\n') this.i += 2;
    else if (isNewline(c)) this.i++;
    else return false;
    this.newLine(this.i);
    return true;
  }

  private readComment() {
    const start = this.i;
    if (this.lineHasTokens && this.commentStart < 0) this.commentStart = start;
    while (this.i < this.cp.length && !isNewline(this.cp[this.i])) this.i++;
    if (this.firstComment === null) this.firstComment = this.cp.slice(start + 1, this.i).join('');
  }

  /** The next token. Throws a tokenizer error (bad string, bad number, bad bracket). */
  next(): Token {
    const cp = this.cp;
    for (;;) {
      if (this.done) return this.tok('end', this.i, '');
      if (this.atLineStart && this.parens.length === 0) {
        const start = this.i;
        while (cp[this.i] === ' ' || cp[this.i] === '\t' || cp[this.i] === '\f') this.i++;
        const c = cp[this.i];
        if (c === '#') {
          this.readComment();
          continue;
        }
        if (isNewline(c)) {
          this.skipNewline();
          continue;
        }
        this.atLineStart = false;
        if (this.i > start) {
          // CPython parses the text as a module first: an indented line is an error there.
          return {...this.tok('indent', this.i, ''), col: this.i - start - 1};
        }
      }
      const c = cp[this.i];
      if (c === undefined) {
        if (this.parens.length) throw this.neverClosed();
        if (this.lineHasTokens) {
          this.lineHasTokens = false;
          return this.newlineToken(this.i);
        }
        this.done = true;
        return this.tok('end', this.i, '');
      }
      if (c === ' ' || c === '\t' || c === '\f') {
        this.i++;
        continue;
      }
      if (c === '#') {
        this.readComment();
        continue;
      }
      if (c === '\\') {
        const start = this.i;
        const col = start - this.lineStart + 2;
        const line = this.line;
        this.i++;
        const more = this.skipNewline();
        if (this.i >= cp.length) {
          if (this.parens.length) throw this.neverClosed();
          throw new TokenizeError(syntaxErrorAt('unexpected EOF while parsing', line, col), 'quiet');
        }
        if (more) continue;
        const msg = 'unexpected character after line continuation character';
        throw new TokenizeError(syntaxErrorAt(msg, line, col), 'quiet');
      }
      if (isNewline(c)) {
        const t = this.newlineToken(this.i);
        this.skipNewline();
        if (this.parens.length === 0) {
          this.atLineStart = true;
          if (this.lineHasTokens) {
            this.lineHasTokens = false;
            return t;
          }
        }
        continue;
      }
      this.lineHasTokens = true;
      this.commentStart = -1;
      if (isIdStart(c) || (c > '\x7f' && isIdContinue(c) && !/\p{N}/u.test(c))) {
        const start = this.i;
        while (this.i < cp.length && (isIdContinue(cp[this.i]) || cp[this.i] === '\u00b7')) this.i++;
        const word = cp.slice(start, this.i).join('');
        const q = cp[this.i];
        if ((q === '"' || q === "'") && STRING_PREFIXES.has(word.toLowerCase())) return this.readString(start);
        return this.tok('name', start, word.normalize('NFKC'));
      }
      if (isDigit(c) || (c === '.' && isDigit(cp[this.i + 1]))) return this.readNumber();
      if (c === '"' || c === "'") return this.readString(this.i);
      const start = this.i;
      for (const op of OPERATORS) {
        if (cp[start] === op[0] && cp.slice(start, start + op.length).join('') === op) {
          this.i += op.length;
          if (op === '(' || op === '[' || op === '{') {
            if (this.parens.length >= 200) throw this.err('too many nested parentheses', start - this.lineStart + 1);
            this.parens.push({ch: op, line: this.line, col: start - this.lineStart});
          } else if (CLOSERS[op]) {
            const open = this.parens.pop();
            if (!open) throw this.err(`unmatched '${op}'`, start - this.lineStart + 1);
            if (open.ch !== CLOSERS[op]) {
              const where = open.line !== this.line ? ` on line ${open.line}` : '';
              throw this.err(
                `closing parenthesis '${op}' does not match opening parenthesis '${open.ch}'${where}`,
                start - this.lineStart + 1,
              );
            }
          }
          return this.tok('op', start, op);
        }
      }
      this.i++;
      if (c > '\x7f') {
        const hex = (c.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0');
        throw this.err(`invalid character '${c}' (U+${hex})`, start - this.lineStart + 1);
      }
      // `!`, `?`, `$`, a backquote: an operator no rule of the grammar takes.
      return this.tok('op', start, c);
    }
  }

  private newlineToken(at: number): Token {
    const t = this.tok('newline', this.commentStart >= 0 ? this.commentStart : at, '');
    this.commentStart = -1;
    return t;
  }

  private neverClosed(): TokenizeError {
    const open = this.parens[this.parens.length - 1];
    const error = syntaxErrorAt(`'${open.ch}' was never closed`, open.line, open.col + 1);
    return new TokenizeError(error, 'eof-in-brackets', open.line);
  }

  private readString(start: number): Token {
    const cp = this.cp;
    while (cp[this.i] !== '"' && cp[this.i] !== "'") this.i++;
    const q = cp[this.i];
    const startLine = this.line;
    const startCol = start - this.lineStart;
    const startBcol = this.bytesBefore[start] - this.lineStartBytes;
    const triple = cp[this.i + 1] === q && cp[this.i + 2] === q;
    const bufStart = this.bufStart;
    this.i += triple ? 3 : 1;
    this.inString = true;
    for (;;) {
      const c = cp[this.i];
      if (c === undefined || (!triple && isNewline(c))) {
        this.inString = false;
        const kind = triple ? 'unterminated triple-quoted string literal' : 'unterminated string literal';
        throw this.err(`${kind} (detected at line ${this.line})`, startCol + 1, startLine);
      }
      if (c === '\\') {
        this.i++;
        if (!this.skipNewline() && this.i < cp.length) this.i++;
        continue;
      }
      if (isNewline(c)) {
        this.skipNewline();
        continue;
      }
      if (c === q && (!triple || (cp[this.i + 1] === q && cp[this.i + 2] === q))) {
        this.i += triple ? 3 : 1;
        this.inString = false;
        break;
      }
      this.i++;
    }
    return {
      kind: 'string',
      text: cp.slice(start, this.i).join(''),
      line: startLine,
      col: startCol,
      bcol: startBcol,
      offset: start,
      endLine: this.line,
      bufStart,
      level: this.parens.length,
    };
  }

  /**
   * A number, checked as CPython checks it: errors point at the offending character (its 0-based
   * index, which is how CPython's tokenizer reports them).
   */
  private readNumber(): Token {
    const cp = this.cp;
    const start = this.i;
    const here = () => this.i - this.lineStart;
    const fail = (msg: string, col = here()) => this.err(msg, col);
    // Digits with single underscores between them (after a first digit already read).
    const decimalTail = () => {
      for (;;) {
        while (isDigit(cp[this.i])) this.i++;
        if (cp[this.i] !== '_') return;
        this.i++;
        if (!isDigit(cp[this.i])) throw fail('invalid decimal literal');
      }
    };
    const endOfNumber = (kind: string) => {
      const c = cp[this.i];
      const k = this.i + 1;
      // A keyword must end there (`1or x`), except after `i` (`1if`, `1in`, `1is`).
      const at = (w: string) => cp.slice(k, k + w.length).join('') === w && !isIdentChar(cp[k + w.length]);
      const keyword =
        (c === 'a' && at('nd')) ||
        (c === 'e' && at('lse')) ||
        (c === 'f' && at('or')) ||
        (c === 'i' && ['f', 'n', 's'].includes(cp[k])) ||
        (c === 'o' && at('r')) ||
        (c === 'n' && at('ot'));
      if (!keyword && isIdentChar(c)) throw fail(`invalid ${kind} literal`);
    };
    const radix = (kind: string, ok: (c: string | undefined) => boolean) => {
      this.i += 2;
      do {
        if (cp[this.i] === '_') this.i++;
        if (!ok(cp[this.i])) {
          if (kind !== 'hexadecimal' && isDigit(cp[this.i])) {
            throw fail(`invalid digit '${cp[this.i]}' in ${kind} literal`, here() + 1);
          }
          throw fail(`invalid ${kind} literal`);
        }
        while (ok(cp[this.i])) this.i++;
      } while (cp[this.i] === '_');
      if (kind !== 'hexadecimal' && isDigit(cp[this.i])) {
        throw fail(`invalid digit '${cp[this.i]}' in ${kind} literal`, here() + 1);
      }
      endOfNumber(kind);
    };
    // After the integer part: fraction, exponent, imaginary suffix.
    const rest = (fraction: boolean) => {
      if (fraction || cp[this.i] === '.') {
        if (!fraction) this.i++;
        if (isDigit(cp[this.i])) decimalTail();
      }
      if (cp[this.i] === 'e' || cp[this.i] === 'E') {
        const e = this.i;
        this.i++;
        if (cp[this.i] === '+' || cp[this.i] === '-') {
          this.i++;
          if (!isDigit(cp[this.i])) throw fail('invalid decimal literal');
        } else if (!isDigit(cp[this.i])) {
          this.i = e;
          endOfNumber('decimal');
          return;
        }
        decimalTail();
      }
      if (cp[this.i] === 'j' || cp[this.i] === 'J') {
        this.i++;
        endOfNumber('imaginary');
      } else {
        endOfNumber('decimal');
      }
    };
    const c1 = cp[this.i + 1];
    if (cp[this.i] === '.') {
      this.i++;
      rest(true);
    } else if (cp[this.i] === '0' && (c1 === 'x' || c1 === 'X')) {
      radix('hexadecimal', isHex);
    } else if (cp[this.i] === '0' && (c1 === 'o' || c1 === 'O')) {
      radix('octal', (c) => c !== undefined && c >= '0' && c <= '7');
    } else if (cp[this.i] === '0' && (c1 === 'b' || c1 === 'B')) {
      radix('binary', (c) => c === '0' || c === '1');
    } else if (cp[this.i] === '0') {
      this.i++;
      for (;;) {
        if (cp[this.i] === '_') {
          this.i++;
          if (!isDigit(cp[this.i])) throw fail('invalid decimal literal');
        }
        if (cp[this.i] !== '0') break;
        this.i++;
      }
      let nonzero = false;
      if (isDigit(cp[this.i])) {
        nonzero = true;
        decimalTail();
      }
      const c = cp[this.i];
      if (c === '.' || c === 'e' || c === 'E' || c === 'j' || c === 'J') {
        rest(false);
      } else if (nonzero) {
        throw fail(
          'leading zeros in decimal integer literals are not permitted; use an 0o prefix for octal integers',
          // CPython counts this column in bytes.
          this.bytesBefore[start] - this.lineStartBytes + 1,
        );
      } else {
        endOfNumber('decimal');
      }
    } else {
      decimalTail();
      rest(false);
    }
    return this.tok('number', start, cp.slice(start, this.i).join(''));
  }
}
