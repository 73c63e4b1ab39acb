#!/usr/bin/python3
"""shrink.py: delta debugging of a failing generated program.

The program is the AST of relaygen.py (every node typed, every variable
name unique), so an edit keeps it well typed by construction:

  globals  drop the globals nothing refers to;
  fields   drop fields of @main's result tuple;
  lets     drop `let %x = v; body`, every use of %x becoming a zero of its
           type (zeros, False, Nil/None/Leaf, a function returning zeros),
           and drop `effect; body` sequences;
  exprs    replace a sub-expression by a zero of its type;
  kids     replace an operator call, an if or a let by one of its parts of
           the same type;
  params   drop @main's parameters nothing uses (and their inputs);
  dims     make one dimension size smaller everywhere it occurs (types,
           shape= and newshape= attributes, inputs and constants, whose
           values are cut), largest sizes first.

Edits are tried by ddmin over each kind (halves, quarters, ... then one by
one, restarting after each success), outer nodes first, until a whole
round changes nothing or the time is up. A candidate is kept when it still
type-checks (relayc check) and fails with the same signature (the first
failing mode and the kind of failure, the C compiler's warning flag, the
signal). Nodes marked `keep` (domain guards, recursion counters) are never
replaced, so shrinking cannot bring in a division by zero or an endless
loop.
"""

import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import relaygen as rg  # noqa: E402

_zcount = [0]


def zfresh(base='z'):
    _zcount[0] += 1
    return 'zz%s%d' % (base, _zcount[0])


def walk(n):
    """Every node under n, n first, children left to right."""
    stack = [n]
    while stack:
        x = stack.pop()
        yield x
        stack.extend(reversed(x.kids))


def copy_node(n, kids):
    m = rg.N(n.k, n.ty, kids, n.a, n.keep)
    m.uid = n.uid
    return m


def rewrite(n, edits, zvars):
    """A copy of n with the edits (uid -> action) applied; zvars maps the
    names of dropped lets to their types."""
    act = edits.get(n.uid)
    if act:
        if act[0] == 'zero':
            z = rg.zero_of(n.ty, zfresh)
            if z is not None:
                return z
        elif act[0] == 'drop_let':
            zvars[n.a if n.k == 'gbind' else n.a[0]] = True
            return rewrite(n.kids[1], edits, zvars)
        elif act[0] == 'kid':
            return rewrite(n.kids[act[1]], edits, zvars)
        elif act[0] == 'fields':
            keep = [k for i, k in enumerate(n.kids) if i not in act[1]]
            if not keep:
                keep = n.kids[:1]
            kids = [rewrite(k, edits, zvars) for k in keep]
            m = copy_node(n, kids)
            m.ty = ('tuple', tuple(k.ty for k in kids))
            return m
    if n.k == 'var' and n.a in zvars:
        z = rg.zero_of(n.ty, zfresh)
        if z is not None:
            return z
    m = copy_node(n, [rewrite(k, edits, zvars) for k in n.kids])
    if m.k in ('let', 'seq', 'gbind'):
        m.ty = m.kids[1].ty
    return m


def apply(prog, edits, drop_defs=(), drop_params=()):
    """A new program with the edits applied."""
    zvars = {}
    defs = []
    for d in prog.defs:
        if d.name in drop_defs:
            continue
        body = rewrite(d.body, edits, zvars)
        params = [(p, t) for p, t in d.params if not (d is prog.main and p in drop_params)]
        ret = body.ty if d is prog.main else d.ret
        defs.append(rg.Def(d.name, d.tparams, params, ret, body, d.cost, d.kind, d.recursive))
    return rg.Program(defs, prog.inputs, prog.prefix)


def referenced_globals(prog):
    names = set()
    for d in prog.defs:
        for n in walk(d.body):
            if n.k == 'glob':
                names.add(n.a)
    return names


def used_vars(prog):
    names = set()
    for d in prog.defs:
        for n in walk(d.body):
            if n.k == 'var':
                names.add(n.a)
    return names


def result_tuple(prog):
    n = prog.main.body
    while n.k in ('let', 'seq', 'gbind'):
        n = n.kids[1]
    return n if n.k == 'tuple' else None


def candidates(prog, kind):
    out = []
    if kind == 'fields':
        t = result_tuple(prog)
        if t is not None and len(t.kids) > 1:
            out = [(t.uid, ('fields', i)) for i in range(len(t.kids))]
        return out
    for d in prog.defs:
        for n in walk(d.body):
            if n.keep:
                continue
            if kind == 'lets':
                if n.k in ('let', 'gbind'):
                    out.append((n.uid, ('drop_let',)))
                elif n.k == 'seq':
                    out.append((n.uid, ('kid', 1)))
            elif kind == 'exprs':
                if n.k in ('var', 'lit', 'glob') or rg.is_zero(n) or rg.has_tvar(n.ty):
                    continue
                out.append((n.uid, ('zero',)))
            elif kind == 'kids':
                if n.k == 'if':
                    out += [(n.uid, ('kid', 1)), (n.uid, ('kid', 2))]
                elif n.k == 'op':
                    for i, k in enumerate(n.kids):
                        if k.ty == n.ty and not k.keep:
                            out.append((n.uid, ('kid', i)))
    return out


def edits_of(cands):
    edits = {}
    for uid, act in cands:
        if act[0] == 'fields':
            prev = edits.get(uid)
            s = set(prev[1]) if prev else set()
            s.add(act[1])
            edits[uid] = ('fields', s)
        elif uid not in edits:
            edits[uid] = act
    return edits


