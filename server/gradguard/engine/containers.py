"""Containers with elements: lists, tuples, dicts (constant keys precisely), comprehensions, and
what their methods and iteration give."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from gradguard.engine import handing
from gradguard.engine.model import ClassInfo, FunctionInfo
from gradguard.engine.syntax import string_value
from gradguard.engine.values import (
    NUMBER,
    UNKNOWN,
    Grad,
    Kind,
    Value,
    merge,
)


class Containers:
    """Building, filling and reading containers."""

    def _add_item(self, container: cst.BaseExpression, v: Value, key: Optional[str] = None) -> None:
        """`c.append(v)`, `c[k] = v`: c now holds v (and v's graph)."""
        cv = self.values.get(container, UNKNOWN)
        token = self.token_of(container)
        if key is not None:  # d["loss"] = v says nothing about d["acc"]
            keyed = tuple((k, x) for k, x in cv.keyed if k != key) + ((key, v),)
            item = cv.item
            origins = cv.origins | v.origins | ({token} if token is not None else set())
            grad = Grad.YES if v.has_graph or cv.grad is Grad.YES else cv.grad
            new = Value(kind=Kind.CONTAINER, grad=grad, why=v.why if v.has_graph else cv.why,
                        origins=frozenset(origins), item=item, keyed=keyed)
            if cv.kind is Kind.CONTAINER and cv.closed:
                # every entry known: `out["loss"] = out["loss"].detach()` replaces the one graph it held, and
                # the dict holds what its entries hold now
                new = self._container([x for _, x in keyed]).but(keyed=keyed, closed=True)
                if token is not None:
                    new = new.but(origins=new.origins | {token})
        else:
            item = v if cv.item is None else merge(cv.item, v) if cv.item.grad is not Grad.NO or v.grad is Grad.NO else v
            if v.has_graph:  # [x] + a graph appended: a list of tensors, one with a graph at least
                kind = v.kind if item.kind is Kind.UNKNOWN else item.kind
                item = item.but(kind=kind, grad=Grad.YES, why=v.why,
                                origins=(cv.item.origins if cv.item else frozenset()) | v.origins, leaf=False)
            origins = item.origins | ({token} if token is not None else set())
            new = Value(kind=Kind.CONTAINER, grad=item.grad, why=item.why, origins=frozenset(origins), item=item,
                        keyed=cv.keyed, leaf=item.leaf)
        if isinstance(container, cst.Name):
            self._rebind_mutated(container.value, new)
        elif isinstance(container, cst.Attribute):
            obj = self.values.get(container.value, UNKNOWN)
            if isinstance(obj.cls, ClassInfo):
                obj.cls.attrs[container.attr.value] = new
            self._mutate_own_attribute(container, new)
        elif isinstance(container, cst.Subscript):
            # `outs[k].append(v)`: outs now holds lists of v (not v itself: a later `outs[k].append`
            # is a list's append again); `results["train_loss"].append(v)` on a dict with that constant
            # key: that entry is now the list holding v (read back as `results["train_loss"]`)
            outer = self.values.get(container.value, UNKNOWN)
            at = handing.constant_index(container)
            entry = isinstance(at, str) and outer.kind is Kind.CONTAINER and any(k == at for k, _ in outer.keyed)
            self._add_item(container.value, new if cv.kind is Kind.CONTAINER or key is None else v,
                           at if entry and (cv.kind is Kind.CONTAINER or key is None) else None)

    def _e_sequence(self, node) -> Value:
        elems = []
        for e in node.elements:
            elems.append(self._eval(e.value) if isinstance(e, cst.Element) else UNKNOWN)
            if isinstance(e, cst.StarredElement):
                self._eval(e.value)
        return self._container(elems, tuple(elems) if isinstance(node, cst.Tuple) else None)

    def _container(self, elems: list, elements=None) -> Value:
        item = None
        if elems:
            item = elems[0]
            for e in elems[1:]:
                item = merge(item, e)
            graph = [e for e in elems if e.has_graph]
            if graph:
                item = item.but(grad=Grad.YES, why=graph[0].why, leaf=False,
                                origins=frozenset().union(*(e.origins for e in graph)))
        # A list of parameters requires grad but holds no graph: `leaf` carries over.
        return Value(kind=Kind.CONTAINER, grad=item.grad if item else Grad.NO, item=item, elements=elements,
                     why=item.why if item else None, origins=item.origins if item else frozenset(),
                     leaf=bool(item and item.leaf))

    def _e_dict(self, node: cst.Dict) -> Value:
        elems, keyed = [], []
        for e in node.elements:
            if isinstance(e, cst.DictElement):
                self._eval(e.key)
                v = self._eval(e.value)
                elems.append(v)
                if isinstance(e.key, cst.SimpleString):
                    keyed.append((string_value(e.key.value), v))
            else:
                self._eval(e.value)
        return self._container(elems).but(keyed=tuple(keyed), closed=len(keyed) == len(node.elements))

    def _e_comprehension(self, node) -> Value:
        scope = self.frame.scope
        saved = dict(scope.env)
        try:
            comp = node.for_in
            while comp is not None:
                it = self._eval(comp.iter)
                self._assign_quiet(comp.target, self._element_of(it, comp.iter))
                for cond in comp.ifs:
                    self._eval(cond.test)
                comp = comp.inner_for_in
            if isinstance(node, cst.DictComp):
                self._eval(node.key)
                elt = self._eval(node.value)
            else:
                elt = self._eval(node.elt)
        finally:
            scope.env.clear()
            scope.env.update(saved)
        return self._container([elt])

    def _assign_quiet(self, target, v: Value) -> None:
        if isinstance(target, cst.Name):
            self._bind(target, v)
        elif isinstance(target, (cst.Tuple, cst.List)):
            elems = [e.value for e in target.elements]
            parts = list(v.elements) if v.elements is not None and len(v.elements) == len(elems) else [UNKNOWN] * len(elems)
            for e, part in zip(elems, parts):
                self._assign_quiet(e, part)

    def _element_of(self, it: Value, node: cst.BaseExpression) -> Value:
        """What a `for` loop over `it` binds. An element of a container carries the
        container's identity: a loss built from `for v in values` reads `values`."""
        if it.kind is Kind.CONTAINER:
            item = it.item or UNKNOWN
            if it.origins - item.origins and item.grad is not Grad.NO:
                item = item.but(origins=item.origins | it.origins)
            return item
        if it.kind is Kind.TENSOR:  # rows of a tensor, or the items of a list a model returned
            return it.but(alias=None, fresh=False, scalar=False, elements=None)
        if it.kind is Kind.PARAMS:
            return it.item
        if it.kind is Kind.MODULE and it.parameterized and it.cls is None:
            # `for layer in self.layers` over an nn.ModuleList / Sequential: its submodules.
            return Value(kind=Kind.MODULE, grad=Grad.NO, why=it.why)
        return UNKNOWN

    def _container_method(self, node: cst.Call, c: Value, name: str, args: list) -> Value:
        func = node.func
        if name in ("append", "add", "appendleft", "insert") and args:
            a, v = args[-1]
            if v.has_graph:
                self._store(func.value, a.value, v, "append")
            self._add_item(func.value, v)
            return NUMBER
        if name == "extend" and args:
            a, v = args[0]
            # a list extended with a tensor holds its rows: views that carry its graph
            item = v.item if v.kind is Kind.CONTAINER else self._element_of(v, a.value) if v.kind is Kind.TENSOR else UNKNOWN
            if item is not None and item.has_graph:
                self._store(func.value, a.value, v, "extend")
            if item is not None:
                self._add_item(func.value, item)
            return NUMBER
        if name in ("pop", "get", "popleft", "setdefault"):
            return c.item or UNKNOWN
        if name in ("values", "copy"):
            return c
        if name == "items":
            return Value(kind=Kind.CONTAINER, grad=c.grad, item=Value(kind=Kind.CONTAINER, elements=(UNKNOWN, c.item or UNKNOWN)))
        return UNKNOWN

    # ------------------------------------------------------------ values handed on unchanged
    def handed_on(self, expr: cst.BaseExpression) -> cst.BaseExpression:
        """The expression whose very value `expr` is: `v` of `as_dict(v)["out"]`, `as_pair(v)[0]`,
        `Record(out=v).fields["out"]` or `identity(v)` - a function of the file that returns its
        argument as it is (alone, or in a tuple or dict at a constant index or key), a class of the
        file whose `__init__` keeps it on `self` - and `x` of `{"k": x}["k"]`. `expr` itself when
        nothing hands a value on."""
        for _ in range(8):  # (a chain of helpers handing on to each other)
            inner = self._handed(expr, ())
            if inner is None:
                return expr
            expr = inner
        return expr

    def _handed(self, expr: cst.BaseExpression, path: tuple) -> Optional[cst.BaseExpression]:
        """What `expr`, read at `path` (keys and indices, outermost first), is the value of."""
        t = type(expr)  # (exact types: see function_facts)
        if t is cst.Subscript:
            key = handing.constant_index(expr)
            return None if key is None else self._handed(expr.value, (key,) + path)
        if t is cst.Dict or t is cst.Tuple or t is cst.List:
            return handing.literal_at(expr, path) if path else None
        if t is cst.Attribute and type(expr.value) is cst.Call:
            call = expr.value
            made = self.values.get(call.func, UNKNOWN)
            init = made.cls.methods.get("__init__") if made.kind is Kind.CLASS and isinstance(made.cls, ClassInfo) else None
            param = self._syntax_summary(handing.kept_on_self, init.node).get(expr.attr.value) if init is not None else None
            return handing.argument(init.node, call, param, path, bound=True) if param is not None else None
        if t is cst.Name and not path:
            return self._iterated(expr)
        if t is cst.Call:
            f = self.values.get(expr.func, UNKNOWN)
            if f.kind is not Kind.FUNCTION or not isinstance(f.cls, FunctionInfo) or f.callees:
                return None
            for at, param in self._syntax_summary(handing.returned_params, f.cls.node).items():
                if path[:len(at)] == at:
                    return handing.argument(f.cls.node, expr, param, path[len(at):], bound=_bound_method(f))
        return None

    def _handed_value(self, node: cst.BaseExpression, v: Value) -> Value:
        """The value of an expression that hands on another's (see handed_on) is that one's as this
        very call gave it, not what the helper's summary joined over all its calls (`as_pair(x)[0]` is
        `x`, with the graph `x` has here)."""
        if isinstance(node, cst.Call):
            f = self.values.get(node.func, UNKNOWN)
            if f.kind is not Kind.FUNCTION or not isinstance(f.cls, FunctionInfo) or f.callees:
                return v
            for at, param in self._syntax_summary(handing.returned_params, f.cls.node).items():
                arg = handing.argument(f.cls.node, node, param, (), bound=_bound_method(f))
                if arg is not None and arg in self.values:
                    v = self._replaced(v, at, self.values[arg])
            return v
        handed = self.handed_on(node)
        return v if handed is node else self.values.get(handed, v)

    def _replaced(self, v: Value, path: tuple, new: Value) -> Value:
        """`v` with its item at `path` (indices of a tuple, keys of a dict) replaced by `new`."""
        if not path:
            return new
        key, rest = path[0], path[1:]
        if isinstance(key, int) and v.elements is not None and -len(v.elements) <= key < len(v.elements):
            elements = list(v.elements)
            elements[key] = self._replaced(elements[key], rest, new)
            return self._container(elements, tuple(elements))
        if isinstance(key, str) and v.kind is Kind.CONTAINER and any(k == key for k, _ in v.keyed):
            keyed = tuple((k, self._replaced(x, rest, new) if k == key else x) for k, x in v.keyed)
            return self._container([x for _, x in keyed]).but(keyed=keyed, closed=v.closed)
        return v

    def _iterated(self, name: cst.Name) -> Optional[cst.BaseExpression]:
        """`value` bound by `for key, value in d.items():` (or `for value in d.values():`), where every
        entry of `d` - a dict of known keys - hands on the same expression (`as_dict(x)`: `x`)."""
        b = self.lookup(name.value)
        loop = b.loops[-1] if b is not None and b.loops else None
        if not isinstance(loop, cst.For) or not isinstance(loop.iter, cst.Call) or loop.iter.args \
                or not isinstance(loop.iter.func, cst.Attribute):
            return None
        target, method = loop.target, loop.iter.func.attr.value
        if method == "values":
            bound_here = loop.iter is b.node  # (a name target is bound from the iterable)
        else:
            bound_here = method == "items" and isinstance(target, cst.Tuple) and len(target.elements) == 2 \
                and target.elements[1].value is b.node
        if not bound_here:
            return None
        base = loop.iter.func.value
        c = self.values.get(base, UNKNOWN)
        if c.kind is not Kind.CONTAINER or not c.closed or not c.keyed:
            return None
        found = {self._handed(base, (key,)) for key, _ in c.keyed}
        return found.pop() if len(found) == 1 else None

    def _syntax_summary(self, read, fn: cst.FunctionDef) -> dict:
        """`read(fn)`, once per function of this parse."""
        cache = self.__dict__.setdefault("_syntax_summaries", {})
        key = (read, fn)
        if key not in cache:
            cache[key] = read(fn)
        return cache[key]



def _bound_method(f: Value) -> bool:
    """A method read from an object (`self.keep(x)`): its first parameter is the object."""
    return f.elements is not None and not any(
        isinstance(d.decorator, cst.Name) and d.decorator.value == "staticmethod" for d in f.cls.node.decorators)
