/**
 * f-strings as CPython 3.11 reads them: the string token's body split into literal text and
 * `{expression[=][!conversion][:spec]}` fields; each field's expression is parsed in parentheses
 * (as CPython does), and its errors are worded `f-string: ...`.
 */
import type {At, Expr, FPart} from './ast.js';
import {PySyntaxError, syntaxError} from './errors.js';
import {type EscapeOptions, decodeEscapes} from './strings.js';
import type {Token} from './tokens.js';

export interface FStringContext {
  tok: Token;
  raw: boolean;
  escapes: EscapeOptions;
  /** Where the f-string's nodes are placed (its token). */
  at: At;
  /** Where the body being read starts in the formula's text (null when it cannot be told). */
  base: number | null;
  /** Parses a field's expression text as a whole expression, placed at `base` in the source. */
  parseField(text: string, base: number | null): Expr;
}

/** Where a string token's body starts in the source, unless its line breaks were normalised. */
export function bodyOffset(tok: Token, body: string): number | null {
  if (tok.value.includes('\r')) return null;
  // The token is prefix, quotes, body, quotes.
  const prefix = tok.value.search(/["']/);
  return tok.start + (tok.value.length + prefix - body.length) / 2;
}

/** The literal text and `{fields}` of an f-string's body. */
export function fstringParts(s: string, c: FStringContext): FPart[] {
  const out: FPart[] = [];
  let lit = '';
  const flush = () => {
    if (lit) out.push(c.raw ? lit : decodeEscapes(lit, c.escapes));
    lit = '';
  };
  let k = 0;
  while (k < s.length) {
    const ch = s[k];
    if (ch === '{' || ch === '}') {
      if (s[k + 1] === ch) {
        lit += ch;
        k += 2;
        continue;
      }
      if (ch === '}') throw syntaxError("f-string: single '}' is not allowed", c.tok.line, c.tok.col + 1);
      flush();
      const [part, next] = fstringField(s, k + 1, c);
      out.push(part);
      k = next;
      continue;
    }
    if (ch === '\\' && !c.raw) {
      lit += s.slice(k, k + 2);
      k += 2;
      continue;
    }
    lit += ch;
    k++;
  }
  flush();
  return out;
}

/** Parses `expr[=][!conv][:spec]}` starting at s[k]; returns the part and the index after `}`. */
function fstringField(s: string, k: number, c: FStringContext): [FPart, number] {
  const t = c.tok;
  const fail = (msg: string) => syntaxError(`f-string: ${msg}`, t.line, t.col + 1);
  let depth = 0;
  let j = k;
  let quote: string | null = null;
  for (; j < s.length; j++) {
    const ch = s[j];
    if (quote) {
      if (ch === quote) quote = null;
      continue;
    }
    if (ch === '"' || ch === "'") quote = ch;
    else if ('([{'.includes(ch)) depth++;
    else if (')]}'.includes(ch)) {
      if (depth === 0) break;
      depth--;
    } else if (depth === 0 && (ch === ':' || (ch === '!' && s[j + 1] !== '='))) break;
  }
  if (j >= s.length) throw fail("expecting '}'");
  let exprText = s.slice(k, j);
  let selfDoc = '';
  if (/=\s*$/.test(exprText) && !/[=!<>]=\s*$/.test(exprText)) {
    selfDoc = exprText;
    exprText = exprText.replace(/=\s*$/, '');
  }
  if (!exprText.trim()) throw fail('empty expression not allowed');
  let expr: Expr;
  try {
    // Node offsets are the source's (a rename rewrites them), the `(` added before the text aside.
    expr = c.parseField(`(${exprText})`, c.base === null ? null : c.base + k - 1);
  } catch (e) {
    if (e instanceof PySyntaxError) throw fail(e.msg);
    throw e;
  }
  let conv: string | null = null;
  if (s[j] === '!') {
    conv = s[j + 1];
    if (!'rsa'.includes(conv)) throw fail("invalid conversion character: expected 's', 'r', or 'a'");
    j += 2;
  }
  let spec: Expr | null = null;
  if (s[j] === ':') {
    // The spec itself may hold nested {fields}.
    let d = 0;
    let m = j + 1;
    for (; m < s.length; m++) {
      if (s[m] === '{') d++;
      else if (s[m] === '}') {
        if (d === 0) break;
        d--;
      }
    }
    spec = {
      line: c.at.line,
      bcol: c.at.bcol,
      k: 'fstr',
      parts: fstringParts(s.slice(j + 1, m), {...c, base: c.base === null ? null : c.base + j + 1}),
      pos: t.start,
      end: t.end,
    };
    j = m;
  }
  if (s[j] !== '}') throw fail("expecting '}'");
  if (selfDoc && conv === null && spec === null) conv = 'r';
  const part: FPart = {expr, conv, spec};
  if (!selfDoc) return [part, j + 1];
  const doc: Expr = {line: c.at.line, bcol: c.at.bcol, k: 'fstr', parts: [selfDoc, part], pos: t.start, end: t.end};
  return [{expr: doc, conv: null, spec: null}, j + 1];
}
