"""Generates packages/core/test/formula-lib-doctests.test.ts from the doctest examples in the
docstrings of grist-core's sandbox/grist/functions/*.py (run by hand; the test needs no Python).

usage: python3 gen-lib-doctests.py <grist-core git dir> > ../formula-lib-doctests.test.ts
"""
import ast, doctest, json, subprocess, sys

GIT = sys.argv[1]
MODULES = ['math', 'text', 'date', 'info', 'stats', 'logical', 'schedule']
# Functions that belong to the interpreter (records, tables, requests) or are not ours.
SKIP_FUNCS = {'PEEK', 'RECORD', 'REQUEST', 'PHONE_FORMAT'}

class Unsupported(Exception):
  pass

def ts_str(s):
  return json.dumps(s, ensure_ascii=False)

class Conv:
  def __init__(self, funcs, env):
    self.funcs = funcs
    self.env = env   # local names (comprehension/lambda targets)

  def expr(self, n):
    m = getattr(self, 'e_' + type(n).__name__, None)
    if not m:
      raise Unsupported(type(n).__name__)
    return m(n)

  def e_Constant(self, n):
    v = n.value
    if v is None: return 'null'
    if v is True: return 'true'
    if v is False: return 'false'
    if isinstance(v, int): return '%dn' % v
    if isinstance(v, float):
      r = repr(v)
      return 'Number(%s)' % json.dumps(r) if r in ('inf', 'nan') else r
    if isinstance(v, str): return ts_str(v)
    raise Unsupported('const')

  def e_List(self, n): return '[%s]' % ', '.join(self.expr(e) for e in n.elts)
  def e_Tuple(self, n): return 'tuple(%s)' % ', '.join(self.expr(e) for e in n.elts)

  def e_Name(self, n):
    if n.id in self.env: return n.id
    if n.id in self.funcs: return 'F.%s' % n.id
    raise Unsupported('name ' + n.id)

  def e_UnaryOp(self, n):
    if isinstance(n.op, ast.USub):
      if isinstance(n.operand, ast.Constant) and isinstance(n.operand.value, (int, float)):
        return self.expr(ast.Constant(-n.operand.value))
      return "bin('*', -1n, %s)" % self.expr(n.operand)
    raise Unsupported('unary')

  def e_BinOp(self, n):
    ops = {ast.Add: '+', ast.Sub: '-', ast.Mult: '*', ast.Div: '/', ast.Pow: '**', ast.Mod: '%', ast.FloorDiv: '//'}
    op = ops.get(type(n.op))
    if op == '%' and isinstance(n.left, ast.Constant) and isinstance(n.left.value, str):
      fmt = n.left.value
      if fmt.startswith('%.') and fmt.endswith('f'):
        return 'fixed(%s, %d)' % (self.expr(n.right), int(fmt[2:-1]))
      raise Unsupported('format')
    if not op: raise Unsupported('binop')
    return "bin(%s, %s, %s)" % (ts_str(op), self.expr(n.left), self.expr(n.right))

  def e_Compare(self, n):
    if len(n.ops) == 1 and isinstance(n.ops[0], ast.Eq):
      return 'pyEquals(%s, %s)' % (self.expr(n.left), self.expr(n.comparators[0]))
    raise Unsupported('compare')

  def e_Attribute(self, n):
    return 'getAttr(%s, %s)' % (self.expr(n.value), ts_str(n.attr))

  def e_Lambda(self, n):
    return 'lazyFn(() => %s)' % self.expr(n.body)

  def e_ListComp(self, n):
    if len(n.generators) != 1 or n.generators[0].ifs: raise Unsupported('comp')
    g = n.generators[0]
    if not isinstance(g.target, ast.Name): raise Unsupported('comp target')
    sub = Conv(self.funcs, self.env | {g.target.id})
    return 'iter(%s).map((%s) => %s)' % (self.expr(g.iter), g.target.id, sub.expr(n.elt))

  def call_args(self, n):
    args = ', '.join(self.expr(a) for a in n.args)
    if n.keywords:
      kw = '{%s}' % ', '.join('%s: %s' % (k.arg, self.expr(k.value)) for k in n.keywords)
    else:
      kw = 'null'
    return '[%s], %s' % (args, kw)

  def e_Call(self, n):
    f = n.func
    if isinstance(f, ast.Name):
      if f.id in self.funcs:
        return 'F.%s.call(%s)' % (f.id, self.call_args(n))
      if f.id in ('round', 'len', 'range', 'zip', 'float', 'str', 'sum', 'list'):
        return 'py.%s(%s)' % (f.id, ', '.join(self.expr(a) for a in n.args))
      if f.id == 'AltText':
        return 'altText(%s)' % self.expr(n.args[0])
      if f.id == 'show':
        return 'py.show(%s)' % self.expr(n.args[0])
      if f.id == 'datetime':
        return 'DT.datetime.call(%s)' % self.call_args(n)
      if f.id == 'lazy_value':
        raise Unsupported('lazy_value')
    if isinstance(f, ast.Attribute):
      base = f.value
      if isinstance(base, ast.Name) and base.id == 'datetime':
        return 'DT.%s.call(%s)' % (f.attr, self.call_args(n))
      if isinstance(base, ast.Attribute) and isinstance(base.value, ast.Name) and base.value.id == 'dateutil':
        return 'py.parse(%s)' % self.expr(n.args[0])
      if isinstance(base, ast.Name) and base.id == 'moment' and f.attr == 'tzinfo':
        return 'tzinfoFor(%s)' % self.expr(n.args[0])
      if isinstance(base, ast.Name) and base.id == 'math' and f.attr == 'isnan':
        return 'py.isnan(%s)' % self.expr(n.args[0])
      return 'callAttr(%s, %s, %s)' % (self.expr(base), ts_str(f.attr), self.call_args(n))
    raise Unsupported('call')

