/**
 * Python's `re` module over JS RegExp. Patterns are translated from Python's syntax (named groups
 * `(?P<n>...)`, `(?P=n)`, global inline flags, `\A`, `\Z`, Python's `$`, `^` and `.`, Unicode
 * `\w`/`\d`/`\s`/`\b`, verbose mode, literal braces) to a JS pattern with the `u` flag. Positions
 * are code-point offsets, as Python's are. Scoped inline flags `(?i:...)`, atomic groups and
 * possessive quantifiers have no JS equivalent on Node 20 and raise `re.error`.
 *
 * One thing: Python's `re` module, whose functions and match objects share the one pattern
 * translation; the regex guard that bounds their time is its own file (re-guard.ts).
 */
import {
  type Kwargs,
  PyDict,
  type PyList,
  type PyObject,
  PyTuple,
  type Value,
  attributeError,
  bindArgs,
  raise,
  strRepr,
  typeName,
} from '../values.js';
import {PyClass, fn} from '../datetime.js';
import {type RegexRisk, rateRegex, safeExec, safeMatches} from './re-guard.js';

export const FLAGS = {I: 2, L: 4, M: 8, S: 16, U: 32, X: 64, A: 256} as const;

const WORD = '\\p{L}\\p{N}_';
const SPACE = '\\t\\n\\v\\f\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
const JS_SYNTAX = new Set('^$\\.*+?()[]{}|/'.split(''));

function reError(msg: string, _pattern?: string, pos?: number): never {
  return raise('error', pos === undefined ? msg : `${msg} at position ${pos}`);
}

interface Translated {
  source: string;
  /** How long matching may take (re-guard.ts): decides whether it runs under a watchdog. */
  risk: RegexRisk;
  flags: number;
  groups: number;
  groupNames: Map<string, number>;
}

const cache = new Map<string, Translated>();

/** Translates a Python pattern to a JS one (cached per pattern and flags). */
export function translate(pattern: string, flags: number): Translated {
  const key = `${flags}:${pattern}`;
  let t = cache.get(key);
  if (!t) {
    t = doTranslate(pattern, flags);
    if (cache.size > 500) cache.clear();
    cache.set(key, t);
  }
  return t;
}

function hexEsc(cp: number): string {
  return `\\u{${cp.toString(16)}}`;
}

