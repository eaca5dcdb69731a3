/**
 * Parsing of predicate formulas (access-rule conditions such as `user.Access in [EDITOR, OWNER]`
 * or `$Owner == user.Email`) into the JSON text Grist stores in `_grist_ACLRules.aclFormulaParsed`.
 *
 * Grist's data engine does this in Python: `$name` becomes `rec.name`, the text is parsed as a
 * Python expression, the tree is turned into nested lists (`["Eq", ["Attr", ["Name", "rec"],
 * "Owner"], ...]`), and the lists are written with `json.dumps`. gristlite and Grist read each
 * other's documents, so the text here is byte for byte what Grist writes: Python's separators
 * (`", "`), `\uXXXX` escapes for anything outside printable ASCII, floats as Python prints them
 * (`1000.0`, `1e+20`), integers of any size.
 *
 * Node types: And, Or (n-ary), Not, Add, Sub, Mult, Div, Mod, Eq, NotEq, Lt, LtE, Gt, GtE, Is,
 * IsNot, In, NotIn (binary), Const, Name, Attr, List (lists and tuples), Call (with a trailing
 * `["keywords", [name, value], ...]` when it has keyword arguments), and Comment wrapping the whole
 * tree when the formula has a `#` comment (the first one). Anything else is refused.
 */
import {type Expr, PySyntaxError, parseWithNames} from '@gristlite/formula';
import {PredicateFormulaError, syntaxErrorAt} from './errors.js';

/** A parsed formula as a JSON value: `[nodeType, ...args]`. */
export type ParsedPredicateFormula = [string, ...unknown[]];

/** Python integers (bigint) and floats (number) are kept apart until they are written (`1` versus `1.0`). */
class PyNumber {
  constructor(readonly value: bigint | number) {}
}
/** A constant Python's json.dumps cannot write (complex, bytes, Ellipsis): Grist fails there. */
class Unserializable {
  constructor(readonly typeName: string) {}
}
type Tree = Array<Tree | string | boolean | null | PyNumber | Unserializable>;

const DOLLAR = /\$(?=[A-Za-z_])/g;

/**
 * The JSON text Grist writes into `aclFormulaParsed` for `aclFormula` (`""` for an empty formula).
 * Throws a PredicateFormulaError (a BadRequest) with Grist's message when Grist refuses it.
 */
export function parsePredicateFormula(text: string): string {
  if (!text) return '';
  try {
    return dumps(parseToTree(text));
  } catch (e) {
    if (e instanceof PredicateFormulaError) throw e;
    // Grist words CPython's errors `<msg> on line L col C`, whatever their class.
    if (e instanceof PySyntaxError) {
      throw e.bare ? new PredicateFormulaError('SyntaxError', e.msg) : syntaxErrorAt(e.msg, e.line, e.col);
    }
    // Only nesting deeper than the JS stack gets here, at a depth that varies with the stack the
    // engine has left (seen on Node 22 for 5,000 chained `not`): CPython 3.11 answers such chains
    // with RecursionError (checked: `not ` * 5000, `.b` * 5000, `+ 1` * 5000), so this does too.
    if (e instanceof RangeError) throw new PredicateFormulaError('RecursionError', 'maximum recursion depth exceeded');
    throw e;
  }
}

/** As parsePredicateFormula, but the JSON value (null for an empty formula). */
export function parsePredicateFormulaValue(text: string): ParsedPredicateFormula | null {
  return readParsedFormula(parsePredicateFormula(text));
}

/**
 * The value of a stored `aclFormulaParsed` text (null for `""`). Python's JSON may hold
 * `Infinity` (a formula with `1e400`), which JSON.parse refuses: it reads as Infinity here. Text
 * that is not a formula's JSON throws a PredicateFormulaError.
 */
export function readParsedFormula(json: string): ParsedPredicateFormula | null {
  if (!json) return null;
  const text = json.replace(/"(?:[^"\\]|\\.)*"|-?Infinity|NaN/g, (m) =>
    m[0] === '"' ? m : m === 'NaN' ? 'null' : m.startsWith('-') ? '-1e999' : '1e999',
  );
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new PredicateFormulaError('', `Invalid parsed formula: ${json.slice(0, 100)}`);
  }
  if (!Array.isArray(value) || typeof value[0] !== 'string') {
    throw new PredicateFormulaError('', `Invalid parsed formula: ${json.slice(0, 100)}`);
  }
  return value as ParsedPredicateFormula;
}

