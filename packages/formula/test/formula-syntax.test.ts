// The Python front end (formula/syntax) against CPython 3.11: the error class, message, line and
// column `ast.parse` gives (recorded from CPython 3.11.7), and the text a formula cell shows for it.
import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {parseFormula} from '../src/grist.js';
import {renameInFormula} from '../src/rename.js';
import {PySyntaxError, parseModule, parseExpression} from '../src/syntax/index.js';
import {PyException} from '../src/values.js';

/** [source, class, message, line, column (null: not compared)] */
const CPYTHON: Array<[string, string, string, number, number | null]> = [
  ['1 +', 'SyntaxError', 'invalid syntax', 1, 4],
  ['x = 1\ny = (2', 'SyntaxError', "'(' was never closed", 2, 5],
  ["'abc", 'SyntaxError', 'unterminated string literal (detected at line 1)', 1, 1],
  ['if x:\nreturn 1', 'IndentationError', "expected an indented block after 'if' statement on line 1", 2, 1],
  ['x = 1\n  y = 2\nreturn y', 'IndentationError', 'unexpected indent', 2, 2],
  ['if a:\n    b\n  c', 'IndentationError', 'unindent does not match any outer indentation level', 3, 4],
  ['if x\n  y', 'SyntaxError', "expected ':'", 1, 5],
  ['f() = 1', 'SyntaxError', "cannot assign to function call here. Maybe you meant '==' instead of '='?", 1, 1],
  ['1 = x', 'SyntaxError', "cannot assign to literal here. Maybe you meant '==' instead of '='?", 1, 1],
  ['f() += 1', 'SyntaxError', "'function call' is an illegal expression for augmented assignment", 1, 1],
  ['if x = 1:\n  pass', 'SyntaxError', "invalid syntax. Maybe you meant '==' or ':=' instead of '='?", 1, 4],
  ['try:\n  pass\nx', 'SyntaxError', "expected 'except' or 'finally' block", 3, 1],
  ['for f() in x: pass', 'SyntaxError', 'cannot assign to function call', 1, 5],
  ['del f()', 'SyntaxError', 'cannot delete function call', 1, 5],
  ['None = 1', 'SyntaxError', 'cannot assign to None', 1, 1],
  ["print 'a'", 'SyntaxError', "Missing parentheses in call to 'print'. Did you mean print(...)?", 1, 1],
  ['f(a for a in b, 1)', 'SyntaxError', 'Generator expression must be parenthesized', 1, 3],
  ['f(x=1, 2)', 'SyntaxError', 'positional argument follows keyword argument', 1, 9],
  ['a b', 'SyntaxError', 'invalid syntax', 1, 3],
  ['(a b)', 'SyntaxError', 'invalid syntax. Perhaps you forgot a comma?', 1, 2],
  [
    '0777',
    'SyntaxError',
    'leading zeros in decimal integer literals are not permitted; use an 0o prefix for octal integers',
    1,
    1,
  ],
  ['1__0', 'SyntaxError', 'invalid decimal literal', 1, 2],
  ['x = $', 'SyntaxError', 'invalid syntax', 1, 5],
  [
    "'\\x4'",
    'SyntaxError',
    "(unicode error) 'unicodeescape' codec can't decode bytes in position 0-2: truncated \\xXX escape",
    1,
    6,
  ],
  ["f'{a!x}'", 'SyntaxError', "f-string: invalid conversion character: expected 's', 'r', or 'a'", 1, null],
  ['1 <> 2', 'SyntaxError', 'invalid syntax', 1, 3],
  ['a = (1,\n2]', 'SyntaxError', "closing parenthesis ']' does not match opening parenthesis '(' on line 1", 2, 2],
  ['x = )', 'SyntaxError', "unmatched ')'", 1, 5],
  ['x = [1,\n  2\ny = 3', 'SyntaxError', "'[' was never closed", 1, 5],
  ['def f(:\n pass', 'SyntaxError', 'invalid syntax', 1, 7],
  ['while x\n pass', 'SyntaxError', "expected ':'", 1, 8],
  ['x = 1 if y', 'SyntaxError', "expected 'else' after 'if' expression", 1, 5],
  ['return: 0', 'SyntaxError', 'invalid syntax', 1, 7],
  ['a +\n', 'SyntaxError', 'invalid syntax', 1, 4],
  ['if x:\n  a\nelif y\n  b', 'SyntaxError', "expected ':'", 3, 7],
  ['if x y:\n pass', 'SyntaxError', 'invalid syntax', 1, 6],
  ['for x in y z:\n pass', 'SyntaxError', 'invalid syntax', 1, 12],
  ['def f() x:\n pass', 'SyntaxError', "expected ':'", 1, 9],
  ['while x y:\n pass', 'SyntaxError', 'invalid syntax', 1, 9],
  ['try\n  pass', 'SyntaxError', "expected ':'", 1, 4],
  ['else:\n pass', 'SyntaxError', 'invalid syntax', 1, 1],
  ['x = 1\nelse:\n pass', 'SyntaxError', 'invalid syntax', 2, 1],
  ['if x:\n pass\nelse x:\n pass', 'SyntaxError', "expected ':'", 3, 6],
  ['with a b:\n pass', 'SyntaxError', 'invalid syntax', 1, 8],
  ['class A B:\n pass', 'SyntaxError', 'invalid syntax', 1, 9],
  ['lambda x y: 1', 'SyntaxError', 'invalid syntax', 1, 10],
  ['f(**a, *b)', 'SyntaxError', 'iterable argument unpacking follows keyword argument unpacking', 1, 8],
  ['{1: 2, 3}', 'SyntaxError', "':' expected after dictionary key", 1, 8],
  ['[*a for a in b]', 'SyntaxError', 'iterable unpacking cannot be used in comprehension', 1, 2],
  ['x[1:2:3:4]', 'SyntaxError', 'invalid syntax', 1, 8],
  ['a.1', 'SyntaxError', 'invalid syntax', 1, 2],
  ['x = 1 = 2', 'SyntaxError', 'cannot assign to literal', 1, 5],
  ['import a.', 'SyntaxError', 'invalid syntax', 1, 10],
  ['from x import (a, b', 'SyntaxError', "'(' was never closed", 1, 15],
  ['global x, 1', 'SyntaxError', 'invalid syntax', 1, 11],
  ['del *a', 'SyntaxError', 'cannot delete starred', 1, 5],
  ['x := 1', 'SyntaxError', 'invalid syntax', 1, 3],
  ['def f()\n  pass', 'SyntaxError', "expected ':'", 1, 8],
  ['class A\n  pass', 'SyntaxError', "expected ':'", 1, 8],
  ['with a\n  pass', 'SyntaxError', "expected ':'", 1, 7],
  ['try:\n pass\nexcept X\n pass', 'SyntaxError', "expected ':'", 3, 9],
  ['try:\n pass\nfinally\n pass', 'SyntaxError', "expected ':'", 3, 8],
  ['x = [i for i in range(3) if i > 1 else 0]', 'SyntaxError', 'invalid syntax', 1, 35],
  ['for x in range(3):\npass', 'IndentationError', "expected an indented block after 'for' statement on line 1", 2, 1],
  ['def f(x):\n  return x\n f(1)', 'IndentationError', 'unindent does not match any outer indentation level', 3, 6],
  ["x = {'a': 1, 'b'}", 'SyntaxError', "':' expected after dictionary key", 1, 16],
  ['x = 5 +* 3', 'SyntaxError', 'invalid syntax', 1, 8],
  ['$a + 1', 'SyntaxError', 'invalid syntax', 1, 1],
  ['a = 1 +\nb = 2', 'SyntaxError', 'invalid syntax', 1, 8],
  ['print(1))', 'SyntaxError', "unmatched ')'", 1, 9],
];