function doTranslate(pattern: string, flagsIn: number): Translated {
  let flags = flagsIn;
  // Global inline flags: Python 3.11 requires them at the start.
  let i = 0;
  const cps = Array.from(pattern);
  const lead = /^\(\?([aiLmsux]+)\)/;
  for (;;) {
    const m = lead.exec(cps.slice(i).join(''));
    if (!m) break;
    for (const c of m[1]) {
      flags |= (
        {a: FLAGS.A, i: FLAGS.I, L: FLAGS.L, m: FLAGS.M, s: FLAGS.S, u: FLAGS.U, x: FLAGS.X} as Record<string, number>
      )[c];
    }
    i += Array.from(m[0]).length;
  }
  const ascii = (flags & FLAGS.A) !== 0;
  const verbose = (flags & FLAGS.X) !== 0;
  const multiline = (flags & FLAGS.M) !== 0;
  const dotall = (flags & FLAGS.S) !== 0;
  const word = ascii ? 'A-Za-z0-9_' : WORD;
  const space = ascii ? ' \\t\\n\\r\\f\\v' : SPACE;
  const digit = ascii ? '0-9' : '\\p{Nd}';
  const wordRe = `[${word}]`;
  let out = '';
  let groups = 0;
  const groupNames = new Map<string, number>();
  const n = cps.length;

  const escapeOutside = (c: string): string => {
    switch (c) {
      case 'A':
        return '(?<![\\s\\S])';
      case 'Z':
        return '(?![\\s\\S])';
      case 'b':
        return `(?:(?<=${wordRe})(?!${wordRe})|(?<!${wordRe})(?=${wordRe}))`;
      case 'B':
        return `(?:(?<=${wordRe})(?=${wordRe})|(?<!${wordRe})(?!${wordRe}))`;
      case 'd':
        return `[${digit}]`;
      case 'D':
        return `[^${digit}]`;
      case 'w':
        return `[${word}]`;
      case 'W':
        return `[^${word}]`;
      case 's':
        return `[${space}]`;
      case 'S':
        return `[^${space}]`;
    }
    return '';
  };

  /** An escape common to classes and outside; returns [js, consumed code points]. */
  const simpleEscape = (j: number, inClass: boolean): [string, number] => {
    const c = cps[j];
    switch (c) {
      case 'n':
        return ['\\n', 1];
      case 't':
        return ['\\t', 1];
      case 'r':
        return ['\\r', 1];
      case 'f':
        return ['\\f', 1];
      case 'v':
        return ['\\v', 1];
      case 'a':
        return ['\\x07', 1];
      case 'x': {
        const h = cps.slice(j + 1, j + 3).join('');
        if (!/^[0-9a-fA-F]{2}$/.test(h)) reError(`incomplete escape \\x${h}`, pattern, j - 1);
        return [hexEsc(parseInt(h, 16)), 3];
      }
      case 'u':
      case 'U': {
        const len = c === 'u' ? 4 : 8;
        const h = cps.slice(j + 1, j + 1 + len).join('');
        if (!new RegExp(`^[0-9a-fA-F]{${len}}$`).test(h)) reError(`incomplete escape \\${c}${h}`, pattern, j - 1);
        return [hexEsc(parseInt(h, 16)), 1 + len];
      }
      case '0': {
        let k = j + 1,
          oct = '0';
        while (k < n && k < j + 3 && /[0-7]/.test(cps[k])) oct += cps[k++];
        return [hexEsc(parseInt(oct, 8)), k - j];
      }
    }
    if (inClass) {
      if (c === 'd') return [digit, 1];
      if (c === 'w') return [word, 1];
      if (c === 's') return [space, 1];
      if (c === 'D') return ['\\P{Nd}', 1];
      if (c === 'W') return ['\\W', 1];
      if (c === 'S') return ['\\S', 1];
      if (c === 'b') return ['\\x08', 1];
    }
    if (/[A-Za-z0-9]/.test(c)) return reError(`bad escape \\${c}`, pattern, j - 1);
    const cp = c.codePointAt(0)!;
    return [JS_SYNTAX.has(c) || (c === '-' && inClass) ? `\\${c}` : hexEsc(cp), 1];
  };

  while (i < n) {
    const c = cps[i];
    if (verbose && /\s/.test(c)) {
      i++;
      continue;
    }
    if (verbose && c === '#') {
      while (i < n && cps[i] !== '\n') i++;
      continue;
    }
    if (c === '\\') {
      if (i + 1 >= n) reError('bad escape (end of pattern)', pattern, i);
      const e = cps[i + 1];
      const special = escapeOutside(e);
      if (special) {
        out += special;
        i += 2;
        continue;
      }
      if (/[1-9]/.test(e)) {
        let k = i + 1,
          num = '';
        while (k < n && /[0-9]/.test(cps[k]) && num.length < 2) num += cps[k++];
        if (Number(num) > groups) reError(`invalid group reference ${num}`, pattern, i + 1);
        out += `(?:\\${num})`;
        i = k;
        continue;
      }
      const [js, used] = simpleEscape(i + 1, false);
      out += js;
      i += 1 + used;
      continue;
    }
    if (c === '[') {
      let j = i + 1;
      let cls = '[';
      if (cps[j] === '^') {
        cls += '^';
        j++;
      }
      if (cps[j] === ']') {
        cls += '\\]';
        j++;
      }
      for (;;) {
        if (j >= n) reError('unterminated character set', pattern, i);
        const d = cps[j];
        if (d === ']') break;
        if (d === '\\') {
          if (j + 1 >= n) reError('bad escape (end of pattern)', pattern, j);
          const [js, used] = simpleEscape(j + 1, true);
          cls += js;
          j += 1 + used;
          continue;
        }
        if (d === '[') cls += '\\[';
        else if (d === '/') cls += '\\/';
        else cls += d;
        j++;
      }
      out += `${cls}]`;
      i = j + 1;
      continue;
    }
    if (c === '(') {
      if (cps[i + 1] === '?') {
        const rest = cps.slice(i + 2, i + 40).join('');
        let m: RegExpExecArray | null;
        if ((m = /^P<([A-Za-z_]\w*)>/.exec(rest))) {
          groups++;
          if (groupNames.has(m[1])) reError(`redefinition of group name '${m[1]}'`, pattern, i);
          groupNames.set(m[1], groups);
          out += `(?<${m[1]}>`;
          i += 2 + m[0].length;
          continue;
        }
        if ((m = /^P=([A-Za-z_]\w*)\)/.exec(rest))) {
          if (!groupNames.has(m[1])) reError(`unknown group name '${m[1]}'`, pattern, i);
          out += `\\k<${m[1]}>`;
          i += 2 + m[0].length;
          continue;
        }
        if ((m = /^<([A-Za-z_]\w*)>/.exec(rest))) {
          // Python 3.12 spelling of a named group is an error in 3.11 ('(?<' must be a lookbehind).
          reError('unknown extension ?<' + m[1][0], pattern, i + 1);
        }
        if (rest.startsWith('#')) {
          const end = cps.indexOf(')', i);
          if (end < 0) reError('missing ), unterminated comment', pattern, i);
          i = end + 1;
          continue;
        }
        if (
          rest.startsWith(':') ||
          rest.startsWith('=') ||
          rest.startsWith('!') ||
          rest.startsWith('<=') ||
          rest.startsWith('<!')
        ) {
          const len = rest.startsWith('<') ? 3 : 2;
          out += cps.slice(i, i + len + 1).join('');
          i += len + 1;
          continue;
        }
        if (/^[aiLmsux-]+[:)]/.test(rest)) {
          if (/^[aiLmsux]+\)/.test(rest)) reError('global flags not at the start of the expression', pattern, i);
          reError('scoped inline flags (?flags:...) are not supported by gristlite', pattern, i);
        }
        if (rest.startsWith('>')) reError('atomic groups are not supported by gristlite', pattern, i);
        if (rest.startsWith('(')) reError('conditional groups are not supported by gristlite', pattern, i);
        reError(`unknown extension ?${rest[0] ?? ''}`, pattern, i + 1);
      }
      groups++;
      out += '(';
      i++;
      continue;
    }
    if (c === '{') {
      const rest = cps.slice(i, i + 30).join('');
      const m = /^\{(\d*)(,(\d*))?\}/.exec(rest);
      // Python reads {m}, {m,}, {,n}, {m,n} and even {,} as repeats; anything else is literal.
      if (m && (m[1] !== '' || m[2] !== undefined)) {
        out += m[1] === '' ? `{0,${m[3]}}` : m[0];
        i += m[0].length;
        if (cps[i] === '+') reError('possessive quantifiers are not supported by gristlite', pattern, i);
        continue;
      }
      out += '\\{';
      i++;
      continue;
    }
    if (c === '}' || c === ']' || c === '/') {
      out += `\\${c}`;
      i++;
      continue;
    }
    if ((c === '+' || c === '*' || c === '?' || c === '}') && cps[i + 1] === '+' && c !== '?') {
      reError('possessive quantifiers are not supported by gristlite', pattern, i + 1);
    }
    if (c === '.') {
      out += dotall ? '[\\s\\S]' : '[^\\n]';
      i++;
      continue;
    }
    if (c === '^') {
      out += multiline ? '(?<![^\\n])' : '(?<![\\s\\S])';
      i++;
      continue;
    }
    if (c === '$') {
      out += multiline ? '(?=\\n|(?![\\s\\S]))' : '(?=\\n?(?![\\s\\S]))';
      i++;
      continue;
    }
    out += c;
    i++;
  }
  return {source: out, risk: rateRegex(out), flags, groups, groupNames};
}

