/**
 * The Python front end of Grist's formulas and access-rule conditions (Python 3.11 as Grist uses
 * it): one tokenizer, one parser, one syntax tree (ast.ts), CPython's syntax errors (errors.ts).
 * This is the folder's only entry, and the folder imports nothing from outside it.
 */
import type {Expr, Stmt} from './ast.js';
import type {ParserOptions} from './base.js';
import {Parser} from './statements.js';
import {Tokenizer, type TokenizerOptions} from './tokenizer.js';
import type {Token} from './tokens.js';

export type {Arg, At, BinOp, CmpOp, ConstValue, Expr, FPart, Gen, Handler, Param, Stmt} from './ast.js';
export type {ParserOptions} from './base.js';
export {PySyntaxError} from './errors.js';
export {exprName} from './statements.js';
export {TokenizeError, Tokenizer, type TokenizerOptions} from './tokenizer.js';
export {KEYWORDS, type Token, type TokenKind} from './tokens.js';

/**
 * Python as Grist's formulas read it: `$name` is `rec.name`, and `\N{...}` (not supported) stays
 * as written. The default of parseModule, parseExpression and tokenize; plain Python is `{}`.
 */
export const FORMULA_SYNTAX: ParserOptions = {dollar: true, keepNamedEscapes: true};

/** Parses text as a module (`ast.parse(text)`); throws a PySyntaxError as CPython words it. */
export function parseModule(text: string, options: ParserOptions = FORMULA_SYNTAX): Stmt[] {
  return new Parser(text, options).parseModule();
}

/** Parses text as one expression (`ast.parse(text, mode='eval')`). */
export function parseExpression(text: string, options: ParserOptions = FORMULA_SYNTAX): Expr {
  return new Parser(text, options).parseWhole();
}

export interface ParseResult<T> {
  tree: T;
  /** The tokens of every Name node (Grist's rule writer finds its `DOLLAR` names there). */
  names: Token[];
  /** The first comment's text, after its `#`, or null. */
  comment: string | null;
}

/** Plain Python as parseModule / parseExpression read it, with the names read and the first comment. */
export function parseWithNames(text: string, mode: 'exec'): ParseResult<Stmt[]>;
export function parseWithNames(text: string, mode: 'eval'): ParseResult<Expr>;
export function parseWithNames(text: string, mode: 'exec' | 'eval'): ParseResult<Stmt[] | Expr> {
  const p = new Parser(text);
  const tree = mode === 'exec' ? p.parseModule() : p.parseWhole();
  return {tree, names: p.names, comment: p.comment};
}

/** All tokens of a text, to EOF (throws the first tokenizer error as a PySyntaxError). */
export function tokenize(text: string, options: TokenizerOptions = FORMULA_SYNTAX): Token[] {
  return new Tokenizer(text, options).all();
}
