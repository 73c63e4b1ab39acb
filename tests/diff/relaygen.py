#!/usr/bin/python3
"""relaygen.py: random well-typed Relay programs for differential testing.

A program is made from a seed (random.Random(seed), so the same seed gives
the same program and inputs on every machine) as a small AST that carries a
Relay type on every node, printed as text format v0.0.5. It mixes tensors
(0-d to 3-d; float32, float64, int32, int64, bool) through elementwise,
broadcast, reduction, injective and a few nn operators with guarded domains,
let, if, tuples and projections, closures (captured, returned, passed),
global functions, self and mutual recursion bounded by an int32 counter,
the ADTs List, Option and Tree with nested patterns, match and match?, and
references. @main takes tensors and returns a tuple of tensors.

Termination: every recursion is on a counter that is clamped at each step
(minimum(n, K) - 1, or a base case n <= 0 || n > K), or on a finite ADT
value; every call of a global goes to an earlier global (or to the
function's own recursion group); a rough cost estimate (calls per run)
bounds nesting.

Domains: operands of log, sqrt, divide, power, acosh... are shifted or
clipped into the domain; integer divisors are maximum(abs(b), 1) (never 0).
Nodes built by a guard are marked `keep`, so the shrinker never replaces
them (that would bring back a division by zero or an unbounded loop).

No NumPy: inputs are written as .npy by write_npy.
"""

import base64
import json
import random
import struct

DTYPES = ('float32', 'float64', 'float16', 'int32', 'int64', 'int8', 'int16', 'uint8', 'uint32', 'uint64', 'bool')
FLOATS = ('float32', 'float64', 'float16')
INTS = ('int32', 'int64', 'int8', 'int16', 'uint8', 'uint32', 'uint64')
UNSIGNED = ('uint8', 'uint32', 'uint64')
NUMERIC = FLOATS + INTS
BITS = {'int8': 8, 'int16': 16, 'int32': 32, 'int64': 64, 'uint8': 8, 'uint32': 32, 'uint64': 64}


def int_range(dt):
    b = BITS[dt]
    if dt in UNSIGNED:
        return 0, 2 ** b - 1
    return -2 ** (b - 1), 2 ** (b - 1) - 1


# {==== Types ====}
# ('T', dtype, shape)  ('tuple', (t, ...))  ('fn', (t, ...), ret)
# ('adt', name, (t, ...))  ('ref', t)  ('tvar', name)

def T(dt, shape=()):
    return ('T', dt, tuple(shape))


I32 = T('int32')
BOOL0 = T('bool')
UNIT = ('tuple', ())


def is_tensor(t):
    return t[0] == 'T'


def ty_str(t):
    k = t[0]
    if k == 'T':
        if not t[2]:
            return t[1]
        return 'Tensor[(%s), %s]' % (', '.join(str(d) for d in t[2]), t[1])
    if k == 'tuple':
        if len(t[1]) == 1:
            return '(%s,)' % ty_str(t[1][0])
        return '(%s)' % ', '.join(ty_str(x) for x in t[1])
    if k == 'fn':
        return 'fn (%s) -> %s' % (', '.join(ty_str(x) for x in t[1]), ty_str(t[2]))
    if k == 'adt':
        return '%s[%s]' % (t[1], ', '.join(ty_str(x) for x in t[2]))
    if k == 'ref':
        return 'ref(%s)' % ty_str(t[1])
    if k == 'tvar':
        return t[1]
    raise ValueError(t)


def has_tvar(t):
    k = t[0]
    if k == 'tvar':
        return True
    if k == 'T':
        return False
    if k == 'tuple':
        return any(has_tvar(x) for x in t[1])
    if k == 'fn':
        return any(has_tvar(x) for x in t[1]) or has_tvar(t[2])
    if k == 'adt':
        return any(has_tvar(x) for x in t[2])
    if k == 'ref':
        return has_tvar(t[1])
    return False


def subst(t, s):
    k = t[0]
    if k == 'tvar':
        return s.get(t[1], t)
    if k == 'T':
        return t
    if k == 'tuple':
        return ('tuple', tuple(subst(x, s) for x in t[1]))
    if k == 'fn':
        return ('fn', tuple(subst(x, s) for x in t[1]), subst(t[2], s))
    if k == 'adt':
        return ('adt', t[1], tuple(subst(x, s) for x in t[2]))
    if k == 'ref':
        return ('ref', subst(t[1], s))
    return t


def match_ty(pat, t, s):
    """Extends s so that subst(pat, s) == t; False when impossible."""
    if pat[0] == 'tvar':
        if pat[1] in s:
            return s[pat[1]] == t
        s[pat[1]] = t
        return True
    if pat[0] != t[0]:
        return False
    k = pat[0]
    if k == 'T':
        return pat == t
    if k == 'tuple':
        return len(pat[1]) == len(t[1]) and all(match_ty(a, b, s) for a, b in zip(pat[1], t[1]))
    if k == 'fn':
        return (len(pat[1]) == len(t[1]) and all(match_ty(a, b, s) for a, b in zip(pat[1], t[1]))
                and match_ty(pat[2], t[2], s))
    if k == 'adt':
        return pat[1] == t[1] and all(match_ty(a, b, s) for a, b in zip(pat[2], t[2]))
    if k == 'ref':
        return match_ty(pat[1], t[1], s)
    return False


def numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def bcast(a, b):
    n = max(len(a), len(b))
    a = (1,) * (n - len(a)) + tuple(a)
    b = (1,) * (n - len(b)) + tuple(b)
    out = []
    for x, y in zip(a, b):
        if x != y and x != 1 and y != 1:
            return None
        out.append(max(x, y))
    return tuple(out)


# {==== AST ====}

_uid = [0]


class N:
    """One expression. k: kind; ty: its Relay type; kids: sub-expressions;
    a: kind-specific data; keep: never replaced by the shrinker."""
    __slots__ = ('k', 'ty', 'kids', 'a', 'keep', 'uid')

    def __init__(self, k, ty, kids=(), a=None, keep=False):
        _uid[0] += 1
        self.k = k
        self.ty = ty
        self.kids = list(kids)
        self.a = a
        self.keep = keep
        self.uid = _uid[0]


# kinds and their data:
#   lit (text)  var (name)  glob (name)  op ((opname, attrs text, infix or None))
#   call  ctor (name)  tuple  proj (index)  if  let ((name, annot type))
#   seq  fn ((params [(name, ty)], ret ty or None))  match ((partial, patterns))
#   ref  rread  rwrite  gbind (number: `%N = value; body`, uses are var nodes
#   named N)  ctorval (name: a constructor as a function value)
#   prim ((params, ret): a fn with Primitive=1)
#   meta ((values, index)): a tensor constant, meta[relay.Constant][index]
# patterns: ('_',) ('v', name, ty, annotate) ('c', ctor, [p]) ('t', [p])


class Def:
    """A global function."""

    def __init__(self, name, tparams, params, ret, body, cost=1, kind='plain', recursive=False):
        self.name = name
        self.tparams = tparams
        self.params = params
        self.ret = ret
        self.body = body
        self.cost = cost
        self.kind = kind
        self.recursive = recursive
        self.uses = 0

    def fn_type(self):
        return ('fn', tuple(t for _, t in self.params), self.ret)


class Program:
    """Globals in definition order (main last), @main's inputs as
    (name, type, values) and the entry's name."""

    def __init__(self, defs, inputs, prefix):
        self.defs = defs
        self.inputs = inputs
        self.prefix = prefix

    @property
    def main(self):
        return self.defs[-1]


ADT_TEXT = """type List[A] {
  Cons(A, List[A]),
  Nil,
}

type Option[A] {
  Some(A),
  None,
}

type Tree[A] {
  Leaf,
  Node(Tree[A], A, Tree[A]),
}
"""

CTORS = {
    'List': [('Cons', lambda a: (a, ('adt', 'List', (a,)))), ('Nil', lambda a: ())],
    'Option': [('Some', lambda a: (a,)), ('None', lambda a: ())],
    'Tree': [('Leaf', lambda a: ()), ('Node', lambda a: (('adt', 'Tree', (a,)), a, ('adt', 'Tree', (a,))))],
}


def ctor_fields(adt_ty, ctor):
    for name, f in CTORS[adt_ty[1]]:
        if name == ctor:
            return f(adt_ty[2][0])
    raise KeyError(ctor)


# {==== Printer ====}

def pat_str(p):
    if p[0] == '_':
        return '_'
    if p[0] == 'v':
        return '%%%s: %s' % (p[1], ty_str(p[2])) if p[3] else '%' + p[1]
    if p[0] == 'c':
        if not p[2]:
            return p[1]
        return '%s(%s)' % (p[1], ', '.join(pat_str(q) for q in p[2]))
    if len(p[1]) == 1:
        return '(%s,)' % pat_str(p[1][0])
    return '(%s)' % ', '.join(pat_str(q) for q in p[1])


ATOMIC = ('lit', 'var', 'glob', 'op', 'call', 'ctor', 'tuple', 'proj', 'ref', 'rread', 'rwrite', 'if', 'fn')


def pe(n, ind):
    """The text of expression n at indentation ind (a string of spaces)."""
    k = n.k
    if k == 'lit':
        return n.a
    if k == 'var':
        return '%' + n.a
    if k == 'glob':
        return '@' + n.a
    if k == 'op':
        name, attrs, infix = n.a
        args = [pa(x, ind) for x in n.kids]
        if infix:
            args = ['(%s)' % x if x.startswith('-') else x for x in args]
            return '(%s %s %s)' % (args[0], infix, args[1])
        if attrs:
            args.append(attrs)
        return '%s(%s)' % (name, ', '.join(args))
    if k == 'call':
        f = n.kids[0]
        callee = pe(f, ind) if f.k in ('var', 'glob') else '(%s)' % pe(f, ind)
        return '%s(%s)' % (callee, ', '.join(pa(x, ind) for x in n.kids[1:]))
    if k == 'ctorval':
        return n.a
    if k == 'meta':
        return 'meta[relay.Constant][%d]' % n.a[1]
    if k == 'ctor':
        if not n.kids:
            return n.a
        return '%s(%s)' % (n.a, ', '.join(pa(x, ind) for x in n.kids))
    if k == 'tuple':
        if len(n.kids) == 1:
            return '(%s,)' % pa(n.kids[0], ind)
        return '(%s)' % ', '.join(pa(x, ind) for x in n.kids)
    if k == 'proj':
        e = n.kids[0]
        if e.k == 'var':
            return '%s.%d' % (pe(e, ind), n.a)
        return '(%s).%d' % (pe(e, ind), n.a)
    if k == 'ref':
        return 'ref(%s)' % pa(n.kids[0], ind)
    if k == 'rread':
        return 'ref_read(%s)' % pa(n.kids[0], ind)
    if k == 'rwrite':
        return 'ref_write(%s, %s)' % (pa(n.kids[0], ind), pa(n.kids[1], ind))
    if k == 'if':
        i2 = ind + '  '
        return 'if (%s) {\n%s%s\n%s} else {\n%s%s\n%s}' % (
            pe(n.kids[0], ind), i2, block(n.kids[1], i2), ind, i2, block(n.kids[2], i2), ind)
    if k in ('fn', 'prim'):
        params, ret = n.a
        i2 = ind + '  '
        ps = ', '.join('%%%s: %s' % (p, ty_str(t)) for p, t in params)
        if k == 'prim':
            ps += ', Primitive=1'

        rs = ' -> %s' % ty_str(ret) if ret else ''
        return 'fn (%s)%s {\n%s%s\n%s}' % (ps, rs, i2, block(n.kids[0], i2), ind)
    if k == 'match':
        partial, pats = n.a
        i2 = ind + '  '
        i3 = i2 + '  '
        scrut = n.kids[0]
        st = pe(scrut, ind)
        if scrut.k != 'tuple':
            st = '(%s)' % st
        lines = ['match%s %s {' % ('?' if partial else '', st)]
        for p, b in zip(pats, n.kids[1:]):
            lines.append('%s%s => {\n%s%s\n%s},' % (i2, pat_str(p), i3, block(b, i3), i2))
        lines.append(ind + '}')
        return '\n'.join(lines)
    if k in ('let', 'seq', 'gbind'):
        i2 = ind + '  '
        return '{\n%s%s\n%s}' % (i2, block(n, i2), ind)
    raise ValueError(k)


def pa(n, ind):
    """n as an argument or operand: a match goes in parentheses."""
    if n.k in ('match', 'gbind'):
        return '(%s)' % pe(n, ind)
    if n.k == 'lit' and n.a.startswith('-'):
        return n.a
    return pe(n, ind)


def block(n, ind):
    """A let chain as statements, one per line, ending in its result."""
    out = []
    while n.k in ('let', 'seq', 'gbind'):
        v = n.kids[0]
        vt = pe(v, ind)
        if v.k in ('let', 'seq', 'match', 'gbind'):
            vt = '(%s)' % vt
        if n.k == 'let':
            name, annot = n.a
            out.append('let %%%s: %s = %s;' % (name, ty_str(annot), vt))
        elif n.k == 'gbind':
            out.append('%%%s = %s;' % (n.a, vt))
        else:
            out.append('%s;' % vt)
        n = n.kids[1]
    out.append(pe(n, ind) if n.k != 'match' else pe(n, ind))
    return ('\n' + ind).join(out)


def def_str(d):
    tp = '[%s]' % ', '.join(d.tparams) if d.tparams else ''
    ps = ', '.join('%%%s: %s' % (p, ty_str(t)) for p, t in d.params)
    return 'def @%s%s(%s) -> %s {\n  %s\n}\n' % (d.name, tp, ps, ty_str(d.ret), block(d.body, '  '))