function parseToTree(text: string): Tree {
  if (text.includes('\0')) throw syntaxErrorAt('source code string cannot contain null bytes', null, null);
  const finalText = replaceDollars(text);
  const {tree, comment} = parseWithNames(finalText, 'eval');
  // CPython builds its tree recursively and gives up about 500 levels down.
  if (depth(tree) > MAX_DEPTH) throw new PredicateFormulaError('RecursionError', 'maximum recursion depth exceeded');
  const result = convert(tree);
  return comment === null ? result : ['Comment', result, pyStrip(comment)];
}

/**
 * Grist's `$col` shorthand: every `$` followed by an identifier that stands where a variable name
 * would (not in a string, a comment or after a dot) becomes `rec.`. As in Grist, the text is first
 * parsed as a module with each such `$` spelled `DOLLAR` (so errors there are positioned in that
 * text), then the rewritten text as an expression.
 */
function replaceDollars(text: string): string {
  const cps = Array.from(text);
  // Code-point offsets of the `$` signs the regular expression matches, in order.
  const dollars: number[] = [];
  let offset = 0;
  for (const c of cps) {
    if (c === '$' && /[A-Za-z_]/.test(cps[offset + 1] ?? '')) dollars.push(offset);
    offset++;
  }
  const tmp = text.replace(DOLLAR, 'DOLLAR');
  // Grist parses the text as a module first (errors are reported from there).
  const {names} = parseWithNames(tmp, 'exec');
  if (!dollars.length) return text;
  const replace = new Set<number>();
  for (const name of names) {
    if (!name.value.startsWith('DOLLAR')) continue;
    // The k-th `$` (at d in the text) is at d + 5k in tmp, where it reads `DOLLAR`.
    const k = dollars.findIndex((d, idx) => d + 5 * idx === name.offset);
    if (k >= 0) replace.add(dollars[k]);
  }
  return cps.map((c, k) => (replace.has(k) ? 'rec.' : c)).join('');
}

const MAX_DEPTH = 496;

function depth(node: Expr): number {
  let max = 0;
  const children: Expr[] = [];
  switch (node.k) {
    case 'const':
      // A folded `-1` is CPython's UnaryOp over a Constant.
      return 1 + (node.negated ?? 0);
    case 'attr':
      children.push(node.obj);
      break;
    case 'and':
    case 'or':
    case 'cmp':
      children.push(...node.vals);
      break;
    case 'list':
    case 'tuple':
      children.push(...node.elts);
      break;
    case 'bin':
      children.push(node.l, node.r);
      break;
    case 'unary':
    case 'not':
      children.push(node.v);
      break;
    case 'call':
      children.push(node.fn, ...node.args.filter((a) => a.kind !== 'star').map((a) => a.value));
      break;
    default:
      break;
  }
  for (const c of children) max = Math.max(max, depth(c));
  return max + 1;
}

const BINOPS: Record<string, string> = {'+': 'Add', '-': 'Sub', '*': 'Mult', '/': 'Div', '%': 'Mod'};
const CMPOPS: Record<string, string> = {
  '==': 'Eq',
  '!=': 'NotEq',
  '<': 'Lt',
  '<=': 'LtE',
  '>': 'Gt',
  '>=': 'GtE',
  is: 'Is',
  'is not': 'IsNot',
  in: 'In',
  'not in': 'NotIn',
};

function unsupported(at: {line: number; bcol: number}): PredicateFormulaError {
  return syntaxErrorAt(`Unsupported syntax at ${at.line}:${at.bcol + 1}`, null, null);
}

