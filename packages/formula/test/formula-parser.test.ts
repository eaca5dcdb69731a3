import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {parseModule, parseExpression, type Expr} from '../src/syntax/index.js';
import {tokenize} from '../src/syntax/index.js';
import {parseFormula, dedent} from '../src/grist.js';
import {PyException} from '../src/values.js';
import {pyrepr} from './formula-helpers.js';

/** A compact s-expression of an expression tree, to check precedence. */
function sx(e: Expr): string {
  switch (e.k) {
    case 'const':
      return typeof e.value === 'string' ? JSON.stringify(e.value) : e.value === null ? 'None' : String(e.value);
    case 'name':
      return e.id;
    case 'attr':
      return `${sx(e.obj)}.${e.name}`;
    case 'bin':
      return `(${e.op} ${sx(e.l)} ${sx(e.r)})`;
    case 'unary':
      return `(${e.op}u ${sx(e.v)})`;
    case 'not':
      return `(not ${sx(e.v)})`;
    case 'and':
    case 'or':
      return `(${e.k} ${e.vals.map(sx).join(' ')})`;
    case 'cmp':
      return `(cmp ${e.vals.map(sx).join(' ')} ${e.ops.join(',')})`;
    case 'ifexp':
      return `(if ${sx(e.test)} ${sx(e.body)} ${sx(e.orelse)})`;
    case 'call':
      return `(call ${sx(e.fn)} ${e.args.map((a) => (a.kind === 'kw' ? `${a.name}=` : a.kind === 'star' ? '*' : a.kind === 'dstar' ? '**' : '') + sx(a.value)).join(' ')})`;
    case 'sub':
      return `(sub ${sx(e.obj)} ${sx(e.index)})`;
    case 'slice':
      return `(slice ${e.lo ? sx(e.lo) : '_'} ${e.hi ? sx(e.hi) : '_'} ${e.step ? sx(e.step) : '_'})`;
    case 'tuple':
      return `(tuple ${e.elts.map(sx).join(' ')})`;
    case 'list':
      return `[${e.elts.map(sx).join(' ')}]`;
    case 'lambda':
      return `(lambda ${e.params.map((p) => p.name).join(' ')} ${sx(e.body)})`;
    default:
      return e.k;
  }
}

test('operator precedence follows Python', () => {
  const cases: Array<[string, string]> = [
    ['1 + 2 * 3', '(+ 1 (* 2 3))'],
    ['-2 ** 2', '(-u (** 2 2))'],
    ['2 ** -1', '(** 2 -1)'],
    ['2 ** 3 ** 2', '(** 2 (** 3 2))'],
    ['a or b and not c', '(or a (and b (not c)))'],
    ['not a == b', '(not (cmp a b ==))'],
    ['a < b <= c != d', '(cmp a b c d <,<=,!=)'],
    ['x in y and z not in w', '(and (cmp x y in) (cmp z w not in))'],
    ['a is not None', '(cmp a None is not)'],
    ['a | b ^ c & d << 1 + 2', '(| a (^ b (& c (<< d (+ 1 2)))))'],
    ['a if b else c if d else e', '(if b a (if d c e))'],
    ['lambda x, y: x + y', '(lambda x y (+ x y))'],
    ['f(a, *b, k=1, **d)', '(call f a *b k=1 **d)'],
    ['a.b.c[1:2, ::3]', '(sub a.b.c (tuple (slice 1 2 _) (slice _ _ 3)))'],
    ['$Price * $Qty', '(* rec.Price rec.Qty)'],
    ['$Ref.Name', 'rec.Ref.Name'],
    ['~x // 2 % 3', '(% (// (~u x) 2) 3)'],
    ['-x.y', '(-u x.y)'],
    ['a[1][2]', '(sub (sub a 1) 2)'],
  ];
  for (const [src, want] of cases) assert.is(sx(parseExpression(src)), want, src);
});

test('literals: numbers and every string form', () => {
  const cases: Array<[string, string]> = [
    ['0x1F + 0o17 + 0b101 + 1_000', '1051'],
    ['1.5e3, .5, 5., 1_0.5', '(1500.0, 0.5, 5.0, 10.5)'],
    ['\'a\' "b" \'\'\'c\'\'\' """d"""', "'abcd'"],
    ["r'\\n\\d', '\\n', '\\x41\\u00e9\\t'", "('\\\\n\\\\d', '\\n', 'Aé\\t')"],
    ["b'abc', u'x'", "('abc', 'x')"],
    ["'''line1\nline2'''", "'line1\\nline2'"],
    ["f'{1+1}' 'x' f\"{'y'}\"", "'2xy'"],
    ["f'{3.14159:{6}.{2}f}'", "'  3.14'"],
    ['f\'{"a"!r:>5}\'', '"  \'a\'"'],
    ["rf'\\d{1}'", "'\\\\d1'"],
    ["'$notacol'", "'$notacol'"],
    ['1 # $comment', '1'],
  ];
  for (const [src, want] of cases) assert.is(pyrepr(src), want, src);
});