def module_text(programs, header_comment=''):
    """One module holding the ADTs, every program's globals and the
    metadata section of their tensor constants."""
    consts = []
    for p in programs:
        for d in p.defs:
            stack = [d.body]
            while stack:
                n = stack.pop()
                if n.k == 'meta':
                    n.a = (n.a[0], len(consts))
                    consts.append(n)
                stack.extend(n.kids)
    parts = []
    if header_comment:
        parts.append(''.join('// %s\n' % line for line in header_comment.splitlines()))
    parts.append('#[version = "0.0.5"]\n')
    parts.append(ADT_TEXT)
    for p in programs:
        for d in p.defs:
            parts.append('\n' + def_str(d))
    if consts:
        parts.append('\n' + metadata_text(consts))
    return ''.join(parts)


def ndarray_blob(dt, shape, values):
    """A tensor in TVM's NDArray format (spec 6.3)."""
    if dt == 'bool':
        code, bits = 1, 1
    else:
        code = 2 if dt in FLOATS else 1 if dt in UNSIGNED else 0
        bits = {'float16': 16, 'float32': 32, 'float64': 64}.get(dt) or BITS[dt]
    data = struct.pack('<%d%s' % (len(values), NPY_DESCR[dt][1]), *values)
    head = struct.pack('<QQiiiBBH', 0xDD5E40F096B4A13F, 0, 1, 0, len(shape), code, bits, 1)
    return head + struct.pack('<%dq' % len(shape), *shape) + struct.pack('<q', len(data)) + data


def metadata_text(consts):
    """The #[metadata] section: a Map from relay.Constant to the Array of
    constants, in TVM's JSON object graph (spec 6.2)."""
    nodes = [{'type_key': ''}, {'type_key': 'Map', 'keys': ['relay.Constant'], 'data': [2]},
             {'type_key': 'Array', 'data': [3 + i for i in range(len(consts))]}]
    blobs = []
    for i, n in enumerate(consts):
        nodes.append({'type_key': 'relay.Constant', 'attrs': {'data': str(i), 'span': '0', 'virtual_device_': '0'}})
        blobs.append(base64.b64encode(ndarray_blob(n.ty[1], n.ty[2], n.a[0])).decode('ascii'))
    doc = {'root': 1, 'nodes': nodes, 'b64ndarrays': blobs, 'attrs': {'tvm_version': '0.16.0'}}
    return '#[metadata]\n' + json.dumps(doc, indent=2) + '\n'


# {==== Literals and constants ====}

def fmt_float(v):
    s = repr(float(v))
    if s.endswith('.0'):
        s = s[:-2]
    if s == '-0':
        s = '0'
    return s


def lit(dt, v):
    """A 0-d constant. The text format has no literals of 8-bit and
    unsigned dtypes: those are zeros(...) or a cast of an int32/int64."""
    if dt == 'float32':
        text = fmt_float(v) + 'f'
    elif dt == 'float64':
        text = fmt_float(v) + 'f64'
    elif dt == 'float16':
        text = fmt_float(v) + 'f16'
    elif dt == 'int32':
        text = str(int(v))
    elif dt == 'int64':
        text = str(int(v)) + 'i64'
    elif dt == 'int16':
        text = str(int(v)) + 'i16'
    elif dt in INTS:
        if v == 0:
            return N('op', T(dt), [], ('zeros', 'shape=[], dtype="%s"' % dt, None))
        src = lit('int64' if dt == 'uint64' else 'int32', v)
        return N('op', T(dt), [src], ('cast', 'dtype="%s"' % dt, None))
    else:
        text = 'True' if v else 'False'
    return N('lit', T(dt), a=text)


def ints_attr(xs):
    return '[%s]' % ', '.join(str(x) for x in xs)


def zero_of(t, fresh):
    """A simple expression of type t (None for type variables): zeros for
    tensors, Nil/None/Leaf, a function returning zero."""
    k = t[0]
    if k == 'T':
        if not t[2]:
            return lit(t[1], 0)
        return N('op', t, [], ('zeros', 'shape=%s, dtype="%s"' % (ints_attr(t[2]), t[1]), None))
    if k == 'tuple':
        kids = [zero_of(x, fresh) for x in t[1]]
        if any(x is None for x in kids):
            return None
        return N('tuple', t, kids)
    if k == 'adt':
        if has_tvar(t):
            return None
        c = {'List': 'Nil', 'Option': 'None', 'Tree': 'Leaf'}[t[1]]
        return N('ctor', t, [], c)
    if k == 'fn':
        body = zero_of(t[2], fresh)
        if body is None or has_tvar(t):
            return None
        params = [(fresh('z'), x) for x in t[1]]
        return N('fn', t, [body], (params, t[2]))
    if k == 'ref':
        v = zero_of(t[1], fresh)
        return None if v is None else N('ref', t, [v])
    return None


def is_zero(n):
    if n.k == 'lit':
        return n.a in ('0f', '0f64', '0', '0i64', 'False')
    if n.k == 'op' and n.a[0] == 'zeros':
        return True
    if n.k == 'ctor' and not n.kids:
        return True
    if n.k == 'tuple':
        return all(is_zero(x) for x in n.kids)
    if n.k == 'fn':
        return is_zero(n.kids[0])
    if n.k == 'ref':
        return is_zero(n.kids[0])
    return False


# {==== .npy files ====}

NPY_DESCR = {'float32': ('<f4', 'f'), 'float64': ('<f8', 'd'), 'float16': ('<f2', 'e'), 'int32': ('<i4', 'i'),
             'int64': ('<i8', 'q'), 'int8': ('|i1', 'b'), 'int16': ('<i2', 'h'), 'uint8': ('|u1', 'B'),
             'uint32': ('<u4', 'I'), 'uint64': ('<u8', 'Q'), 'bool': ('|b1', '?')}


def npy_bytes(dt, shape, values):
    """A version 1.0 .npy file of C-order data."""
    descr, code = NPY_DESCR[dt]
    if len(shape) == 1:
        sh = '(%d,)' % shape[0]
    else:
        sh = '(%s)' % ', '.join(str(d) for d in shape)
    header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, sh)
    total = 10 + len(header) + 1
    header += ' ' * ((64 - total % 64) % 64) + '\n'
    out = b'\x93NUMPY\x01\x00' + struct.pack('<H', len(header)) + header.encode('latin1')
    return out + struct.pack('<%d%s' % (len(values), code), *values)


def write_npy(path, dt, shape, values):
    with open(path, 'wb') as f:
        f.write(npy_bytes(dt, shape, values))


def random_values(r, dt, shape, special=0.0):
    """Input values: small numbers mostly; with probability special a NaN,
    an infinity or -0 (floats), or the extremes of the dtype (integers)."""
    n = numel(shape)
    if dt in FLOATS:
        vals = []
        for _ in range(n):
            x = r.random()
            if x < special:
                vals.append(r.choice((float('nan'), float('inf'), -float('inf'), -0.0)))
            elif x < 0.05:
                vals.append(0.0)
            elif x < 0.5:
                vals.append(r.randint(-16, 16) / 4.0)
            else:
                vals.append(round(r.uniform(-3, 3), 3))
        return vals
    if dt in INTS:
        lo, hi = int_range(dt)
        vals = []
        for _ in range(n):
            x = r.random()
            if x < 0.03 + special:
                vals.append(r.choice((lo, hi, lo + 1, hi - 1)))
            elif x < 0.6:
                vals.append(max(lo, min(hi, r.randint(-6, 6))))
            else:
                vals.append(max(lo, min(hi, r.randint(-100, 100))))
        return vals
    return [r.random() < 0.5 for _ in range(n)]


# {==== The generator ====}

class Var:
    """A variable in scope: its name, type and, for functions, the cost of
    a call and whether its first parameter is a recursion counter."""
    __slots__ = ('name', 'ty', 'cost', 'counter', 'uses')

    def __init__(self, name, ty, cost=1, counter=False):
        self.name = name
        self.ty = ty
        self.cost = cost
        self.counter = counter
        self.uses = 0


class Ctx:
    """Per-function generation state: the remaining cost budget, the
    global being defined (for the recursion group), whether closures made
    here may call recursive functions."""

    def __init__(self, budget, group=(), in_lambda=False, dataflow=False):
        self.budget = budget
        self.group = group
        self.in_lambda = in_lambda
        self.dataflow = dataflow   # operator calls only (a straight-line body)


DEFAULT_KNOBS = {
    'max_dim': 4,         # tensor dimensions are 1..max_dim
    'max_rank': 3,
    'nglobals': (1, 3),   # how many generated globals (a mutual pair or a tree counts once)
    'main_lets': (2, 4),
    'fn_lets': (0, 2),
    'depth': 2,           # expression depth (or a range to draw it from)
    'ninputs': (1, 4),
    'budget': 400,        # calls per run of @main, roughly
    'special': 2,         # percent of input values that are NaN, inf, -0 or a dtype's extremes
    'big': 8,             # percent of 1-d and 2-d shapes with one dimension of 5..19
}

# Smaller programs for the fixed seeds of `make test` (its time is the C
# compiler's, proportional to the size of the generated C).
SMALL_KNOBS = {'nglobals': (1, 2), 'main_lets': (1, 3), 'fn_lets': (0, 1), 'depth': (1, 2)}


