"""Containers with elements: lists, tuples, dicts (constant keys precisely), comprehensions, and
what their methods and iteration give."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from gradguard.engine.model import ClassInfo
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
            # is a list's append again)
            self._add_item(container.value, new if cv.kind is Kind.CONTAINER or key is None else v)

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
