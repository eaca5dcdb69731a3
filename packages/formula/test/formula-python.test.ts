import {test} from 'uvu';
import * as assert from 'uvu/assert';
import {pyrepr} from './formula-helpers.js';

// Each case: formula body -> repr() of its value (or "!Type: message"), as CPython 3.11 gives it.
// Expected values were produced by running each case in python3 (last expression returned, as Grist does).
const CASES: Array<[string, string]> = [
  ['1 + 2 * 3 - 4 / 2', '5.0'],
  ['2 ** 3 ** 2', '512'],
  ['-2 ** 2', '-4'],
  ['(-2) ** 2', '4'],
  ['7 // 2, -7 // 2, 7 // -2, 7.5 // 2', '(3, -4, -4, 3.0)'],
  ['7 % 3, -7 % 3, 7 % -3, -7.5 % 2, 7.5 % -2', '(1, 2, -2, 0.5, -0.5)'],
  ['2 ** -2', '0.25'],
  ['10 / 4', '2.5'],
  ['10 / 5', '2.0'],
  ['1 / 3', '0.3333333333333333'],
  ['0.1 + 0.2', '0.30000000000000004'],
  ['1e16', '1e+16'],
  ['1e-5', '1e-05'],
  ['123456789012345678 * 1000', '123456789012345678000'],
  ['2 ** 64', '18446744073709551616'],
  ['3 * 1.5', '4.5'],
  ['True + True', '2'],
  ['True * 2.5', '2.5'],
  ['~5, -(-3), +4', '(-6, 3, 4)'],
  ['5 & 3, 5 | 3, 5 ^ 3, 1 << 10, 1024 >> 3', '(1, 7, 6, 1024, 128)'],
  ['True & False, True | False', '(False, True)'],
  ['1 < 2 < 3, 3 > 2 > 2, 1 == 1.0, 1 != 2', '(True, False, True, True)'],
  ["'a' < 'b', [1, 2] < [1, 3], (1, 2) == (1, 2)", '(True, True, True)'],
  ['1 if True else 2', '1'],
  ["0 or 'x', 1 and 2, not 0, None or []", "('x', 2, True, [])"],
  ["'x' in 'xyz', 3 in [1, 2], 2 not in (1, 2), 'a' in {'a': 1}", '(True, False, False, True)'],
  [
    "[1, 2, 3][1:], [1, 2, 3][::-1], [1, 2, 3, 4, 5][1:4:2], 'hello'[-3:], 'hello'[::2]",
    "([2, 3], [3, 2, 1], [2, 4], 'llo', 'hlo')",
  ],
  ['[1, 2, 3][-1], (1, 2, 3)[-2]', '(3, 2)'],
  ['list(range(10))[-3:-1], list(range(10))[8:2:-2]', '([7, 8], [8, 6, 4])'],
  ['[x * 2 for x in range(5)]', '[0, 2, 4, 6, 8]'],
  ['[(x, y) for x in range(3) for y in range(x)]', '[(1, 0), (2, 0), (2, 1)]'],
  ['{x % 3 for x in range(10)}', '{0, 1, 2}'],
  ['{x: x * x for x in range(4)}', '{0: 0, 1: 1, 2: 4, 3: 9}'],
  ['sum(x for x in range(101))', '5050'],
  ['list(map(lambda x: x + 1, [1, 2]))', '[2, 3]'],
  ["list(filter(None, [0, 1, '', 'a']))", "[1, 'a']"],
  ["sorted(['b', 'A', 'c'], key=str.lower)", "['A', 'b', 'c']"],
  ['sorted([3, 1, 2], reverse=True)', '[3, 2, 1]'],
  ["min(3, 1, 2), max([1, 5, 3]), min([], default=7), max('abc', key=ord)", "(1, 5, 7, 'c')"],
  [
    'abs(-3), abs(-2.5), round(2.5), round(3.5), round(-2.5), round(2.675, 2), round(1234.5678, -2), round(15, -1), round(25, -1)',
    '(3, 2.5, 2, 4, -2, 2.67, 1200.0, 20, 20)',
  ],
  ['divmod(7, 2), divmod(-7, 2), divmod(7.5, 2)', '((3, 1), (-4, 1), (3.0, 1.5))'],
  ['pow(2, 10), pow(2, 10, 1000), pow(2.0, 0.5)', '(1024, 24, 1.4142135623730951)'],
  [
    "int('42'), int(' -7 '), int(3.9), int(-3.9), int('ff', 16), int('0x1f', 0), int(True)",
    '(42, -7, 3, -3, 255, 31, 1)',
  ],
  ["float('3.5'), float(' 1e3 '), float(2), float('inf')", '(3.5, 1000.0, 2.0, inf)'],
  [
    "str(1), str(1.0), str(None), str(True), str([1, 'a']), str((1,))",
    "('1', '1.0', 'None', 'True', \"[1, 'a']\", '(1,)')",
  ],
  ["repr('a\\'b'), repr(\"a'b\"), repr('a\\nb'), repr(1.5)", "('\"a\\'b\"', '\"a\\'b\"', \"'a\\\\nb'\", '1.5')"],
  ["bool(0), bool(''), bool([0]), bool(0.0), bool(None)", '(False, False, True, False, False)'],
  ["len('abc'), len([1, 2]), len({'a': 1}), len(range(0, 10, 3))", '(3, 2, 1, 4)'],
  ["list(enumerate('ab', 1)), list(zip([1, 2, 3], 'ab'))", "([(1, 'a'), (2, 'b')], [(1, 'a'), (2, 'b')])"],
  ['list(reversed([1, 2, 3])), any([0, 1]), all([]), all([1, 0])', '([3, 2, 1], True, True, False)'],
  ["chr(65), ord('a'), hex(255), oct(8), bin(5), hex(-255)", "('A', 97, '0xff', '0o10', '0b101', '-0xff')"],
  [
    "isinstance(1, int), isinstance(True, int), isinstance(1.0, (int, float)), isinstance('a', str), isinstance([], tuple)",
    '(True, True, True, True, False)',
  ],
  [
    "type(1).__name__, type('a').__name__, type([]).__name__, type(None).__name__",
    "('int', 'str', 'list', 'NoneType')",
  ],
  [
    "'Hello World'.upper(), 'Hello'.lower(), '  x '.strip(), 'xxaxx'.strip('x'), '  x '.lstrip(), '  x '.rstrip()",
    "('HELLO WORLD', 'hello', 'x', 'a', 'x ', '  x')",
  ],
  [
    "'a,b,,c'.split(','), 'a b  c'.split(), 'a,b,c'.split(',', 1), 'a,b,c'.rsplit(',', 1), ' a b '.split(' ')",
    "(['a', 'b', '', 'c'], ['a', 'b', 'c'], ['a', 'b,c'], ['a,b', 'c'], ['', 'a', 'b', ''])",
  ],
  ["'-'.join(['a', 'b']), 'abcabc'.replace('b', 'X'), 'abcabc'.replace('b', 'X', 1)", "('a-b', 'aXcaXc', 'aXcabc')"],
  [
    "'hello'.startswith('he'), 'hello'.endswith(('lo', 'x')), 'hello'.find('l'), 'hello'.rfind('l'), 'hello'.find('z')",
    '(True, True, 2, 3, -1)',
  ],
  [
    "'hello'.count('l'), 'hello world'.title(), 'hELLO'.capitalize(), '42'.zfill(5), '-42'.zfill(5), 'ab'.center(6, '*')",
    "(2, 'Hello World', 'Hello', '00042', '-0042', '**ab**')",
  ],
  [
    "'123'.isdigit(), 'abc'.isalpha(), 'a1'.isalnum(), ' '.isspace(), 'ABC'.isupper(), 'abc'.islower()",
    '(True, True, True, True, True, True)',
  ],
  [
    "'a=b'.partition('='), 'abc'.ljust(5) + '|', 'abc'.rjust(5), 'Hello'.swapcase()",
    "(('a', '=', 'b'), 'abc  |', '  abc', 'hELLO')",
  ],
  [
    "'{} {}'.format(1, 'a'), '{1} {0}'.format('a', 'b'), '{x}-{y}'.format(x=1, y=2), '{:>5}|{:<5}|{:^5}'.format('a', 'b', 'c')",
    "('1 a', 'b a', '1-2', '    a|b    |  c  ')",
  ],
  [
    "'{:.2f} {:,} {:08.3f} {:+d} {:x} {:o} {:b} {:e} {:.3g} {:%}'.format(3.14159, 1234567, -3.14159, 5, 255, 8, 5, 12345.678, 0.000123456, 0.25)",
    "'3.14 1,234,567 -003.142 +5 ff 10 101 1.234568e+04 0.000123 25.000000%'",
  ],
  [
    "'{:,.2f}'.format(1234567.891), '{:_}'.format(1000000), '{:10.4}'.format(3.14159), '{:g}'.format(100000000.0), '{}'.format(1e20)",
    "('1,234,567.89', '1_000_000', '     3.142', '1e+08', '1e+20')",
  ],
  [
    "'%s is %d years and %.2f%%' % ('Bob', 42, 99.5), '%5s|%-5s|' % ('a', 'b'), '%05d' % 42, '%x' % 255, '%r' % 'a'",
    "('Bob is 42 years and 99.50%', '    a|b    |', '00042', 'ff', \"'a'\")",
  ],
  ["'%(a)s-%(b)d' % {'a': 'x', 'b': 3}", "'x-3'"],
  ["'%.3e' % 12345.6789, '%g' % 0.0001, '%g' % 1e20, '%+.1f' % 2.25", "('1.235e+04', '0.0001', '1e+20', '+2.2')"],
  [
    "f'{1 + 1}', f'{\"a\"!r}', f'{3.14159:.2f}', f'{42:>6}', f'{\"x\":*^7}'",
    "('2', \"'a'\", '3.14', '    42', '***x***')",
  ],
  ["f'{1}{{}}'", "'1{}'"],
  ["[1, 2] + [3], (1,) + (2,), 'ab' * 3, [0] * 3, 3 * 'x'", "([1, 2, 3], (1, 2), 'ababab', [0, 0, 0], 'xxx')"],
  ['{1, 2} | {2, 3}, {1, 2} & {2, 3}, {1, 2} - {2}, {1, 2} ^ {2, 3}', '({1, 2, 3}, {2}, {1}, {1, 3})'],
  [
    "d = {'a': 1}\nd['b'] = 2\nd.get('c', 0), d.get('a'), list(d.keys()), list(d.values()), list(d.items())",
    "(0, 1, ['a', 'b'], [1, 2], [('a', 1), ('b', 2)])",
  ],
  ["d = {'a': 1, 'b': 2}\nd.pop('a'), d, d.setdefault('c', 5), d", "(1, {'b': 2, 'c': 5}, 5, {'b': 2, 'c': 5})"],
  ["d = {}\nd.update({'x': 1}, y=2)\nd", "{'x': 1, 'y': 2}"],
  ["dict(a=1, b=2), dict([('a', 1)]), dict(zip('ab', [1, 2]))", "({'a': 1, 'b': 2}, {'a': 1}, {'a': 1, 'b': 2})"],
  [
    'l = [3, 1, 2]\nl.sort()\nl.append(4)\nl.insert(0, 0)\nl.extend([5, 6])\nl.remove(3)\nl.pop(), l.pop(0), l, l.index(2), l.count(2)',
    '(6, 0, [1, 2, 4, 5], 1, 1)',
  ],
  ['l = [1, 2, 3, 4]\ndel l[1]\nl[0] = 9\nl[1:2] = [7, 7]\nl', '[9, 7, 7, 4]'],
  ['s = set()\ns.add(1)\ns.add(1)\ns.add(2)\ns.discard(5)\nsorted(s), len(s)', '([1, 2], 2)'],
  ['a, b = 1, 2\na, b = b, a\na, b', '(2, 1)'],
  ['a, *b, c = range(5)\na, b, c', '(0, [1, 2, 3], 4)'],
  ['(a, b), c = (1, 2), 3\na + b + c', '6'],
  ['x = 5\nx += 2\nx *= 3\nx -= 1\nx //= 4\nx **= 2\nx %= 7\nx', '4'],
  ['l = [1]\nm = l\nl += [2]\nm', '[1, 2]'],
  [
    'def f(a, b=2, *args, **kw):\n  return (a, b, args, sorted(kw.items()))\nf(1), f(1, 3, 4, 5, x=6)',
    "((1, 2, (), []), (1, 3, (4, 5), [('x', 6)]))",
  ],
  ['def f(*, k=1):\n  return k\nf(k=5)', '5'],
  ['def outer():\n  x = 1\n  def inner():\n    return x + 1\n  return inner()\nouter()', '2'],
  ['def fact(n):\n  return 1 if n <= 1 else n * fact(n - 1)\nfact(20)', '2432902008176640000'],
  ['fs = [lambda x, i=i: x + i for i in range(3)]\n[f(10) for f in fs]', '[10, 11, 12]'],
  ['total = 0\nfor i in range(10):\n  if i % 2:\n    continue\n  total += i\ntotal', '20'],
  ['n = 0\nwhile n < 5:\n  n += 1\nelse:\n  n = -n\nn', '-5'],
  ["for i in range(3):\n  pass\nelse:\n  i = 'done'\ni", "'done'"],
  ["for i in range(3):\n  break\nelse:\n  i = 'done'\ni", '0'],
  ['try:\n  x = 1 / 0\nexcept ZeroDivisionError as e:\n  x = str(e)\nx', "'division by zero'"],
  ['try:\n  [][1]\nexcept LookupError as e:\n  r = type(e).__name__\nr', "'IndexError'"],
  ["try:\n  {}['k']\nexcept (IndexError, KeyError) as e:\n  r = repr(e)\nr", '"KeyError(\'k\')"'],
  ['try:\n  x = 1\nexcept Exception:\n  x = 2\nelse:\n  x = 3\nfinally:\n  x = x * 10\nx', '30'],
  [
    "try:\n  raise ValueError('bad')\nexcept Exception as e:\n  r = (type(e).__name__, str(e), e.args)\nr",
    "('ValueError', 'bad', ('bad',))",
  ],
  ['def f():\n  try:\n    return 1\n  finally:\n    pass\nf()', '1'],
  ["try:\n  int('x')\nexcept ValueError as e:\n  r = str(e)\nr", '"invalid literal for int() with base 10: \'x\'"'],
  ["try:\n  'a' + 1\nexcept TypeError as e:\n  r = str(e)\nr", '\'can only concatenate str (not "int") to str\''],
  ['try:\n  undefined_name\nexcept NameError as e:\n  r = str(e)\nr', '"name \'undefined_name\' is not defined"'],
  ['try:\n  (1).foo\nexcept AttributeError as e:\n  r = str(e)\nr', "\"'int' object has no attribute 'foo'\""],
  ["try:\n  assert 1 == 2, 'nope'\nexcept AssertionError as e:\n  r = str(e)\nr", "'nope'"],
  ['x = [1, 2, 3]\n(y := len(x)) + y', '6'],
  ["'abc' if 0 else 'def'", "'def'"],
  ['[1, 2, 3, 4][1:-1]', '[2, 3]'],
  ["'x'.join('abc')", "'axbxc'"],
  ['str(10**20), str(2.5e-7), str(-0.0), str(1e100)', "('100000000000000000000', '2.5e-07', '-0.0', '1e+100')"],
  ['repr([1.0, 2.5, 1e-7, 1e22])', "'[1.0, 2.5, 1e-07, 1e+22]'"],
  ["sorted([(2, 'b'), (1, 'z'), (2, 'a')])", "[(1, 'z'), (2, 'a'), (2, 'b')]"],
  ["sorted({'b': 1, 'a': 2})", "['a', 'b']"],
  ["next(iter([5, 6])), next((x for x in [] ), 'empty')", "(5, 'empty')"],
  ['list(zip(*[(1, 2), (3, 4)]))', '[(1, 3), (2, 4)]'],
  ["[*range(3), *'ab']", "[0, 1, 2, 'a', 'b']"],
  ["{**{'a': 1}, 'b': 2}", "{'a': 1, 'b': 2}"],
  ["print('x')", 'None'],
  ["'%s' % None, '%s' % [1, 2], '%s' % (1,)", "('None', '[1, 2]', '1')"],
  ["'%d' % True, '%.1f' % 1, '%i' % -3.7", "('1', '1.0', '-3')"],
  [
    "import json\njson.dumps([1, 'a', None, True, {'k': 2.5}]), json.loads('{\"a\": [1, 2.5]}')",
    '(\'[1, "a", null, true, {"k": 2.5}]\', {\'a\': [1, 2.5]})',
  ],
  ['from functools import reduce\nreduce(lambda a, b: a * b, [1, 2, 3, 4])', '24'],
  ["import itertools\nlist(itertools.product('ab', [1, 2]))", "[('a', 1), ('a', 2), ('b', 1), ('b', 2)]"],
  ['import statistics\nstatistics.mean([1, 2, 3, 4]), statistics.median([3, 1, 2])', '(2.5, 2)'],
  ["from collections import Counter\nCounter('abca')['a']", '2'],
  ["1 < 'a'", "!TypeError: '<' not supported between instances of 'int' and 'str'"],
  ['[1] < (1,)', "!TypeError: '<' not supported between instances of 'list' and 'tuple'"],
  ['len(5)', "!TypeError: object of type 'int' has no len()"],
  ['None + 1', "!TypeError: unsupported operand type(s) for +: 'NoneType' and 'int'"],
  ['[1, 2][1.0]', '!TypeError: list indices must be integers or slices, not float'],
  ["{}['missing']", "!KeyError: 'missing'"],
  ["'abc'.index('z')", '!ValueError: substring not found'],
  ["int('1.5')", "!ValueError: invalid literal for int() with base 10: '1.5'"],
  ["float('abc')", "!ValueError: could not convert string to float: 'abc'"],
  ['1 % 0', '!ZeroDivisionError: integer modulo by zero'],
  ['1.0 / 0', '!ZeroDivisionError: float division by zero'],
  ['1 // 0', '!ZeroDivisionError: integer division or modulo by zero'],
  ['2.0 ** -1 + 0 ** 0', '1.5'],
  ['0.0 ** -1', '!ZeroDivisionError: 0.0 cannot be raised to a negative power'],
  ['[].pop()', '!IndexError: pop from empty list'],
  // bool formats as int under a non-empty spec; date, datetime and time specs are strftime formats.
  ["f'{True:>6}|{False:+}|{True}|{True:5.1f}|{True:x}'", "'     1|+0|True|  1.0|1'"],
  ["import datetime\nd = datetime.date(2020, 1, 2)\nf'{d:+}|{d:>12}|{d:%Y/%m}|{d}'", "'+|>12|2020/01|2020-01-02'"],
  [
    "import datetime\nf'{datetime.datetime(2020, 1, 2, 3, 4, 5):%H:%M|}|{datetime.time(1, 2):%Y %H}|{datetime.time(1, 2)}'",
    "'03:04||1900 01|01:02:00'",
  ],
  ["import datetime\nformat(datetime.date(2020, 1, 2), '')", "'2020-01-02'"],
];

