"""Small libcst builders the rules' fixes share."""

from __future__ import annotations

import libcst as cst

ATOMS = (cst.Name, cst.Attribute, cst.Call, cst.Subscript)


def parenthesized(node: cst.BaseExpression) -> cst.BaseExpression:
    """`node` made safe to put before `.method()`: `a + b` -> `(a + b)`."""
    if isinstance(node, ATOMS) or node.lpar:
        return node
    return node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def method_chain(node: cst.BaseExpression, *methods: str) -> cst.Call:
    """`node.m1().m2()`; keeps node's own text (comments, spacing) intact."""
    out: cst.BaseExpression = parenthesized(node)
    for m in methods:
        name, _, arg = m.partition("(")
        args = [cst.Arg(cst.parse_expression(arg.rstrip(")")))] if arg.rstrip(")") else []
        out = cst.Call(func=cst.Attribute(value=out, attr=cst.Name(name)), args=args)
    return out


def copy_methods(settings) -> tuple[str, str]:
    return ("clone", "detach") if settings.copy_order == "clone-detach" else ("detach", "clone")


def short(code: str, limit: int = 40) -> str:
    code = " ".join(code.split())
    return code if len(code) <= limit else code[: limit - 3] + "..."