class Gen:
    def __init__(self, seed, prefix='', knobs=None):
        self.seed = seed
        self.r = random.Random(seed)
        self.prefix = prefix
        self.knobs = dict(DEFAULT_KNOBS)
        if knobs:
            self.knobs.update(knobs)
        if isinstance(self.knobs['depth'], tuple):
            self.knobs['depth'] = self.r.randint(*self.knobs['depth'])
        self.count = 0
        self.defs = []
        self.pool = []

    # -- names and choices --
    def fresh(self, base='v'):
        self.count += 1
        return '%s%d' % (base, self.count)

    def gname(self, base):
        self.count += 1
        return '%s%s%d' % (self.prefix, base, self.count)

    def chance(self, p):
        return self.r.random() < p

    def pick(self, xs):
        return xs[self.r.randrange(len(xs))]

    def weighted(self, items):
        total = sum(w for w, _ in items)
        x = self.r.random() * total
        for w, v in items:
            x -= w
            if x < 0:
                return v
        return items[-1][1]

    # -- types --
    def rand_shape(self, max_rank=None):
        mr = self.knobs['max_rank'] if max_rank is None else max_rank
        rank = self.weighted([(3, 0), (4, 1), (4, 2), (2, 3)][:mr + 1])
        md = self.knobs['max_dim']
        if rank == 3:
            md = min(md, 3)
        if rank and rank <= 2 and self.r.random() * 100 < self.knobs['big']:
            # one long dimension: loops long enough for the C compiler to
            # vectorize and unroll them
            dims = [self.r.randint(1, md) for _ in range(rank)]
            dims[self.r.randrange(rank)] = self.r.randint(5, 19)
            return tuple(dims)
        return tuple(self.r.randint(1, md) for _ in range(rank))

    def rand_dtype(self):
        return self.weighted([(5, 'float32'), (1.5, 'float64'), (3.5, 'int32'), (1.5, 'int64'), (2.5, 'bool'),
                              (0.8, 'uint8'), (0.4, 'int8'), (0.4, 'int16'), (0.5, 'uint32'), (0.3, 'uint64'),
                              (0.4, 'float16')])

    def make_pool(self):
        n = self.r.randint(3, 5)
        pool = []
        for _ in range(n):
            pool.append(T(self.rand_dtype(), self.rand_shape()))
        pool.append(I32)
        if self.chance(0.5):
            pool.append(T('float32'))
        if self.chance(0.5):
            pool.append(BOOL0)
        self.pool = pool

    def tensor_ty(self):
        if self.chance(0.8):
            return self.pick(self.pool)
        return T(self.rand_dtype(), self.rand_shape())

    def value_ty(self, allow_fn=True, allow_adt=True, allow_ref=False):
        """A type for a let or a parameter."""
        items = [(10, 'tensor'), (1.5, 'tuple')]
        if allow_fn:
            items.append((2, 'fn'))
        if allow_adt:
            items.append((2.5, 'adt'))
        if allow_ref:
            items.append((1, 'ref'))
        kind = self.weighted(items)
        if kind == 'tensor':
            return self.tensor_ty()
        if kind == 'tuple':
            return self.tuple_ty()
        if kind == 'fn':
            return self.fn_ty()
        if kind == 'adt':
            return self.adt_ty()
        return self.ref_ty()

    def field_ty(self):
        """A tensor mostly; an ADT or a function sometimes."""
        c = self.r.random()
        if c < 0.75:
            return self.tensor_ty()
        if c < 0.9:
            return self.adt_ty()
        return self.fn_ty(simple=True)

    def tuple_ty(self):
        return ('tuple', tuple(self.field_ty() for _ in range(self.r.randint(1, 3))))

    def ref_ty(self):
        """A reference to a tensor or an ADT value, never to a function: a
        closure that calls what a reference holds could be stored in it and
        recurse forever."""
        t = self.field_ty()
        return ('ref', t if t[0] != 'fn' else self.tensor_ty())

    def fn_ty(self, simple=False):
        c = self.r.random()
        if simple:
            c = 1
        elif c < 0.06:
            # curried: a function returning a function
            return ('fn', (self.tensor_ty(),), self.fn_ty(simple=True))
        elif c < 0.1:
            return ('fn', (self.tensor_ty(),), self.adt_ty())
        if c < 0.15:
            # the type of a generated global, so that it can be passed
            gs = [g.fn_type() for g in self.defs if not g.tparams and g.kind == 'plain' and g.cost <= 20
                  and all(t[0] == 'T' for _, t in g.params) and g.ret[0] == 'T']
            if gs:
                return self.pick(gs)
        elif c < 0.22:
            # the type of a constructor (Some, Cons, Node)
            e = self.tensor_ty()
            name = self.pick(['Option', 'List', 'Tree'])
            a = ('adt', name, (e,))
            return ('fn', {'Option': (e,), 'List': (e, a), 'Tree': (a, e, a)}[name], a)
        nargs = self.weighted([(1, 0), (5, 1), (3, 2)])
        return ('fn', tuple(self.tensor_ty() for _ in range(nargs)), self.tensor_ty())

    def adt_ty(self):
        name = self.weighted([(5, 'List'), (3, 'Option'), (2, 'Tree')])
        if name == 'Option' and self.chance(0.3):
            elem = ('tuple', (self.tensor_ty(), self.tensor_ty()))
        else:
            elem = self.tensor_ty()
        return ('adt', name, (elem,))

    # -- small helpers --
    def scalar(self, dt, lo=-3, hi=3):
        if dt in FLOATS:
            return lit(dt, self.r.randint(lo * 4, hi * 4) / 4.0)
        if dt in UNSIGNED:
            return lit(dt, self.r.randint(0, hi))
        if dt in INTS:
            return lit(dt, self.r.randint(lo, hi))
        return lit(dt, self.chance(0.5))

    def op(self, name, ty, args, attrs='', keep=False, infix=None):
        return N('op', ty, args, (name, attrs, infix), keep=keep)

    def vars_of(self, env, ty):
        return [v for v in env if v.ty == ty]

    def use(self, vs):
        """A variable of vs, the unused ones first."""
        fresh = [v for v in vs if v.uses == 0]
        v = self.pick(fresh if fresh and self.chance(0.7) else vs)
        v.uses += 1
        return N('var', v.ty, a=v.name)

    def adapt(self, ty, env):
        """An expression of tensor type ty made from a variable of another
        tensor type (a cast, a reduction, a slice, a broadcast, a
        reshape), so that values flow from the inputs and earlier lets;
        None when no variable fits."""
        dt, s = ty[1], ty[2]
        cands = []
        for v in env:
            if v.ty[0] != 'T' or v.ty == ty:
                continue
            vd, vs = v.ty[1], v.ty[2]
            if vs == s:
                cands.append((v, 'cast'))
            elif vd == dt and bcast(vs, s) == s:
                cands.append((v, 'broadcast'))
            elif vd == dt and not s:
                cands.append((v, 'reduce'))
            elif vd == dt and numel(vs) == numel(s):
                cands.append((v, 'reshape'))
            elif vd == dt and len(vs) == len(s) and all(a >= b for a, b in zip(vs, s)):
                cands.append((v, 'slice'))
            elif vd != dt and numel(vs) == numel(s):
                cands.append((v, 'cast_reshape'))
        if not cands:
            return None
        fresh = [c for c in cands if c[0].uses == 0]
        v, how = self.pick(fresh if fresh and self.chance(0.7) else cands)
        v.uses += 1
        x = N('var', v.ty, a=v.name)
        if how == 'cast':
            return self.op('cast', ty, [x], 'dtype="%s"' % dt)
        if how == 'broadcast':
            return self.op('broadcast_to', ty, [x], 'shape=%s' % ints_attr(s))
        if how == 'reduce':
            name = 'any' if dt == 'bool' else self.pick(['sum', 'max', 'min'])
            return self.op(name, ty, [x])
        if how == 'reshape':
            return self.op('reshape', ty, [x], 'newshape=%s' % ints_attr(s))
        if how == 'slice':
            begin = [self.r.randint(0, a - b) for a, b in zip(v.ty[2], s)]
            end = [b0 + b for b0, b in zip(begin, s)]
            return self.op('strided_slice', ty, [x], 'begin=%s, end=%s, strides=[1]' % (ints_attr(begin), ints_attr(end)))
        mid = T(dt, v.ty[2])
        return self.op('reshape', ty, [self.op('cast', mid, [x], 'dtype="%s"' % dt)], 'newshape=%s' % ints_attr(s))

    # {==== Expressions ====}
    def expr(self, ty, env, d, cx):
        """An expression of type ty using the variables of env."""
        for _ in range(6):
            e = self.expr_try(ty, env, d, cx)
            if e is not None:
                return e
        return self.leaf(ty, env, cx)

    def leaf(self, ty, env, cx):
        vs = self.vars_of(env, ty)
        if vs and self.chance(0.85):
            return self.use(vs)
        k = ty[0]
        if k == 'T':
            if self.chance(0.6):
                e = self.adapt(ty, env)
                if e is not None:
                    return e
            return self.const(ty)
        if k == 'tuple':
            return N('tuple', ty, [self.leaf(x, env, cx) for x in ty[1]])
        if k == 'fn':
            return self.lambda_(ty, env, 0, cx)
        if k == 'adt':
            if ty[1] == 'Option' and self.chance(0.5):
                return N('ctor', ty, [self.leaf(ty[2][0], env, cx)], 'Some')
            return N('ctor', ty, [], {'List': 'Nil', 'Option': 'None', 'Tree': 'Leaf'}[ty[1]])
        if k == 'ref':
            return N('ref', ty, [self.leaf(ty[1], env, cx)])
        raise ValueError(ty)

    def const(self, ty):
        dt, s = ty[1], ty[2]
        if self.chance(0.3 if s else 0.05):
            # a constant of the metadata section
            return N('meta', ty, [], (random_values(self.r, dt, s), 0))
        if not s:
            return self.scalar(dt)
        c = self.r.random()
        attrs = 'shape=%s, dtype="%s"' % (ints_attr(s), dt)
        if c < 0.25:
            return self.op('zeros', ty, [], attrs)
        if c < 0.45:
            return self.op('ones', ty, [], attrs)
        return self.op('full', ty, [self.scalar(dt)], attrs)

    def expr_try(self, ty, env, d, cx):
        k = ty[0]
        if d <= 0:
            return self.leaf(ty, env, cx)
        if cx.dataflow:
            vs = self.vars_of(env, ty)
            items = [(10, lambda: self.tensor_op(ty, env, d, cx)), (1, lambda: self.adapt(ty, env))]
            if vs:
                items.append((4, lambda: self.use(vs)))
            if k == 'tuple':
                items = [(1, lambda: N('tuple', ty, [self.expr(x, env, d - 1, cx) for x in ty[1]]))]
            return self.weighted(items)()
        items = []
        vs = self.vars_of(env, ty)
        if vs:
            unused = any(v.uses == 0 for v in vs)
            items.append((8 if unused else 3, lambda: self.use(vs)))
        fns = [v for v in env if v.ty[0] == 'fn' and v.ty[2] == ty and v.uses == 0 and v.cost <= cx.budget]
        if fns:
            items.append((6, lambda: self.gen_call_var(ty, env, d, cx, fns)))
        if any(g.uses == 0 and g.name not in cx.group for g in self.defs):
            items.append((3, lambda: self.gen_call_global(ty, env, d, cx, only_unused=True)))
        items.append((1.2, lambda: self.gen_if(ty, env, d, cx)))
        items.append((0.8, lambda: self.gen_block(ty, env, d, cx)))
        items.append((1.5, lambda: self.gen_call_global(ty, env, d, cx)))
        items.append((1.2, lambda: self.gen_call_var(ty, env, d, cx)))
        items.append((1.2, lambda: self.gen_match(ty, env, d, cx)))
        items.append((0.6, lambda: self.gen_proj(ty, env, d, cx)))
        items.append((0.6, lambda: self.gen_rread(ty, env, d, cx)))
        if k == 'T':
            items.append((14, lambda: self.tensor_op(ty, env, d, cx)))
            items.append((0.5, lambda: self.const(ty)))
            items.append((2, lambda: self.adapt(ty, env)))
        elif k == 'tuple':
            items.append((6, lambda: N('tuple', ty, [self.expr(x, env, d - 1, cx) for x in ty[1]])))
        elif k == 'fn':
            items.append((6, lambda: self.lambda_(ty, env, d, cx)))
            items.append((4, lambda: self.gen_global_value(ty)))
            items.append((4, lambda: self.ctor_value(ty)))
        elif k == 'adt':
            items.append((6, lambda: self.adt_value(ty, env, d, cx)))
        elif k == 'ref':
            items.append((6, lambda: N('ref', ty, [self.expr(ty[1], env, d - 1, cx)])))
        return self.weighted(items)()

    def gen_if(self, ty, env, d, cx):
        c = self.cond(env, d - 1, cx)
        return N('if', ty, [c, self.branch(ty, env, d - 1, cx), self.branch(ty, env, d - 1, cx)])

    def branch(self, ty, env, d, cx):
        if self.chance(0.3):
            return self.body(ty, env, self.r.randint(1, 2), d, cx)
        return self.expr(ty, env, d, cx)

    def cond(self, env, d, cx):
        """A 0-d bool: a comparison of scalars or reductions, all/any, or a
        bool variable."""
        c = self.r.random()
        if c < 0.5 or d <= 0:
            return self.expr(BOOL0, env, max(d, 1), cx)
        t = self.tensor_ty()
        if t[1] == 'bool':
            x = self.expr(t, env, d - 1, cx)
            return self.op(self.pick(['all', 'any']), BOOL0, [x])
        x = self.expr(t, env, d - 1, cx)
        red = self.pick(['sum', 'max', 'min']) if t[2] else None
        if red:
            x = self.op(red, T(t[1]), [x])
        cmpop = self.pick(['less', 'greater', 'less_equal', 'greater_equal', 'equal', 'not_equal'])
        infix = {'less': '<', 'greater': '>', 'less_equal': '<=', 'greater_equal': '>=', 'equal': '==',
                 'not_equal': '!='}[cmpop] if self.chance(0.4) else None
        return self.op(cmpop, BOOL0, [x, self.scalar(t[1])], infix=infix)

    def gen_block(self, ty, env, d, cx):
        return self.body(ty, env, self.r.randint(1, 2), d - 1, cx)

    def gen_proj(self, ty, env, d, cx):
        cands = [(v, i) for v in env if v.ty[0] == 'tuple' for i, t in enumerate(v.ty[1]) if t == ty]
        if not cands:
            return None
        v, i = self.pick(cands)
        return N('proj', ty, [N('var', v.ty, a=v.name)], i)

    def gen_rread(self, ty, env, d, cx):
        vs = [v for v in env if v.ty == ('ref', ty)]
        if not vs:
            return None
        return N('rread', ty, [N('var', ('ref', ty), a=self.pick(vs).name)])

    def counter_arg(self, env, cx):
        """A small int32 for a recursion counter."""
        c = self.r.random()
        if c < 0.6:
            return lit('int32', self.r.randint(0, 5))
        x = self.expr(I32, env, 1, cx)
        return self.op('floor_mod', I32, [x, lit('int32', self.r.randint(3, 6))])

    def args_for(self, ptys, env, d, cx, counter):
        args = []
        for i, t in enumerate(ptys):
            if i == 0 and counter:
                args.append(self.counter_arg(env, cx))
            else:
                args.append(self.expr(t, env, d - 1, cx))
        return args

    def gen_call_global(self, ty, env, d, cx, only_unused=False):
        cands = []
        for g in self.defs:
            if g.name in cx.group or g.cost > cx.budget or (only_unused and g.uses):
                continue
            s = {}
            if not match_ty(g.ret, ty, s):
                continue
            cands.append((g, s))
        if not cands:
            return None
        fresh = [c for c in cands if c[0].uses == 0]
        g, s = self.pick(fresh if fresh and self.chance(0.7) else cands)
        return self.call_global(g, s, env, d, cx)

    def call_global(self, g, s, env, d, cx):
        """A call of g, its type variables bound by s (the others chosen)."""
        for tp in g.tparams:
            if tp not in s:
                c = self.r.random()
                if c < 0.7:
                    s[tp] = self.tensor_ty()
                elif c < 0.85:
                    s[tp] = ('tuple', (self.tensor_ty(), self.tensor_ty()))
                else:
                    s[tp] = self.fn_ty()
        g.uses += 1
        cx.budget -= g.cost
        ptys = [subst(t, s) for _, t in g.params]
        ret = subst(g.ret, s)
        args = self.args_for(ptys, env, d, cx, g.kind in ('rec', 'mutual', 'tree'))
        for i, (_, t) in enumerate(g.params):
            # A polymorphic parameter needs an argument whose type is known
            # by itself: Nil would leave the type variable open.
            if has_tvar(t) and ptys[i][0] == 'adt' and args[i].k != 'var':
                args[i] = self.adt_value(ptys[i], env, d - 1, cx, nonempty=True)
        gty = ('fn', tuple(ptys), ret)
        return N('call', ret, [N('glob', gty, a=g.name)] + args)

    def observe(self, e, env, cx):
        """A tensor expression that reads value e: e itself, a field, a
        match over it, the result of calling it, its contents."""
        k = e.ty[0]
        if k == 'T':
            return e
        if k == 'tuple':
            fields = [i for i, t in enumerate(e.ty[1]) if t[0] in ('T', 'adt', 'tuple')]
            if not fields:
                return None
            i = self.pick(fields)
            return self.observe(N('proj', e.ty[1][i], [e], i), env, cx)
        if k == 'ref':
            return self.observe(N('rread', e.ty[1], [e]), env, cx)
        if k == 'fn':
            if has_tvar(e.ty):
                return None
            args = self.args_for(e.ty[1], env, 1, cx, False)
            return self.observe(N('call', e.ty[2], [e] + args), env, cx)
        if k == 'adt' and not has_tvar(e.ty):
            if e.k != 'var':
                name = self.fresh('o')
                v = Var(name, e.ty)
                v.uses = 1
                m = self.gen_match_on(v, self.tensor_ty(), env + [v], cx)
                return N('let', m.ty, [e, m], (name, e.ty))
            return self.gen_match_on(Var(e.a, e.ty), self.tensor_ty(), env, cx)
        return None

    def gen_global_value(self, ty):
        """A monomorphic global of exactly type ty, used as a value."""
        cands = [g for g in self.defs if not g.tparams and g.fn_type() == ty and g.kind == 'plain' and g.cost <= 20]
        if not cands:
            return None
        g = self.pick(cands)
        g.uses += 1
        return N('glob', ty, a=g.name)

    def ctor_value(self, ty):
        """Some, Cons or Node as a function value, when ty is its type."""
        ret = ty[2]
        if ret[0] != 'adt' or has_tvar(ty):
            return None
        for name, f in CTORS[ret[1]]:
            fields = f(ret[2][0])
            if fields and tuple(fields) == ty[1]:
                return N('ctorval', ty, [], name)
        return None

    def gen_call_var(self, ty, env, d, cx, cands=None):
        if cands is None:
            cands = [v for v in env if v.ty[0] == 'fn' and v.ty[2] == ty and v.cost <= cx.budget]
        if not cands:
            return None
        v = self.pick(cands)
        v.uses += 1
        cx.budget -= v.cost
        args = self.args_for(v.ty[1], env, d, cx, v.counter)
        return N('call', ty, [N('var', v.ty, a=v.name)] + args)

    def ret_annot(self, t):
        """A function literal's return annotation: sometimes none, but always
        when the result holds an ADT (a `Nil` alone has no type argument)."""
        def adt(x):
            if x[0] == 'adt':
                return True
            if x[0] in ('tuple', 'fn'):
                return any(adt(y) for y in x[1]) or (x[0] == 'fn' and adt(x[2]))
            return x[0] == 'ref' and adt(x[1])
        return t if adt(t) or self.chance(0.6) else None

    def lambda_(self, ty, env, d, cx):
        params = [(self.fresh('p'), t) for t in ty[1]]
        inner = env + [Var(p, t) for p, t in params]
        lcx = Ctx(min(20, cx.budget), cx.group, True)
        if d <= 0:
            body = self.leaf(ty[2], inner, lcx)
        else:
            body = self.body(ty[2], inner, self.r.randint(0, 2), d - 1, lcx)
        return N('fn', ty, [body], (params, self.ret_annot(ty[2])))

    def adt_value(self, ty, env, d, cx, nonempty=False):
        """A constructor application; nonempty: not a constructor without
        fields (whose type argument nothing would fix)."""
        name, elem = ty[1], ty[2][0]
        if name == 'List':
            n = self.r.randint(1 if nonempty else 0, 3)
            tail = N('ctor', ty, [], 'Nil')
            if self.chance(0.3):
                vs = self.vars_of(env, ty)
                if vs:
                    tail = self.use(vs)
            for _ in range(n):
                tail = N('ctor', ty, [self.expr(elem, env, d - 1, cx), tail], 'Cons')
            return tail
        if name == 'Option':
            if nonempty or self.chance(0.75):
                return N('ctor', ty, [self.expr(elem, env, d - 1, cx)], 'Some')
            return N('ctor', ty, [], 'None')
        # Tree
        def tree(depth, top=False):
            if (depth <= 0 or self.chance(0.3)) and not (top and nonempty):
                vs = self.vars_of(env, ty)
                if vs and self.chance(0.3):
                    return self.use(vs)
                return N('ctor', ty, [], 'Leaf')
            return N('ctor', ty, [tree(depth - 1), self.expr(elem, env, d - 1, cx), tree(depth - 1)], 'Node')
        return tree(2, True)

    # {==== match ====}
    def rand_pattern(self, ty, depth, binds, top=False):
        """A random pattern of type ty; binds collects (name, type). At the
        top, rarely `_` or a variable (which shadows the later clauses)."""
        c = self.r.random()
        if top and ty[0] in ('adt', 'tuple') and self.chance(0.95):
            c = 1
        if depth <= 0 or c < 0.2 or ty[0] in ('T', 'fn', 'ref', 'tvar'):
            if self.chance(0.4):
                return ('_',)
            name = self.fresh('m')
            binds.append(Var(name, ty))
            return ('v', name, ty, self.chance(0.2) and not has_tvar(ty))
        if ty[0] == 'tuple':
            return ('t', [self.rand_pattern(x, depth - 1, binds) for x in ty[1]])
        ctors = CTORS[ty[1]]
        cname, f = self.pick(ctors)
        fields = f(ty[2][0])
        return ('c', cname, [self.rand_pattern(x, depth - 1, binds) for x in fields])

    def complete_patterns(self, ty, binds_list):
        """A set of patterns that covers every value of ty (one per
        constructor, fields bound to variables or wildcards)."""
        pats = []
        if ty[0] == 'tuple':
            binds = []
            pats.append(('t', [self.rand_pattern(x, 0, binds) for x in ty[1]]))
            binds_list.append(binds)
            return pats
        for cname, f in CTORS[ty[1]]:
            binds = []
            fields = f(ty[2][0])
            pats.append(('c', cname, [self.rand_pattern(x, 0, binds) for x in fields]))
            binds_list.append(binds)
        return pats

    def gen_match(self, ty, env, d, cx):
        scruts = [v for v in env if v.ty[0] == 'adt' or (v.ty[0] == 'tuple' and any(x[0] == 'adt' for x in v.ty[1]))]
        partial = self.chance(0.15)
        # match? on a variable may fail (the same error in every mode), so
        # it is rare: it ends the program.
        if scruts and self.chance(0.1 if partial else 0.75):
            v = self.pick(scruts)
            sty = v.ty
            scrut = N('var', sty, a=v.name)
        else:
            sty = self.adt_ty()
            scrut = self.adt_value(sty, env, max(d - 1, 1), cx, nonempty=True)
        pats, binds_list = [], []
        if partial:
            # match? that provably matches: a scrutinee built with a known
            # constructor gets a clause for it, or the error happens in
            # every mode the same way.
            if scrut.k == 'ctor' and self.chance(0.95):
                binds = []
                fields = []
                for ft in ctor_fields(sty, scrut.a):
                    if self.chance(0.4):
                        fields.append(('_',))
                    else:
                        name = self.fresh('m')
                        binds.append(Var(name, ft))
                        fields.append(('v', name, ft, False))
                pats.append(('c', scrut.a, fields))
                binds_list.append(binds)
            else:
                for _ in range(self.r.randint(1, 2)):
                    binds = []
                    pats.append(self.rand_pattern(sty, 2, binds, True))
                    binds_list.append(binds)
        else:
            for _ in range(self.r.randint(0, 2)):
                binds = []
                pats.append(self.rand_pattern(sty, 3, binds, True))
                binds_list.append(binds)
            if self.chance(0.3):
                binds = []
                if self.chance(0.5):
                    pats.append(('_',))
                else:
                    name = self.fresh('m')
                    binds.append(Var(name, sty))
                    pats.append(('v', name, sty, False))
                binds_list.append(binds)
            else:
                pats.extend(self.complete_patterns(sty, binds_list))
        bodies = [self.branch(ty, env + binds, d - 1, cx) for binds in binds_list]
        return N('match', ty, [scrut] + bodies, (partial, pats))

    def simple_pat(self, p):
        """p with every constructor or tuple sub-pattern made a wildcard."""
        if p[0] in ('c', 't'):
            return ('_',)
        return p

    # {==== Tensor operators ====}
    def tensor_op(self, ty, env, d, cx):
        dt, s = ty[1], ty[2]
        items = [(4, self.t_unary), (6, self.t_binary), (1.5, self.t_where), (1.2, self.t_cast),
                 (2.5, self.t_reduce), (4, self.t_injective), (1, self.t_like)]
        if dt == 'bool':
            items.append((5, self.t_compare))
        if dt in FLOATS:
            items.append((1.5, self.t_nn))
        if dt == 'int32':
            items.append((0.7, self.t_argreduce))
        f = self.weighted(items)
        return f(ty, env, d - 1, cx)

    def sub(self, ty, env, d, cx):
        return self.expr(ty, env, d, cx)

    def fconst(self, dt, v):
        return lit(dt, v)

    def t_unary(self, ty, env, d, cx):
        dt = ty[1]
        x = self.sub(ty, env, d, cx)
        if dt in FLOATS:
            one = lit(dt, 1)
            name = self.pick(['negative', 'abs', 'floor', 'ceil', 'round', 'trunc', 'sign', 'sigmoid', 'tanh',
                              'sin', 'cos', 'atan', 'erf', 'nn.relu', 'copy', 'fast_tanh', 'fast_erf', 'asinh',
                              'exp', 'fast_exp', 'log', 'log2', 'log10', 'sqrt', 'rsqrt', 'sinh', 'cosh', 'tan',
                              'asin', 'acos', 'atanh', 'acosh', 'clip', 'nn.leaky_relu'])
            if name in ('exp', 'fast_exp', 'sinh', 'cosh'):
                x = self.op('clip', ty, [x], 'a_min=-4f, a_max=4f', keep=True)
            elif name in ('log', 'log2', 'log10', 'rsqrt', 'acosh'):
                x = self.op('add', ty, [self.op('abs', ty, [x], keep=True), one], keep=True)
            elif name == 'sqrt':
                x = self.op('abs', ty, [x], keep=True)
            elif name == 'tan':
                x = self.op('clip', ty, [x], 'a_min=-1.2f, a_max=1.2f', keep=True)
            elif name in ('asin', 'acos'):
                x = self.op('clip', ty, [x], 'a_min=-1f, a_max=1f', keep=True)
            elif name == 'atanh':
                x = self.op('clip', ty, [x], 'a_min=-0.9f, a_max=0.9f', keep=True)
            if name == 'clip':
                lo = self.r.randint(-12, 4) / 4.0
                hi = lo + self.r.randint(0, 16) / 4.0
                return self.op('clip', ty, [x], 'a_min=%sf, a_max=%sf' % (fmt_float(lo), fmt_float(hi)))
            if name == 'nn.leaky_relu':
                return self.op(name, ty, [x], 'alpha=%sf' % fmt_float(self.r.randint(1, 9) / 10.0))
            return self.op(name, ty, [x])
        if dt in INTS:
            name = self.weighted([(2, 'negative'), (2, 'abs'), (1, 'sign'), (1, 'copy'), (1, 'nn.relu'),
                                  (2, 'bitwise_not'), (2, 'clip'), (0.5, 'round'), (0.5, 'floor'),
                                  (0.7, 'sqrt'), (0.5, 'exp'), (0.5, 'tanh')])
            if name == 'clip':
                lo = self.r.randint(-20, 5)
                return self.op('clip', ty, [x], 'a_min=%df, a_max=%df' % (lo, lo + self.r.randint(0, 30)))
            if name == 'sqrt':
                x = self.op('abs', ty, [x], keep=True)
            if name == 'exp':
                x = self.op('clip', ty, [x], 'a_min=-3f, a_max=3f', keep=True)
            return self.op(name, ty, [x])
        name = self.pick(['logical_not', 'copy', 'bitwise_not', 'logical_not'])
        return self.op(name, ty, [x])

    def split_bcast(self, s):
        """Two shapes that broadcast to s."""
        a, b = [], []
        for dim in s:
            c = self.r.random()
            if dim == 1 or c < 0.6:
                a.append(dim)
                b.append(dim if self.chance(0.6) else 1)
            else:
                a.append(1)
                b.append(dim)
        # drop leading dims of one operand sometimes
        if s and self.chance(0.3):
            k = self.r.randint(0, len(s))
            if all(x == 1 for x in a[:k]) or True:
                # b can lose leading dims only if a covers them
                if all(a[i] == s[i] for i in range(k)):
                    b = b[k:]
        if self.chance(0.5):
            a, b = b, a
        return tuple(a), tuple(b)

    def sub_bcast(self, s):
        """A shape that broadcasts to s (for the smaller operand)."""
        out = [dim if self.chance(0.5) else 1 for dim in s]
        k = self.r.randint(0, len(s)) if self.chance(0.3) else 0
        return tuple(out[k:])

    def t_binary(self, ty, env, d, cx):
        dt, s = ty[1], ty[2]
        sa, sb = self.split_bcast(s)
        a = self.sub(T(dt, sa), env, d, cx)
        b = self.sub(T(dt, sb), env, d, cx)
        tb = T(dt, sb)
        if dt in FLOATS:
            name = self.weighted([(3, 'add'), (3, 'subtract'), (3, 'multiply'), (1.5, 'maximum'), (1.5, 'minimum'),
                                  (2, 'divide'), (1, 'power'), (0.5, 'mod'), (0.5, 'floor_mod'), (0.5, 'trunc_mod'),
                                  (0.5, 'floor_divide'), (0.5, 'trunc_divide')])
            if name in ('divide', 'mod', 'floor_mod', 'trunc_mod', 'floor_divide', 'trunc_divide'):
                b = self.op('add', tb, [self.op('abs', tb, [b], keep=True), lit(dt, 0.5)], keep=True)
            elif name == 'power':
                ta = T(dt, sa)
                a = self.op('add', ta, [self.op('abs', ta, [a], keep=True), lit(dt, 0.25)], keep=True)
                b = self.op('clip', tb, [b], 'a_min=-2f, a_max=2f', keep=True)
        elif dt in INTS:
            name = self.weighted([(3, 'add'), (3, 'subtract'), (3, 'multiply'), (1.5, 'maximum'), (1.5, 'minimum'),
                                  (1, 'bitwise_and'), (1, 'bitwise_or'), (1, 'bitwise_xor'), (0.7, 'left_shift'),
                                  (0.7, 'right_shift'), (1, 'divide'), (0.6, 'mod'), (0.6, 'floor_divide'),
                                  (0.6, 'floor_mod'), (0.5, 'trunc_divide'), (0.5, 'trunc_mod'), (0.5, 'power')])
            if name in ('divide', 'mod', 'floor_mod', 'trunc_mod', 'floor_divide', 'trunc_divide'):
                b = self.op('maximum', tb, [self.op('abs', tb, [b], keep=True), lit(dt, 1)], keep=True)
            elif name in ('left_shift', 'right_shift'):
                if self.chance(0.8):
                    b = self.op('clip', tb, [b], 'a_min=0f, a_max=%df' % (BITS[dt] - 1), keep=True)
            elif name == 'power':
                b = self.op('clip', tb, [b], 'a_min=0f, a_max=3f', keep=True)
        else:
            name = self.weighted([(3, 'logical_and'), (3, 'logical_or'), (2, 'logical_xor'), (1, 'bitwise_and'),
                                  (1, 'bitwise_or'), (1, 'bitwise_xor'), (0.5, 'maximum'), (0.5, 'minimum'),
                                  (0.3, 'add'), (0.3, 'multiply')])
        infix = None
        if name in ('add', 'subtract', 'multiply', 'divide') and dt != 'bool' and self.chance(0.25):
            infix = {'add': '+', 'subtract': '-', 'multiply': '*', 'divide': '/'}[name]
        return self.op(name, ty, [a, b], infix=infix)

    def t_compare(self, ty, env, d, cx):
        s = ty[2]
        c = self.r.random()
        if c < 0.12:
            x = self.sub(T(self.pick(FLOATS), s), env, d, cx)
            return self.op(self.pick(['isnan', 'isinf', 'isfinite']), ty, [x])
        dt = self.weighted([(4, 'float32'), (1, 'float64'), (3, 'int32'), (1, 'int64'), (1, 'bool'),
                            (0.5, 'uint8'), (0.3, 'int8'), (0.3, 'uint32'), (0.2, 'uint64'), (0.2, 'float16')])
        sa, sb = self.split_bcast(s)
        a = self.sub(T(dt, sa), env, d, cx)
        b = self.sub(T(dt, sb), env, d, cx)
        name = self.pick(['less', 'greater', 'less_equal', 'greater_equal', 'equal', 'not_equal'])
        infix = None
        if self.chance(0.25):
            infix = {'less': '<', 'greater': '>', 'less_equal': '<=', 'greater_equal': '>=', 'equal': '==',
                     'not_equal': '!='}[name]
        return self.op(name, ty, [a, b], infix=infix)

    def t_where(self, ty, env, d, cx):
        s = ty[2]
        c = self.sub(T('bool', self.sub_bcast(s)), env, d, cx)
        x = self.sub(ty, env, d, cx)
        y = self.sub(T(ty[1], self.sub_bcast(s)), env, d, cx)
        if self.chance(0.5):
            x, y = y, x
        return self.op('where', ty, [c, x, y])

    def t_cast(self, ty, env, d, cx):
        dt, s = ty[1], ty[2]
        src = self.pick([x for x in DTYPES if x != dt])
        x = self.sub(T(src, s), env, d, cx)
        if self.chance(0.2):
            y = self.leaf(T(dt, self.rand_shape()), env, cx)
            return self.op('cast_like', ty, [x, y])
        return self.op('cast', ty, [x], 'dtype="%s"' % dt)

    def t_like(self, ty, env, d, cx):
        dt = ty[1]
        c = self.r.random()
        x = self.sub(ty, env, d, cx)
        if c < 0.3:
            return self.op('zeros_like', ty, [x])
        if c < 0.6:
            return self.op('ones_like', ty, [x])
        return self.op('full_like', ty, [x, self.scalar(dt)])

    def widen(self, s, nnew):
        """s with nnew new axes inserted: (shape, positions of the new axes)."""
        s = list(s)
        pos = []
        for _ in range(nnew):
            p = self.r.randint(0, len(s))
            s.insert(p, self.r.randint(1, min(self.knobs['max_dim'], 4)))
            pos = [q + 1 if q >= p else q for q in pos] + [p]
        return tuple(s), sorted(pos)

    def axes_text(self, axes, ndim, as_list=True):
        axes = [a - ndim if self.chance(0.25) else a for a in axes]
        if len(axes) == 1 and not as_list:
            return str(axes[0])
        return ints_attr(axes)

    def t_reduce(self, ty, env, d, cx):
        dt, s = ty[1], ty[2]
        if dt == 'bool':
            name = self.pick(['all', 'any'])
        elif dt in FLOATS:
            name = self.weighted([(3, 'sum'), (2, 'max'), (2, 'min'), (1, 'prod'), (2, 'mean')])
        else:
            name = self.weighted([(3, 'sum'), (2, 'max'), (2, 'min'), (1, 'prod')])
        maxr = 4
        c = self.r.random()
        if c < 0.25 and 1 in s:
            # keepdims: the 1s of s are reduced axes
            axes = [i for i, x in enumerate(s) if x == 1 and self.chance(0.7)] or [s.index(1)]
            src = tuple(self.r.randint(1, 3) if i in axes else x for i, x in enumerate(s))
            x = self.sub(T(dt, src), env, d, cx)
            return self.op(name, ty, [x], 'axis=%s, keepdims=True' % self.axes_text(axes, len(src)))
        if not s and self.chance(0.4):
            src = self.rand_shape()
            x = self.sub(T(dt, src), env, d, cx)
            return self.op(name, ty, [x])
        nnew = 1 if len(s) >= maxr - 1 or self.chance(0.7) else 2
        if len(s) + nnew > 3 and self.chance(0.7):
            nnew = max(1, 3 - len(s))
            if len(s) >= 3:
                nnew = 1
        src, pos = self.widen(s, nnew)
        x = self.sub(T(dt, src), env, d, cx)
        if self.chance(0.2) and len(pos) < len(src):
            keep_axes = [i for i in range(len(src)) if i not in pos]
            return self.op(name, ty, [x], 'axis=%s, exclude=True' % self.axes_text(keep_axes, len(src)))
        return self.op(name, ty, [x], 'axis=%s' % self.axes_text(pos, len(src), self.chance(0.6)))

    def t_argreduce(self, ty, env, d, cx):
        s = ty[2]
        src, pos = self.widen(s, 1)
        sdt = self.pick(['float32', 'int32', 'float64', 'int64', 'uint8', 'float16'])
        x = self.sub(T(sdt, src), env, d, cx)
        name = self.pick(['argmax', 'argmin'])
        attrs = 'axis=%s' % self.axes_text(pos, len(src), self.chance(0.5))
        if self.chance(0.3):
            attrs += ', select_last_index=True'
        return self.op(name, ty, [x], attrs)

    def factor_shape(self, n):
        """A random shape of rank 0..3 holding n elements."""
        rank = self.r.randint(1, 3) if n > 1 else self.r.randint(0, 2)
        dims = []
        rest = n
        for i in range(rank - 1):
            divs = [x for x in range(1, rest + 1) if rest % x == 0]
            f = self.pick(divs)
            dims.append(f)
            rest //= f
        if rank:
            dims.append(rest)
        self.r.shuffle(dims)
        return tuple(dims)

    def t_injective(self, ty, env, d, cx):
        dt, s = ty[1], ty[2]
        r = len(s)
        opts = [(2, 'reshape'), (1, 'broadcast_to')]
        if r >= 2:
            opts.append((2, 'transpose'))
        if r >= 1:
            opts += [(1.5, 'reverse'), (2, 'concatenate'), (1.5, 'stack'), (2, 'strided_slice'), (2, 'take'),
                     (1, 'tile'), (1, 'repeat'), (1.5, 'split'), (1, 'gather'), (1, 'squeeze')]
            if dt in NUMERIC:
                opts += [(1, 'cumsum'), (0.5, 'cumprod'), (1, 'sort'), (0.7, 'topk')]
                if dt == 'int32':
                    opts.append((0.6, 'argsort'))
            if r <= 3 and dt != 'bool':
                opts.append((1, 'one_hot'))
        if 1 in s:
            opts.append((1.5, 'expand_dims'))
        if r < 3:
            opts.append((1, 'squeeze'))
        name = self.weighted(opts)
        return getattr(self, 'inj_' + name)(ty, env, d, cx)

    def inj_reshape(self, ty, env, d, cx):
        dt, s = ty[1], ty[2]
        src = self.factor_shape(numel(s))
        x = self.sub(T(dt, src), env, d, cx)
        ns = list(s)
        if ns and self.chance(0.4):
            ns[self.r.randrange(len(ns))] = -1
        for i in range(len(ns)):
            if i < len(src) and ns[i] == src[i] and self.chance(0.3) and ns[i] != -1:
                ns[i] = 0
        return self.op('reshape', ty, [x], 'newshape=%s' % ints_attr(ns))

    def inj_broadcast_to(self, ty, env, d, cx):
        dt, s = ty[1], ty[2]
        x = self.sub(T(dt, self.sub_bcast(s)), env, d, cx)
        return self.op('broadcast_to', ty, [x], 'shape=%s' % ints_attr(s))

    def inj_transpose(self, ty, env, d, cx):
        dt, s = ty[1], ty[2]
        perm = list(range(len(s)))
        self.r.shuffle(perm)
        src = [0] * len(s)
        for i, p in enumerate(perm):
            src[p] = s[i]
        x = self.sub(T(dt, tuple(src)), env, d, cx)
        if perm == list(range(len(s)))[::-1] and self.chance(0.5):
            return self.op('transpose', ty, [x], 'axes=None')
        return self.op('transpose', ty, [x], 'axes=%s' % self.axes_text(perm, len(s)))

    def inj_reverse(self, ty, env, d, cx):
        x = self.sub(ty, env, d, cx)
        return self.op('reverse', ty, [x], 'axis=%d' % self.r.randrange(len(ty[2])))

    def inj_concatenate(self, ty, env, d, cx):
        dt, s = ty[1], ty[2]
        ax = self.r.randrange(len(s))
        n = s[ax]
        parts = []
        while n > 0:
            k = self.r.randint(1, n)
            parts.append(k)
            n -= k
        if len(parts) > 3:
            parts = parts[:2] + [sum(parts[2:])]
        xs = [self.sub(T(dt, s[:ax] + (k,) + s[ax + 1:]), env, d, cx) for k in parts]
        tup = N('tuple', ('tuple', tuple(x.ty for x in xs)), xs)
        axt = ax - len(s) if self.chance(0.25) else ax
        return self.op('concatenate', ty, [tup], 'axis=%d' % axt)

    def inj_stack(self, ty, env, d, cx):
        dt, s = ty[1], ty[2]
        axes = [i for i, x in enumerate(s) if x <= 4]
        if not axes:
            return None
        ax = self.pick(axes)
        part = s[:ax] + s[ax + 1:]
        xs = [self.sub(T(dt, part), env, d, cx) for _ in range(s[ax])]
        tup = N('tuple', ('tuple', tuple(x.ty for x in xs)), xs)
        return self.op('stack', ty, [tup], 'axis=%d' % ax)

    def inj_strided_slice(self, ty, env, d, cx):
        dt, s = ty[1], ty[2]
        src, begin, end, strides = [], [], [], []
        for dim in s:
            st = self.weighted([(5, 1), (2, 2), (1, -1)])
            if st > 0:
                b = self.r.randint(0, 2)
                e = b + (dim - 1) * st + 1
                total = e + self.r.randint(0, 2)
                if total == e and self.chance(0.3):
                    e = total + 3   # clamped to the dimension
            else:
                e = self.r.randint(0, 2)
                b = e + dim
                total = b + 1 + self.r.randint(0, 1)
            src.append(total)
            begin.append(b)
            end.append(e)
            strides.append(st)
        x = self.sub(T(dt, tuple(src)), env, d, cx)
        attrs = 'begin=%s, end=%s, strides=%s' % (ints_attr(begin), ints_attr(end), ints_attr(strides))
        if all(x == 1 for x in strides) and self.chance(0.5):
            attrs = 'begin=%s, end=%s, strides=[1]' % (ints_attr(begin), ints_attr(end))
        return self.op('strided_slice', ty, [x], attrs)

    def inj_take(self, ty, env, d, cx):
        dt, s = ty[1], ty[2]
        mode = self.pick(['clip', 'wrap'])
        if self.chance(0.2):
            src = self.rand_shape()
            idx = self.sub(T('int32', s), env, d, cx)
            x = self.sub(T(dt, src), env, d, cx)
            return self.op('take', ty, [x, idx], 'mode="%s"' % mode)
        ri = self.r.randint(0, min(2, len(s)))
        ax = self.r.randint(0, len(s) - ri)
        ishape = s[ax:ax + ri]
        m = self.r.randint(1, 4)
        src = s[:ax] + (m,) + s[ax + ri:]
        if len(src) > 4:
            return None
        x = self.sub(T(dt, src), env, d, cx)
        idx = self.sub(T(self.pick(['int32', 'int32', 'int64']), ishape), env, d, cx)
        return self.op('take', ty, [x, idx], 'axis=%d, mode="%s"' % (ax, mode))

    def inj_tile(self, ty, env, d, cx):
        dt, s = ty[1], ty[2]
        src, reps = [], []
        for dim in s:
            divs = [x for x in range(1, dim + 1) if dim % x == 0]
            rp = self.pick(divs)
            reps.append(rp)
            src.append(dim // rp)
        x = self.sub(T(dt, tuple(src)), env, d, cx)
        return self.op('tile', ty, [x], 'reps=%s' % ints_attr(reps))

    def inj_repeat(self, ty, env, d, cx):
        dt, s = ty[1], ty[2]
        ax = self.r.randrange(len(s))
        divs = [x for x in range(1, s[ax] + 1) if s[ax] % x == 0]
        rp = self.pick(divs)
        src = s[:ax] + (s[ax] // rp,) + s[ax + 1:]
        x = self.sub(T(dt, src), env, d, cx)
        return self.op('repeat', ty, [x], 'repeats=%d, axis=%d' % (rp, ax))

    def inj_split(self, ty, env, d, cx):
        dt, s = ty[1], ty[2]
        ax = self.r.randrange(len(s))
        if self.chance(0.5):
            n = self.r.randint(2, 3)
            j = self.r.randrange(n)
            src = s[:ax] + (s[ax] * n,) + s[ax + 1:]
            parts = [s[ax]] * n
            attrs = 'indices_or_sections=%d, axis=%d' % (n, ax)
        else:
            before = self.r.randint(0, 2)
            after = self.r.randint(0, 2)
            parts = ([before] if before else []) + [s[ax]] + ([after] if after else [])
            j = 1 if before else 0
            total = sum(parts)
            src = s[:ax] + (total,) + s[ax + 1:]
            idx = []
            acc = 0
            for p in parts[:-1]:
                acc += p
                idx.append(acc)
            attrs = 'indices_or_sections=%s, axis=%d' % (ints_attr(idx), ax)
        x = self.sub(T(dt, src), env, d, cx)
        fields = tuple(T(dt, src[:ax] + (p,) + src[ax + 1:]) for p in parts)
        return N('proj', ty, [self.op('split', ('tuple', fields), [x], attrs)], j)

    def inj_gather(self, ty, env, d, cx):
        dt, s = ty[1], ty[2]
        ax = self.r.randrange(len(s))
        m = self.r.randint(1, 4)
        src = s[:ax] + (m,) + s[ax + 1:]
        x = self.sub(T(dt, src), env, d, cx)
        it = T('int32', s)
        idx = self.op('clip', it, [self.sub(it, env, d, cx)], 'a_min=0f, a_max=%df' % (m - 1), keep=True)
        return self.op('gather', ty, [x, idx], 'axis=%d' % ax)

    def inj_squeeze(self, ty, env, d, cx):
        dt, s = ty[1], ty[2]
        if len(s) >= 3:
            return None
        p = self.r.randint(0, len(s))
        src = s[:p] + (1,) + s[p:]
        x = self.sub(T(dt, src), env, d, cx)
        if all(x != 1 for x in s) and self.chance(0.3):
            return self.op('squeeze', ty, [x], 'axis=None')
        return self.op('squeeze', ty, [x], 'axis=[%d]' % p)

    def inj_expand_dims(self, ty, env, d, cx):
        dt, s = ty[1], ty[2]
        ones = [i for i, x in enumerate(s) if x == 1]
        p = self.pick(ones)
        n = 1
        while p + n < len(s) and s[p + n] == 1 and self.chance(0.5):
            n += 1
        src = s[:p] + s[p + n:]
        x = self.sub(T(dt, src), env, d, cx)
        ax = p - len(src) - 1 if self.chance(0.25) else p
        attrs = 'axis=%d' % ax
        if n > 1:
            attrs += ', num_newaxis=%d' % n
        return self.op('expand_dims', ty, [x], attrs)

    def inj_cumsum(self, ty, env, d, cx, name='cumsum'):
        dt, s = ty[1], ty[2]
        attrs = []
        if len(s) == 1 and self.chance(0.3):
            src = self.factor_shape(s[0])
            x = self.sub(T(dt, src), env, d, cx)
        else:
            x = self.sub(ty, env, d, cx)
            attrs.append('axis=%d' % self.r.randrange(len(s)))
        if self.chance(0.4):
            attrs.append('exclusive=True')
        return self.op(name, ty, [x], ', '.join(attrs))

    def inj_cumprod(self, ty, env, d, cx):
        return self.inj_cumsum(ty, env, d, cx, 'cumprod')

    def inj_sort(self, ty, env, d, cx):
        x = self.sub(ty, env, d, cx)
        attrs = 'axis=%d' % self.r.randrange(len(ty[2]))
        if self.chance(0.5):
            attrs += ', is_ascend=False'
        return self.op('sort', ty, [x], attrs)

    def inj_argsort(self, ty, env, d, cx):
        s = ty[2]
        x = self.sub(T(self.pick(['float32', 'int32', 'int64', 'uint8']), s), env, d, cx)
        attrs = 'axis=%d' % self.r.randrange(len(s))
        if self.chance(0.5):
            attrs += ', is_ascend=False'
        return self.op('argsort', ty, [x], attrs + ', dtype="int32"')

    def inj_topk(self, ty, env, d, cx):
        dt, s = ty[1], ty[2]
        ax = self.r.randrange(len(s))
        k = s[ax]
        src = s[:ax] + (k + self.r.randint(0, 2),) + s[ax + 1:]
        x = self.sub(T(dt, src), env, d, cx)
        asc = self.chance(0.5)
        attrs = 'k=%d, axis=%d, ret_type="both"%s, dtype="int32"' % (k, ax, ', is_ascend=True' if asc else '')
        fields = (ty, T('int32', s))
        return N('proj', ty, [self.op('topk', ('tuple', fields), [x], attrs)], 0)

    def inj_one_hot(self, ty, env, d, cx):
        dt, s = ty[1], ty[2]
        ax = self.r.randrange(len(s))
        depth = s[ax]
        ishape = s[:ax] + s[ax + 1:]
        idx = self.sub(T('int32', ishape), env, d, cx)
        on = self.scalar(dt)
        off = self.scalar(dt)
        axt = -1 if ax == len(s) - 1 and self.chance(0.5) else ax
        return self.op('one_hot', ty, [idx, on, off], 'depth=%d, axis=%d, dtype="%s"' % (depth, axt, dt))

    def t_nn(self, ty, env, d, cx):
        dt, s = ty[1], ty[2]
        r = len(s)
        opts = []
        if r >= 1:
            opts += [(2, 'softmax'), (1, 'log_softmax'), (1.5, 'pad')]
        if r == 2:
            opts += [(2, 'dense'), (1, 'batch_flatten')]
        if r == 3:
            opts += [(1.5, 'batch_matmul')]
        if r >= 2:
            opts += [(1, 'bias_add'), (1, 'prelu')]
        if not opts:
            return None
        name = self.weighted(opts)
        if name in ('softmax', 'log_softmax'):
            x = self.sub(ty, env, d, cx)
            ax = self.r.randrange(r) - (r if self.chance(0.5) else 0)
            return self.op('nn.' + name, ty, [x], 'axis=%d' % ax)
        if name == 'pad':
            src, pw = [], []
            for dim in s:
                b = self.r.randint(0, min(2, dim - 1)) if dim > 1 else 0
                a = self.r.randint(0, min(2, dim - 1 - b)) if dim - 1 - b > 0 else 0
                src.append(dim - b - a)
                pw.append('[%d, %d]' % (b, a))
            x = self.sub(T(dt, tuple(src)), env, d, cx)
            mode = self.weighted([(4, 'constant'), (1, 'edge')])
            attrs = 'pad_width=[%s]' % ', '.join(pw)
            if mode != 'constant':
                attrs += ', pad_mode="%s"' % mode
            return self.op('nn.pad', ty, [x, self.scalar(dt)], attrs)
        if name == 'dense':
            k = self.r.randint(1, 4)
            x = self.sub(T(dt, (s[0], k)), env, d, cx)
            w = self.sub(T(dt, (s[1], k)), env, d, cx)
            units = str(s[1]) if self.chance(0.5) else 'None'
            return self.op('nn.dense', ty, [x, w], 'units=%s' % units)
        if name == 'batch_flatten':
            src = (s[0],) + self.factor_shape(s[1])
            if len(src) > 4 or len(src) < 2:
                return None
            x = self.sub(T(dt, src), env, d, cx)
            return self.op('nn.batch_flatten', ty, [x])
        if name == 'batch_matmul':
            k = self.r.randint(1, 3)
            tb = self.chance(0.5)
            a = self.sub(T(dt, (s[0], s[1], k)), env, d, cx)
            b = self.sub(T(dt, (s[0], s[2], k) if tb else (s[0], k, s[2])), env, d, cx)
            return self.op('nn.batch_matmul', ty, [a, b], 'transpose_b=True' if tb else '')
        if name in ('bias_add', 'prelu'):
            ax = self.r.randrange(r)
            x = self.sub(ty, env, d, cx)
            b = self.sub(T(dt, (s[ax],)), env, d, cx)
            return self.op('nn.' + name, ty, [x, b], 'axis=%d' % ax)
        return None

    # {==== Statements ====}
    def body(self, ty, env, nlets, d, cx):
        """A let chain of about nlets bindings (closures, refs and their
        writes, ADT values, tensors) ending in an expression of type ty."""
        outer = len(env)
        env = list(env)
        stmts = []
        for _ in range(nlets):
            self.stmt(env, stmts, d, cx)
        res = self.expr(ty, env, d, cx)
        if ty[0] == 'T':
            res = self.sink(res, ty, env[outer:], env, cx)
        return self.chain(stmts, res)

    def chain(self, stmts, res):
        for kind, a, v in reversed(stmts):
            if kind == 'let':
                res = N('let', res.ty, [v, res], a)
            elif kind == 'gbind':
                res = N('gbind', res.ty, [v, res], a)
            else:
                res = N('seq', res.ty, [v, res])
        return res

    def sink(self, res, ty, new_vars, env, cx):
        """res combined with the variables of new_vars that nothing used
        (so that they are not dead code)."""
        for v in new_vars:
            if v.uses or self.chance(0.25):
                continue
            v.uses += 1
            e = self.observe(N('var', v.ty, a=v.name), env, cx)
            if e is None:
                continue
            e = self.convert(e, ty)
            dt = ty[1]
            if dt == 'bool':
                name = self.pick(['logical_or', 'logical_and', 'logical_xor'])
            elif dt in FLOATS:
                name = self.pick(['add', 'subtract', 'maximum', 'minimum'])
            else:
                name = self.pick(['add', 'bitwise_xor', 'maximum', 'subtract'])
            res = self.op(name, ty, [res, e])
        return res

    def convert(self, e, ty):
        """Tensor expression e as tensor type ty."""
        dt, s = ty[1], ty[2]
        if e.ty[1] != dt:
            e = self.op('cast', T(dt, e.ty[2]), [e], 'dtype="%s"' % dt)
        es = e.ty[2]
        if es == s:
            return e
        if bcast(es, s) == s:
            return self.op('broadcast_to', ty, [e], 'shape=%s' % ints_attr(s))
        if numel(es) == numel(s):
            return self.op('reshape', ty, [e], 'newshape=%s' % ints_attr(s))
        red = 'any' if dt == 'bool' else self.pick(['sum', 'max', 'min'])
        e = self.op(red, T(dt), [e])
        if not s:
            return e
        return self.op('broadcast_to', ty, [e], 'shape=%s' % ints_attr(s))

    def stmt(self, env, stmts, d, cx):
        if cx.dataflow:
            name = self.fresh()
            ty = self.tensor_ty()
            if self.chance(0.3):
                val = self.primitive_call(ty, env, d, cx)
            else:
                val = self.expr(ty, env, d, cx)
            stmts.append(('let', (name, ty), val))
            env.append(Var(name, ty))
            return
        inner = 0.15 if cx.in_lambda else 1
        kind = self.weighted([(8, 'tensor'), (2 * inner, 'closure'), (1.2, 'ref'), (1.5, 'write'), (2 * inner, 'adt'),
                              (1, 'tuple'), (1.2 * inner, 'loop'), (0.7, 'call_fn'), (2.5, 'graph')])
        if kind == 'graph':
            # `%N = value;`: one node that every use shares, evaluated once
            # in the innermost scope holding all its uses (or never).
            self.count += 1
            name = str(self.count)
            c = self.r.random()
            fns = [v for v in env if v.ty[0] == 'fn' and v.ty[2][0] == 'T' and v.cost <= cx.budget]
            refs = [v for v in env if v.ty[0] == 'ref']
            if c < 0.25 and fns:
                v = self.pick(fns)
                v.uses += 1
                cx.budget -= v.cost
                ty = v.ty[2]
                val = N('call', ty, [N('var', v.ty, a=v.name)] + self.args_for(v.ty[1], env, d, cx, v.counter))
            elif c < 0.35 and refs:
                v = self.pick(refs)
                v.uses += 1
                ty = v.ty[1]
                val = N('rread', ty, [N('var', v.ty, a=v.name)])
            elif c < 0.45:
                ty = ('ref', self.tensor_ty())
                val = N('ref', ty, [self.expr(ty[1], env, d, cx)])
            else:
                ty = self.tensor_ty()
                val = self.expr(ty, env, d, cx)
            stmts.append(('gbind', name, val))
            env.append(Var(name, ty))
            return
        if kind == 'write':
            refs = [v for v in env if v.ty[0] == 'ref']
            if refs:
                v = self.pick(refs)
                val = self.expr(v.ty[1], env, d, cx)
                stmts.append(('seq', None, N('rwrite', UNIT, [N('var', v.ty, a=v.name), val])))
                return
            kind = 'ref'
        if kind == 'call_fn':
            # call a closure for its effects (it may write a reference)
            fns = [v for v in env if v.ty[0] == 'fn' and v.cost <= cx.budget]
            if fns:
                v = self.pick(fns)
                cx.budget -= v.cost
                call = N('call', v.ty[2], [N('var', v.ty, a=v.name)] + self.args_for(v.ty[1], env, d, cx, v.counter))
                name = self.fresh()
                stmts.append(('let', (name, v.ty[2]), call))
                env.append(Var(name, v.ty[2]))
                return
            kind = 'closure'
        name = self.fresh()
        cost, counter = 1, False
        if kind == 'tensor':
            ty = self.tensor_ty()
            val = self.expr(ty, env, d, cx)
        elif kind == 'closure':
            ty = self.fn_ty()
            val = self.closure(ty, env, d, cx)
            cost = 20
        elif kind == 'ref':
            ty = self.ref_ty()
            val = N('ref', ty, [self.expr(ty[1], env, d, cx)])
        elif kind == 'adt':
            ty = self.adt_ty()
            val = self.expr(ty, env, d, cx)
        elif kind == 'tuple':
            ty = self.tuple_ty()
            val = self.expr(ty, env, d, cx)
        else:
            ty, val, cost = self.local_loop(name, env, d, cx)
            counter = True
        stmts.append(('let', (name, ty), val))
        env.append(Var(name, ty, cost, counter))

    def closure(self, ty, env, d, cx):
        """A closure that captures variables of env, sometimes writing a
        captured reference (a counter) before its result."""
        params = [(self.fresh('p'), t) for t in ty[1]]
        inner = env + [Var(p, t) for p, t in params]
        lcx = Ctx(20, cx.group, True)
        body = self.body(ty[2], inner, self.r.randint(0, 2), max(d - 1, 1), lcx)
        refs = [v for v in env if v.ty[0] == 'ref']
        if refs and self.chance(0.4):
            v = self.pick(refs)
            val = self.expr(v.ty[1], inner + [v], 1, lcx)
            body = N('seq', body.ty, [N('rwrite', UNIT, [N('var', v.ty, a=v.name), val]), body])
        return N('fn', ty, [body], (params, self.ret_annot(ty[2])))

    def local_loop(self, name, env, d, cx):
        """let %f = fn (%i: int32, %acc: T, ...) { if (%i <= 0) { %acc } else
        { %f(%i - 1, step) } }: a recursive closure bounded by its counter."""
        acc_ty = self.tensor_ty()
        extra = [self.tensor_ty() for _ in range(self.r.randint(0, 1))]
        ptys = (I32, acc_ty) + tuple(extra)
        fty = ('fn', ptys, acc_ty)
        i, acc = self.fresh('i'), self.fresh('acc')
        params = [(i, I32), (acc, acc_ty)] + [(self.fresh('p'), t) for t in extra]
        inner = env + [Var(p, t) for p, t in params]
        lcx = Ctx(20, cx.group, True)
        K = self.r.randint(2, 6)
        ivar = N('var', I32, a=i)
        base = self.op('less_equal', BOOL0, [ivar, lit('int32', 0)], keep=True, infix='<=' if self.chance(0.5) else None)
        step = self.body(acc_ty, inner, self.r.randint(0, 2), max(d - 1, 1), lcx)
        nxt = self.op('subtract', I32, [self.op('minimum', I32, [ivar, lit('int32', K)], keep=True),
                                        lit('int32', 1)], keep=True)
        rec_args = [nxt, step] + [N('var', t, a=p) for p, t in params[2:]]
        call = N('call', acc_ty, [N('var', fty, a=name)] + rec_args)
        if self.chance(0.35):
            # not a tail call: the result goes through one more operator
            r = self.fresh('r')
            after = self.expr(acc_ty, inner + [Var(r, acc_ty)], 1, lcx)
            call = N('let', acc_ty, [call, after], (r, acc_ty))
        base_val = N('var', acc_ty, a=acc) if self.chance(0.7) else self.expr(acc_ty, inner, 1, lcx)
        fbody = N('if', acc_ty, [base, base_val, call], keep=False)
        fbody.kids[0].keep = True
        val = N('fn', fty, [fbody], (params, acc_ty))
        return fty, val, 20 * K

    # {==== Globals ====}
    def make_global(self, idx):
        kind = self.weighted([(4, 'plain'), (2, 'rec'), (1.5, 'mutual'), (2, 'listfold'), (1.2, 'listbuild'),
                              (1, 'tree'), (1.5, 'maker'), (1.2, 'higher'), (1.2, 'poly'), (2, 'dataflow'),
                              (2, 'scalars')])
        getattr(self, 'g_' + kind)()

    def params_for(self, n, allow_fn=True):
        return [(self.fresh('a'), self.value_ty(allow_fn=allow_fn, allow_adt=True)) for _ in range(n)]

    def env_of(self, params):
        out = []
        for p, t in params:
            out.append(Var(p, t, 20 if t[0] == 'fn' else 1))
        return out

    def g_scalars(self):
        """Two or three globals on 0-d tensors only (an int32 counter and
        scalars of other dtypes) calling one another directly, in tail
        position or not: unboxed scalars, stack boxes, jumps."""
        k = self.r.randint(2, 3)
        sdts = [self.weighted([(4, 'float32'), (3, 'int32'), (1.5, 'int64'), (1.5, 'bool'), (1, 'uint8'),
                               (1, 'float64'), (0.5, 'int8'), (0.5, 'uint32')]) for _ in range(self.r.randint(1, 3))]
        ret = T(self.pick(sdts + ['int32', 'float32']))
        names = [self.gname('sc') for _ in range(k)]
        group = tuple(names)
        plists = [[(self.fresh('n'), I32)] + [(self.fresh('a'), T(dt)) for dt in sdts] for _ in names]
        sig = ('fn', tuple(t for _, t in plists[0]), ret)
        K = self.r.randint(2, 6)
        defs = []
        for i, name in enumerate(names):
            params = plists[i]
            env = self.env_of(params)
            cx = Ctx(30, group)
            nvar = N('var', I32, a=params[0][0])
            cond = self.op('less_equal', BOOL0, [nvar, lit('int32', 0)], keep=True,
                           infix='<=' if self.chance(0.5) else None)
            base = self.expr(ret, env, 2, cx)
            nxt = self.op('subtract', I32, [self.op('minimum', I32, [nvar, lit('int32', K)], keep=True),
                                            lit('int32', 1)], keep=True)
            other = names[(i + 1) % k] if self.chance(0.7) else self.pick(names)
            args = [nxt] + [self.expr(t, env, 2, cx) if self.chance(0.7) else N('var', t, a=p) for p, t in params[1:]]
            call = N('call', ret, [N('glob', sig, a=other)] + args)
            if self.chance(0.5):
                step = call
            else:
                r = self.fresh('r')
                after = self.expr(ret, env + [Var(r, ret)], 2, cx)
                step = N('let', ret, [call, after], (r, ret))
            if self.chance(0.4):
                t = T(self.pick(sdts))
                x = self.fresh('x')
                step = N('let', ret, [self.expr(t, env, 2, cx), step], (x, t))
            defs.append(Def(name, [], params, ret, N('if', ret, [cond, base, step]), cost=K * 30 + 1,
                            kind='mutual', recursive=True))
        self.defs.extend(defs)

    def primitive_call(self, ty, env, d, cx):
        """(fn (%p0: T0, ..., Primitive=1) -> ty { operators })(args): a
        fused function as TVM's FuseOps writes it, which the compiler
        unfuses."""
        args = []
        for v in env:
            if v.ty[0] == 'T' and len(args) < 3 and self.chance(0.6):
                args.append(v)
        if not args:
            return self.expr(ty, env, d, cx)
        params = [Var(self.fresh('p'), v.ty) for v in args]
        pcx = Ctx(0, dataflow=True)
        body = self.expr(ty, params, max(d, 1), pcx)
        fty = ('fn', tuple(v.ty for v in params), ty)
        fn = N('prim', fty, [body], ([(v.name, v.ty) for v in params], ty))
        return N('call', ty, [fn] + [N('var', v.ty, a=v.name) for v in args])

    def g_dataflow(self):
        """A straight-line body of operator calls (the static memory plan's
        case): intermediates in one workspace, reused after their last use."""
        params = [(self.fresh('a'), self.tensor_ty()) for _ in range(self.r.randint(1, 3))]
        if self.chance(0.7):
            ret = self.tensor_ty()
        else:
            ret = ('tuple', (self.tensor_ty(), self.tensor_ty()))
        cx = Ctx(0, dataflow=True)
        body = self.body(ret, self.env_of(params), self.r.randint(2, 6), self.knobs['depth'], cx)
        self.defs.append(Def(self.gname('net'), [], params, ret, body, cost=2))

    def g_plain(self):
        params = self.params_for(self.r.randint(0, 3))
        ret = self.value_ty(allow_fn=self.chance(0.3))
        cx = Ctx(150)
        body = self.body(ret, self.env_of(params), self.r.randint(*self.knobs['fn_lets']), self.knobs['depth'], cx)
        self.defs.append(Def(self.gname('f'), [], params, ret, body, cost=1 + 150 - cx.budget))

    def rec_body(self, name, n, params, ret, K, tail, group, other=None):
        """if (n <= 0 [|| n > K]) { base } else { ... @callee(minimum(n, K) - 1, ...) ... }."""
        env = self.env_of(params)
        cx = Ctx(30, group)
        nvar = N('var', I32, a=n)
        if self.chance(0.5):
            cond = self.op('less_equal', BOOL0, [nvar, lit('int32', 0)], keep=True,
                           infix='<=' if self.chance(0.5) else None)
            nxt = self.op('subtract', I32, [self.op('minimum', I32, [nvar, lit('int32', K)], keep=True),
                                            lit('int32', self.r.randint(1, 2))], keep=True)
        else:
            cond = self.op('logical_or', BOOL0, [self.op('less_equal', BOOL0, [nvar, lit('int32', 0)], keep=True),
                                                 self.op('greater', BOOL0, [nvar, lit('int32', K)], keep=True)],
                           keep=True)
            nxt = self.op('subtract', I32, [nvar, lit('int32', 1)], keep=True, infix='-' if self.chance(0.5) else None)
        base = self.body(ret, env, self.r.randint(0, 1), 2, cx)
        callee = other or name
        sig = ('fn', tuple(t for _, t in params), ret)
        rest = [self.expr(t, env, 1, cx) if self.chance(0.6) else N('var', t, a=p) for p, t in params[1:]]
        call = N('call', ret, [N('glob', sig, a=callee), nxt] + rest)
        if tail:
            if len(params) > 1 and params[1][1] == ret:
                # the accumulator argument carries this step
                call.kids[2] = self.body(ret, env, self.r.randint(0, 2), 2, cx)
            other_body = call
        else:
            rname = self.fresh('r')
            after = self.body(ret, env + [Var(rname, ret)], self.r.randint(0, 1), 2, cx)
            other_body = N('let', ret, [call, after], (rname, ret))
        return N('if', ret, [cond, base, other_body])

    def g_rec(self):
        ret = self.tensor_ty() if self.chance(0.8) else self.value_ty(allow_fn=False)
        n = self.fresh('n')
        params = [(n, I32)]
        if self.chance(0.7):
            params.append((self.fresh('acc'), ret))
        params += self.params_for(self.r.randint(0, 2), allow_fn=self.chance(0.3))
        K = self.r.randint(2, 7)
        name = self.gname('rec')
        body = self.rec_body(name, n, params, ret, K, self.chance(0.5), (name,))
        self.defs.append(Def(name, [], params, ret, body, cost=K * 30 + 1, kind='rec', recursive=True))

    def g_mutual(self):
        ret = self.tensor_ty()
        K = self.r.randint(2, 8)
        na, nb = self.gname('ping'), self.gname('pong')
        group = (na, nb)
        extra = self.params_for(self.r.randint(0, 2), allow_fn=False)
        shared_acc = self.chance(0.6)
        n1, n2 = self.fresh('n'), self.fresh('n')
        p1 = [(n1, I32)] + ([(self.fresh('acc'), ret)] if shared_acc else []) + extra
        p2 = [(n2, I32)] + ([(self.fresh('acc'), ret)] if shared_acc else []) + [(self.fresh('a'), t) for _, t in extra]
        tail = self.chance(0.5)
        b1 = self.rec_body(na, n1, p1, ret, K, tail, group, other=nb)
        b2 = self.rec_body(nb, n2, p2, ret, K, tail, group, other=na)
        cost = K * 30 + 1
        self.defs.append(Def(na, [], p1, ret, b1, cost=cost, kind='mutual', recursive=True))
        self.defs.append(Def(nb, [], p2, ret, b2, cost=cost, kind='mutual', recursive=True))

    def g_listfold(self):
        """A fold over a List[E] into U, tail or not, with nested patterns,
        sometimes taking the combining closure as a parameter."""
        elem = self.tensor_ty()
        lty = ('adt', 'List', (elem,))
        acc_t = self.tensor_ty() if self.chance(0.6) else elem
        name = self.gname('fold')
        xs, acc = self.fresh('xs'), self.fresh('acc')
        params = [(xs, lty), (acc, acc_t)]
        use_f = self.chance(0.4)
        fty = ('fn', (acc_t, elem), acc_t)
        if use_f:
            params.append((self.fresh('f'), fty))
        env = self.env_of(params)
        cx = Ctx(30, (name,))
        h, t = self.fresh('h'), self.fresh('t')
        inner = env + [Var(h, elem), Var(t, lty)]
        if use_f:
            step = N('call', acc_t, [N('var', fty, a=params[2][0]), N('var', acc_t, a=acc), N('var', elem, a=h)])
        else:
            step = self.body(acc_t, inner, self.r.randint(0, 1), 2, cx)
        sig = ('fn', tuple(p[1] for p in params), acc_t)
        fwd = [N('var', p[1], a=p[0]) for p in params[2:]]
        pats, bodies = [], []
        if self.chance(0.4):
            # a nested clause first: two elements at once
            h2 = self.fresh('h')
            t2 = self.fresh('t')
            pats.append(('c', 'Cons', [('v', h, elem, False), ('c', 'Cons', [('v', h2, elem, False), ('v', t2, lty, False)])]))
            inner2 = env + [Var(h, elem), Var(h2, elem), Var(t2, lty)]
            s2 = self.body(acc_t, inner2, 0, 2, cx)
            bodies.append(N('call', acc_t, [N('glob', sig, a=name), N('var', lty, a=t2), s2] + fwd))
        tail = self.chance(0.5)
        if tail:
            rec = N('call', acc_t, [N('glob', sig, a=name), N('var', lty, a=t), step] + fwd)
        else:
            rname = self.fresh('r')
            rec0 = N('call', acc_t, [N('glob', sig, a=name), N('var', lty, a=t), N('var', acc_t, a=acc)] + fwd)
            after = self.expr(acc_t, inner + [Var(rname, acc_t)], 2, cx)
            rec = N('let', acc_t, [rec0, after], (rname, acc_t))
        last = [(('c', 'Cons', [('v', h, elem, False), ('v', t, lty, False)]), rec),
                (('c', 'Nil', []), self.expr(acc_t, env, 1, cx) if self.chance(0.3) else N('var', acc_t, a=acc))]
        if self.chance(0.5):
            last.reverse()
        for p, b in last:
            pats.append(p)
            bodies.append(b)
        body = N('match', acc_t, [N('var', lty, a=xs)] + bodies, (False, pats))
        self.defs.append(Def(name, [], params, acc_t, body, cost=60, kind='listfold', recursive=True))

    def g_listbuild(self):
        elem = self.tensor_ty()
        lty = ('adt', 'List', (elem,))
        name = self.gname('build')
        n = self.fresh('n')
        params = [(n, I32)] + self.params_for(self.r.randint(0, 2), allow_fn=False)
        K = self.r.randint(2, 6)
        env = self.env_of(params)
        cx = Ctx(20, (name,))
        nvar = N('var', I32, a=n)
        cond = self.op('less_equal', BOOL0, [nvar, lit('int32', 0)], keep=True)
        nxt = self.op('subtract', I32, [self.op('minimum', I32, [nvar, lit('int32', K)], keep=True), lit('int32', 1)],
                      keep=True)
        sig = ('fn', tuple(t for _, t in params), lty)
        rest = [self.expr(t, env, 1, cx) for _, t in params[1:]]
        rec = N('call', lty, [N('glob', sig, a=name), nxt] + rest)
        head = self.expr(elem, env, 2, cx)
        body = N('if', lty, [cond, N('ctor', lty, [], 'Nil'), N('ctor', lty, [head, rec], 'Cons')])
        self.defs.append(Def(name, [], params, lty, body, cost=K * 20 + 1, kind='rec', recursive=True))

    def g_tree(self):
        """A tree builder (two recursive calls) and a tree fold with nested
        patterns."""
        elem = self.tensor_ty()
        tty = ('adt', 'Tree', (elem,))
        bname = self.gname('mktree')
        n, v = self.fresh('n'), self.fresh('v')
        params = [(n, I32), (v, elem)]
        K = self.r.randint(1, 4)
        env = self.env_of(params)
        cx = Ctx(10, (bname,))
        nvar = N('var', I32, a=n)
        cond = self.op('less_equal', BOOL0, [nvar, lit('int32', 0)], keep=True)
        sig = ('fn', (I32, elem), tty)

        def nxt(k):
            return self.op('subtract', I32, [self.op('minimum', I32, [nvar, lit('int32', K)], keep=True),
                                             lit('int32', k)], keep=True)
        left = N('call', tty, [N('glob', sig, a=bname), nxt(1), self.expr(elem, env, 2, cx)])
        right = N('call', tty, [N('glob', sig, a=bname), nxt(self.r.randint(1, 2)), self.expr(elem, env, 2, cx)])
        body = N('if', tty, [cond, N('ctor', tty, [], 'Leaf'), N('ctor', tty, [left, N('var', elem, a=v), right], 'Node')])
        self.defs.append(Def(bname, [], params, tty, body, cost=2 ** (K + 1) * 10, kind='tree', recursive=True))

        res = self.tensor_ty()
        fname = self.gname('tfold')
        t = self.fresh('t')
        params = [(t, tty)]
        env = self.env_of(params)
        cx = Ctx(10, (fname,))
        fsig = ('fn', (tty,), res)
        l, x, rr = self.fresh('l'), self.fresh('x'), self.fresh('r')
        pats, bodies = [], []
        if self.chance(0.5):
            x2 = self.fresh('x')
            pats.append(('c', 'Node', [('c', 'Leaf', []), ('v', x2, elem, False), ('c', 'Leaf', [])]))
            bodies.append(self.expr(res, env + [Var(x2, elem)], 2, cx))
        sl, sr = self.fresh('s'), self.fresh('s')
        inner = env + [Var(l, tty), Var(x, elem), Var(rr, tty), Var(sl, res), Var(sr, res)]
        comb = self.expr(res, inner, 2, cx)
        nb = N('let', res, [N('call', res, [N('glob', fsig, a=fname), N('var', tty, a=l)]),
                            N('let', res, [N('call', res, [N('glob', fsig, a=fname), N('var', tty, a=rr)]), comb],
                              (sr, res))], (sl, res))
        pats.append(('c', 'Node', [('v', l, tty, False), ('v', x, elem, False), ('v', rr, tty, False)]))
        bodies.append(nb)
        pats.append(('c', 'Leaf', []) if self.chance(0.7) else ('_',))
        bodies.append(self.expr(res, env, 1, cx))
        body = N('match', res, [N('var', tty, a=t)] + bodies, (False, pats))
        self.defs.append(Def(fname, [], params, res, body, cost=2 ** (K + 1) * 10, kind='tfold', recursive=True))

    def g_maker(self):
        """A global that returns a closure capturing its parameters (and
        maybe a fresh reference: a counter)."""
        params = self.params_for(self.r.randint(1, 2), allow_fn=False)
        fty = self.fn_ty()
        env = self.env_of(params)
        cx = Ctx(40)
        stmts = []
        if self.chance(0.5):
            rname = self.fresh('cell')
            rty = ('ref', self.tensor_ty())
            stmts.append((rname, rty, N('ref', rty, [self.expr(rty[1], env, 1, cx)])))
            env = env + [Var(rname, rty)]
        clo = self.closure(fty, env, 2, cx)
        body = clo
        for name, t, v in reversed(stmts):
            body = N('let', fty, [v, body], (name, t))
        self.defs.append(Def(self.gname('mk'), [], params, fty, body, cost=25, kind='plain'))

    def g_higher(self):
        """A global taking a closure and applying it (maybe twice)."""
        fty = self.fn_ty()
        f = self.fresh('f')
        params = [(f, fty)] + self.params_for(self.r.randint(0, 2), allow_fn=False)
        ret = self.tensor_ty()
        env = self.env_of(params)
        cx = Ctx(60)
        body = self.body(ret, env, self.r.randint(1, 3), self.knobs['depth'], cx)
        self.defs.append(Def(self.gname('ho'), [], params, ret, body, cost=61 - cx.budget + 20, kind='plain'))

    def g_poly(self):
        """A polymorphic global over A: apply a closure n times, a list
        length or a list map."""
        c = self.r.randint(0, 2)
        A = ('tvar', 'A')
        if c == 0:
            name = self.gname('iter')
            n, f, x = self.fresh('n'), self.fresh('f'), self.fresh('x')
            fty = ('fn', (A,), A)
            params = [(n, I32), (f, fty), (x, A)]
            nvar = N('var', I32, a=n)
            K = self.r.randint(2, 5)
            cond = self.op('less_equal', BOOL0, [nvar, lit('int32', 0)], keep=True)
            nxt = self.op('subtract', I32, [self.op('minimum', I32, [nvar, lit('int32', K)], keep=True),
                                            lit('int32', 1)], keep=True)
            sig = ('fn', (I32, fty, A), A)
            app = N('call', A, [N('var', fty, a=f), N('var', A, a=x)])
            if self.chance(0.5):
                rec = N('call', A, [N('glob', sig, a=name), nxt, N('var', fty, a=f), app])
            else:
                y = self.fresh('y')
                rec = N('let', A, [N('call', A, [N('glob', sig, a=name), nxt, N('var', fty, a=f), N('var', A, a=x)]),
                                   N('call', A, [N('var', fty, a=f), N('var', A, a=y)])], (y, A))
            body = N('if', A, [cond, N('var', A, a=x), rec])
            self.defs.append(Def(name, ['A'], params, A, body, cost=K * 20 + 1, kind='rec', recursive=True))
        elif c == 1:
            name = self.gname('len')
            lty = ('adt', 'List', (A,))
            xs, t = self.fresh('xs'), self.fresh('t')
            sig = ('fn', (lty,), I32)
            pats = [('c', 'Cons', [('_',), ('v', t, lty, False)]), ('c', 'Nil', [])]
            rec = N('op', I32, [lit('int32', 1), N('call', I32, [N('glob', sig, a=name), N('var', lty, a=t)])],
                    ('add', '', '+' if self.chance(0.5) else None))
            body = N('match', I32, [N('var', lty, a=xs), rec, lit('int32', 0)], (False, pats))
            self.defs.append(Def(name, ['A'], [(xs, lty)], I32, body, cost=10, kind='listfold', recursive=True))
        else:
            name = self.gname('map')
            B = ('tvar', 'B')
            la, lb = ('adt', 'List', (A,)), ('adt', 'List', (B,))
            f, xs, h, t = self.fresh('f'), self.fresh('xs'), self.fresh('h'), self.fresh('t')
            fty = ('fn', (A,), B)
            sig = ('fn', (fty, la), lb)
            cons = N('ctor', lb, [N('call', B, [N('var', fty, a=f), N('var', A, a=h)]),
                                  N('call', lb, [N('glob', sig, a=name), N('var', fty, a=f), N('var', la, a=t)])], 'Cons')
            pats = [('c', 'Cons', [('v', h, A, False), ('v', t, la, False)]), ('c', 'Nil', [])]
            body = N('match', lb, [N('var', la, a=xs), cons, N('ctor', lb, [], 'Nil')], (False, pats))
            self.defs.append(Def(name, ['A', 'B'], [(f, fty), (xs, la)], lb, body, cost=40, kind='listfold',
                                 recursive=True))

    # {==== @main ====}
    def make_main(self):
        ninputs = self.r.randint(*self.knobs['ninputs'])
        params = [('x%d' % i, self.tensor_ty()) for i in range(ninputs)]
        env = self.env_of(params)
        cx = Ctx(self.knobs['budget'])
        stmts = []
        nlets = self.r.randint(*self.knobs['main_lets'])
        for _ in range(nlets):
            self.stmt(env, stmts, self.knobs['depth'], cx)
        # Observe tensors: every tensor variable bound at the top, ADTs
        # folded by a match, refs read.
        outs = []
        for v in env:
            if v.ty[0] == 'T' and v.name not in [p for p, _ in params]:
                outs.append(N('var', v.ty, a=v.name))
            elif v.ty[0] in ('ref', 'tuple') and self.chance(0.8):
                e = self.observe(N('var', v.ty, a=v.name), env, cx)
                if e is not None:
                    outs.append(e)
        for _ in range(self.r.randint(1, 2)):
            t = self.tensor_ty()
            outs.append(self.expr(t, env, 2, cx))
        for g in self.defs:
            if g.uses == 0:
                e = self.observe(self.call_global(g, {}, env, 2, cx), env, cx)
                if e is not None:
                    outs.append(e)
        for v in env:
            if v.ty[0] == 'adt' and self.chance(0.8):
                t = self.tensor_ty()
                outs.append(self.gen_match_on(v, t, env, cx))
        if len(outs) > 10:
            outs = outs[:4] + outs[-6:]
        rty = ('tuple', tuple(o.ty for o in outs))
        res = self.chain(stmts, N('tuple', rty, outs))
        name = self.prefix + 'main' if self.prefix else 'main'
        self.defs.append(Def(name, [], params, rty, res, kind='main'))
        return params

    def gen_match_on(self, v, ty, env, cx):
        sty = v.ty
        pats, binds_list = [], []
        for _ in range(self.r.randint(0, 2)):
            binds = []
            pats.append(self.rand_pattern(sty, 3, binds, True))
            binds_list.append(binds)
        pats.extend(self.complete_patterns(sty, binds_list))
        bodies = [self.expr(ty, env + b, 2, cx) for b in binds_list]
        return N('match', ty, [N('var', sty, a=v.name)] + bodies, (False, pats))

    def program(self):
        self.make_pool()
        lo, hi = self.knobs['nglobals']
        for i in range(self.r.randint(lo, hi)):
            self.make_global(i)
        params = self.make_main()
        ir = random.Random(self.seed * 7919 + 17)
        sp = self.knobs['special'] / 100.0
        inputs = [(p, t, random_values(ir, t[1], t[2], sp)) for p, t in params]
        return Program(self.defs, inputs, self.prefix)


def generate(seed, prefix='', knobs=None):
    return Gen(seed, prefix, knobs).program()


if __name__ == '__main__':
    import sys
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    sys.stdout.write(module_text([generate(seed)]))
