/** Python's number and string literals: their values, and the errors CPython reports for them. */
import {PySyntaxError, syntaxError} from './errors.js';
import {type Token, utf8Length} from './tokens.js';

/** A number literal's value: ints as bigint, floats as number, imaginary literals marked. */
export function numberValue(text: string): {value: bigint | number; complex: boolean} {
  const s = text.replace(/_/g, '').toLowerCase();
  if (s.endsWith('j')) return {value: Number(s.slice(0, -1)), complex: true};
  if (/^0[xob]/.test(s)) return {value: BigInt(s), complex: false};
  if (/[.e]/.test(s)) return {value: Number(s), complex: false};
  return {value: BigInt(s), complex: false};
}

/** The prefix of a string token (`rb`, `f`, ...), lower-cased. */
export function stringPrefix(tok: Token): string {
  const text = tok.value;
  let k = 0;
  while (text[k] !== '"' && text[k] !== "'") k++;
  return text.slice(0, k).toLowerCase();
}

/** The text between a string token's quotes, line breaks as `\n`. */
export function stringBody(tok: Token, prefix: string): string {
  const text = tok.value;
  const q = text[prefix.length];
  const triple = text.startsWith(q.repeat(3), prefix.length) && text.length >= prefix.length + 6;
  const qlen = triple ? 3 : 1;
  const body = text.slice(prefix.length + qlen, text.length - qlen);
  return body.includes('\r') ? body.replace(/\r\n?/g, '\n') : body;
}

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

export interface EscapeOptions {
  bytes: boolean;
  /** Where CPython places an error of the literal (after the last string token read), found when needed. */
  where: () => {line: number; col: number};
  /** The literal's first line (the `\N{...}` refusal names it). */
  line: number;
  /** `\N{...}` (named characters, not supported): kept as written instead of refused. */
  keepNamed: boolean;
}

/** Decodes the escapes of a non-raw string body as CPython does (unknown escapes stay). */
export function decodeEscapes(body: string, o: EscapeOptions): string {
  if (!body.includes('\\')) return body;
  const cps = Array.from(body);
  let out = '';
  let bytePos = 0;
  const unicodeError = (msg: string, from: number, to: number) =>
    syntaxError(
      `(unicode error) 'unicodeescape' codec can't decode bytes in position ${from}-${to}: ${msg}`,
      o.where().line,
      o.where().col + 1,
    );
  for (let k = 0; k < cps.length; k++) {
    const c = cps[k];
    if (c !== '\\' || k + 1 >= cps.length) {
      out += c;
      bytePos += utf8Length(c);
      continue;
    }
    const start = bytePos;
    const e = cps[k + 1];
    k++;
    bytePos += 1 + utf8Length(e);
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
    const hexLen = e === 'x' ? 2 : o.bytes ? 0 : e === 'u' ? 4 : e === 'U' ? 8 : 0;
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
    if (e === 'N' && !o.bytes) {
      if (!o.keepNamed) {
        const msg = `\\N{...} escapes are not supported on line ${o.line}`;
        throw new PySyntaxError('SyntaxError', msg, o.line, null, true);
      }
      let end = k + 1;
      if (cps[end] === '{') {
        while (end < cps.length && cps[end] !== '}') end++;
        if (end < cps.length) {
          out += '\\N' + cps.slice(k + 1, end + 1).join('');
          k = end;
          continue;
        }
      }
    }
    // Unknown escapes stay as they are (CPython only warns).
    out += '\\' + e;
  }
  return out;
}