def examples():
  for mod in MODULES:
    src = subprocess.check_output(['git', '--git-dir', GIT, 'show', 'HEAD:sandbox/grist/functions/%s.py' % mod]).decode()
    tree = ast.parse(src)
    funcs = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    names = {n.name for n in funcs if not n.name.startswith('_')}
    all_names = set()
    for m2 in MODULES:
      s2 = subprocess.check_output(['git', '--git-dir', GIT, 'show', 'HEAD:sandbox/grist/functions/%s.py' % m2]).decode()
      all_names |= {n.name for n in ast.parse(s2).body if isinstance(n, ast.FunctionDef) and not n.name.startswith('_')}
    for fn in funcs:
      if fn.name.startswith('_') or fn.name in SKIP_FUNCS: continue
      doc = ast.get_docstring(fn, clean=True)
      if not doc: continue
      for ex in doctest.DocTestParser().get_examples(doc):
        yield mod, fn.name, ex, all_names

def main():
  cases = {}
  skipped = []
  envs = {}
  for mod, name, ex, funcs in examples():
    source = ex.source.strip()
    env = envs.setdefault(name, set())
    try:
      tree = ast.parse(source)
      if len(tree.body) != 1: raise Unsupported('multi')
      st = tree.body[0]
      conv = Conv(funcs, env)
      if isinstance(st, ast.FunctionDef) and st.name == 'show':
        continue
      if isinstance(st, ast.Assign) and len(st.targets) == 1:
        t = st.targets[0]
        if isinstance(t, ast.Name):
          cases.setdefault(name, []).append({'stmt': 'const %s = %s;' % (t.id, conv.expr(st.value))})
          env.add(t.id)
          continue
        if isinstance(t, ast.Tuple) and isinstance(st.value, ast.Tuple):
          for tt, vv in zip(t.elts, st.value.elts):
            cases.setdefault(name, []).append({'stmt': 'const %s = %s;' % (tt.id, conv.expr(vv))})
            env.add(tt.id)
          continue
        raise Unsupported('assign')
      if isinstance(st, ast.Assert):
        code = conv.expr(st.test)
        want = 'True'
      elif isinstance(st, ast.Expr):
        code = conv.expr(st.value)
        want = ex.want.strip()
      else:
        raise Unsupported('stmt')
    except (Unsupported, SyntaxError) as e:
      skipped.append((name, source, str(e)))
      continue
    case = {'src': source, 'code': code}
    exc_msg = ex.exc_msg
    if exc_msg is None and ex.want.startswith('Traceback'):
      exc_msg = ex.want.strip().splitlines()[-1]
    if exc_msg is not None:
      last = exc_msg.strip().splitlines()[-1]
      etype, _, emsg = last.partition(': ')
      etype = etype.split('.')[-1]
      if etype == '{}': etype = 'ParserError'
      case['exc'] = [etype, None if ex.options.get(doctest.IGNORE_EXCEPTION_DETAIL) else emsg]
    else:
      # Python 2 spellings in Grist's docstrings: u'...' is a str.
      if want.startswith("u'") or want.startswith('u"'): want = want[1:]
      case['want'] = want
    cases.setdefault(name, []).append(case)

  out = []
  w = out.append
  w('// GENERATED by test/tools/gen-lib-doctests.py from the doctest examples of grist-core\'s')
  w('// sandbox/grist/functions/*.py (the documented behaviour of each function). Do not edit by hand.')
  w("import { test } from 'uvu';")
  w("import * as assert from 'uvu/assert';")
  w("import { F, DT, altText, bin, callAttr, check, fixed, getAttr, iter, lazyFn, py, pyEquals, tuple, tzinfoFor } from './formula-lib-helpers.js';")
  w('')
  w('void altText; void getAttr; void bin; void callAttr; void fixed; void iter; void lazyFn; void py; void pyEquals; void tuple; void tzinfoFor; void DT;')
  w('')
  for name, cs in cases.items():
    w('test(%s, () => {' % ts_str(name + ' (Grist doctests)'))
    for c in cs:
      if 'stmt' in c:
        w('  ' + c['stmt'])
      elif 'exc' in c:
        w('  check(%s, () => %s, null, %s);' % (ts_str(c['src']), c['code'], json.dumps(c['exc'])))
      else:
        w('  check(%s, () => %s, %s);' % (ts_str(c['src']), c['code'], ts_str(c['want'])))
    w('});')
    w('')
  w('test.run();')
  w('void assert;')
  print('\n'.join(out))
  for s in skipped:
    print('SKIPPED %s: %s (%s)' % s, file=sys.stderr)

main()
