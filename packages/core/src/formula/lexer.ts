/**
 * Tokenizer for the Python subset gristlite evaluates. Produces INDENT/DEDENT tokens as Python's
 * tokenizer does, ignores newlines inside brackets and after a backslash continuation, and turns
 * Grist's `$name` into `rec.name` (only where `$` starts a token, so never inside strings/comments).
 */
import {PyException} from './values.js';

export type TokKind = 'name' | 'number' | 'string' | 'op' | 'newline' | 'indent' | 'dedent' | 'eof';

export interface Token {
  kind: TokKind;
  /** name text, operator text, or the decoded string value. */
  value: string;
  /** Numbers: the parsed value. */
  num?: bigint | number;
  /** Strings: prefix flags. */
  fstring?: boolean;
  bytes?: boolean;
  raw?: boolean;
  /** Offsets of the token in the source text (start inclusive, end exclusive). */
  start: number;
  end: number;
  line: number;
  col: number;
  /** A name token that came from `$name` (start points at the `$`). */
  dollar?: boolean;
}

export function syntaxError(msg: string, line: number, col?: number): PyException {
  const where = col === undefined ? `line ${line}` : `line ${line}, column ${col + 1}`;
  return new PyException('SyntaxError', `${msg} on ${where}`);
}

const OPS3 = ['**=', '//=', '>>=', '<<=', '...'];
const OPS2 = [
  '**',
  '//',
  '==',
  '!=',
  '<=',
  '>=',
  '<<',
  '>>',
  '+=',
  '-=',
  '*=',
  '/=',
  '%=',
  '&=',
  '|=',
  '^=',
  '->',
  ':=',
  '<>',
];
const OPS1 = '+-*/%@<>=()[]{},:.;~&|^!';

const isIdStart = (c: string) => /[A-Za-z_\u00c0-\uffff]/.test(c);
const isIdChar = (c: string) => /[A-Za-z0-9_\u00c0-\uffff]/.test(c);