// ---- compiled patterns ------------------------------------------------------------------------

/** Code-point index of a UTF-16 index (identity when the text has no astral characters). */
function cpIndex(s: string, astral: boolean, i: number): number {
  if (!astral) return i;
  let n = 0;
  for (let k = 0; k < i; k++) {
    const c = s.charCodeAt(k);
    if (c < 0xd800 || c > 0xdbff) n++;
  }
  return n;
}

/** UTF-16 index of a code-point index. */
function utf16Index(s: string, astral: boolean, cp: number): number {
  if (!astral) return Math.min(cp, s.length);
  let k = 0;
  for (let n = 0; n < cp && k < s.length; n++) {
    const c = s.charCodeAt(k);
    k += c >= 0xd800 && c <= 0xdbff ? 2 : 1;
  }
  return k;
}

const hasAstral = (s: string) => /[\ud800-\udbff]/.test(s);

export class PyPattern implements PyObject {
  readonly pyType = 'Pattern';
  readonly t: Translated;
  private res: Partial<Record<'search' | 'match' | 'full', RegExp>> = {};
  constructor(
    readonly pattern: string,
    flags: number,
  ) {
    this.t = translate(pattern, flags);
    this.regex('search');
  }
  get flags(): number {
    return this.t.flags | (this.t.flags & FLAGS.A ? 0 : FLAGS.U);
  }

