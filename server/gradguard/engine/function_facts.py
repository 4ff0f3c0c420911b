"""What a function's code mentions, read once per function by one pass over its nodes.

The engine used to ask these by printing the function (libcst codegen, the slowest thing it
did after parsing) and matching the text: that also matched comments and strings. Only code
counts here.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from gradguard.engine.walk import descendants

# Calls that put something into their receiver: `param.append(x)`, `param.update(d)`.
FILLING_METHODS = frozenset({"append", "extend", "insert", "appendleft", "update", "add", "setdefault"})


@dataclass(frozen=True)
class FunctionFacts:
    body_names: frozenset  # identifiers the body reads, calls or names an attribute by
    all_names: frozenset  # the same over the whole definition (decorators, defaults too)
    filled: frozenset  # names the body fills: `n.append(...)`, `n[k] = v`


def function_facts(node: cst.FunctionDef) -> FunctionFacts:
    body_names: set = set()
    filled: set = set()
    # (exact types: these node classes have no subclasses, and an isinstance that fails on one of
    # libcst's ABC-derived classes goes through ABCMeta.__instancecheck__, a tenth of this scan)
    for n in descendants(node.body):
        t = type(n)
        if t is cst.Name:
            body_names.add(n.value)
        elif t is cst.Call:
            f = n.func
            if type(f) is cst.Attribute and type(f.value) is cst.Name and f.attr.value in FILLING_METHODS:
                filled.add(f.value.value)
        elif t is cst.AssignTarget:
            target = n.target
            if type(target) is cst.Subscript and type(target.value) is cst.Name:
                filled.add(target.value.value)
    head = {n.value for part in (*node.decorators, node.params) for n in descendants(part) if type(n) is cst.Name}
    return FunctionFacts(frozenset(body_names), frozenset(body_names | head), frozenset(filled))
