/**
 * Attribute access on values: methods of str, list, tuple, dict and set, and `getattr` for
 * objects. Only names listed here are reachable, so no JS property (constructor, __proto__...)
 * can ever be read from a formula.
 *
 * One thing: the allow-list of reachable attributes; keeping it in one file is what lets a
 * reader check that nothing else is reachable.
 */
import {
  type Kwargs,
  PyCallable,
  PyDict,
  PyException,
  type PyObject,
  PySet,
  PyTuple,
  type Value,
  attributeError,
  bindArgs,
  hashKey,
  pyEquals,
  raise,
  repr,
  str,
  truthy,
  typeName,
} from './values.js';
import {
  appendAll,
  callValue,
  contains,
  getitem,
  indexOf,
  iterate,
  pyCompare,
  pyLen,
  strLen,
  toArray,
  PyIterator,
} from './ops.js';
import {formatSpec} from './pyformat.js';
import {C_INT_MAX, C_INT_OVERFLOW, currentBudget, sizeArg} from './budget.js';

type Impl = (self: any, args: Value[], kw: Kwargs | null) => Value;

function argN(name: string, args: Value[], min: number, max: number): void {
  if (args.length < min || args.length > max) {
    if (min === max)
      raise(
        'TypeError',
        `${name}() takes exactly ${min === 0 ? 'no arguments' : `one argument`} (${args.length} given)`,
      );
    raise('TypeError', `${name} expected at most ${max} argument${max === 1 ? '' : 's'}, got ${args.length}`);
  }
}

function needStr(v: Value, what: string): string {
  if (typeof v !== 'string') raise('TypeError', `${what} arg must be None or str`);
  return v as string;
}

function optIndex(v: Value | undefined, len: number, dflt: number): number {
  if (v === undefined || v === null) return dflt;
  let i = indexOf(v, 'slice');
  if (i < 0) i = Math.max(0, i + len);
  return Math.min(i, len);
}

const WS =
  ' \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f\x85\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000';

function stripChars(s: string, chars: Value | undefined, left: boolean, right: boolean): string {
  const set = chars === undefined || chars === null ? WS : needStr(chars, 'strip');
  let a = 0,
    b = s.length;
  if (left) while (a < b && set.includes(s[a])) a++;
  if (right) while (b > a && set.includes(s[b - 1])) b--;
  return s.slice(a, b);
}

function splitWs(s: string, maxsplit: number): string[] {
  const out: string[] = [];
  let i = 0;
  const n = s.length;
  while (i < n) {
    while (i < n && WS.includes(s[i])) i++;
    if (i >= n) break;
    if (maxsplit >= 0 && out.length >= maxsplit) {
      let rest = s.slice(i);
      rest = stripChars(rest, undefined, false, true);
      out.push(rest);
      return out;
    }
    let j = i;
    while (j < n && !WS.includes(s[j])) j++;
    out.push(s.slice(i, j));
    i = j;
  }
  return out;
}

function rsplitWs(s: string, maxsplit: number): string[] {
  if (maxsplit < 0) return splitWs(s, -1);
  const out: string[] = [];
  let j = s.length;
  while (j > 0) {
    while (j > 0 && WS.includes(s[j - 1])) j--;
    if (j <= 0) break;
    if (out.length >= maxsplit) {
      out.unshift(stripChars(s.slice(0, j), undefined, true, false));
      return out;
    }
    let i = j;
    while (i > 0 && !WS.includes(s[i - 1])) i--;
    out.unshift(s.slice(i, j));
    j = i;
  }
  return out;
}

function titleCase(s: string): string {
  let out = '';
  let prevCased = false;
  for (const ch of s) {
    const cased = ch.toLowerCase() !== ch.toUpperCase();
    out += cased ? (prevCased ? ch.toLowerCase() : ch.toUpperCase()) : ch;
    prevCased = cased;
  }
  return out;
}

function tupleOrStr(v: Value, f: (s: string) => boolean, what: string): boolean {
  if (typeof v === 'string') return f(v);
  if (v instanceof PyTuple) return v.items.some((x) => f(needStr(x, what)));
  return raise('TypeError', `${what} first arg must be str or a tuple of str, not ${typeName(v)}`);
}