  regex(kind: 'search' | 'match' | 'full'): RegExp {
    let r = this.res[kind];
    if (!r) {
      const jsFlags = 'du' + (this.t.flags & FLAGS.I ? 'i' : '') + (kind === 'search' ? 'g' : 'y');
      const src = kind === 'full' ? `(?:${this.t.source})(?![\\s\\S])` : this.t.source;
      try {
        r = new RegExp(src, jsFlags);
      } catch (e) {
        return reError(String((e as Error).message).replace(/^Invalid regular expression: /, ''));
      }
      this.res[kind] = r;
    }
    return r;
  }

  /** One match from `pos` (code points) within [pos, endpos). */
  exec(kind: 'search' | 'match' | 'full', s: string, pos = 0, endpos: number | null = null): PyMatch | null {
    const astral = hasAstral(s);
    let text = s;
    if (endpos !== null) text = s.slice(0, utf16Index(s, astral, Math.max(0, endpos)));
    const r = this.regex(kind);
    r.lastIndex = utf16Index(s, astral, Math.max(0, pos));
    const m = safeExec(r, this.t.risk, text);
    return m ? new PyMatch(this, s, m, astral, pos, endpos ?? Array.from(s).length) : null;
  }

  /** Non-overlapping matches (at most `limit`), with Python 3.7+'s rules for empty matches (as JS's). */
  *iterate(s: string, pos = 0, endpos: number | null = null, limit = Infinity): Generator<PyMatch> {
    const astral = hasAstral(s);
    let text = s;
    if (endpos !== null) text = s.slice(0, utf16Index(s, astral, Math.max(0, endpos)));
    const r = new RegExp(this.regex('search').source, this.regex('search').flags);
    r.lastIndex = utf16Index(s, astral, Math.max(0, pos));
    const end = endpos ?? Array.from(s).length;
    for (const m of safeMatches(r, this.t.risk, text, limit)) yield new PyMatch(this, s, m, astral, pos, end);
  }

  sub(repl: Value, s: string, count: number): [string, number] {
    if (typeof repl !== 'string' && !(repl !== null && typeof repl === 'object' && 'call' in repl)) {
      raise('TypeError', `expected str instance, ${typeName(repl)} found`);
    }
    const template = typeof repl === 'string' ? parseTemplate(repl, this) : null;
    let out = '';
    let last = 0;
    let n = 0;
    for (const m of this.iterate(s, 0, null, count > 0 ? count : Infinity)) {
      out += s.slice(last, m.m.index);
      out += template ? expandTemplate(template, m) : subResult((repl as PyObject).call!([m], null));
      last = m.m.index + m.m[0].length;
      n++;
    }
    return [out + s.slice(last), n];
  }