/** Python's tree to Grist's lists, visiting nodes in the order Grist's converter does. */
function convert(node: Expr): Tree {
  switch (node.k) {
    case 'name':
      return ['Name', node.id];
    case 'const':
      if (node.negated) throw unsupported(node);
      return ['Const', constValue(node)];
    case 'attr':
      return ['Attr', convert(node.obj), node.name];
    case 'and':
    case 'or':
      return [node.k === 'and' ? 'And' : 'Or', ...node.vals.map(convert)];
    case 'bin':
      if (!BINOPS[node.op]) throw unsupported(node);
      return [BINOPS[node.op], convert(node.l), convert(node.r)];
    case 'not':
      return ['Not', convert(node.v)];
    case 'cmp':
      if (node.ops.length !== 1) throw syntaxErrorAt("Can't use chained comparisons", null, null);
      return [CMPOPS[node.ops[0]], convert(node.vals[0]), convert(node.vals[1])];
    case 'list':
    case 'tuple':
      return ['List', ...node.elts.map(convert)];
    case 'call': {
      // CPython's Call holds positional and starred arguments, then keywords and `**`.
      const args: Tree = [];
      for (const a of node.args) {
        if (a.kind === 'star') throw unsupported(a.at ?? a.value);
        if (a.kind === 'pos') args.push(convert(a.value));
      }
      const keywords = node.args.filter((a) => a.kind === 'kw' || a.kind === 'dstar');
      if (keywords.length) {
        args.push(['keywords', ...keywords.map((kw): Tree => [kw.name ?? null, convert(kw.value)])]);
      }
      return ['Call', convert(node.fn), ...args];
    }
    default:
      throw unsupported(node);
  }
}

function constValue(c: Expr & {k: 'const'}): Tree[number] {
  if (c.lit) return new Unserializable(c.lit);
  if (typeof c.value === 'bigint' || typeof c.value === 'number') return new PyNumber(c.value);
  return c.value;
}

/** Python's `str.strip()` whitespace. */
const PY_SPACE = /^[\s\x1c-\x1f\x85]+|[\s\x1c-\x1f\x85]+$/g;
function pyStrip(s: string): string {
  // JavaScript's \s also holds U+FEFF, which Python does not strip.
  const stripped = s.replace(PY_SPACE, '');
  if (!s.includes('\ufeff')) return stripped;
  let a = 0;
  let b = s.length;
  const isPySpace = (c: string) => c !== '\ufeff' && /[\s\x1c-\x1f\x85]/.test(c);
  while (a < b && isPySpace(s[a])) a++;
  while (b > a && isPySpace(s[b - 1])) b--;
  return s.slice(a, b);
}

/** Python's `json.dumps` with its defaults (ensure_ascii, `", "` separators). */
function dumps(value: Tree[number]): string {
  if (value === null) return 'null';
  if (value === true) return 'true';
  if (value === false) return 'false';
  if (typeof value === 'string') return jsonString(value);
  if (value instanceof PyNumber) {
    return typeof value.value === 'bigint' ? value.value.toString() : floatRepr(value.value);
  }
  if (value instanceof Unserializable) {
    throw new PredicateFormulaError('TypeError', `Object of type ${value.typeName} is not JSON serializable`);
  }
  return '[' + value.map(dumps).join(', ') + ']';
}

const JSON_ESCAPES: Record<string, string> = {
  '"': '\\"',
  '\\': '\\\\',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '\b': '\\b',
  '\f': '\\f',
};

/** A JSON string with every UTF-16 unit outside printable ASCII as `\uXXXX` (astral: a pair). */
export function jsonString(s: string): string {
  let out = '"';
  for (let k = 0; k < s.length; k++) {
    const ch = s[k];
    const code = s.charCodeAt(k);
    if (JSON_ESCAPES[ch]) out += JSON_ESCAPES[ch];
    else if (code < 0x20 || code > 0x7e) out += '\\u' + code.toString(16).padStart(4, '0');
    else out += ch;
  }
  return out + '"';
}

/** Python's `repr(float)`: shortest round-trip digits, exponent form below 1e-4 and from 1e16. */
export function floatRepr(x: number): string {
  if (Number.isNaN(x)) return 'NaN';
  if (!Number.isFinite(x)) return x > 0 ? 'Infinity' : '-Infinity';
  const sign = x < 0 || Object.is(x, -0) ? '-' : '';
  const [mant, expText] = Math.abs(x).toExponential().split('e');
  const digits = mant.replace('.', '');
  const exp = Number(expText);
  if (exp >= -4 && exp < 16) {
    if (exp < 0) return `${sign}0.${'0'.repeat(-exp - 1)}${digits}`;
    if (digits.length <= exp + 1) return `${sign}${digits}${'0'.repeat(exp + 1 - digits.length)}.0`;
    return `${sign}${digits.slice(0, exp + 1)}.${digits.slice(exp + 1)}`;
  }
  const m = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
  return `${sign}${m}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
}
