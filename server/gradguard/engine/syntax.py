"""Small readers of libcst syntax the engine and rules share: literals, keywords, arguments."""

from __future__ import annotations

import ast
from functools import lru_cache
from typing import Optional

import libcst as cst


@lru_cache(maxsize=4096)
def string_value(code: str):
    """A string literal's value (ast.literal_eval leaves cyclic closures behind on every call)."""
    return ast.literal_eval(code)


# A method's own `self.x` as a place key ("self.x": no name can hold a dot).
SELF_PREFIX = "self."


def is_self_attribute(node: cst.BaseExpression) -> bool:
    """`self.x` (a method's attribute of its own object)."""
    return isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self"


def place_key(node: cst.BaseExpression) -> Optional[str]:
    """A place a scope binds and reads back: a name (`state`), or a method's own `self.x` ("self.x")."""
    if isinstance(node, cst.Name):
        return node.value
    if is_self_attribute(node):
        return SELF_PREFIX + node.attr.value
    return None


def literal_key(node: cst.Subscript) -> Optional[str]:
    """`d["loss"]` -> "loss"; None for any other index."""
    if len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
        value = node.slice[0].slice.value
        if isinstance(value, cst.SimpleString):
            return string_value(value.value)
    return None


def reduces_to_scalar(call: cst.Call) -> bool:
    """A loss call (or constructor) without `reduction="none"`."""
    red = keyword(call, "reduction")
    return not (red is not None and isinstance(red.value, cst.SimpleString) and "none" in red.value.value)


def literal_bool(node: cst.BaseExpression) -> Optional[bool]:
    if isinstance(node, cst.Name) and node.value in ("True", "False"):
        return node.value == "True"
    return None


def keyword(call: cst.Call, name: str) -> Optional[cst.Arg]:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg
    return None


def positional(call: cst.Call) -> list:
    return [a for a in call.args if a.keyword is None and not a.star]