  split(s: string, maxsplit: number): PyList {
    const out: PyList = [];
    let last = 0;
    for (const m of this.iterate(s, 0, null, maxsplit > 0 ? maxsplit : Infinity)) {
      out.push(s.slice(last, m.m.index));
      for (let g = 1; g <= this.t.groups; g++) out.push(m.m[g] ?? null);
      last = m.m.index + m.m[0].length;
    }
    out.push(s.slice(last));
    return out;
  }

  findall(s: string, pos = 0, endpos: number | null = null): PyList {
    const out: PyList = [];
    for (const m of this.iterate(s, pos, endpos)) {
      if (this.t.groups === 0) out.push(m.m[0]);
      else if (this.t.groups === 1) out.push(m.m[1] ?? '');
      else out.push(new PyTuple(Array.from({length: this.t.groups}, (_, g) => m.m[g + 1] ?? '')));
    }
    return out;
  }

  getattr(name: string): Value {
    const s = (v: Value, f: string) => {
      if (typeof v !== 'string') raise('TypeError', `expected string or bytes-like object, got '${typeName(v)}'`);
      void f;
      return v as string;
    };
    const posArgs = (fname: string, a: Value[], k: Kwargs | null) => {
      const b = bindArgs(fname, ['string', 'pos', 'endpos'], a, k, {pos: 0n, endpos: null});
      return [s(b.string as Value, fname), Number(b.pos), b.endpos === null ? null : Number(b.endpos)] as const;
    };
    switch (name) {
      case 'pattern':
        return this.pattern;
      case 'flags':
        return BigInt(this.flags);
      case 'groups':
        return BigInt(this.t.groups);
      case 'groupindex': {
        const d = new PyDict();
        for (const [k, v] of this.t.groupNames) d.set(k, BigInt(v));
        return d;
      }
      case 'search':
      case 'match':
      case 'fullmatch':
        return fn(name, (a, k) => {
          const [str, pos, endpos] = posArgs(name, a, k);
          return this.exec(name === 'fullmatch' ? 'full' : name, str, pos, endpos);
        });
      case 'finditer':
        return fn(name, (a, k) => {
          const [str, pos, endpos] = posArgs(name, a, k);
          return [...this.iterate(str, pos, endpos)];
        });
      case 'findall':
        return fn(name, (a, k) => {
          const [str, pos, endpos] = posArgs(name, a, k);
          return this.findall(str, pos, endpos);
        });
      case 'sub':
      case 'subn':
        return fn(name, (a, k) => {
          const b = bindArgs(name, ['repl', 'string', 'count'], a, k, {count: 0n});
          const [r, cnt] = this.sub(b.repl as Value, s(b.string as Value, name), Number(b.count));
          return name === 'sub' ? r : new PyTuple([r, BigInt(cnt)]);
        });
      case 'split':
        return fn(name, (a, k) => {
          const b = bindArgs(name, ['string', 'maxsplit'], a, k, {maxsplit: 0n});
          return this.split(s(b.string as Value, name), Number(b.maxsplit));
        });
    }
    return attributeError(this, name);
  }
  repr(): string {
    const fl = flagNames(this.t.flags & ~FLAGS.U);
    return `re.compile(${strRepr(this.pattern)}${fl ? `, ${fl}` : ''})`;
  }
  eq(o: Value): boolean {
    return o instanceof PyPattern && o.pattern === this.pattern && o.flags === this.flags;
  }
  hashKey(): string {
    return `re:${this.flags}:${this.pattern}`;
  }
}

function flagNames(f: number): string {
  const names: string[] = [];
  const all: Array<[string, number]> = [
    ['IGNORECASE', FLAGS.I],
    ['LOCALE', FLAGS.L],
    ['MULTILINE', FLAGS.M],
    ['DOTALL', FLAGS.S],
    ['UNICODE', FLAGS.U],
    ['VERBOSE', FLAGS.X],
    ['ASCII', FLAGS.A],
  ];
  for (const [n, v] of all) if (f & v) names.push(`re.${n}`);
  return names.join('|');
}