/** str.format / format_map. */
export function strFormat(fmt: string, args: Value[], kwargs: Kwargs | null, mapping: Value | null = null): string {
  let out = '';
  let auto = 0;
  let i = 0;
  const n = fmt.length;
  while (i < n) {
    const c = fmt[i];
    if (c === '{') {
      if (fmt[i + 1] === '{') {
        out += '{';
        i += 2;
        continue;
      }
      // Find the matching close brace (nested braces in the spec allowed).
      let depth = 1;
      let j = i + 1;
      for (; j < n && depth > 0; j++) {
        if (fmt[j] === '{') depth++;
        else if (fmt[j] === '}') depth--;
      }
      if (depth !== 0) raise('ValueError', "expected '}' before end of string");
      const field = fmt.slice(i + 1, j - 1);
      i = j;
      const m = /^([^!:]*)(?:!([rsa]))?(?::(.*))?$/s.exec(field);
      if (!m) raise('ValueError', 'Invalid format string');
      const [, ref, conv, rawSpec] = m!;
      const spec = rawSpec ? strFormat(rawSpec, args, kwargs, mapping) : '';
      const pm = /^([^.[]*)(.*)$/s.exec(ref)!;
      let val: Value;
      const head = pm[1];
      if (head === '') {
        if (auto < 0) raise('ValueError', 'cannot switch from manual field specification to automatic field numbering');
        if (auto >= args.length)
          raise('IndexError', `Replacement index ${auto} out of range for positional args tuple`);
        val = args[auto++];
      } else if (/^\d+$/.test(head)) {
        const k = Number(head);
        if (k >= args.length) raise('IndexError', `Replacement index ${k} out of range for positional args tuple`);
        val = args[k];
      } else if (mapping) {
        val = getitem(mapping, head);
      } else {
        if (!kwargs || !Object.hasOwn(kwargs, head)) throw new PyException('KeyError', repr(head));
        val = kwargs[head];
      }
      let rest = pm[2];
      while (rest) {
        let mm: RegExpExecArray | null;
        if ((mm = /^\.(\w+)/.exec(rest))) {
          val = getattr(val, mm[1]);
          rest = rest.slice(mm[0].length);
        } else if ((mm = /^\[([^\]]*)\]/.exec(rest))) {
          const key = /^\d+$/.test(mm[1]) ? BigInt(mm[1]) : mm[1];
          val = getitem(val, key);
          rest = rest.slice(mm[0].length);
        } else raise('ValueError', "Only '.' or '[' may follow ']' in format field specifier");
      }
      if (conv === 'r' || conv === 'a') val = repr(val);
      else if (conv === 's') val = str(val);
      out += formatSpec(val, spec);
      continue;
    }
    if (c === '}') {
      if (fmt[i + 1] === '}') {
        out += '}';
        i += 2;
        continue;
      }
      raise('ValueError', "Single '}' encountered in format string");
    }
    out += c;
    i++;
  }
  return out;
}

/**
 * The width of zfill/center/ljust/rjust: a C ssize_t as CPython reads it (OverflowError beyond),
 * then a size within the budget when it would pad (MemoryError), before any padding is built.
 */
function padWidth(s: string, v: Value): number {
  const n = typeof v === 'boolean' ? BigInt(v) : v;
  if (typeof n !== 'bigint') return raise('TypeError', `'${typeName(v)}' object cannot be interpreted as an integer`);
  const w = sizeArg(n);
  if (w > s.length) currentBudget.checkSize(w);
  return w;
}

