"""Attributes of `self` that live like locals of one method (a scratch attribute).

    class Evaluator:
        def run(self, data):
            for qa, target in data:
                self.out = self.model(qa)            # written, then read, by this method only
                total += self.criterion(self.out, target).item()

`self.out` is written before it is read in `run()`, and nothing else reads it - no other method of
the class, no code outside it (`evaluator.out`): each call makes it afresh and what the previous
iteration left there is overwritten, never read. A value kept there outlives the loop iteration
no more than a local does (rules.md, "Semantics every rule shares": a store leaks when its place
outlives the step). Read from the syntax once per class.

An attribute the method writes and never reads back (`self.last_loss = loss`, a module's
`self.activity = y` in `forward()`) is no scratch: nothing in the file reads it, so it is there
for readers elsewhere - a record of the step, which keeps what it holds past the call.
"""

from __future__ import annotations

import libcst as cst

from gradguard.engine.evidence import dotted
from gradguard.engine.syntax import is_self_attribute
from gradguard.engine.walk import walk


class _Accesses(cst.CSTVisitor):
    """`self.<attr>` reads and writes of one method, in source order (nested functions included:
    a closure reading the attribute reads it too)."""

    def __init__(self):
        self.first_write: set = set()  # attrs whose first access is a plain assignment to them
        self.seen: set = set()
        self.read: set = set()  # attrs read somewhere in the method (not only written)
        self._targets: set = set()  # ids of `self.x` nodes that are assignment targets

    def visit_Assign(self, node: cst.Assign) -> bool:
        walk(node.value, self)  # the value is read before the targets are written
        for t in node.targets:
            for n in _own(t.target):
                self._targets.add(id(n))
            walk(t.target, self)
        return False

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if is_self_attribute(node):
            attr = node.attr.value
            if id(node) not in self._targets:
                self.read.add(attr)
            if attr not in self.seen:
                self.seen.add(attr)
                if id(node) in self._targets:
                    self.first_write.add(attr)


def _own(target: cst.BaseExpression) -> list:
    """The `self.x` a target writes as a whole (`self.x = v`, `self.a, self.b = ...`), not `self.x[k] = v`."""
    if isinstance(target, cst.Attribute):
        return [target] if is_self_attribute(target) else []
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for e in target.elements for n in _own(e.value.value if isinstance(e.value, cst.StarredElement) else e.value)]
    return []


class _ForeignReads(cst.CSTVisitor):
    """Attribute names read on anything but `self` (`evaluator.out`, `other.out`) anywhere in the module."""

    def __init__(self):
        self.names: set = set()

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if not is_self_attribute(node):
            self.names.add(node.attr.value)


def _closed_bases(cls: cst.ClassDef, classes: dict) -> bool:
    """Are all the methods that may read `self.x` in this file: no base, `object`, `nn.Module` (whose own
    code reads no attribute a subclass invents), or classes of this file with the same property?"""
    for arg in cls.bases:
        base = arg.value
        if isinstance(base, cst.Name) and base.value == "object":
            continue
        if isinstance(base, cst.Name) and base.value in classes and classes[base.value] is not cls:
            if _closed_bases(classes[base.value], classes):
                continue
            return False
        if dotted(base) in ("nn.Module", "torch.nn.Module", "Module"):
            continue
        return False
    return True


def scratch_attributes(module: cst.Module) -> dict:
    """A method's FunctionDef -> the attributes of `self` that live like its locals (see the module
    docstring), for the classes of the module's top level."""
    classes = {s.name.value: s for s in module.body if isinstance(s, cst.ClassDef)}
    foreign = _ForeignReads()
    walk(module, foreign)
    methods = []  # (class, FunctionDef, accesses)
    for cls in classes.values():
        for stmt in cls.body.body:
            if isinstance(stmt, cst.FunctionDef):
                a = _Accesses()
                walk(stmt.body, a)
                methods.append((cls, stmt, a))
    out = {}
    for cls, fn, a in methods:
        if not _closed_bases(cls, classes):
            continue
        others = set().union(*(b.seen for _, f, b in methods if f is not fn))  # (any class: a subclass reads it too)
        found = frozenset((a.first_write & a.read) - others - foreign.names)
        if found:
            out[fn] = found
    return out