function subResult(v: Value): string {
  if (typeof v !== 'string') return raise('TypeError', `expected str instance, ${typeName(v)} found`);
  return v;
}

type TemplatePart = string | number;

/** Parses a replacement template: `\1`, `\g<1>`, `\g<name>`, and Python's string escapes. */
function parseTemplate(repl: string, p: PyPattern): TemplatePart[] {
  const parts: TemplatePart[] = [];
  let lit = '';
  for (let i = 0; i < repl.length; i++) {
    const c = repl[i];
    if (c !== '\\') {
      lit += c;
      continue;
    }
    const e = repl[i + 1];
    if (e === undefined) reError('bad escape (end of pattern)', repl, i);
    let group: number | null = null;
    if (e === 'g') {
      const m = /^<([^>]*)>/.exec(repl.slice(i + 2));
      if (!m) reError('missing <', repl, i + 2);
      const name = m[1];
      if (/^\d+$/.test(name)) group = Number(name);
      else if (p.t.groupNames.has(name)) group = p.t.groupNames.get(name)!;
      else if (/^[A-Za-z_]\w*$/.test(name)) raise('IndexError', `unknown group name '${name}'`);
      else reError(`bad character in group name '${name}'`, repl, i + 3);
      i += 2 + m[0].length - 1;
    } else if (/[1-9]/.test(e)) {
      let num = e;
      if (/[0-9]/.test(repl[i + 2] ?? '')) num += repl[i + 2];
      group = Number(num);
      i += num.length;
    } else if (e === '0') {
      let k = i + 2,
        oct = '0';
      while (k < repl.length && k < i + 4 && /[0-7]/.test(repl[k])) oct += repl[k++];
      lit += String.fromCodePoint(parseInt(oct, 8));
      i = k - 1;
      continue;
    } else {
      const map: Record<string, string> = {n: '\n', t: '\t', r: '\r', f: '\f', v: '\v', a: '\x07', b: '\b', '\\': '\\'};
      if (e in map) lit += map[e];
      else if (/[A-Za-z]/.test(e)) reError(`bad escape \\${e}`, repl, i);
      else lit += `\\${e}`;
      i += 1;
      continue;
    }
    if (group > p.t.groups) reError(`invalid group reference ${group}`, repl, i);
    if (lit) {
      parts.push(lit);
      lit = '';
    }
    parts.push(group);
  }
  if (lit) parts.push(lit);
  return parts;
}

function expandTemplate(parts: TemplatePart[], m: PyMatch): string {
  let out = '';
  for (const p of parts) out += typeof p === 'string' ? p : (m.m[p] ?? '');
  return out;
}

export class PyMatch implements PyObject {
  readonly pyType = 'Match';
  constructor(
    readonly re: PyPattern,
    readonly string: string,
    readonly m: RegExpExecArray,
    private readonly astral: boolean,
    readonly pos: number,
    readonly endpos: number,
  ) {}

  private groupIndex(g: Value): number {
    if (typeof g === 'bigint' || typeof g === 'boolean') {
      const i = Number(g);
      if (i < 0 || i > this.re.t.groups) raise('IndexError', 'no such group');
      return i;
    }
    if (typeof g === 'string' && this.re.t.groupNames.has(g)) return this.re.t.groupNames.get(g)!;
    return raise('IndexError', 'no such group');
  }
  group(g: Value): Value {
    return this.m[this.groupIndex(g)] ?? null;
  }
  span(g: Value = 0n): [number, number] {
    const i = this.groupIndex(g);
    const ind = this.m.indices?.[i];
    if (!ind) return [-1, -1];
    return [cpIndex(this.string, this.astral, ind[0]), cpIndex(this.string, this.astral, ind[1])];
  }
  private lastindex(): number | null {
    let best: number | null = null,
      bestEnd = -1;
    for (let g = 1; g <= this.re.t.groups; g++) {
      const ind = this.m.indices?.[g];
      // Python's lastindex: the last group to close.
      if (ind && ind[1] >= bestEnd) {
        best = g;
        bestEnd = ind[1];
      }
    }
    return best;
  }