test('Python semantics match CPython', () => {
  const failures: string[] = [];
  for (const [src, expected] of CASES) {
    const got = pyrepr(src);
    if (got !== expected) failures.push(`${JSON.stringify(src)}\n  expected ${expected}\n  got      ${got}`);
  }
  assert.is(failures.join('\n'), '');
});

test('budgets: loops, recursion and sizes give errors, not hangs', () => {
  assert.match(pyrepr('while True:\n  pass\nreturn 1', {maxIterations: 10000}), /^!TimeoutError/);
  assert.match(pyrepr('def f(n):\n  return f(n + 1)\nf(0)'), /^!RecursionError/);
  assert.match(pyrepr("'x' * 100000000"), /^!MemoryError/);
  assert.match(pyrepr('l = [1]\nfor i in range(40):\n  l = l + l\nreturn len(l)', {maxSize: 1000000}), /^!MemoryError/);
  assert.match(
    pyrepr('x = 0\nwhile True:\n  x += 1\nreturn x', {maxIterations: 1e12, maxCellMs: 50}),
    /^!TimeoutError/,
  );
  assert.match(pyrepr('sum(range(10**9))', {maxIterations: 100000}), /^!TimeoutError/);
  // itertools multiplying out a huge range: refused before it is copied (it used to run out of heap).
  assert.match(pyrepr('import itertools\nitertools.product(range(2**31), repeat=4)'), /^!MemoryError/);
  assert.match(pyrepr('import itertools\nitertools.permutations(range(2**31), 1)'), /^!MemoryError/);
  assert.match(pyrepr('import itertools\nitertools.combinations(range(2**31), 2)'), /^!MemoryError/);
  assert.is(pyrepr('import itertools\nlen(itertools.product(range(1000), range(1000)))'), '1000000');
});

test('safety: no way to JS internals or Python introspection escapes', () => {
  const escapes = [
    '().__class__.__bases__[0].__subclasses__()',
    '[].constructor',
    "''.constructor.constructor('return process')()",
    "getattr([], '__class__')",
    "getattr(len, 'constructor')",
    '(lambda: 0).__globals__',
    '(lambda: 0).__code__',
    'str.__subclasses__()',
    'type(1).__bases__',
    '{}.__proto__',
    'len.call',
    'sum.apply',
    'x = {}\nx.__proto__',
    '[].__class__.__mro__',
    '().__class__.prototype',
  ];
  for (const src of escapes) assert.match(pyrepr(src), /^!AttributeError/, src);
  for (const src of ['import os', 'import subprocess', 'import sys', '__import__("os")']) {
    assert.match(pyrepr(src + '\nreturn 1'), /^!(ImportError|ModuleNotFoundError)/, src);
  }
  for (const src of [
    'eval("1")',
    'exec("x=1")',
    'open("/etc/passwd")',
    'compile("1", "f", "eval")',
    'globals()',
    'process',
    'require',
    'globalThis',
    'Function',
  ]) {
    assert.match(pyrepr(src), /^!(UnsupportedError|NameError)/, src);
  }
});

test.run();