const STR_METHODS: Record<string, Impl> = {
  upper: (s: string) => s.toUpperCase(),
  lower: (s: string) => s.toLowerCase(),
  casefold: (s: string) => s.toLowerCase(),
  swapcase: (s: string) =>
    Array.from(s)
      .map((c) => (c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase()))
      .join(''),
  title: (s: string) => titleCase(s),
  capitalize: (s: string) => (s ? Array.from(s)[0].toUpperCase() + Array.from(s).slice(1).join('').toLowerCase() : s),
  strip: (s: string, a) => stripChars(s, a[0], true, true),
  lstrip: (s: string, a) => stripChars(s, a[0], true, false),
  rstrip: (s: string, a) => stripChars(s, a[0], false, true),
  split: (s: string, a, kw) => {
    const p = bindArgs('split', ['sep', 'maxsplit'], a, kw, {sep: null, maxsplit: -1n});
    const max = Number(p.maxsplit as bigint);
    if (p.sep === null) return splitWs(s, max);
    const sep = needStr(p.sep as Value, 'split');
    if (sep === '') raise('ValueError', 'empty separator');
    const parts = s.split(sep);
    if (max >= 0 && parts.length > max + 1) return [...parts.slice(0, max), parts.slice(max).join(sep)];
    return parts;
  },
  rsplit: (s: string, a, kw) => {
    const p = bindArgs('rsplit', ['sep', 'maxsplit'], a, kw, {sep: null, maxsplit: -1n});
    const max = Number(p.maxsplit as bigint);
    if (p.sep === null) return rsplitWs(s, max);
    const sep = needStr(p.sep as Value, 'rsplit');
    if (sep === '') raise('ValueError', 'empty separator');
    const parts = s.split(sep);
    if (max >= 0 && parts.length > max + 1)
      return [parts.slice(0, parts.length - max).join(sep), ...parts.slice(parts.length - max)];
    return parts;
  },
  splitlines: (s: string, a) => {
    const keep = a.length ? truthy(a[0]) : false;
    const out: string[] = [];
    const re = /\r\n|[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]/g;
    let last = 0;
    let m: RegExpExecArray | null;
    while ((m = re.exec(s))) {
      out.push(s.slice(last, keep ? re.lastIndex : m.index));
      last = re.lastIndex;
    }
    if (last < s.length) out.push(s.slice(last));
    return out;
  },
  join: (s: string, a) => {
    argN('join', a, 1, 1);
    const parts = toArray(a[0]);
    parts.forEach((p, i) => {
      if (typeof p !== 'string') raise('TypeError', `sequence item ${i}: expected str instance, ${typeName(p)} found`);
    });
    const r = parts.join(s);
    currentBudget.checkSize(r.length);
    return r;
  },
  replace: (s: string, a) => {
    argN('replace', a, 2, 3);
    const old = needStr(a[0], 'replace'),
      nw = needStr(a[1], 'replace');
    let count = a.length > 2 ? Number(a[2] as bigint) : -1;
    if (count < 0) {
      const r =
        old === ''
          ? Array.from(s)
              .map((c) => nw + c)
              .join('') + nw
          : s.split(old).join(nw);
      currentBudget.checkSize(r.length);
      return r;
    }
    let out = '';
    let i = 0;
    while (count-- > 0) {
      const j = s.indexOf(old, i);
      if (j < 0) break;
      out += s.slice(i, j) + nw;
      i = j + old.length;
      if (old === '') {
        out += s[i] ?? '';
        i++;
        if (i > s.length) break;
      }
    }
    return out + s.slice(i);
  },
  startswith: (s: string, a) => {
    const st = optIndex(a[1], s.length, 0),
      en = optIndex(a[2], s.length, s.length);
    const sub = s.slice(st, en);
    return tupleOrStr(a[0], (p) => sub.startsWith(p) && st <= en, 'startswith');
  },
  endswith: (s: string, a) => {
    const st = optIndex(a[1], s.length, 0),
      en = optIndex(a[2], s.length, s.length);
    const sub = s.slice(st, en);
    return tupleOrStr(a[0], (p) => sub.endsWith(p) && st <= en, 'endswith');
  },
  find: (s: string, a) => BigInt(findIn(s, a, false)),
  rfind: (s: string, a) => BigInt(findIn(s, a, true)),
  index: (s: string, a) => {
    const i = findIn(s, a, false);
    if (i < 0) raise('ValueError', 'substring not found');
    return BigInt(i);
  },
  rindex: (s: string, a) => {
    const i = findIn(s, a, true);
    if (i < 0) raise('ValueError', 'substring not found');
    return BigInt(i);
  },
  count: (s: string, a) => {
    const sub = needStr(a[0], 'count');
    const st = optIndex(a[1], s.length, 0),
      en = optIndex(a[2], s.length, s.length);
    const t = s.slice(st, en);
    if (sub === '') return BigInt(strLen(t) + 1);
    return BigInt(t.split(sub).length - 1);
  },
  format: (s: string, a, kw) => strFormat(s, a, kw),
  format_map: (s: string, a) => strFormat(s, [], null, a[0]),
  zfill: (s: string, a) => {
    const w = padWidth(s, a[0]);
    const sign = s[0] === '-' || s[0] === '+' ? s[0] : '';
    const body = s.slice(sign.length);
    return sign + body.padStart(Math.max(0, w - sign.length), '0');
  },
  center: (s: string, a) => {
    const w = padWidth(s, a[0]),
      f = (a[1] as string) ?? ' ';
    const n = w - strLen(s);
    if (n <= 0) return s;
    const left = Math.floor(n / 2) + (n & w & 1);
    return f.repeat(left) + s + f.repeat(n - left);
  },
  ljust: (s: string, a) => {
    const w = padWidth(s, a[0]);
    const n = w - strLen(s);
    return n > 0 ? s + ((a[1] as string) ?? ' ').repeat(n) : s;
  },
  rjust: (s: string, a) => {
    const w = padWidth(s, a[0]);
    const n = w - strLen(s);
    return n > 0 ? ((a[1] as string) ?? ' ').repeat(n) + s : s;
  },
  isdigit: (s: string) => s.length > 0 && /^[0-9\u00b2\u00b3\u00b9\u0660-\u0669\u06f0-\u06f9\u0966-\u096f]+$/.test(s),
  isdecimal: (s: string) => s.length > 0 && /^\p{Nd}+$/u.test(s),
  isnumeric: (s: string) => s.length > 0 && /^[\p{N}]+$/u.test(s),
  isalpha: (s: string) => s.length > 0 && /^\p{L}+$/u.test(s),
  isalnum: (s: string) => s.length > 0 && /^[\p{L}\p{N}]+$/u.test(s),
  isspace: (s: string) => s.length > 0 && Array.from(s).every((c) => WS.includes(c)),
  isupper: (s: string) => /\p{Lu}/u.test(s) && !/\p{Ll}/u.test(s),
  islower: (s: string) => /\p{Ll}/u.test(s) && !/\p{Lu}/u.test(s),
  istitle: (s: string) => s.length > 0 && titleCase(s) === s && /\p{L}/u.test(s),
  isidentifier: (s: string) => /^[A-Za-z_\u00c0-\uffff][A-Za-z0-9_\u00c0-\uffff]*$/.test(s),
  isprintable: (s: string) => !/[\x00-\x1f\x7f]/.test(s),
  isascii: (s: string) => /^[\x00-\x7f]*$/.test(s),
  partition: (s: string, a) => {
    const sep = needStr(a[0], 'partition');
    const i = s.indexOf(sep);
    return i < 0 ? new PyTuple([s, '', '']) : new PyTuple([s.slice(0, i), sep, s.slice(i + sep.length)]);
  },
  rpartition: (s: string, a) => {
    const sep = needStr(a[0], 'rpartition');
    const i = s.lastIndexOf(sep);
    return i < 0 ? new PyTuple(['', '', s]) : new PyTuple([s.slice(0, i), sep, s.slice(i + sep.length)]);
  },
  removeprefix: (s: string, a) => {
    const p = needStr(a[0], 'removeprefix');
    return p && s.startsWith(p) ? s.slice(p.length) : s;
  },
  removesuffix: (s: string, a) => {
    const p = needStr(a[0], 'removesuffix');
    return p && s.endsWith(p) ? s.slice(0, -p.length) : s;
  },
  expandtabs: (s: string, a) => {
    const size = a.length ? sizeArg(a[0] as bigint, C_INT_OVERFLOW, C_INT_MAX) : 8;
    let out = '';
    let col = 0;
    for (const ch of s) {
      if (ch === '\t') {
        const k = size > 0 ? size - (col % size) : 0;
        currentBudget.checkSize(out.length + k);
        out += ' '.repeat(k);
        col += k;
      } else if (ch === '\n' || ch === '\r') {
        out += ch;
        col = 0;
      } else {
        out += ch;
        col++;
      }
    }
    return out;
  },
  encode: (s: string) => s,
  decode: (s: string) => s,
  translate: (s: string, a) => {
    const table = a[0];
    let out = '';
    for (const ch of s) {
      let v: Value | undefined;
      if (table instanceof PyDict) v = table.get(BigInt(ch.codePointAt(0)!));
      if (v === undefined) out += ch;
      else if (v === null) continue;
      else out += typeof v === 'bigint' ? String.fromCodePoint(Number(v)) : str(v);
    }
    return out;
  },
};

