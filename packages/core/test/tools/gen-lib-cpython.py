"""Generates packages/core/test/formula-lib-cpython.test.ts: expressions on the datetime, re, math,
json, string, itertools and functools modules, with the results CPython gives them (run by hand
with python3; the test needs no Python).

usage: python3 gen-lib-cpython.py > ../formula-lib-cpython.test.ts
"""
import ast, datetime, functools, itertools, json, math, re, string, sys
from libconv import Conv, Unsupported, ts_str

CASES = {
'datetime.date': r'''
datetime.date(2024, 2, 29)
str(datetime.date(2024, 2, 29))
datetime.date(2024, 2, 29).isoformat()
datetime.date(2024, 2, 29).weekday()
datetime.date(2024, 2, 29).isoweekday()
list(datetime.date(2024, 2, 29).isocalendar())
list(datetime.date(2021, 1, 3).isocalendar())
list(datetime.date(2020, 12, 31).isocalendar())
datetime.date(2024, 2, 29).toordinal()
datetime.date(1, 1, 1).toordinal()
datetime.date(2024, 2, 29).ctime()
datetime.date(2024, 2, 29).strftime('%A %d %B %Y, day %j, weeks %U %W, %a %b %y %m/%d')
datetime.date(2024, 1, 7).strftime('%U %W %w %u %G-%V')
datetime.date(2024, 2, 29).replace(year=2023)
datetime.date(2024, 2, 29).replace(month=3)
datetime.date(2024, 2, 29) + datetime.timedelta(days=1)
datetime.date(2024, 2, 29) - datetime.timedelta(days=366)
datetime.date(2024, 2, 29) + datetime.timedelta(hours=47)
datetime.date(2024, 2, 29) - datetime.date(2023, 2, 28)
datetime.date(2023, 1, 1) - datetime.date(2024, 1, 1)
datetime.date(2024, 2, 29) == datetime.date(2024, 2, 29)
datetime.date(2024, 2, 29) == datetime.datetime(2024, 2, 29)
datetime.date.fromisoformat('2024-02-29')
datetime.date.fromisoformat('2024-02-30')
datetime.date.fromordinal(738945)
datetime.date(2024, 13, 1)
datetime.date(2024, 2, 30)
datetime.date(0, 1, 1)
datetime.date.min
datetime.date.max
datetime.date.max + datetime.timedelta(days=1)
datetime.date.fromisocalendar(2020, 53, 5)
''',
'datetime.datetime': r'''
datetime.datetime(2020, 1, 2, 3, 4, 5, 6)
datetime.datetime(2020, 1, 2, 3, 4)
datetime.datetime(2020, 1, 2, 3, 4, 0, 500)
str(datetime.datetime(2020, 1, 2, 3, 4, 5, 6))
datetime.datetime(2020, 1, 2, 3, 4, 5, 6).isoformat()
datetime.datetime(2020, 1, 2, 3, 4, 5, 6).isoformat(' ', 'milliseconds')
datetime.datetime(2020, 1, 2, 3, 4, 5).isoformat(timespec='minutes')
datetime.datetime(2020, 1, 2, 3, 4, 5, 6).date()
datetime.datetime(2020, 1, 2, 3, 4, 5, 6).time()
datetime.datetime(2020, 1, 31, 23, 0) + datetime.timedelta(hours=25.5)
datetime.datetime(2020, 3, 1) - datetime.datetime(2020, 2, 28, 12, 30)
datetime.datetime(2020, 2, 28, 12, 30) - datetime.datetime(2020, 3, 1)
datetime.datetime(2020, 1, 1, tzinfo=datetime.timezone.utc).timestamp()
datetime.datetime(2020, 1, 1, 5, 30, tzinfo=datetime.timezone(datetime.timedelta(hours=5, minutes=30))).timestamp()
datetime.datetime(2020, 1, 1, tzinfo=datetime.timezone.utc)
datetime.datetime(2020, 1, 1, tzinfo=datetime.timezone(datetime.timedelta(hours=-3)))
datetime.datetime(2020, 1, 1, tzinfo=datetime.timezone(datetime.timedelta(hours=2), 'EET'))
str(datetime.datetime(2020, 1, 1, tzinfo=datetime.timezone(datetime.timedelta(hours=-3, minutes=-30))))
datetime.datetime(2020, 1, 1, tzinfo=datetime.timezone.utc).astimezone(datetime.timezone(datetime.timedelta(hours=5)))
datetime.datetime(2020, 1, 1, 12, tzinfo=datetime.timezone.utc) == datetime.datetime(2020, 1, 1, 7, tzinfo=datetime.timezone(datetime.timedelta(hours=-5)))
datetime.datetime(2020, 1, 1, 12, tzinfo=datetime.timezone.utc) - datetime.datetime(2020, 1, 1, 7, tzinfo=datetime.timezone(datetime.timedelta(hours=-6)))
datetime.datetime(2020, 1, 1) == datetime.datetime(2020, 1, 1, tzinfo=datetime.timezone.utc)
datetime.datetime(2020, 1, 1) - datetime.datetime(2020, 1, 1, tzinfo=datetime.timezone.utc)
datetime.datetime.fromtimestamp(0, datetime.timezone.utc)
datetime.datetime.fromtimestamp(1700000000.25, datetime.timezone.utc)
datetime.datetime.utcfromtimestamp(1e9)
datetime.datetime.utcfromtimestamp(-1.5)
datetime.datetime.strptime('2020-03-04 05:06:07', '%Y-%m-%d %H:%M:%S')
datetime.datetime.strptime('4 Mar 20 5:06 PM', '%d %b %y %I:%M %p')
datetime.datetime.strptime('Wednesday, March 04 2020', '%A, %B %d %Y')
datetime.datetime.strptime('2020-03-04T05:06:07.25+0130', '%Y-%m-%dT%H:%M:%S.%f%z')
datetime.datetime.strptime('2020-03-04', '%Y/%m/%d')
datetime.datetime.strptime('2020-03-04 junk', '%Y-%m-%d')
datetime.datetime.strptime('2020 064', '%Y %j')
datetime.datetime.fromisoformat('2020-01-02T03:04:05+05:30')
datetime.datetime.fromisoformat('2020-01-02 03:04:05.123')
datetime.datetime.fromisoformat('2020-01-02')
datetime.datetime.fromisoformat('2020-01-02T03:04:05Z')
datetime.datetime.combine(datetime.date(2020, 1, 2), datetime.time(3, 4))
datetime.datetime(2020, 1, 2, 3, 4).replace(hour=23, tzinfo=datetime.timezone.utc)
datetime.datetime(2020, 1, 2, 13, 4, 5).strftime('%I:%M:%S %p %H %c|%x|%X|%f|%z|%%')
datetime.datetime(2020, 1, 2, 0, 4, 5, tzinfo=datetime.timezone(datetime.timedelta(hours=-4))).strftime('%I %p %z %Z')
datetime.datetime(2020, 1, 2, 3, 4).ctime()
datetime.datetime(2020, 1, 2, 3, 4).weekday()
datetime.datetime(2020, 1, 2, 3, 4, tzinfo=datetime.timezone.utc).utcoffset()
datetime.datetime(2020, 1, 2, 3, 4).utcoffset()
datetime.datetime(2020, 1, 2, 3, 4, tzinfo=datetime.timezone.utc).tzname()
datetime.datetime.min
datetime.datetime.max
datetime.datetime(2020, 1, 1) < datetime.datetime(2020, 1, 1, 0, 0, 1)
datetime.datetime(2020, 1, 2, 25)
''',
'datetime.time and timedelta': r'''
datetime.time(3, 4, 5, 6)
datetime.time(3, 4)
str(datetime.time(3, 4, 5, 6))
datetime.time(3, 4).isoformat()
datetime.time(13, 4).strftime('%I:%M %p')
datetime.timedelta(days=1, hours=2, minutes=3, seconds=4, microseconds=5)
datetime.timedelta(0)
datetime.timedelta(days=-1, seconds=5)
datetime.timedelta(hours=-1)
str(datetime.timedelta(hours=-1))
str(datetime.timedelta(days=2, seconds=3661, microseconds=5))
str(datetime.timedelta(days=1))
str(datetime.timedelta(days=-2, hours=1))
datetime.timedelta(days=1.5, hours=-3)
datetime.timedelta(seconds=0.5, microseconds=0.5)
datetime.timedelta(microseconds=1.5)
datetime.timedelta(microseconds=2.5)
datetime.timedelta(weeks=2, milliseconds=1)
datetime.timedelta(days=1).total_seconds()
datetime.timedelta(microseconds=1).total_seconds()
datetime.timedelta(hours=3) / datetime.timedelta(minutes=7)
datetime.timedelta(hours=3) // datetime.timedelta(minutes=7)
datetime.timedelta(hours=3) % datetime.timedelta(minutes=7)
datetime.timedelta(hours=3) * 2.5
datetime.timedelta(seconds=1) * 0.0000015
datetime.timedelta(hours=3) / 7
datetime.timedelta(hours=3) // 7
datetime.timedelta(hours=3) * 2
2 * datetime.timedelta(hours=3)
datetime.timedelta(hours=3) - datetime.timedelta(days=1)
datetime.timedelta(hours=3) / 0
datetime.timedelta(hours=3) == datetime.timedelta(minutes=180)
datetime.timedelta(hours=3).days
datetime.timedelta(hours=-3).seconds
datetime.timedelta(days=1000000000)
datetime.timezone(datetime.timedelta(hours=5, minutes=30))
datetime.timezone.utc
''',
're': r'''
re.sub(r'(?P<y>\d{4})-(\d\d)', r'\2/\g<y>', 'on 2020-05 and 1999-12')
re.sub(r'(\w+)@(\w+)', r'\g<2> at \1\n', 'me@home')
re.findall(r'\b\w+\b', 'héllo wörld 42 ½ x_y')
re.findall(r'\d', '1٣3')
len(re.findall(r'\s+', 'a b\u00a0c\u2003d'))
re.split(r'(,)\s*', 'a, b,c')
re.split(r'x*', 'axbc')
re.split(r'\W+', 'Words, words, words.', 1)
re.split(r'(a)|b', 'xaybz')
re.sub('x*', '-', 'abxd')
re.subn(r'\d', '#', 'a1b22c', 2)
re.sub(r'\d', lambda m: str(int(m.group()) * 2), 'a1b2c9')
re.match(r'(\w+) (\w+)', 'Isaac Newton, physicist').groups()
re.match(r'(\w+) (\w+)', 'Isaac Newton, physicist').span(2)
re.match(r'(\w+) (\w+)', 'Isaac Newton, physicist').group(0, 1)
re.match(r'(?P<first>\w+) (?P<last>\w+)', 'Jane Doe').groupdict()
re.match(r'(?P<first>\w+) (?P<last>\w+)?', 'Jane ').groupdict('-')
re.match(r'(a)(b)?', 'ac').groups()
re.match(r'(a)(b)?', 'ac').lastindex
re.match(r'(?P<x>a)(?P<y>b)', 'ab').lastgroup
re.match(r'a', 'ba')
re.search(r'a', 'ba')
re.search(r'a', 'ba').start()
re.fullmatch(r'a|ab', 'ab')
re.fullmatch(r'a', 'ab')
re.search(r'^b', 'a\nb')
re.search(r'^b', 'a\nb', re.M)
re.findall(r'(?m)^\w', 'ab\ncd')
re.findall(r'\w+$', 'foo\nbar\n')
re.findall(r'\w+$', 'foo\nbar\n', re.MULTILINE)
re.search(r'a$', 'a\n')
re.search(r'a\Z', 'a\n')
re.findall(r'\A\w+|\w+\Z', 'ab cd ef')
re.findall(r'.', 'a\nb')
re.findall(r'.', 'a\nb', re.S)
re.findall(r'(?s).', 'a\nb')
re.findall(r'HELLO', 'hello Hello', re.I)
re.findall(r'(?i)straße', 'STRASSE straße STRAßE')
re.escape('a.b*c (d) ~#&-')
re.search(r'(?P<c>\w)(?P=c)', 'abccd').group()
re.findall(r'(?<=\$)\d+', '$12 $3 4')
re.findall(r'(\w)(\d)', 'a1 b2 c')
re.findall(r'a{2}|b{,2}c|d{1,}|e{}|f{,}', 'aaa bbbc dd e{} f{,}')
re.findall(r'x{', 'ax{')
re.findall(r'[]a]', 'a]b')
re.findall(r'[^]a]', 'a]b')
re.findall(r'[\w-]+', 'a-b c_d')
re.findall(r'[\d.]+', '1.5 and 22')
re.findall(r'\d+ # digits', 'a12b3', re.X)
re.findall(r'[#] x', '# x', re.VERBOSE)
re.findall(r'\x41\u00e9\t', 'A\u00e9\t')
re.search(r'b', '\U0001F600ab').span()
re.sub(r'b', 'B', '\U0001F600ab')
re.compile('a+', re.I).pattern
re.compile('a+', re.I).flags
re.compile(r'(?P<a>x)(y)').groups
re.compile(r'a+').findall('caaab aa')
re.compile(r'a+').sub('-', 'caaab aa', 1)
re.compile(r'a+').split('caaab')
re.match(r'a+', 'aaab')
re.compile(r'a', re.I | re.M)
re.compile('(')
re.compile('a)')
re.compile('[a')
re.compile(r'\q')
re.compile(r'(?P<n>a)(?P<n>b)')
re.sub(r'a', r'\1', 'a')
re.sub(r'(a)|b', r'[\1]', 'ab')
re.sub(r'(?P<x>a)', r'\g<x>\g<0>', 'a')
re.findall(r'(?:ab)+', 'ababx abab')
re.findall(r'\bfoo\b', 'foo.bar foobar (foo)')
re.findall(r'\Bo\B', 'foo boo o')
re.search(r'(?i)ß', 'SS')
re.findall(r'\d', '123', re.A)
re.findall(r'\w+', 'héllo', re.ASCII)
''',
'math': r'''
math.floor(-2.5)
math.ceil(2.1)
math.floor(7)
math.trunc(-2.7)
math.factorial(20)
math.factorial(-1)
math.gcd(12, 18, 27)
math.lcm(4, 6, 10)
math.isqrt(10**20 + 1)
math.comb(50, 25)
math.perm(5, 2)
math.perm(5)
math.fsum([.1, .1, .1, .1, .1, .1, .1, .1, .1, .1])
math.log(8, 2)
math.log(100)
math.log10(1000)
math.log2(1024)
math.log(0)
math.sqrt(-1)
math.sqrt(2)
math.hypot(3, 4)
math.pow(2, 0.5)
math.pow(2, 3)
math.exp(1000)
math.exp(1)
math.frexp(10.0)
math.modf(-3.5)
math.fmod(-7, 3)
math.copysign(2, -0.0)
math.isclose(1.0, 1.0 + 1e-10)
math.isnan(math.nan)
math.isinf(-math.inf)
math.degrees(math.pi)
math.radians(180)
math.atan2(1, -1)
math.floor(math.inf)
math.ceil(math.nan)
math.prod([1, 2, 3.5])
math.prod([2, 3])
math.dist([0, 0], [3, 4])
math.acos(2)
math.tau
math.e
math.ldexp(0.5, 4)
math.remainder(5, 3)
math.fabs(-3)
''',
'json, string, itertools, functools': r'''
json.dumps({'a': [1, 2.5, None, True], 'b': 'é"\n'})
json.dumps([1, 'é'], ensure_ascii=False)
json.dumps({'b': 1, 'a': {'c': [1, 2]}}, indent=2, sort_keys=True)
json.dumps({'b': 1, 'a': 2}, separators=(',', ':'))
json.dumps({1: 'x', 2.5: 'y', None: 'z'})
json.dumps(1e100)
json.dumps('\U0001F600')
json.loads('{"a": [1, 2.5, null, true, "\\u00e9"], "b": 12345678901234567890}')
json.loads('[1, 2')
json.loads('1e3')
string.ascii_letters
string.punctuation
string.capwords('hello   wORLD  foo')
itertools.chain([1, 2], (3,), 'ab')
itertools.product('ab', [1, 2])
itertools.product([0, 1], repeat=2)
itertools.permutations([1, 2, 3], 2)
itertools.combinations('abcd', 2)
itertools.groupby('aabbbc')
itertools.islice('abcdefg', 2, 6, 2)
itertools.accumulate([1, 2, 3, 4])
itertools.accumulate([1, 2, 3, 4], lambda a, b: a * b)
itertools.zip_longest('ab', 'xyz', fillvalue='-')
functools.reduce(lambda a, b: a * b, [1, 2, 3, 4])
functools.reduce(lambda a, b: a + b, [], 0)
''',
}