test('statements: every form parses and runs', () => {
  const body = parseModule(
    [
      'import math, re as regex',
      'from datetime import date as d, datetime',
      'from math import (sqrt,',
      '    floor)',
      'x = y = 1; z: int = 2',
      'a, (b, *c) = 1, (2, 3, 4)',
      'x += 1',
      'obj.attr = 1',
      'obj[k] = v',
      'del obj[k], x',
      'global g',
      'if x:',
      '  pass',
      'elif y:',
      '  pass',
      'else:',
      '  pass',
      'for i in range(3):',
      '  continue',
      'else:',
      '  pass',
      'while False:',
      '  break',
      'def f(a, b=1, *args, c, d=2, **kw):',
      '  return a',
      '@decorator',
      'def g(): return 1',
      'try:',
      '  raise ValueError("x") from None',
      'except (TypeError, ValueError) as e:',
      '  raise',
      'except Exception:',
      '  pass',
      'else:',
      '  pass',
      'finally:',
      '  pass',
      'assert x, "msg"',
      'return x',
    ].join('\n'),
  );
  assert.equal(
    body.map((s) => s.k),
    [
      'import',
      'from',
      'from',
      'assign',
      'annassign',
      'assign',
      'augassign',
      'assign',
      'assign',
      'del',
      'global',
      'if',
      'for',
      'while',
      'def',
      'def',
      'try',
      'assert',
      'return',
    ],
  );
});

test('indentation: INDENT/DEDENT, continuation lines, brackets', () => {
  const toks = tokenize('if a:\n    b\n    if c:\n        d\ne\n').map((t) => (t.kind === 'name' ? t.value : t.kind));
  assert.equal(toks, [
    'if',
    'a',
    'op',
    'newline',
    'indent',
    'b',
    'newline',
    'if',
    'c',
    'op',
    'newline',
    'indent',
    'd',
    'newline',
    'dedent',
    'dedent',
    'e',
    'newline',
    'eof',
  ]);
  assert.is(pyrepr('x = (1 +\n  2)\ny = 3 + \\\n  4\nx + y'), '10');
  assert.is(pyrepr('  x = 1\n  if x:\n    x = 2\n  x'), '2');
  assert.is(dedent('  a\n\n    b\n  c'), 'a\n\n  b\nc');
});

test('syntax errors as Grist words them', () => {
  const err = (src: string): string => {
    try {
      parseFormula(src);
      return 'ok';
    } catch (e) {
      return e instanceof PyException ? `${e.type}: ${e.message}` : String(e);
    }
  };
  assert.match(err('1 +'), /^SyntaxError: .*\(usercode, line 1\)$/);
  assert.match(err('x = 1\ny = (2'), /^SyntaxError: .*line 2\)$/);
  assert.is(
    err('x = 1'),
    "SyntaxError: No `return` statement, and the last line isn't an expression. If you want to check for equality, use `==` instead of `=`. (usercode, line 1)",
  );
  assert.is(
    err('for i in []:\n  pass'),
    "SyntaxError: No `return` statement, and the last line isn't an expression. (usercode, line 1)",
  );
  assert.is(
    err('rec = 1\nreturn rec'),
    'SyntaxError: Grist disallows assignment to the special variable "rec" (usercode, line 1)',
  );
  assert.match(err('$A = 1\nreturn 2'), /^SyntaxError: You can't assign a value to a column with `=`/);
  assert.match(err('if x:\nreturn 1'), /^IndentationError: expected an indented block/);
  assert.match(err("'abc"), /^SyntaxError: unterminated string literal/);
  assert.match(err('x = 1\n  y = 2\nreturn y'), /^IndentationError: unexpected indent/);
  assert.is(err(''), 'ok');
  assert.is(err('# just a comment'), 'ok');
  assert.is(
    pyrepr('with open("f") as f:\n  pass\nreturn 1'),
    "!UnsupportedError: with statement is not supported by gristlite's formula engine",
  );
});

test.run();