function findIn(s: string, a: Value[], right: boolean): number {
  const sub = needStr(a[0], 'find');
  const st = optIndex(a[1], s.length, 0),
    en = optIndex(a[2], s.length, s.length);
  if (st > en) return -1;
  const t = s.slice(st, en);
  const i = right ? t.lastIndexOf(sub) : t.indexOf(sub);
  return i < 0 ? -1 : i + st;
}

function listIndex(items: readonly Value[], a: Value[], what: string): bigint {
  const st = optIndex(a[1], items.length, 0),
    en = optIndex(a[2], items.length, items.length);
  for (let i = st; i < en; i++) if (pyEquals(items[i], a[0])) return BigInt(i);
  return raise('ValueError', what === 'list' ? `${repr(a[0])} is not in list` : 'tuple.index(x): x not in tuple');
}

/** list.sort and sorted(): stable, with key and reverse. */
export function sortValues(items: Value[], key: Value, reverse: boolean): Value[] {
  const keys = key === null ? items : items.map((x) => callValue(key, [x], null));
  const idx = items.map((_, i) => i);
  idx.sort((i, j) => {
    const c = reverse ? pyCompare(keys[j], keys[i]) : pyCompare(keys[i], keys[j]);
    return c || i - j;
  });
  // Python's reverse=True keeps equal elements in original order.
  return idx.map((i) => items[i]);
}

