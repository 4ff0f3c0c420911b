"""Small libcst builders the rules' fixes share."""

from __future__ import annotations

import libcst as cst

from gradguard.engine.describe import short  # noqa: F401 - the rules take it from here

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


def evidence_note(why, reported, line_of, code_of) -> str:
    """" (from `model(x)` on line 9)" - the evidence for a value, unless it is the
    reported expression itself (a value is not its own evidence)."""
    if why is None or why.node is reported or code_of(why.node) == code_of(reported):
        return ""
    return f" ({why.text} on line {line_of(why.node)})" if why.placed else f" ({why.text})"


def torch_name(flow) -> str | None:
    """The name `torch` is imported under at module level (`import torch as T` -> "T")."""
    module_scope = flow.frame.scope
    while module_scope.parent is not None:
        module_scope = module_scope.parent
    for name, b in module_scope.env.items():
        if b.value.qualname == "torch":
            return name
    return None


def import_torch(flow) -> list:
    """Replacements adding `import torch` before the module's first statement, if it lacks one."""
    if torch_name(flow) is not None:
        return []
    body = flow.module.body
    first = 0
    # after a module docstring and `from __future__` imports
    while first < len(body) and _is_docstring_or_future(body[first]):
        first += 1
    if first >= len(body):
        return []
    return [(("before", body[first]), "import torch\n")]


def _is_docstring_or_future(stmt) -> bool:
    if not isinstance(stmt, cst.SimpleStatementLine):
        return False
    small = stmt.body[0]
    if isinstance(small, cst.Expr) and isinstance(small.value, (cst.SimpleString, cst.ConcatenatedString)):
        return True
    return isinstance(small, cst.ImportFrom) and small.module is not None and getattr(small.module, "value", "") == "__future__"


def wrap_in_no_grad(torch: str, step: str = "    "):
    """A text builder: the statement(s) at a Spot, inside `with torch.no_grad():`.
    Returns None for code it cannot re-indent safely (multi-line strings)."""

    def build(spot) -> str:
        first, *rest = spot.text.split("\n")
        # Later lines carry their own full indentation: one more step each (blank lines stay blank).
        body = first + "".join("\n" + (step + line if line.strip() else line) for line in rest)
        return f"with {torch}.no_grad():\n{spot.indent}{step}{body}"

    return build


def has_multiline_string(code: str) -> bool:
    return '"""' in code or "'''" in code