def map_type(t, f):
    """Type t with every dimension size mapped by f."""
    k = t[0]
    if k == 'T':
        return ('T', t[1], tuple(f(d) for d in t[2]))
    if k == 'tuple':
        return ('tuple', tuple(map_type(x, f) for x in t[1]))
    if k == 'fn':
        return ('fn', tuple(map_type(x, f) for x in t[1]), map_type(t[2], f))
    if k == 'adt':
        return ('adt', t[1], tuple(map_type(x, f) for x in t[2]))
    if k == 'ref':
        return ('ref', map_type(t[1], f))
    return t


def map_pattern(p, f):
    if p[0] == 'v':
        return ('v', p[1], map_type(p[2], f), p[3])
    if p[0] == 'c':
        return ('c', p[1], [map_pattern(q, f) for q in p[2]])
    if p[0] == 't':
        return ('t', [map_pattern(q, f) for q in p[1]])
    return p


def map_attrs(text, f):
    """The shape= and newshape= lists of an attribute text, mapped by f
    (newshape's codes 0, -1, ... stay)."""
    def one(m):
        xs = [int(x) for x in m.group(2).split(',') if x.strip()]
        return '%s[%s]' % (m.group(1), ', '.join(str(f(x) if x > 0 else x) for x in xs))
    return re.sub(r'(\b(?:shape|newshape)=)\[([-0-9, ]*)\]', one, text)


def map_node(n, f):
    m = copy_node(n, [map_node(k, f) for k in n.kids])
    m.ty = map_type(n.ty, f)
    if n.k == 'let':
        m.a = (n.a[0], map_type(n.a[1], f))
    elif n.k in ('fn', 'prim'):
        m.a = ([(p, map_type(t, f)) for p, t in n.a[0]], map_type(n.a[1], f) if n.a[1] else None)
    elif n.k == 'match':
        m.a = (n.a[0], [map_pattern(p, f) for p in n.a[1]])
    elif n.k == 'op':
        m.a = (n.a[0], map_attrs(n.a[1], f), n.a[2])
    elif n.k == 'meta':
        m.a = (n.a[0][:rg.numel(m.ty[2])], n.a[1])
    return m


def dims_of(prog):
    out = set()

    def add(t):
        if t[0] == 'T':
            out.update(d for d in t[2] if d > 1)
        elif t[0] in ('tuple', 'fn', 'adt', 'ref'):
            for x in (t[1] if t[0] in ('tuple', 'fn') else t[2] if t[0] == 'adt' else (t[1],)):
                add(x)
            if t[0] == 'fn':
                add(t[2])
    for d in prog.defs:
        for n in walk(d.body):
            add(n.ty)
    return sorted(out, reverse=True)


def map_dims(prog, old, new):
    """prog with every dimension of size old made new."""
    def f(x):
        return new if x == old else x
    defs = [rg.Def(d.name, d.tparams, [(p, map_type(t, f)) for p, t in d.params], map_type(d.ret, f),
                   map_node(d.body, f), d.cost, d.kind, d.recursive) for d in prog.defs]
    inputs = []
    for name, t, values in prog.inputs:
        t2 = map_type(t, f)
        inputs.append((name, t2, values[:rg.numel(t2[2])]))
    return rg.Program(defs, inputs, prog.prefix)


def shrink(runner, prog, sig, levels, seconds, log=print):
    """The smallest program found that still fails with signature sig
    (within seconds), and the number of programs tried."""
    deadline = time.time() + seconds
    tests = [0]
    if sig[0] == 'interp':
        levels = []

    def fails_same(p):
        tests[0] += 1
        fails, _, _ = runner.run_standalone(p, levels, 'shrink_')
        return bool(fails) and runner.signature(fails) == sig

    def lines(p):
        return rg.module_text([p]).split('#[metadata]')[0].count('\n')

    def ddmin(p, kind):
        cands = candidates(p, kind)
        n = 2
        while cands and time.time() < deadline:
            size = max(1, (len(cands) + n - 1) // n)
            done = False
            for i in range(0, len(cands), size):
                if time.time() >= deadline:
                    break
                q = apply(p, edits_of(cands[i:i + size]))
                if fails_same(q):
                    p = q
                    cands = candidates(p, kind)
                    n = max(2, n - 1)
                    done = True
                    break
            if not done:
                if size == 1:
                    break
                n = min(len(cands), n * 2)
        return p

    start = lines(prog)
    while time.time() < deadline:
        before = rg.module_text([prog])
        unref = [d.name for d in prog.defs[:-1] if d.name not in referenced_globals(prog)]
        while unref:
            q = apply(prog, {}, drop_defs=set(unref))
            if not fails_same(q):
                break
            prog = q
            unref = [d.name for d in prog.defs[:-1] if d.name not in referenced_globals(prog)]
        for kind in ('fields', 'lets', 'exprs', 'kids'):
            prog = ddmin(prog, kind)
        used = used_vars(prog)
        unused = [p for p, _ in prog.main.params if p not in used]
        if unused:
            q = apply(prog, {}, drop_params=set(unused))
            if fails_same(q):
                prog = q
        for dim in dims_of(prog):
            for new in sorted({1, dim - 1}):
                if time.time() >= deadline:
                    break
                q = map_dims(prog, dim, new)
                if fails_same(q):
                    prog = q
                    break
        if rg.module_text([prog]) == before:
            break
    log('shrunk from %d to %d lines with %d tests' % (start, lines(prog), tests[0]))
    return prog, tests[0]
