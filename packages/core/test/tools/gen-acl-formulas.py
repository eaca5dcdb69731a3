"""Generates packages/core/test/access-rules-oracle.ts: access-rule formulas with what Grist's data
engine makes of them (the `aclFormulaParsed` JSON text, or the error it raises), recorded by
running Grist's own parser (sandbox/grist/predicate_formula.py of a grist-core checkout) under
CPython 3.11, the Python Grist ships. Run by hand; the test needs no Python.

usage: python3 gen-acl-formulas.py /path/to/grist-core > ../access-rules-oracle.ts

Grist's codebuilder imports astroid for formula inference, which parsing predicate formulas does
not use: a stand-in module is installed when astroid is missing. asttokens is needed.
"""
import json
import random
import sys
import types

if sys.version_info[:2] != (3, 11):
  sys.exit('needs CPython 3.11 (the Python Grist uses): error messages differ between versions')

try:
  import astroid  # noqa: F401
except ImportError:
  class _Anything:
    def __getattr__(self, name):
      if name.startswith('__'):
        raise AttributeError(name)
      return _Anything()
    def __call__(self, *args, **kwargs):
      return _Anything()
    def __mro_entries__(self, bases):
      return (object,)
  class _Module(types.ModuleType):
    def __getattr__(self, name):
      if name.startswith('__'):
        raise AttributeError(name)
      return _Anything()
  sys.modules['astroid'] = _Module('astroid')

sys.path.insert(0, sys.argv[1] + '/sandbox/grist')
from predicate_formula import parse_predicate_formula_json  # noqa: E402

# Formulas chosen by hand: every construct, every error Grist's tests name, the number and string
# forms, the quirks of comments, `$`, positions after non-ASCII text and multi-line strings.
HAND = r'''
user.Email == 'X@'
user.Role in ('editors', 'owners')
user.Role not in ('editors', 'owners')
rec.office == 'Seattle' and user.email in ['sally@', 'xie@']
$office == 'Seattle' and user.email in ['sally@', 'xie@']
user.IsAdmin or rec.assigned is None or (not newRec.HasDuplicates and rec.StatusIndex <= newRec.StatusIndex)
user.IsAdmin or $assigned is None or (not newRec.HasDuplicates and $StatusIndex <= newRec.StatusIndex)
r.A <= n.A + 1 or r.A >= n.A - 1 or r.B < n.B * 2.5 or r.B > n.B / 2.5 or r.C % 2 != 0
rec.A is True or rec.A is not False
$A is True or $A is not False
user.Office.City == 'Seattle' and user.Status.IsActive
True # Comment!  
"#x" == " # Not a comment "#Comment!
choice not in $Categories
choice.role == "Manager"
user.Email.lower() == 'foo'
rec.First_Name.upper() == 'FOO'.lower()
func(a.append(5), bar(b), c=1, d=baz(x=3))
max(rec)
f(**k)
f(a,)
return 1
def foo(): pass
user.id in {1, 2, 3}
1 if user.IsAnon else 2
max(*rec)
1 | 2
1 << 2
~test
[(]
user.id in (1,2))
foo and !bar
1 < 2 < 3
1 == 2 == 3
-1
+a
10**2
a // b
a @ b
a & b
a ^ b
a[1]
a[1:2]
lambda: 1
lambda x: x
lambda $x: 1
{}
{1}
{1:2}
[x for x in y]
(x for x in y)
f(a for a in b)
f(x for x in y, 1)
(x := 1)
f'x{a}'
await x
yield x
...
1j
1E5J
b'x'
rb'x'
'a' b'b'
x = 1
$x = 1
x = $y
a; b
a
b
a <> b
not
(
$
$1
x.$y
a.$b
$a and !b
$x + $y
'$x' + $x
# $x
$y
DOLLARx
$x.$y
f($y=1)
'''.strip('\n').split('\n')