export function tokenize(src: string): Token[] {
  const toks: Token[] = [];
  const indents = [0];
  let i = 0;
  let line = 1;
  let lineStart = 0;
  let depth = 0; // bracket nesting
  let atLineStart = true;
  const n = src.length;

  const push = (kind: TokKind, value: string, start: number, end: number, extra?: Partial<Token>) => {
    toks.push({kind, value, start, end, line, col: start - lineStart, ...extra});
  };

  while (i < n) {
    if (atLineStart && depth === 0) {
      // Measure indentation; skip blank and comment-only lines.
      let col = 0;
      let j = i;
      while (j < n && (src[j] === ' ' || src[j] === '\t' || src[j] === '\f')) {
        col = src[j] === '\t' ? (Math.floor(col / 8) + 1) * 8 : col + 1;
        j++;
      }
      if (j >= n) {
        i = j;
        break;
      }
      if (src[j] === '\n' || src[j] === '\r' || src[j] === '#') {
        while (j < n && src[j] !== '\n') j++;
        i = j + 1;
        line++;
        lineStart = i;
        continue;
      }
      if (src[j] === '\\' && (src[j + 1] === '\n' || src[j + 1] === '\r')) {
        // A continuation on an otherwise empty line: treat as blank.
      }
      i = j;
      atLineStart = false;
      const cur = indents[indents.length - 1];
      if (col > cur) {
        indents.push(col);
        push('indent', '', i, i);
      } else if (col < cur) {
        while (col < indents[indents.length - 1]) {
          indents.pop();
          push('dedent', '', i, i);
        }
        if (col !== indents[indents.length - 1]) {
          throw syntaxError('unindent does not match any outer indentation level', line);
        }
      }
    }
    const c = src[i];
    if (c === '\n' || c === '\r') {
      if (c === '\r' && src[i + 1] === '\n') i++;
      if (depth === 0) {
        push('newline', '', i, i + 1);
        atLineStart = true;
      }
      i++;
      line++;
      lineStart = i;
      continue;
    }
    if (c === ' ' || c === '\t' || c === '\f') {
      i++;
      continue;
    }
    if (c === '#') {
      while (i < n && src[i] !== '\n') i++;
      continue;
    }
    if (c === '\\' && (src[i + 1] === '\n' || src[i + 1] === '\r')) {
      i += src[i + 1] === '\r' && src[i + 2] === '\n' ? 3 : 2;
      line++;
      lineStart = i;
      continue;
    }
    const start = i;
    // Strings, with optional prefixes.
    if (isIdStart(c) || c === '"' || c === "'") {
      let j = i;
      while (j < n && isIdChar(src[j])) j++;
      const word = src.slice(i, j);
      if ((src[j] === '"' || src[j] === "'") && /^(r|u|b|f|br|rb|fr|rf)$/i.test(word)) {
        i = lexString(src, j, word.toLowerCase(), start);
        continue;
      }
      if (c === '"' || c === "'") {
        i = lexString(src, i, '', start);
        continue;
      }
      push('name', word, start, j);
      i = j;
      continue;
    }
    if (c === '$') {
      let j = i + 1;
      if (j < n && isIdStart(src[j])) {
        while (j < n && isIdChar(src[j])) j++;
        const name = src.slice(i + 1, j);
        push('name', 'rec', start, start + 1, {dollar: true});
        push('op', '.', start, start + 1, {dollar: true});
        push('name', name, start + 1, j, {dollar: true});
        i = j;
        continue;
      }
      throw syntaxError('invalid syntax', line, i - lineStart);
    }
    if (/[0-9]/.test(c) || (c === '.' && /[0-9]/.test(src[i + 1] ?? ''))) {
      i = lexNumber(src, i, start);
      continue;
    }
    const three = src.slice(i, i + 3);
    const two = src.slice(i, i + 2);
    let op: string | null = null;
    if (OPS3.includes(three)) op = three;
    else if (OPS2.includes(two)) op = two;
    else if (OPS1.includes(c)) op = c;
    if (op === null || op === '!') {
      throw syntaxError('invalid syntax', line, i - lineStart);
    }
    if ('([{'.includes(op)) depth++;
    else if (')]}'.includes(op)) depth = Math.max(0, depth - 1);
    push('op', op, start, i + op.length);
    i += op.length;
  }
  if (toks.length && toks[toks.length - 1].kind !== 'newline') push('newline', '', n, n);
  while (indents.length > 1) {
    indents.pop();
    push('dedent', '', n, n);
  }
  push('eof', '', n, n);
  return toks;

  function lexNumber(s: string, j: number, st: number): number {
    let m: RegExpMatchArray | null;
    const rest = s.slice(j);
    if ((m = rest.match(/^0[xX](?:_?[0-9a-fA-F])+/))) {
      push('number', m[0], st, j + m[0].length, {num: BigInt(m[0].replace(/_/g, ''))});
      return j + m[0].length;
    }
    if ((m = rest.match(/^0[oO](?:_?[0-7])+/))) {
      push('number', m[0], st, j + m[0].length, {num: BigInt(m[0].replace(/_/g, ''))});
      return j + m[0].length;
    }
    if ((m = rest.match(/^0[bB](?:_?[01])+/))) {
      push('number', m[0], st, j + m[0].length, {num: BigInt(m[0].replace(/_/g, ''))});
      return j + m[0].length;
    }
    m = rest.match(/^(?:[0-9](?:_?[0-9])*)?(?:\.(?:[0-9](?:_?[0-9])*)?)?(?:[eE][-+]?[0-9](?:_?[0-9])*)?[jJ]?/);
    const text = m![0];
    if (/[jJ]$/.test(text)) throw syntaxError('complex numbers are not supported', line, j - lineStart);
    const clean = text.replace(/_/g, '');
    if (/[.eE]/.test(clean)) {
      push('number', text, st, j + text.length, {num: Number(clean)});
    } else {
      if (/^0[0-9]/.test(clean) && /[1-9]/.test(clean)) {
        throw syntaxError('leading zeros in decimal integer literals are not permitted', line, j - lineStart);
      }
      push('number', text, st, j + text.length, {num: BigInt(clean)});
    }
    if (j + text.length < n && isIdStart(s[j + text.length])) {
      throw syntaxError('invalid decimal literal', line, j - lineStart);
    }
    return j + text.length;
  }

  function lexString(s: string, j: number, prefix: string, st: number): number {
    const q = s[j];
    const triple = s.slice(j, j + 3) === q.repeat(3);
    const delim = triple ? q.repeat(3) : q;
    let k = j + delim.length;
    const raw = prefix.includes('r');
    const startLine = line;
    let out = '';
    for (;;) {
      if (k >= n)
        throw syntaxError(
          triple ? 'unterminated triple-quoted string literal' : 'unterminated string literal',
          startLine,
          st - lineStart,
        );
      const ch = s[k];
      if (s.startsWith(delim, k)) {
        k += delim.length;
        break;
      }
      if (ch === '\n') {
        if (!triple) throw syntaxError('unterminated string literal', startLine, st - lineStart);
        line++;
        lineStart = k + 1;
        out += ch;
        k++;
        continue;
      }
      if (ch === '\\') {
        const nx = s[k + 1];
        if (raw || prefix.includes('f')) {
          // Raw strings keep the backslash; f-strings are decoded after splitting (below).
          if (nx === '\n') {
            line++;
            lineStart = k + 2;
          }
          out += ch + (nx ?? '');
          k += 2;
          continue;
        }
        const [txt, len] = decodeEscape(s, k, prefix.includes('b'));
        if (nx === '\n') {
          line++;
          lineStart = k + 2;
        }
        out += txt;
        k += len;
        continue;
      }
      out += ch;
      k++;
    }
    push('string', out, st, k, {fstring: prefix.includes('f'), bytes: prefix.includes('b'), raw});
    return k;
  }
}

