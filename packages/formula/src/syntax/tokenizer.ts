/**
 * Python 3.11's tokenizer, close enough to CPython's that its errors carry CPython's wording and
 * positions:
 *
 * - tokens are produced on demand, so an error late in the text is only met when the parser gets
 *   there (or when the parser fails and the rest is scanned for tokenizer errors, as CPython does
 *   before reporting a bare "invalid syntax");
 * - INDENT and DEDENT as CPython emits them (tabs to multiples of 8), blank and comment-only lines
 *   skipped, no NEWLINE inside brackets or after a backslash continuation;
 * - error columns count code points (`SyntaxError.offset`), node columns UTF-8 bytes
 *   (`col_offset`), and formulas need JavaScript string offsets, so every token keeps all three.
 *
 * With the `dollar` option, Grist's `$name` (a `$` before [A-Za-z_], Grist's DOLLAR_REGEX) is one
 * name token marked `dollar`; without it a `$` is an operator no grammar rule takes.
 */
import {type PySyntaxError, indentationError, syntaxError} from './errors.js';
import {OPERATORS, type Token, type TokenKind, utf8Length} from './tokens.js';

/**
 * An error of the tokenizer. `kind` says how CPython treats it when it is met while scanning the
 * rest of the text after a parse error: `raise` errors replace the parser's error; `quiet` ones
 * (a line continuation at the end, a bad line continuation) do not; `eof-in-brackets` (a bracket
 * never closed) does only when the bracket opened on an earlier line than the parser's error.
 */
export class TokenizeError extends Error {
  constructor(
    readonly error: PySyntaxError,
    readonly kind: 'raise' | 'quiet' | 'eof-in-brackets',
    readonly openLine = 0,
  ) {
    super(error.msg);
  }
}

const CLOSERS: Record<string, string> = {')': '(', ']': '[', '}': '{'};
const OPS3 = new Set(OPERATORS.filter((op) => op.length === 3));
const OPS2 = new Set(OPERATORS.filter((op) => op.length === 2));
const OPS1 = new Set(OPERATORS.filter((op) => op.length === 1));
const STRING_PREFIXES = new Set(['r', 'u', 'b', 'br', 'rb', 'f', 'fr', 'rf']);