  getattr(name: string): Value {
    switch (name) {
      case 'group':
        return fn('group', (a) => {
          if (a.length <= 1) return this.group(a[0] ?? 0n);
          return new PyTuple(a.map((g) => this.group(g)));
        });
      case 'groups':
        return fn('groups', (a, k) => {
          const d = bindArgs('groups', ['default'], a, k, {default: null}).default as Value;
          return new PyTuple(Array.from({length: this.re.t.groups}, (_, g) => this.m[g + 1] ?? d));
        });
      case 'groupdict':
        return fn('groupdict', (a, k) => {
          const dflt = bindArgs('groupdict', ['default'], a, k, {default: null}).default as Value;
          const out = new PyDict();
          for (const [nm, g] of this.re.t.groupNames) out.set(nm, this.m[g] ?? dflt);
          return out;
        });
      case 'start':
        return fn('start', (a) => BigInt(this.span(a[0] ?? 0n)[0]));
      case 'end':
        return fn('end', (a) => BigInt(this.span(a[0] ?? 0n)[1]));
      case 'span':
        return fn('span', (a) => new PyTuple(this.span(a[0] ?? 0n).map(BigInt)));
      case 'expand':
        return fn('expand', (a) => expandTemplate(parseTemplate(String(a[0]), this.re), this));
      case 'string':
        return this.string;
      case 're':
        return this.re;
      case 'pos':
        return BigInt(this.pos);
      case 'endpos':
        return BigInt(this.endpos);
      case 'lastindex': {
        const l = this.lastindex();
        return l === null ? null : BigInt(l);
      }
      case 'lastgroup': {
        const l = this.lastindex();
        if (l === null) return null;
        for (const [nm, g] of this.re.t.groupNames) if (g === l) return nm;
        return null;
      }
    }
    return attributeError(this, name);
  }
  getitem(key: Value): Value {
    return this.group(key);
  }
  truthy(): boolean {
    return true;
  }
  repr(): string {
    const [s, e] = this.span();
    return `<re.Match object; span=(${s}, ${e}), match=${strRepr(this.m[0])}>`;
  }
}

// ---- the module -------------------------------------------------------------------------------

export function compile(pattern: Value, flags: Value = 0n): PyPattern {
  if (pattern instanceof PyPattern) {
    if (flags !== 0n && flags !== 0) raise('ValueError', 'cannot process flags argument with a compiled pattern');
    return pattern;
  }
  if (typeof pattern !== 'string') return raise('TypeError', 'first argument must be string or compiled pattern');
  const f = typeof flags === 'bigint' ? Number(flags) : typeof flags === 'number' ? flags : 0;
  // Compiled patterns are cached, as Python's re caches them.
  const key = `${f}:${pattern}`;
  let p = patternCache.get(key);
  if (!p) {
    p = new PyPattern(pattern, f);
    if (patternCache.size > 500) patternCache.clear();
    patternCache.set(key, p);
  }
  return p;
}
const patternCache = new Map<string, PyPattern>();

function strArg(v: Value): string {
  if (typeof v !== 'string') raise('TypeError', `expected string or bytes-like object, got '${typeName(v)}'`);
  return v as string;
}

/** Python's re.escape: escapes every character that is special in a pattern. */
// biome-ignore lint/suspicious/noShadowRestrictedNames: Python's re.escape, exported under its own name
export function escape(s: string): string {
  return s.replace(/[()[\]{}?*+\-|^$\\.&~# \t\n\r\v\f]/g, (c) => {
    const m: Record<string, string> = {'\t': '\\\t', '\n': '\\\n', '\r': '\\\r', '\v': '\\\v', '\f': '\\\f'};
    return m[c] ?? `\\${c}`;
  });
}