/** Decodes one backslash escape at s[k]; returns the text and the length consumed. */
export function decodeEscape(s: string, k: number, bytes = false): [string, number] {
  const nx = s[k + 1];
  switch (nx) {
    case '\n':
      return ['', 2];
    case '\\':
      return ['\\', 2];
    case "'":
      return ["'", 2];
    case '"':
      return ['"', 2];
    case 'a':
      return ['\x07', 2];
    case 'b':
      return ['\b', 2];
    case 'f':
      return ['\f', 2];
    case 'n':
      return ['\n', 2];
    case 'r':
      return ['\r', 2];
    case 't':
      return ['\t', 2];
    case 'v':
      return ['\v', 2];
    case 'x': {
      const h = s.slice(k + 2, k + 4);
      if (!/^[0-9a-fA-F]{2}$/.test(h)) throw new PyException('SyntaxError', 'truncated \\xXX escape');
      return [String.fromCharCode(parseInt(h, 16)), 4];
    }
    case 'u':
    case 'U': {
      if (bytes) return ['\\' + nx, 2];
      const len = nx === 'u' ? 4 : 8;
      const h = s.slice(k + 2, k + 2 + len);
      if (!new RegExp(`^[0-9a-fA-F]{${len}}$`).test(h))
        throw new PyException('SyntaxError', 'truncated \\uXXXX escape');
      return [String.fromCodePoint(parseInt(h, 16)), 2 + len];
    }
    case 'N': {
      const m = s.slice(k).match(/^\\N\{[^}]*\}/);
      return [m ? m[0] : '\\N', m ? m[0].length : 2];
    }
  }
  if (nx !== undefined && /[0-7]/.test(nx)) {
    const m = s.slice(k + 1).match(/^[0-7]{1,3}/)!;
    return [String.fromCharCode(parseInt(m[0], 8)), 1 + m[0].length];
  }
  return ['\\' + (nx ?? ''), nx === undefined ? 1 : 2];
}

/** Decodes all escapes of a non-raw string body (used for f-string literal parts). */
export function decodeEscapes(s: string): string {
  let out = '';
  for (let k = 0; k < s.length; ) {
    if (s[k] === '\\') {
      const [t, len] = decodeEscape(s, k);
      out += t;
      k += len;
    } else out += s[k++];
  }
  return out;
}
