"""What a function or class of the file hands on unchanged, read from its syntax: the parameter a
function returns as it was given (alone, or in a tuple or dict at a constant index or key), the
parameter `__init__` keeps on `self`, and which argument of a call binds a parameter. The flow reads
these with values (containers.handed_on); the evidence pre-pass, before any value, with the file's
own top-level definitions (FileHelpers)."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from gradguard.engine.syntax import is_self_attribute, string_value
from gradguard.engine.walk import descendants


def constant_index(node: cst.Subscript):
    """`"out"` of `d["out"]`, `0` / `-1` of `t[0]`, `t[-1]`; None for any other index."""
    if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index):
        return None
    value = node.slice[0].slice.value
    sign = 1
    if isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.Minus):
        value, sign = value.expression, -1
    if isinstance(value, cst.Integer):
        return sign * int(value.value, 0)
    if isinstance(value, cst.SimpleString) and sign == 1:
        return string_value(value.value)
    return None


def literal_at(node: cst.BaseExpression, path: tuple) -> Optional[cst.BaseExpression]:
    """The item of a tuple, list or dict literal at `path`."""
    for key in path:
        if isinstance(node, (cst.Tuple, cst.List)) and isinstance(key, int):
            elements = node.elements
            if any(isinstance(e, cst.StarredElement) for e in elements) or not -len(elements) <= key < len(elements):
                return None
            node = elements[key].value
        elif isinstance(node, cst.Dict) and isinstance(key, str):
            found = [e.value for e in node.elements if isinstance(e, cst.DictElement)
                     and isinstance(e.key, cst.SimpleString) and string_value(e.key.value) == key]
            if len(found) != 1 or any(isinstance(e, cst.StarredDictElement) for e in node.elements):
                return None
            node = found[0]
        else:
            return None
    return node


def own_nodes(fn: cst.FunctionDef) -> list:
    """The nodes of a function's body, without those of the functions and classes it defines, nor
    the names that mention no variable (`.fields` of `self.fields`, `out=` of a call)."""
    nodes = descendants(fn.body, stop=(cst.FunctionDef, cst.ClassDef, cst.Lambda))
    words = {id(n.attr) for n in nodes if type(n) is cst.Attribute} | {  # (exact types: see function_facts)
        id(n.keyword) for n in nodes if type(n) is cst.Arg and n.keyword is not None}
    return [n for n in nodes if id(n) not in words]


def params_of(fn: cst.FunctionDef) -> set:
    p = fn.params
    names = {x.name.value for x in (*p.posonly_params, *p.params, *p.kwonly_params)}
    return names | {x.name.value for x in (p.star_arg, p.star_kwarg) if isinstance(x, cst.Param)}


def only_at(nodes: list, params: set, used: list) -> set:
    """The parameters whose every mention in the body is one of the `used` Name nodes: handed on
    as given, never read, written, rebound or worked on in place (`value.requires_grad_()`)."""
    mentions: dict = {}
    for n in nodes:
        if isinstance(n, cst.Name) and n.value in params:
            mentions.setdefault(n.value, []).append(n)
    return {name for name, found in mentions.items() if all(any(n is u for u in used) for n in found)}


def returned_params(fn: cst.FunctionDef) -> dict:
    """(path -> parameter) that every `return` of `fn` hands back as it was given: `return value`
    ((): value), `return value, None` ((0,): value), `return {"out": value}` (("out",): value)."""
    nodes = own_nodes(fn)
    if any(type(n) in (cst.Yield, cst.Await, cst.Global, cst.Nonlocal) for n in nodes):
        return {}
    found: Optional[dict] = None
    used: list = []
    params = params_of(fn)
    for r in (n for n in nodes if type(n) is cst.Return):
        paths = held_params(r.value, params) if r.value is not None else {}
        used += paths.values()
        names = {at: n.value for at, n in paths.items()}
        found = names if found is None else {at: v for at, v in found.items() if names.get(at) == v}
    if not found:
        return {}
    unchanged = only_at(nodes, params, used)
    return {at: name for at, name in found.items() if name in unchanged}


def returned_keys(fn: cst.FunctionDef) -> Optional[frozenset]:
    """The keys of the dict literal every `return` of `fn` gives, the same in each (`return {"out":
    value}`: {"out"}); None when a return gives anything else, or a key that is no string literal."""
    found = None
    for r in (n for n in own_nodes(fn) if type(n) is cst.Return):
        d = r.value
        if type(d) is not cst.Dict or any(type(e) is not cst.DictElement or type(e.key) is not cst.SimpleString
                                          for e in d.elements):
            return None
        keys = frozenset(string_value(e.key.value) for e in d.elements)
        if len(keys) != len(d.elements) or found not in (None, keys):
            return None
        found = keys
    return found


def held_params(expr: cst.BaseExpression, params: set, at: tuple = ()) -> dict:
    """(path -> parameter Name node) of the parameters a returned expression holds as they are."""
    if isinstance(expr, cst.Name) and expr.value in params:
        return {at: expr}
    out = {}
    if isinstance(expr, (cst.Tuple, cst.List)):
        for i, e in enumerate(expr.elements):
            if isinstance(e, cst.StarredElement):
                break
            out.update(held_params(e.value, params, at + (i,)))
    elif isinstance(expr, cst.Dict) and not any(isinstance(e, cst.StarredDictElement) for e in expr.elements):
        for e in expr.elements:
            if isinstance(e.key, cst.SimpleString):
                out.update(held_params(e.value, params, at + (string_value(e.key.value),)))
    return out


def returned_callee(fn: cst.FunctionDef) -> Optional[str]:
    """The callable whose results every `return` of `fn` hands back, when it is a parameter or an
    attribute of `self` (what the function was given): `return self.model(qa)`, or `out, (h, c) =
    model(x, (h, c))` then `return out, h, c`. A helper that runs what it is given for its caller."""
    nodes = own_nodes(fn)
    if any(isinstance(n, (cst.Yield, cst.Await)) for n in nodes):
        return None
    params = params_of(fn)
    made: dict = {}  # name -> the call it was bound from (once)
    for n in nodes:
        if isinstance(n, cst.Assign):
            for t in n.targets:
                for name in names_in(t.target):
                    made[name] = None if name in made or not isinstance(n.value, cst.Call) else n.value
        elif isinstance(n, (cst.AugAssign, cst.AnnAssign, cst.For, cst.WithItem)):
            for name in names_in(getattr(n, "target", None) or getattr(getattr(n, "asname", None), "name", None)):
                made[name] = None
    found = None
    for r in (n for n in nodes if type(n) is cst.Return):
        items = [e.value for e in r.value.elements] if isinstance(r.value, cst.Tuple) else [r.value]
        calls = {id(c): c for c in (
            e if isinstance(e, cst.Call) else made.get(e.value) if isinstance(e, cst.Name) else None for e in items)}
        if len(calls) != 1 or None in calls.values():
            return None  # (a bare `return`, a constant, a name bound twice or from elsewhere, two calls)
        func = next(iter(calls.values())).func
        callee = func.value if isinstance(func, cst.Name) and func.value in params else (
            f"self.{func.attr.value}" if is_self_attribute(func) else None)
        if callee is None or found not in (None, callee):
            return None
        found = callee
    return found


def names_in(target: cst.BaseExpression) -> list:
    """The names a target binds, or a literal tuple or list holds, through nested ones (`phase, (module, opt)`)."""
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for e in target.elements for n in names_in(e.value)]
    return []


def kept_on_self(init: cst.FunctionDef) -> dict:
    """attribute -> parameter: `self.fields = fields`, a statement `__init__` always runs, the only
    mention of the parameter and of the attribute, in an `__init__` that calls no method of its own."""
    nodes = own_nodes(init)
    if any(isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute) and isinstance(n.func.value, cst.Name)
           and n.func.value.value == "self" for n in nodes):
        return {}
    body = init.body.body if isinstance(init.body, cst.IndentedBlock) else ()
    kept, used = {}, []
    for stmt in body:
        for small in stmt.body if isinstance(stmt, cst.SimpleStatementLine) else ():
            if isinstance(small, cst.Assign) and len(small.targets) == 1 and is_self_attribute(small.targets[0].target) \
                    and isinstance(small.value, cst.Name):
                kept[small.targets[0].target.attr.value] = small.value
                used.append(small.value)
    unchanged = only_at(nodes, params_of(init), used)
    mentioned = [n.attr.value for n in nodes if is_self_attribute(n)]
    return {attr: name.value for attr, name in kept.items() if name.value in unchanged and mentioned.count(attr) == 1}


def argument(fn: cst.FunctionDef, call: cst.Call, param: str, path: tuple, bound: bool) -> Optional[cst.BaseExpression]:
    """The argument of `call` bound to `param` of `fn`, read at `path` (an entry of `**kwargs`, an
    item of `*args`, an item of a literal)."""
    if any(a.star for a in call.args):
        return None  # `f(*xs)`: positions unknown
    p = fn.params
    names = [x.name.value for x in (*p.posonly_params, *p.params)][1 if bound else 0:]
    positional = [a for a in call.args if a.keyword is None]
    keywords = {a.keyword.value: a for a in call.args if a.keyword is not None}
    arg = None
    if param in names and names.index(param) < len(positional):
        arg = positional[names.index(param)]
    elif param in names or param in {x.name.value for x in p.kwonly_params}:
        arg = keywords.get(param)
    elif path and isinstance(p.star_kwarg, cst.Param) and p.star_kwarg.name.value == param:
        arg, path = keywords.get(path[0]) if path[0] not in names and isinstance(path[0], str) else None, path[1:]
    elif path and isinstance(p.star_arg, cst.Param) and p.star_arg.name.value == param and isinstance(path[0], int):
        extra = positional[len(names):]
        arg, path = extra[path[0]] if -len(extra) <= path[0] < len(extra) else None, path[1:]
    if arg is None:
        return None
    return literal_at(arg.value, path) if path else arg.value


def handed_out_methods(cls: cst.ClassDef, methods: set) -> dict:
    """The methods a class's own code reads as `self.<method>` without calling it there: handed out
    as callables (`partial(self._downsample, planes=p)`, `layer.register_forward_hook(self._hook)`):
    method name -> where it is handed out."""
    called = set()
    found = set()
    for n in descendants(cls):
        if isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute):
            called.add(n.func)
        elif isinstance(n, cst.Attribute) and n.attr.value in methods and isinstance(n.value, cst.Name) \
                and n.value.value == "self":
            found.add(n)
    handed: dict = {}
    for n in found:
        if n not in called:
            handed.setdefault(n.attr.value, n)
    return handed


def uncalled_mentions(module: cst.Module) -> tuple[frozenset, frozenset]:
    """(names, attributes) the file's code reads without calling them there, nor binding them
    (`model.apply(init_fn)`, `hooks = [init_fn]`, `self.apply(self._init_weights)`): a function or
    method of that name is handed on as a callable. Read from the tree - a string, a comment, a
    definition or a call is no such mention."""
    nodes = descendants(module)
    skip = set()
    names, attributes = [], []
    for n in nodes:  # (exact types: a failed isinstance on libcst's abstract classes is slow)
        t = type(n)
        if t is cst.Name:
            names.append(n)
        elif t is cst.Attribute:
            attributes.append(n)
            skip.add(id(n.attr))
        elif t is cst.Call:
            skip.add(id(n.func))
        elif t in _DEFINING:
            skip.add(id(n.name))
        elif t is cst.Arg and n.keyword is not None:
            skip.add(id(n.keyword))
        elif t in _TARGETS:
            skip.add(id(n.target))
        elif t in _IMPORTING:
            skip.update(id(m) for m in descendants(n))
    return (frozenset(n.value for n in names if id(n) not in skip),
            frozenset(n.attr.value for n in attributes if id(n) not in skip))


_DEFINING = (cst.FunctionDef, cst.ClassDef, cst.Param)
_TARGETS = (cst.AssignTarget, cst.AnnAssign, cst.AugAssign)
_IMPORTING = (cst.Import, cst.ImportFrom, cst.Global, cst.Nonlocal)


class FileHelpers:
    """The same readings before any value is known, for the evidence pre-pass: a callee is a function
    or class the module defines once at its top level, called by its name."""

    def __init__(self, module: cst.Module):
        self.module = module
        self.built_losses = None  # evidence.built_losses, on first need
        seen: dict = {}
        for stmt in module.body:
            if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
                seen.setdefault(stmt.name.value, []).append(stmt)
        self.defs = {name: found[0] for name, found in seen.items() if len(found) == 1}
        methods: dict = {}
        for cls in (d for d in self.defs.values() if isinstance(d, cst.ClassDef)):
            for stmt in cls.body.body:
                if isinstance(stmt, cst.FunctionDef):
                    methods.setdefault(stmt.name.value, []).append(stmt)
        self.methods = {name: found[0] for name, found in methods.items() if len(found) == 1}
        self.summaries: dict = {}

    def runs(self, call: cst.Call) -> Optional[cst.BaseExpression]:
        """What a call of the file's own function (or of a method on `self`) runs and hands back, in
        the caller's terms (handing.returned_callee): `model` of `step(model, x, h)`, `self.model` of
        `self.predict(qa)`; None for any other call."""
        func = call.func
        if isinstance(func, cst.Name) and isinstance(self.defs.get(func.value), cst.FunctionDef):
            fn, bound = self.defs[func.value], False
        elif is_self_attribute(func) and func.attr.value in self.methods:
            fn, bound = self.methods[func.attr.value], True
        else:
            return None
        callee = self._summary(returned_callee, fn)
        if callee is None:
            return None
        if callee.startswith("self."):
            return cst.Attribute(value=func.value, attr=cst.Name(callee[5:])) if bound else None
        return argument(fn, call, callee, (), bound)

    def handed_on(self, expr: cst.BaseExpression) -> cst.BaseExpression:
        """`v` of `as_dict(v)["out"]`, `as_pair(v)[0]`, `Record(out=v).fields["out"]`; else `expr`."""
        for _ in range(8):
            inner = self._handed(expr, ())
            if inner is None:
                return expr
            expr = inner
        return expr

    def iterated(self, loop: cst.For) -> Optional[tuple]:
        """(the name, the expression it is) of `for key, value in as_dict(x).items():` (or `for value in
        as_dict(x).values():`) where every entry of the dict - one whose keys the code shows: a literal,
        or one a function of the file returns - hands on the same expression (`x`); else None."""
        it = loop.iter
        if type(it) is not cst.Call or it.args or type(it.func) is not cst.Attribute:
            return None
        target, method = loop.target, it.func.attr.value
        if method == "values" and type(target) is cst.Name:
            name = target
        elif method == "items" and type(target) is cst.Tuple and len(target.elements) == 2 \
                and type(target.elements[1].value) is cst.Name:
            name = target.elements[1].value
        else:
            return None
        base = self.handed_on(it.func.value)
        if type(base) is cst.Dict:
            keys = {string_value(e.key.value) if type(e) is cst.DictElement and type(e.key) is cst.SimpleString
                    else None for e in base.elements}
        elif type(base) is cst.Call and type(base.func) is cst.Name and type(self.defs.get(base.func.value)) is cst.FunctionDef:
            keys = self._summary(returned_keys, self.defs[base.func.value]) or {None}
        else:
            return None
        if not keys or None in keys:
            return None
        found = {self.handed_on(inner) if inner is not None else None for inner in (self._handed(base, (k,)) for k in keys)}
        return (name.value, found.pop()) if len(found) == 1 and None not in found else None

    def _summary(self, read, fn: cst.FunctionDef) -> dict:
        key = (read, fn)
        if key not in self.summaries:
            self.summaries[key] = read(fn)
        return self.summaries[key]

    def _handed(self, expr: cst.BaseExpression, path: tuple) -> Optional[cst.BaseExpression]:
        if isinstance(expr, cst.Subscript):
            key = constant_index(expr)
            return None if key is None else self._handed(expr.value, (key,) + path)
        if isinstance(expr, (cst.Dict, cst.Tuple, cst.List)):
            return literal_at(expr, path) if path else None
        if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Call) and isinstance(expr.value.func, cst.Name):
            cls = self.defs.get(expr.value.func.value)
            init = next((s for s in cls.body.body if isinstance(s, cst.FunctionDef) and s.name.value == "__init__"),
                        None) if isinstance(cls, cst.ClassDef) else None
            param = self._summary(kept_on_self, init).get(expr.attr.value) if init is not None else None
            return argument(init, expr.value, param, path, bound=True) if param is not None else None
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name):
            fn = self.defs.get(expr.func.value)
            if isinstance(fn, cst.FunctionDef):
                for at, param in self._summary(returned_params, fn).items():
                    if path[:len(at)] == at:
                        return argument(fn, expr, param, path[len(at):], bound=False)
        return None