test('syntax errors carry CPython 3.11 class, message and position', () => {
  for (const [src, type, msg, line, col] of CPYTHON) {
    let got: unknown = 'parsed';
    try {
      parseModule(src, {});
    } catch (e) {
      got = e instanceof PySyntaxError ? [e.type, e.msg, e.line, col === null ? null : e.col] : String(e);
    }
    assert.equal(got, [type, msg, line, col], src);
  }
});

test('a formula cell shows CPython\'s error with its line (Grist: "msg (usercode, line N)")', () => {
  const cell = (src: string): string => {
    try {
      parseFormula(src);
      return 'ok';
    } catch (e) {
      return e instanceof PyException ? `${e.type}: ${e.message}` : String(e);
    }
  };
  assert.is(cell('1 +'), 'SyntaxError: invalid syntax (usercode, line 1)');
  assert.is(cell('x = 1\ny = (2'), "SyntaxError: '(' was never closed (usercode, line 2)");
  assert.is(
    cell('if x:\nreturn 1'),
    "IndentationError: expected an indented block after 'if' statement on line 1 (usercode, line 2)",
  );
  assert.is(
    cell('if $A = 1:\n  return 2'),
    "SyntaxError: invalid syntax. Maybe you meant '==' or ':=' instead of '='? (usercode, line 1)",
  );
  assert.is(cell('if $foo:\n  return $foo\nelse:\n  return $ bar\n'), 'SyntaxError: invalid syntax (usercode, line 4)');
});

test('one tree: `$name` is rec.name, `-1` a constant that remembers its minus', () => {
  const e = parseExpression('$A + -1');
  assert.is(e.k, 'bin');
  if (e.k !== 'bin') return;
  assert.is(e.l.k, 'attr');
  assert.ok(e.l.k === 'attr' && e.l.dollar && e.l.obj.k === 'name' && e.l.obj.id === 'rec');
  assert.ok(e.r.k === 'const' && e.r.value === -1n && e.r.negated === 1 && e.r.bcol === 5);
});

test('f-string fields carry the offsets of the formula text, so renames inside them land', () => {
  const tables = new Map([
    [
      'T',
      new Map([
        ['A', 'Text'],
        ['B', 'Text'],
      ]),
    ],
  ]);
  const rename = {kind: 'column', tableId: 'T', oldId: 'A', newId: 'Zed'} as const;
  assert.is(renameInFormula('f"{$A} x"', 'T', tables, rename), 'f"{$Zed} x"');
  assert.is(
    renameInFormula('x = 1\nrf"{$A}-{$B:>{len($A)}}"', 'T', tables, rename),
    'x = 1\nrf"{$Zed}-{$B:>{len($Zed)}}"',
  );
  assert.is(renameInFormula("$A + f'{rec.A!r}'", 'T', tables, rename), "$Zed + f'{rec.Zed!r}'");
});

test.run();
