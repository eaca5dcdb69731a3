/** The tokens of Python 3.11 source, as the tokenizer hands them to the parser. */

export type TokenKind = 'name' | 'number' | 'string' | 'op' | 'newline' | 'indent' | 'dedent' | 'eof';

/** A token: its kind, text and position. */
export interface Token {
  kind: TokenKind;
  /** The token's text: a name (NFKC-normalised, as CPython reads identifiers), an operator, a number, a string with its prefix and quotes. */
  value: string;
  line: number;
  /** 0-based column in code points (CPython's error offsets count these). */
  col: number;
  /** 0-based column in UTF-8 bytes (CPython's `col_offset` of nodes). */
  bcol: number;
  /** 0-based offset in code points from the start of the text. */
  offset: number;
  /** Offsets in the JavaScript string (UTF-16 units), start inclusive, end exclusive. */
  start: number;
  end: number;
  /** The line on which the token ends. */
  endLine: number;
  /**
   * Offset of the start of the text CPython's tokenizer holds while on this token's line: the
   * token's own line, or an earlier one when the line was reached inside a multi-line string
   * (CPython converts error columns from bytes to characters over that text).
   */
  bufStart: number;
  /** Nesting depth of brackets after this token. */
  level: number;
  /** A name read from Grist's `$name` (offsets include the `$`); only with the `dollar` option. */
  dollar?: boolean;
}

/** Operators, longest first where one is a prefix of another. */
export const OPERATORS = [
  '...',
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
  '<>',
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

/** Python 3's keywords: never names (soft keywords `match`, `case`, `_` are names). */
export const KEYWORDS: ReadonlySet<string> = new Set([
  'False',
  'None',
  'True',
  'and',
  'as',
  'assert',
  'async',
  'await',
  'break',
  'class',
  'continue',
  'def',
  'del',
  'elif',
  'else',
  'except',
  'finally',
  'for',
  'from',
  'global',
  'if',
  'import',
  'in',
  'is',
  'lambda',
  'nonlocal',
  'not',
  'or',
  'pass',
  'raise',
  'return',
  'try',
  'while',
  'with',
  'yield',
]);

export const AUGASSIGN: ReadonlySet<string> = new Set([
  '+=',
  '-=',
  '*=',
  '/=',
  '//=',
  '%=',
  '@=',
  '&=',
  '|=',
  '^=',
  '>>=',
  '<<=',
  '**=',
]);

/** UTF-8 length of one code point. */
export function utf8Length(c: string): number {
  const n = c.codePointAt(0) ?? 0;
  return n < 0x80 ? 1 : n < 0x800 ? 2 : n < 0x10000 ? 3 : 4;
}

/** A name token that may stand for a variable (not a keyword, not Grist's `$name`). */
export function isIdentifier(t: Token): boolean {
  return t.kind === 'name' && !t.dollar && !KEYWORDS.has(t.value);
}