# Python's repr of iterator results: gristlite's itertools return lists.
LISTIFY = ('itertools.',)
TYPE_ONLY = {'error'}  # re.error messages are worded by the JS engine

def run():
  env = {'datetime': datetime, 're': re, 'math': math, 'json': json, 'string': string,
         'itertools': itertools, 'functools': functools}
  out = []
  w = out.append
  w('// GENERATED by test/tools/gen-lib-cpython.py: each expected value is what CPython %d.%d gives.' % sys.version_info[:2])
  w("import { test } from 'uvu';")
  w("import { Value } from '../src/formula/values.js';")
  w("import { DT, M, bin, callAttr, check, dict, getAttr, iter, lambdaFn, lazyFn, py, pyEquals, tuple } from './formula-lib-helpers.js';")
  w('void DT; void M; void bin; void callAttr; void dict; void getAttr; void iter; void lambdaFn; void lazyFn; void py; void pyEquals; void tuple;')
  w('type V = Value; void (null as unknown as V);')
  w('')
  skipped = []
  for group, text in CASES.items():
    w('test(%s, () => {' % ts_str(group + ' (as CPython)'))
    for line in text.strip().splitlines():
      src = line.strip()
      if not src: continue
      conv = Conv(set(), set())
      conv.dt_shortcut = False
      try:
        code = conv.expr(ast.parse(src, mode='eval').body)
      except Unsupported as e:
        skipped.append((src, str(e)))
        continue
      try:
        val = eval(src, env)
        if 'groupby' in src:
          val = [(k, list(g)) for k, g in val]
        elif src.startswith(LISTIFY):
          val = list(val)
        want = repr(val)
        w('  check(%s, () => %s, %s);' % (ts_str(src), code, ts_str(want)))
      except Exception as e:
        name = type(e).__name__
        msg = None if name in TYPE_ONLY else str(e)
        w('  check(%s, () => %s, null, %s);' % (ts_str(src), code, json.dumps([name, msg], ensure_ascii=False)))
    w('});')
    w('')
  w('test.run();')
  print('\n'.join(out))
  for s in skipped:
    print('SKIPPED %s (%s)' % s, file=sys.stderr)

run()