class ReModule implements PyObject {
  readonly pyType = 'module';
  private readonly attrs: Record<string, Value>;
  constructor() {
    const flagVals: Record<string, Value> = {};
    const long: Record<string, string> = {
      I: 'IGNORECASE',
      L: 'LOCALE',
      M: 'MULTILINE',
      S: 'DOTALL',
      U: 'UNICODE',
      X: 'VERBOSE',
      A: 'ASCII',
    };
    for (const [k, v] of Object.entries(FLAGS)) {
      flagVals[k] = BigInt(v);
      flagVals[long[k]] = BigInt(v);
    }
    const withPattern = (
      name: string,
      params: string[],
      dflt: Record<string, Value>,
      body: (p: PyPattern, b: Record<string, Value | Value[]>) => Value,
    ) =>
      fn(name, (a, k) => {
        const b = bindArgs(name, params, a, k, {flags: 0n, ...dflt});
        return body(compile(b.pattern as Value, b.flags as Value), b);
      });
    this.attrs = {
      ...flagVals,
      NOFLAG: 0n,
      compile: fn('compile', (a, k) => {
        const b = bindArgs('compile', ['pattern', 'flags'], a, k, {flags: 0n});
        return compile(b.pattern as Value, b.flags as Value);
      }),
      search: withPattern('search', ['pattern', 'string', 'flags'], {}, (p, b) =>
        p.exec('search', strArg(b.string as Value)),
      ),
      match: withPattern('match', ['pattern', 'string', 'flags'], {}, (p, b) =>
        p.exec('match', strArg(b.string as Value)),
      ),
      fullmatch: withPattern('fullmatch', ['pattern', 'string', 'flags'], {}, (p, b) =>
        p.exec('full', strArg(b.string as Value)),
      ),
      findall: withPattern('findall', ['pattern', 'string', 'flags'], {}, (p, b) =>
        p.findall(strArg(b.string as Value)),
      ),
      finditer: withPattern('finditer', ['pattern', 'string', 'flags'], {}, (p, b) => [
        ...p.iterate(strArg(b.string as Value)),
      ]),
      split: withPattern('split', ['pattern', 'string', 'maxsplit', 'flags'], {maxsplit: 0n}, (p, b) =>
        p.split(strArg(b.string as Value), Number(b.maxsplit)),
      ),
      sub: withPattern(
        'sub',
        ['pattern', 'repl', 'string', 'count', 'flags'],
        {count: 0n},
        (p, b) => p.sub(b.repl as Value, strArg(b.string as Value), Number(b.count))[0],
      ),
      subn: withPattern('subn', ['pattern', 'repl', 'string', 'count', 'flags'], {count: 0n}, (p, b) => {
        const [r, n] = p.sub(b.repl as Value, strArg(b.string as Value), Number(b.count));
        return new PyTuple([r, BigInt(n)]);
      }),
      escape: fn('escape', (a, k) => escape(strArg(bindArgs('escape', ['pattern'], a, k).pattern as Value))),
      purge: fn('purge', () => {
        cache.clear();
        patternCache.clear();
        return null;
      }),
      Pattern: new PyClass(
        'Pattern',
        () => raise('TypeError', "cannot create 're.Pattern' instances"),
        (v) => v instanceof PyPattern,
        () => ({}),
        're.Pattern',
      ),
      Match: new PyClass(
        'Match',
        () => raise('TypeError', "cannot create 're.Match' instances"),
        (v) => v instanceof PyMatch,
        () => ({}),
        're.Match',
      ),
    };
  }
  getattr(name: string): Value {
    if (Object.hasOwn(this.attrs, name)) return this.attrs[name];
    return raise('AttributeError', `module 're' has no attribute '${name}'`);
  }
  repr(): string {
    return "<module 're'>";
  }
}

export const reModule: PyObject = new ReModule();

/** `re.search(pattern, text)` for the function library. */
export function reSearch(pattern: string, text: string): PyMatch | null {
  return compile(pattern).exec('search', text);
}
export function reSub(pattern: string, repl: string, text: string): string {
  return compile(pattern).sub(repl, text, 0)[0];
}