# Multi-line formulas and other texts that a line list cannot hold.
HAND += [
  '', ' ', '  ', '\n', '\n\n# x', '# only', ' True', '\tTrue', 'a\n  b', 'a\nb', '(a\nor b)', '(\nx # c\n)',
  '# Allow owners\nuser.Access == \'owners\' # ignored\n# comment ignored',
  '# A memo that comes before the formula.\nTrue', 'False # A memo that comes after the formula.',
  "# This memo will be shown.\n2 + 2 == 4 # This memo won't be shown.", 'x # é comment \u2003', 'x #',
  'x #   ', 'x\n# c', '# c1\n# c2\nx', 'x # \x1c y \x1c', "'a' \\\n 'b'", 'a\\\n and b', 'a\\b', 'a == \\\n',
  'a +\\', "'''a\nb''' == $x", "'''a\nb''' + !", "'''a\nb''' + 07", "'é' + 07", "'é' + 1_", "'é' + !",
  "'é' + -1", "'😀' and -1", "'é'\n+ !", 'été == 1', "x['é'].id == 1 < '''t\nq'''(OWNER) or newRec ** not x",
  '\r\nx\r\n', 'x\r', 'x ;',
  # numbers
  '0', '42', '1_000', '0x10', '0XFF', '0o17', '0b101', '007.5', '00', '07', '1e3', '1E5', '1.e5', '1.', '.5',
  '0.1', '2.0', '100.0', '1e-5', '1e-7', '1.5e-07', '1e15', '1e16', '2.5e16', '1e20', '1e22', '1e300',
  '1e400', '3.14159265358979', '0.30000000000000004', '123456789012345678901234567890', '9007199254740993',
  '1__0', '0x', '1a', '1.not5', '1not in x', '1if 1 else 2', '1.not in x', '0o8', '0b2', '1e', '1e+',
  '00.Office', '1.Email', '12345678901234567890.Email', '1é', '1€', '0x1€', '1.5€',
  # strings
  "'\\n\\t\\x41'", "'\\x7f\\x1f'", "'\\0\\777'", "'\\d'", "r'\\d'", "r'\\''", "u'x'", "'\\u00e9'",
  '"\\u00e9\\U0001F600"', "'é😀'", "'\\ud83d\\ude00'", "'\\x4'", "'\\x4' + €", "'\\x4' + [a b]",
  "[a b] + '\\x4'", '\'\\U00110000\'', "'abc", '"""abc', "'abc\\", "'''abc\\", '"\\"" == \'\\\'\'', "'\\\\'",
  "'\\N{BULLET}'", "'a' 'b' \"c\"", "'\u2028\u00a0'", "'\x00'", "'\\a\\b\\f\\v\\r'",
  # specific errors
  '[a b]', '(a b)', 'f(a b)', '[a, b c]', 'a b', 'a ?', 'a `', 'a €', 'a)', '[)', '(a', '(a\n  b c', 'a ==',
  'x if y', 'x if', 'x if y else', '(x if y\n', '(a if b', 'print x', 'print -1', 'print[1] + !', '(print 1',
  'exec 1', 'print', 'print.x', 'f(a=1, b)', 'f(**a, b)', 'f(**a, *b)', 'f(*a, b)', 'f(a, b=1, *c)',
  'f(a.b=1)', 'f(True=1)', 'x = f(a=1, b)', 'x = 1 + !', 'a b\n  c', 'Tr|#e', 'a == # c', "f(a=1, b) + 'abc",
  'f(a=1, b) + €', '[a b] €', "[a b] + 'x", 'a.True', 'True.x', '(' * 201 + '1' + ')' * 201,
  '(' * 200 + '1' + ')' * 200,

]


