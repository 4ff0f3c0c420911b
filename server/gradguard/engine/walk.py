"""A read-only walk of a libcst tree, for the engine's whole-scope scans (evidence.py).

`CSTVisitor.visit` rebuilds every node it passes (it is the transformer walk with the
results thrown away): a scan of a scope cost as much as a tenth of parsing it. This walk
only reads the nodes' fields, calling the same `visit_<Node>` / `leave_<Node>` methods
(a `visit_` returning False skips the children), in source order for everything the
scans look at (a call's callee before its arguments, targets before values).
"""

from __future__ import annotations

import dataclasses

import libcst as cst

# Fields that never hold code worth visiting: whitespace, parentheses, commas, comments.
_NOISE = ("whitespace", "lpar", "rpar", "comma", "semicolon", "leading_lines", "lines_after_decorators",
          "header", "footer", "asynchronous", "star", "colon", "equal", "dot", "operator")
_FIELDS: dict = {}
_IS_NODE: dict = {}  # type -> is it a libcst node (isinstance on CSTNode, an ABC, is slow)


def is_node(value) -> bool:
    t = type(value)
    found = _IS_NODE.get(t)
    if found is None:
        found = _IS_NODE[t] = issubclass(t, cst.CSTNode)
    return found


def _fields(cls) -> tuple[str, ...]:
    found = _FIELDS.get(cls)
    if found is None:
        found = _FIELDS[cls] = tuple(
            f.name for f in dataclasses.fields(cls) if not f.name.startswith(_NOISE)
        )
    return found


def walk(node: cst.CSTNode, visitor) -> None:
    """`node.visit(visitor)` for a visitor that only reads. (No closures: a recursive one is a
    reference cycle, and the engine must leave no cyclic garbage behind.)"""
    _go(node, visitor, {})


def _handler(visitor, handlers: dict, kind: str, cls):
    key = (kind, cls)
    if key not in handlers:
        handlers[key] = getattr(visitor, f"{kind}_{cls.__name__}", None)
    return handlers[key]


def _go(n: cst.CSTNode, visitor, handlers: dict) -> None:
    cls = type(n)
    enter = _handler(visitor, handlers, "visit", cls)
    if enter is None or enter(n) is not False:
        for name in _fields(cls):
            value = getattr(n, name)
            if type(value) in (list, tuple):
                for item in value:
                    if is_node(item):
                        _go(item, visitor, handlers)
            elif is_node(value):
                _go(value, visitor, handlers)
    leave = _handler(visitor, handlers, "leave", cls)
    if leave is not None:
        leave(n)


def descendants(node: cst.CSTNode, stop: tuple = ()) -> list:
    """`node` and every node under it (fields that never hold code left out); nodes of the types
    `stop` (concrete node classes, matched exactly) are listed but not entered."""
    # (the engine's most called scan: the lookups are bound to locals, the type tests exact)
    found, stack = [], [node]
    pop, push, fields_of, nodes = stack.pop, stack.append, _FIELDS, _IS_NODE
    while stack:
        n = pop()
        found.append(n)
        t = type(n)
        if stop and n is not node and t in stop:
            continue
        names = fields_of.get(t)
        if names is None:
            names = _fields(t)
        for name in names:
            value = getattr(n, name)
            vt = type(value)
            if vt is list or vt is tuple:
                for item in value:
                    known = nodes.get(type(item))
                    if known or known is None and is_node(item):
                        push(item)
            else:
                known = nodes.get(vt)
                if known or known is None and is_node(value):
                    push(value)
    return found