const LIST_METHODS: Record<string, Impl> = {
  append: (l: Value[], a) => {
    argN('append', a, 1, 1);
    l.push(a[0]);
    if ((l.length & 0xffff) === 0) currentBudget.checkSize(l.length);
    return null;
  },
  extend: (l: Value[], a) => {
    appendAll(l, toArray(a[0]));
    return null;
  },
  insert: (l: Value[], a) => {
    let i = indexOf(a[0], 'list');
    if (i < 0) i = Math.max(0, i + l.length);
    l.splice(Math.min(i, l.length), 0, a[1]);
    return null;
  },
  pop: (l: Value[], a) => {
    if (!l.length) raise('IndexError', 'pop from empty list');
    let i = a.length ? indexOf(a[0], 'list') : l.length - 1;
    if (i < 0) i += l.length;
    if (i < 0 || i >= l.length) raise('IndexError', 'pop index out of range');
    return l.splice(i, 1)[0];
  },
  remove: (l: Value[], a) => {
    const i = l.findIndex((x) => pyEquals(x, a[0]));
    if (i < 0) raise('ValueError', 'list.remove(x): x not in list');
    l.splice(i, 1);
    return null;
  },
  index: (l: Value[], a) => listIndex(l, a, 'list'),
  count: (l: Value[], a) => BigInt(l.filter((x) => pyEquals(x, a[0])).length),
  reverse: (l: Value[]) => {
    l.reverse();
    return null;
  },
  sort: (l: Value[], a, kw) => {
    if (a.length) raise('TypeError', 'sort() takes no positional arguments');
    const p = bindArgs('sort', ['key', 'reverse'], [], kw, {key: null, reverse: false});
    const sorted = sortValues(l, p.key as Value, truthy(p.reverse as Value));
    for (let i = 0; i < sorted.length; i++) l[i] = sorted[i];
    return null;
  },
  copy: (l: Value[]) => l.slice(),
  clear: (l: Value[]) => {
    l.length = 0;
    return null;
  },
};

const TUPLE_METHODS: Record<string, Impl> = {
  index: (t: PyTuple, a) => listIndex(t.items, a, 'tuple'),
  count: (t: PyTuple, a) => BigInt(t.items.filter((x) => pyEquals(x, a[0])).length),
};

export function dictFromArgs(d: PyDict, a: Value[], kw: Kwargs | null, what = 'update'): void {
  if (a.length > 1) raise('TypeError', `${what} expected at most 1 argument, got ${a.length}`);
  if (a.length) {
    const src = a[0];
    if (src instanceof PyDict) for (const [k, v] of src.entries()) d.set(k, v);
    else if (
      src !== null &&
      typeof src === 'object' &&
      !Array.isArray(src) &&
      !(src instanceof PyTuple) &&
      (src as PyObject).getattr &&
      hasKeys(src)
    ) {
      const keys = callValue((src as PyObject).getattr!('keys'), [], null);
      for (const k of iterate(keys)) d.set(k, getitem(src, k));
    } else {
      let i = 0;
      for (const item of iterate(src)) {
        const pair = toArray(item);
        if (pair.length !== 2)
          raise('ValueError', `dictionary update sequence element #${i} has length ${pair.length}; 2 is required`);
        hashKey(pair[0]);
        d.set(pair[0], pair[1]);
        i++;
      }
    }
  }
  for (const [k, v] of Object.entries(kw ?? {})) d.set(k, v);
}