const ID_START = /[\p{ID_Start}_]/u;
const ID_CONTINUE = /[\p{ID_Continue}_]/u;
const isAsciiIdStart = (c: string) => (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c === '_';
const isIdStart = (c: string | undefined) => c !== undefined && (isAsciiIdStart(c) || (c > '\x7f' && ID_START.test(c)));
const isIdContinue = (c: string | undefined) =>
  c !== undefined && (isAsciiIdStart(c) || (c >= '0' && c <= '9') || (c > '\x7f' && ID_CONTINUE.test(c)));
const isDigit = (c: string | undefined) => c !== undefined && c >= '0' && c <= '9';
const isHex = (c: string | undefined) => c !== undefined && /^[0-9a-fA-F]$/.test(c);
const isNewline = (c: string | undefined) => c === '\n' || c === '\r';
/** What may not follow a number directly (a non-ASCII character there is a token of its own). */
const isIdentChar = (c: string | undefined) => c !== undefined && /[A-Za-z0-9_]/.test(c);

export interface TokenizerOptions {
  /** Read Grist's `$name` as a name token marked `dollar`. */
  dollar?: boolean;
  /** Added to tokens' `start`/`end`: where the text starts in a larger source (an f-string's field). */
  base?: number;
}

/** Python 3.11's tokenizer (with Grist's `$name` when asked): CPython's tokens, INDENT/DEDENT and error wording. */
export class Tokenizer {
  /** The text as code points (the text itself when it is ASCII). */
  private readonly cp: ArrayLike<string>;
  private i = 0;
  private line = 1;
  private lineStart = 0;
  private lineStartBytes = 0;
  /** Byte and UTF-16 offsets of each code point (null when they equal the code-point offset). */
  private readonly bytesBefore: number[] | null;
  private readonly unitsBefore: number[] | null;
  private readonly parens: Array<{ch: string; line: number; col: number}> = [];
  private readonly indents = [0];
  /** DEDENT tokens (and what follows them) waiting to be handed out. */
  private readonly pending: Token[] = [];
  private atLineStart = true;
  private lineHasTokens = false;
  private done = false;
  private readonly dollar: boolean;
  private readonly base: number;
  /** The first comment's text (after `#`), when the tokenizer has passed one. */
  firstComment: string | null = null;
  /**
   * Spaces ending the text after its last line break are an INDENT: CPython's `eval` mode reports
   * "unexpected indent" there (its `exec` mode ignores them).
   */
  indentAtEnd = false;

  constructor(
    readonly text: string,
    options: TokenizerOptions = {},
  ) {
    this.dollar = Boolean(options.dollar);
    this.base = options.base ?? 0;
    let ascii = true;
    for (let k = 0; k < text.length; k++) {
      if (text.charCodeAt(k) > 0x7f) {
        ascii = false;
        break;
      }
    }
    if (ascii) {
      this.cp = text;
      this.bytesBefore = null;
      this.unitsBefore = null;
      return;
    }
    this.cp = Array.from(text);
    const bytes = new Array<number>(this.cp.length + 1);
    const units = new Array<number>(this.cp.length + 1);
    let b = 0;
    let u = 0;
    for (let k = 0; k < this.cp.length; k++) {
      bytes[k] = b;
      units[k] = u;
      b += utf8Length(this.cp[k]);
      u += this.cp[k].length;
    }
    bytes[this.cp.length] = b;
    units[this.cp.length] = u;
    this.bytesBefore = bytes;
    this.unitsBefore = units;
  }

  /** The text from code point a to code point b. */
  private str(a: number, b: number): string {
    return this.text.slice(this.unitsAt(a), this.unitsAt(b));
  }

  private bytesAt(k: number): number {
    return this.bytesBefore ? this.bytesBefore[k] : k;
  }

  private unitsAt(k: number): number {
    return this.unitsBefore ? this.unitsBefore[k] : k;
  }

  /** All tokens up to and including EOF (throws the first tokenizer error). */
  all(): Token[] {
    const out: Token[] = [];
    for (;;) {
      let t: Token;
      try {
        t = this.next();
      } catch (e) {
        throw e instanceof TokenizeError ? e.error : e;
      }
      out.push(t);
      if (t.kind === 'eof') return out;
    }
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
    for (let k = 0; k < this.cp.length; k++) if (this.cp[k] === '\n') n++;
    return this.cp.length && this.cp[this.cp.length - 1] !== '\n' ? n + 1 : Math.max(n, 1);
  }

  private tok(kind: TokenKind, start: number, value: string, end = this.i): Token {
    return {
      kind,
      value,
      line: this.line,
      col: start - this.lineStart,
      bcol: this.bytesAt(start) - this.lineStartBytes,
      offset: start,
      start: this.base + this.unitsAt(start),
      end: this.base + this.unitsAt(end),
      endLine: this.line,
      bufStart: this.bufStart,
      level: this.parens.length,
    };
  }

  private err(message: string, col: number, line = this.line): TokenizeError {
    return new TokenizeError(syntaxError(message, line, col), 'raise');
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
    this.lineStartBytes = this.bytesAt(at);
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
    if (this.firstComment === null) this.firstComment = this.str(start + 1, this.i);
  }

  /** The next token. Throws a TokenizeError (bad string, number, bracket or indentation). */
  next(): Token {
    if (this.pending.length) return this.pending.shift() as Token;
    const cp = this.cp;
    for (;;) {
      if (this.done) return this.tok('eof', this.i, '');
      if (this.atLineStart && this.parens.length === 0) {
        const start = this.i;
        let width = 0;
        for (;;) {
          const c = cp[this.i];
          if (c === ' ') width++;
          else if (c === '\t') width = (Math.floor(width / 8) + 1) * 8;
          else if (c === '\f') width = 0;
          else break;
          this.i++;
        }
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
        if (c !== undefined) {
          const indent = this.indentation(width, start);
          if (indent) return indent;
        } else if (this.indentAtEnd && this.i > start) {
          return {...this.tok('indent', start, ''), col: this.i - start - 1};
        }
      }
      const c = cp[this.i];
      if (c === undefined) return this.atEnd();
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
          throw new TokenizeError(syntaxError('unexpected EOF while parsing', line, col), 'quiet');
        }
        if (more) continue;
        const msg = 'unexpected character after line continuation character';
        throw new TokenizeError(syntaxError(msg, line, col), 'quiet');
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
        const word = this.str(start, this.i);
        const q = cp[this.i];
        if ((q === '"' || q === "'") && STRING_PREFIXES.has(word.toLowerCase())) return this.readString(start);
        return this.tok('name', start, this.unitsBefore ? word.normalize('NFKC') : word);
      }
      if (isDigit(c) || (c === '.' && isDigit(cp[this.i + 1]))) return this.readNumber();
      if (c === '"' || c === "'") return this.readString(this.i);
      const start = this.i;
      if (c === '$' && this.dollar && cp[start + 1] !== undefined && isAsciiIdStart(cp[start + 1])) {
        this.i++;
        while (this.i < cp.length && (isIdContinue(cp[this.i]) || cp[this.i] === '\u00b7')) this.i++;
        const name = this.str(start + 1, this.i);
        const t = this.tok('name', start, this.unitsBefore ? name.normalize('NFKC') : name);
        t.dollar = true;
        return t;
      }
      const c2 = c + (cp[start + 1] ?? '');
      const op = OPS3.has(c2 + (cp[start + 2] ?? '')) ? c2 + cp[start + 2] : OPS2.has(c2) ? c2 : OPS1.has(c) ? c : null;
      if (op !== null) {
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
      this.i++;
      if (c > '\x7f') {
        const hex = (c.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0');
        throw this.err(`invalid character '${c}' (U+${hex})`, start - this.lineStart + 1);
      }
      // `!`, `?`, `$`, a backquote: an operator no rule of the grammar takes.
      return this.tok('op', start, c);
    }
  }

  /** INDENT or DEDENTs for a line indented `width` columns (null when it stays at the level). */
  private indentation(width: number, lineStartAt: number): Token | null {
    const top = this.indents[this.indents.length - 1];
    if (width === top) return null;
    if (width > top) {
      this.indents.push(width);
      // CPython reports an unexpected indent at the indentation's last column.
      return {...this.tok('indent', lineStartAt, ''), col: this.i - lineStartAt - 1};
    }
    while (width < this.indents[this.indents.length - 1]) {
      this.indents.pop();
      this.pending.push(this.tok('dedent', this.i, '', this.i));
    }
    if (width !== this.indents[this.indents.length - 1]) {
      let end = this.i;
      while (end < this.cp.length && !isNewline(this.cp[end])) end++;
      const error = indentationError(
        'unindent does not match any outer indentation level',
        this.line,
        end - this.lineStart + 1,
      );
      throw new TokenizeError(error, 'raise');
    }
    return this.pending.shift() as Token;
  }

  private atEnd(): Token {
    if (this.parens.length) throw this.neverClosed();
    if (this.lineHasTokens) {
      this.lineHasTokens = false;
      return this.newlineToken(this.i);
    }
    while (this.indents.length > 1) {
      this.indents.pop();
      this.pending.push(this.tok('dedent', this.i, ''));
    }
    this.done = true;
    this.pending.push(this.tok('eof', this.i, ''));
    return this.pending.shift() as Token;
  }

  private newlineToken(at: number): Token {
    const t = this.tok('newline', this.commentStart >= 0 ? this.commentStart : at, '', at);
    this.commentStart = -1;
    return t;
  }

  private neverClosed(): TokenizeError {
    const open = this.parens[this.parens.length - 1];
    const error = syntaxError(`'${open.ch}' was never closed`, open.line, open.col + 1);
    return new TokenizeError(error, 'eof-in-brackets', open.line);
  }

  private readString(start: number): Token {
    const cp = this.cp;
    while (cp[this.i] !== '"' && cp[this.i] !== "'") this.i++;
    const q = cp[this.i];
    const startLine = this.line;
    const startCol = start - this.lineStart;
    const startBcol = this.bytesAt(start) - this.lineStartBytes;
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
      value: this.str(start, this.i),
      line: startLine,
      col: startCol,
      bcol: startBcol,
      offset: start,
      start: this.base + this.unitsAt(start),
      end: this.base + this.unitsAt(this.i),
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
      const at = (w: string) => this.str(k, k + w.length) === w && !isIdentChar(cp[k + w.length]);
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
          this.bytesAt(start) - this.lineStartBytes + 1,
        );
      } else {
        endOfNumber('decimal');
      }
    } else {
      decimalTail();
      rest(false);
    }
    return this.tok('number', start, this.str(start, this.i));
  }
}
