/** Python's number and string literals: their values, and the errors CPython reports for them. */
import {PredicateFormulaError, syntaxErrorAt} from './errors.js';
import type {PyConst} from './pyast.js';
import type {Token} from './tokenize.js';

/** The value of a number token. */
export function numberValue(text: string): PyConst {
  const s = text.replace(/_/g, '').toLowerCase();
  if (s.endsWith('j')) return {t: 'complex'};
  if (/^0[xob]/.test(s)) return {t: 'int', v: BigInt(s)};
  if (/[.e]/.test(s)) return {t: 'float', v: Number(s)};
  return {t: 'int', v: BigInt(s)};
}

/** Escapes of Python string literals (`\N{...}` named characters are not supported). */
const SIMPLE_ESCAPES: Record<string, string> = {
  '\n': '',
  '\\': '\\',
  "'": "'",
  '"': '"',
  a: '\x07',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  v: '\v',
};

/** The value of one string token (prefix and quotes included in its text). */
export function decodeStringBody(tok: Token, prefix: string, where: {line: number; col: number}): string {
  const quoteAt = tok.text.length - tok.text.slice(prefix.length).length;
  const q = tok.text[quoteAt];
  const triple = tok.text.startsWith(q.repeat(3), quoteAt) && tok.text.length >= quoteAt + 6;
  const qlen = triple ? 3 : 1;
  const body = tok.text.slice(quoteAt + qlen, tok.text.length - qlen).replace(/\r\n?/g, '\n');
  if (prefix.includes('r') || prefix.includes('f')) return body;
  const cps = Array.from(body);
  let out = '';
  let bytePos = 0;
  const unicodeError = (msg: string, from: number, to: number) =>
    syntaxErrorAt(
      `(unicode error) 'unicodeescape' codec can't decode bytes in position ${from}-${to}: ${msg}`,
      where.line,
      where.col + 1,
    );
  const isBytes = prefix.includes('b');
  for (let k = 0; k < cps.length; k++) {
    const c = cps[k];
    if (c !== '\\' || k + 1 >= cps.length) {
      out += c;
      bytePos += Buffer.byteLength(c);
      continue;
    }
    const start = bytePos;
    const e = cps[k + 1];
    k++;
    bytePos += 1 + Buffer.byteLength(e);
    if (e in SIMPLE_ESCAPES) {
      out += SIMPLE_ESCAPES[e];
      continue;
    }
    if (e >= '0' && e <= '7') {
      let digits = e;
      while (digits.length < 3 && cps[k + 1] >= '0' && cps[k + 1] <= '7') {
        digits += cps[++k];
        bytePos++;
      }
      out += String.fromCodePoint(parseInt(digits, 8));
      continue;
    }
    const hexLen = e === 'x' ? 2 : isBytes ? 0 : e === 'u' ? 4 : e === 'U' ? 8 : 0;
    if (hexLen) {
      let hex = '';
      while (hex.length < hexLen && /^[0-9a-fA-F]$/.test(cps[k + 1] ?? '')) {
        hex += cps[++k];
        bytePos++;
      }
      const name = e === 'x' ? '\\xXX' : e === 'u' ? '\\uXXXX' : '\\UXXXXXXXX';
      if (hex.length < hexLen) throw unicodeError(`truncated ${name} escape`, start, bytePos - 1);
      const n = parseInt(hex, 16);
      if (n > 0x10ffff) throw unicodeError('illegal Unicode character', start, bytePos - 1);
      out += String.fromCodePoint(n);
      continue;
    }
    if (e === 'N' && !isBytes) {
      throw new PredicateFormulaError('SyntaxError', `\\N{...} escapes are not supported on line ${tok.line}`);
    }
    // Unknown escapes stay as they are (CPython only warns).
    out += '\\' + e;
  }
  return out;
}