function hasKeys(o: Value): boolean {
  try {
    (o as PyObject).getattr!('keys');
    return true;
  } catch {
    return false;
  }
}

/** dict views: keys(), values(), items() (iterable, len, in). */
class DictView implements PyObject {
  constructor(
    readonly pyType: string,
    private readonly d: PyDict,
    private readonly kind: 'k' | 'v' | 'i',
  ) {}
  *iter(): Iterable<Value> {
    for (const [k, v] of this.d.entries()) yield this.kind === 'k' ? k : this.kind === 'v' ? v : new PyTuple([k, v]);
  }
  len(): number {
    return this.d.size;
  }
  contains(x: Value): boolean {
    if (this.kind === 'k') return this.d.has(x);
    return contains([...this.iter()], x);
  }
  repr(): string {
    return `${this.pyType}(${repr([...this.iter()])})`;
  }
  eq(o: Value): boolean {
    return o instanceof DictView && o.kind === this.kind && pyEquals([...this.iter()], [...o.iter()]);
  }
}

const DICT_METHODS: Record<string, Impl> = {
  get: (d: PyDict, a) => {
    argN('get', a, 1, 2);
    const v = d.get(a[0]);
    return v === undefined ? (a.length > 1 ? a[1] : null) : v;
  },
  keys: (d: PyDict) => new DictView('dict_keys', d, 'k'),
  values: (d: PyDict) => new DictView('dict_values', d, 'v'),
  items: (d: PyDict) => new DictView('dict_items', d, 'i'),
  pop: (d: PyDict, a) => {
    const v = d.get(a[0]);
    if (v === undefined) {
      if (a.length > 1) return a[1];
      throw new PyException('KeyError', repr(a[0]));
    }
    d.delete(a[0]);
    return v;
  },
  popitem: (d: PyDict) => {
    const e = d.entries();
    if (!e.length) raise('KeyError', "'popitem(): dictionary is empty'");
    const [k, v] = e[e.length - 1];
    d.delete(k);
    return new PyTuple([k, v]);
  },
  setdefault: (d: PyDict, a) => {
    const v = d.get(a[0]);
    if (v !== undefined) return v;
    const dv = a.length > 1 ? a[1] : null;
    d.set(a[0], dv);
    return dv;
  },
  update: (d: PyDict, a, kw) => {
    dictFromArgs(d, a, kw);
    return null;
  },
  copy: (d: PyDict) => {
    const c = new PyDict();
    for (const [k, v] of d.entries()) c.set(k, v);
    return c;
  },
  clear: (d: PyDict) => {
    d.map.clear();
    return null;
  },
};