def rand_formulas(seed, count):
  """Formulas from a small grammar: every construct, nested, with `$`, comments, odd literals."""
  R = random.Random(seed)
  names = ['rec', 'newRec', 'user', 'EDITOR', 'OWNER', 'x', 'été', 'True', 'None', 'False', 'print']
  attrs = ['Email', 'Access', 'A', 'lower', 'upper', 'id', 'Office']
  strs = ["'a'", '"b"', "'é'", "'\\n\\t\\x41'", "r'\\d'", "'''t\nq'''", '"\\u00e9\\U0001F600"', "'😀'",
          "b'x'", "f'x'", "'a' 'b'", "'#'", "'$x'"]
  nums = ['0', '1', '42', '1.5', '1e3', '1e20', '0.1', '1_000', '0x1F', '0o7', '1e-7', '3.', '.5', '1j',
          '12345678901234567890', '2.5e16', '100.0']
  def atom(d):
    r = R.random()
    if r < 0.35: return R.choice(names)
    if r < 0.5: return '$' + R.choice(attrs)
    if r < 0.65: return R.choice(strs)
    if r < 0.8: return R.choice(nums)
    if d > 1: return R.choice(names)
    k = R.random()
    if k < 0.3: return '[' + ', '.join(expr(d + 1) for _ in range(R.randint(0, 3))) + ']'
    if k < 0.55: return '(' + ', '.join(expr(d + 1) for _ in range(R.randint(0, 3))) + R.choice(['', ',']) + ')'
    if k < 0.65: return '{' + expr(d + 1) + '}'
    return '(' + expr(d + 1) + ')'
  def primary(d):
    e = atom(d)
    for _ in range(R.randint(0, 2)):
      k = R.random()
      if k < 0.6: e += '.' + R.choice(attrs)
      elif k < 0.9:
        args = [expr(d + 1) for _ in range(R.randint(0, 2))]
        if R.random() < 0.3: args.append(R.choice(attrs) + '=' + expr(d + 1))
        if R.random() < 0.1: args.append('**' + atom(d + 1))
        e += '(' + ', '.join(args) + ')'
      else: e += '[' + expr(d + 1) + ']'
    return e
  def expr(d=0):
    if d > 2: return primary(d)
    r = R.random()
    if r < 0.3: return primary(d)
    if r < 0.45: return expr(d + 1) + ' ' + R.choice(['and', 'or']) + ' ' + expr(d + 1)
    if r < 0.5: return 'not ' + expr(d + 1)
    if r < 0.7:
      op = R.choice(['==', '!=', '<', '<=', '>', '>=', 'in', 'not in', 'is', 'is not'])
      return expr(d + 1) + ' ' + op + ' ' + expr(d + 1)
    if r < 0.85: return expr(d + 1) + ' ' + R.choice(['+', '-', '*', '/', '%', '//', '**', '|']) + ' ' + expr(d + 1)
    if r < 0.9: return R.choice(['-', '+', '~']) + expr(d + 1)
    if r < 0.95: return expr(d + 1) + ' if ' + expr(d + 1) + ' else ' + expr(d + 1)
    return expr(d + 1) + ' < ' + expr(d + 1) + ' == ' + expr(d + 1)
  out = []
  for _ in range(count):
    e = expr()
    if R.random() < 0.15: e += ' # ' + R.choice(['memo', 'é', ' x ', '# y'])
    out.append(e)
  return out


def record(formula):
  try:
    return ['ok', parse_predicate_formula_json(formula)]
  except Exception as e:  # noqa: BLE001 - every failure is recorded, as Grist would report it
    return ['err', type(e).__name__, str(e)]


def ts(value):
  # JSON is valid TypeScript; escape U+2028/9 for older parsers and keep the file ASCII.
  return json.dumps(value, ensure_ascii=True)


cases = HAND + rand_formulas(20260426, 600)
print('// Generated by tools/gen-acl-formulas.py from Grist\'s own parser (CPython 3.11): do not edit.')
print('// Each case: [formula, "ok", aclFormulaParsed] or [formula, "err", exception name, message].')
print('export const ORACLE_CASES: Array<[string, "ok", string] | [string, "err", string, string]> = [')
for f in cases:
  print('  ' + ts([f] + record(f)) + ',')
print('];')
