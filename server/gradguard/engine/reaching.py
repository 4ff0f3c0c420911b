"""Which parameters of a function what it back-propagates may be computed from (its summary, in
terms of its parameters, like the rest of summaries.py).

Graph origins are static node identities: every call of a helper makes its graphs at the same nodes.
That the running sum a helper returns (`total = total + train_step(...)`) and the loss it
back-propagates share the node of `policy(obs)` says nothing of whether that backward reaches what
the caller passed for `total`; this says whether it may - by the code's data flow, flow-insensitive
and generous (a name is computed from every expression the function assigns, writes or fills it
with), so that "no" is proof.

    def step(model, opt, x, h):       # `h` reaches the backward: loss <- out <- model(x, h)
        out, h = model(x, h)
        loss = out.sum()
        loss.backward()
        return h
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from gradguard.engine.evidence import named_params
from gradguard.engine.handing import argument
from gradguard.engine.model import FunctionInfo
from gradguard.engine.walk import descendants


def reaches_backward(fn: FunctionInfo, param: str) -> bool:
    """May what `fn` back-propagates (itself, or through the functions it calls) be computed from
    what its caller gives `param`?"""
    return param in _reaching(fn, set())


def _reaching(fn: FunctionInfo, seen: set) -> frozenset:
    """The parameters of `fn` its backwards may read (every one, when a backward's input is not known)."""
    params = _params(fn.node)
    if fn in seen:
        return params  # (recursion: may be any)
    seen = seen | {fn}
    defs = _assigned(fn.node)
    seeds: list = []
    for b in fn.backwards:
        if b.function is not fn:
            continue
        node = b.node
        if b.through is not None and isinstance(node, cst.Call):
            callee = b.through
            if any(a.star for a in node.args):
                return params
            bound = callee.cls is not None and isinstance(node.func, cst.Attribute)
            inner = _reaching(callee, seen)
            seeds += [a for p in inner if (a := argument(callee.node, node, p, (), bound=bound)) is not None]
            first = next(iter(named_params(callee.node)), None)
            if bound and first is not None and first in inner:
                seeds.append(node.func.value)  # `self` of the method: the receiver
        else:
            seeds.append(node)  # `loss.backward()`, `torch.autograd.grad(loss, params)`, another file's call
    names = _closure(seeds, defs)
    return frozenset(names & params)


def _params(fn: cst.FunctionDef) -> frozenset:
    p = fn.params
    stars = [s.name.value for s in (p.star_arg, p.star_kwarg) if isinstance(s, cst.Param)]
    return frozenset([*named_params(fn), *stars])


def _reads(node: cst.CSTNode) -> set:
    """The names an expression reads (not the attribute names of `a.b`, nor keywords of a call)."""
    skip = set()
    found = set()
    for n in descendants(node):  # (the node itself first)
        t = type(n)
        if t is cst.Attribute:
            skip.add(id(n.attr))
        elif t is cst.Arg and n.keyword is not None:
            skip.add(id(n.keyword))
        elif t is cst.Name and id(n) not in skip:
            found.add(n.value)
    return found


def _root(node: cst.BaseExpression) -> Optional[str]:
    """`a` of `a`, `a.b`, `a[i].c`."""
    while isinstance(node, (cst.Attribute, cst.Subscript)):
        node = node.value
    return node.value if isinstance(node, cst.Name) else None


def _assigned(fn: cst.FunctionDef) -> dict:
    """name -> the expressions the function binds, writes or fills it with: `a = e`, `a, b = e`,
    `a += e`, `a[k] = e`, `a.x = e`, `for a in e`, `with e as a`, `a.append(e)` (any method called on a
    name may write its arguments into it)."""
    defs: dict = {}

    def add(target, value) -> None:
        for name in _targets(target):
            defs.setdefault(name, []).append(value)

    for n in descendants(fn.body):
        t = type(n)
        if t is cst.Assign:
            for tg in n.targets:
                add(tg.target, n.value)
        elif t in (cst.AugAssign, cst.AnnAssign) and n.value is not None:
            add(n.target, n.value)
        elif t is cst.For:
            add(n.target, n.iter)
        elif t is cst.WithItem and n.asname is not None:
            add(n.asname.name, n.item)
        elif t is cst.NamedExpr:
            add(n.target, n.value)
        elif t is cst.Call and isinstance(n.func, cst.Attribute):
            root = _root(n.func.value)
            if root is not None:
                defs.setdefault(root, []).append(n)
    return defs


def _targets(target: cst.BaseExpression) -> list:
    if isinstance(target, (cst.Tuple, cst.List)):
        return [x for e in target.elements for x in _targets(e.value)]
    if isinstance(target, cst.StarredElement):
        return _targets(target.value)
    root = _root(target)
    return [root] if root is not None else []


def _closure(seeds: list, defs: dict) -> set:
    names: set = set()
    todo = [x for s in seeds for x in _reads(s)]
    while todo:
        name = todo.pop()
        if name in names:
            continue
        names.add(name)
        for expr in defs.get(name, ()):
            todo += _reads(expr)
    return names
