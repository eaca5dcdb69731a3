"""Converts Python expressions (doctest and CPython-checked cases) to TypeScript calls on
gristlite's formula library; shared by the test generators in this folder."""
import ast, json

MODULE_NAMES = {'datetime', 're', 'math', 'json', 'string', 'itertools', 'functools', 'time'}

def ts_str(s):
  return json.dumps(s, ensure_ascii=False)

class Unsupported(Exception):
  pass

def ts_str(s):
  return json.dumps(s, ensure_ascii=False)

class Conv:
  dt_shortcut = True

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
    if n.id in MODULE_NAMES: return 'M.%s' % n.id
    if n.id in self.funcs: return 'F.%s' % n.id
    raise Unsupported('name ' + n.id)

  def e_UnaryOp(self, n):
    if isinstance(n.op, ast.USub):
      if isinstance(n.operand, ast.Constant) and isinstance(n.operand.value, (int, float)):
        return self.expr(ast.Constant(-n.operand.value))
      return "bin('*', -1n, %s)" % self.expr(n.operand)
    raise Unsupported('unary')

  def e_BinOp(self, n):
    ops = {ast.Add: '+', ast.Sub: '-', ast.Mult: '*', ast.Div: '/', ast.Pow: '**', ast.Mod: '%', ast.FloorDiv: '//', ast.BitOr: '|'}
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
    if len(n.ops) == 1 and isinstance(n.ops[0], ast.Lt):
      return 'bin("<", %s, %s)' % (self.expr(n.left), self.expr(n.comparators[0]))
    raise Unsupported('compare')

  def e_Attribute(self, n):
    return 'getAttr(%s, %s)' % (self.expr(n.value), ts_str(n.attr))

  def e_Lambda(self, n):
    params = [a.arg for a in n.args.args]
    sub = Conv(self.funcs, self.env | set(params))
    if not params:
      return 'lazyFn(() => %s)' % sub.expr(n.body)
    return 'lambdaFn((%s) => %s)' % (', '.join('%s: Value' % p for p in params), sub.expr(n.body))

  def e_Dict(self, n):
    return 'dict([%s])' % ', '.join('[%s, %s]' % (self.expr(k), self.expr(v)) for k, v in zip(n.keys, n.values))

  def e_Set(self, n):
    raise Unsupported('set')

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
      if f.id in ('round', 'len', 'range', 'zip', 'float', 'str', 'sum', 'list', 'int'):
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
      if isinstance(base, ast.Name) and base.id == 'datetime' and self.dt_shortcut:
        return 'DT.%s.call(%s)' % (f.attr, self.call_args(n))
      if isinstance(base, ast.Attribute) and isinstance(base.value, ast.Name) and base.value.id == 'dateutil':
        return 'py.parse(%s)' % self.expr(n.args[0])
      if isinstance(base, ast.Name) and base.id == 'moment' and f.attr == 'tzinfo':
        return 'tzinfoFor(%s)' % self.expr(n.args[0])
      if isinstance(base, ast.Name) and base.id == 'math' and f.attr == 'isnan':
        return 'py.isnan(%s)' % self.expr(n.args[0])
      return 'callAttr(%s, %s, %s)' % (self.expr(base), ts_str(f.attr), self.call_args(n))
    raise Unsupported('call')