const SET_METHODS: Record<string, Impl> = {
  add: (s: PySet, a) => {
    hashKey(a[0]);
    s.add(a[0]);
    return null;
  },
  remove: (s: PySet, a) => {
    if (!s.map.delete(hashKey(a[0]))) throw new PyException('KeyError', repr(a[0]));
    return null;
  },
  discard: (s: PySet, a) => {
    s.map.delete(hashKey(a[0]));
    return null;
  },
  pop: (s: PySet) => {
    const v = s.values()[0];
    if (v === undefined) raise('KeyError', "'pop from an empty set'");
    s.map.delete(hashKey(v));
    return v;
  },
  clear: (s: PySet) => {
    s.map.clear();
    return null;
  },
  copy: (s: PySet) => new PySet(s.values(), s.pyType === 'frozenset'),
  update: (s: PySet, a) => {
    for (const x of a) for (const v of iterate(x)) s.add(v);
    return null;
  },
  union: (s: PySet, a) => {
    const r = new PySet(s.values(), s.pyType === 'frozenset');
    for (const x of a) for (const v of iterate(x)) r.add(v);
    return r;
  },
  intersection: (s: PySet, a) => {
    let vals = s.values();
    for (const x of a) {
      const o = new PySet(iterate(x));
      vals = vals.filter((v) => o.has(v));
    }
    return new PySet(vals, s.pyType === 'frozenset');
  },
  difference: (s: PySet, a) => {
    let vals = s.values();
    for (const x of a) {
      const o = new PySet(iterate(x));
      vals = vals.filter((v) => !o.has(v));
    }
    return new PySet(vals, s.pyType === 'frozenset');
  },
  symmetric_difference: (s: PySet, a) => {
    const o = new PySet(iterate(a[0]));
    return new PySet(
      [...s.values().filter((v) => !o.has(v)), ...o.values().filter((v) => !s.has(v))],
      s.pyType === 'frozenset',
    );
  },
  issubset: (s: PySet, a) => {
    const o = new PySet(iterate(a[0]));
    return s.values().every((v) => o.has(v));
  },
  issuperset: (s: PySet, a) => {
    const o = new PySet(iterate(a[0]));
    return o.values().every((v) => s.has(v));
  },
  isdisjoint: (s: PySet, a) => {
    const o = new PySet(iterate(a[0]));
    return s.values().every((v) => !o.has(v));
  },
  intersection_update: (s: PySet, a) => {
    const o = new PySet(iterate(a[0]));
    for (const v of s.values()) if (!o.has(v)) s.map.delete(hashKey(v));
    return null;
  },
  difference_update: (s: PySet, a) => {
    for (const v of iterate(a[0])) s.map.delete(hashKey(v));
    return null;
  },
};

const INT_ATTRS: Record<string, Impl> = {
  bit_length: (n: bigint) => BigInt((n < 0n ? -n : n).toString(2).replace(/^0$/, '').length),
  conjugate: (n: bigint) => n,
};

const FLOAT_ATTRS: Record<string, Impl> = {
  is_integer: (x: number) => Number.isInteger(x),
  conjugate: (x: number) => x,
};

function bound(_typeName: string, name: string, self: unknown, impl: Impl): PyCallable {
  return new PyCallable(name, (args, kw) => impl(self, args, kw));
}

const own = (o: object, k: string) => Object.hasOwn(o, k);

/** `obj.name`. */
export function getattr(obj: Value, name: string): Value {
  if (obj !== null && typeof obj === 'object' && !Array.isArray(obj)) {
    if (obj instanceof PyDict) {
      if (own(DICT_METHODS, name)) return bound('dict', name, obj, DICT_METHODS[name]);
    } else if (obj instanceof PyTuple) {
      if (own(TUPLE_METHODS, name)) return bound('tuple', name, obj, TUPLE_METHODS[name]);
    } else if (obj instanceof PySet) {
      if (
        own(SET_METHODS, name) &&
        !(
          obj.pyType === 'frozenset' &&
          ['add', 'remove', 'discard', 'pop', 'clear', 'update', 'intersection_update', 'difference_update'].includes(
            name,
          )
        )
      ) {
        return bound('set', name, obj, SET_METHODS[name]);
      }
    } else {
      const o = obj as PyObject;
      if (typeof o.getattr === 'function') return o.getattr(name);
    }
    return attributeError(obj, name);
  }
  if (typeof obj === 'string') {
    if (own(STR_METHODS, name)) return bound('str', name, obj, STR_METHODS[name]);
  } else if (Array.isArray(obj)) {
    if (own(LIST_METHODS, name)) return bound('list', name, obj, LIST_METHODS[name]);
  } else if (typeof obj === 'bigint' || typeof obj === 'boolean') {
    const n = typeof obj === 'boolean' ? (obj ? 1n : 0n) : obj;
    if (name === 'real' || name === 'numerator') return n;
    if (name === 'imag') return 0n;
    if (name === 'denominator') return 1n;
    if (own(INT_ATTRS, name)) return bound('int', name, n, INT_ATTRS[name]);
  } else if (typeof obj === 'number') {
    if (name === 'real') return obj;
    if (name === 'imag') return 0;
    if (own(FLOAT_ATTRS, name)) return bound('float', name, obj, FLOAT_ATTRS[name]);
  }
  return attributeError(obj, name);
}

export function hasattr(obj: Value, name: string): boolean {
  try {
    getattr(obj, name);
    return true;
  } catch (e) {
    if (e instanceof PyException && e.type === 'AttributeError') return false;
    throw e;
  }
}

export {pyLen, PyIterator};
