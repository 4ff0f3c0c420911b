"""What several transformations do alike: replace nodes and insert statements by identity, add a
helper function (a method where it reads `self`), and tell a model call from a library call."""

from __future__ import annotations

from typing import Optional, Sequence

import libcst as cst
from libcst.metadata import Assignment

from transforms.subject import CALL, Subject, walk


class Edit(cst.CSTTransformer):
    """Replace nodes (by identity; a replacement may be a function of the node as already edited
    inside) and insert statements before/after statements."""

    def __init__(self, replace: Optional[dict] = None, before: Optional[dict] = None, after: Optional[dict] = None):
        super().__init__()
        self.replace = {id(k): v for k, v in (replace or {}).items()}
        self.before = {id(k): v for k, v in (before or {}).items()}
        self.after = {id(k): v for k, v in (after or {}).items()}

    def on_leave(self, original, updated):
        key = id(original)
        if key in self.replace:
            new = self.replace[key]
            updated = new(updated) if callable(new) else new
        if key in self.before or key in self.after:
            return cst.FlattenSentinel([*self.before.get(key, []), updated, *self.after.get(key, [])])
        return updated


def apply(subject: Subject, replace=None, before=None, after=None) -> str:
    return subject.module.visit(Edit(replace, before, after)).code


def statement(subject: Subject, code: str) -> cst.BaseStatement:
    return cst.parse_statement(code, config=subject.module.config_for_parsing)


def expression(subject: Subject, code: str) -> cst.BaseExpression:
    return cst.parse_expression(code, config=subject.module.config_for_parsing)


def template(subject: Subject, code: str, **holes: cst.CSTNode) -> cst.CSTNode:
    """An expression, or a statement where `code` ends with a newline, parsed from `code`; each
    Name of `holes` in it replaced by its node (`template(s, "f(V)\n", V=value)`)."""
    node = statement(subject, code) if code.endswith("\n") else expression(subject, code)
    for n in list(walk(node)):
        if isinstance(n, cst.Name) and n.value in holes:
            node = node.deep_replace(n, holes[n.value])
    return node


def code_of(subject: Subject, node: cst.CSTNode) -> str:
    return subject.module.code_for_node(node)


def grouped(subject: Subject, node: cst.BaseExpression) -> str:
    """A node's code, in parentheses where it is a bare tuple."""
    text = code_of(subject, node)
    return f"({text})" if isinstance(node, cst.Tuple) and not node.lpar else text


def call_comment() -> cst.TrailingWhitespace:
    """The end of a line that stands for the anchor where it was: marked CALL."""
    return cst.TrailingWhitespace(whitespace=cst.SimpleWhitespace("  "), comment=cst.Comment(CALL))


def call_marked(line: cst.SimpleStatementLine) -> cst.SimpleStatementLine:
    return line.with_changes(trailing_whitespace=call_comment())


def blank_lines(n: int) -> list[cst.EmptyLine]:
    return [cst.EmptyLine(indent=False) for _ in range(n)]


# ---------------------------------------------------------------------- helper functions
class Helper:
    """Where a helper made from code of `function` goes, and how it is called: a method of the
    class of `function` when that code reads `self` (a method's first parameter), else a function
    of the module, defined before or after the top-level statement holding `function`."""

    def __init__(self, subject: Subject, function: cst.FunctionDef, reads: Sequence[str], base: str):
        self.subject = subject
        self.function = function
        owner = subject.class_of(function)
        first = function.params.params[0].name.value if function.params.params else None
        self.method = owner is not None and first is not None and first in reads and not _decorated_static(function)
        self.name = subject.fresh(base)
        self.params = [r for r in reads if not (self.method and r == first)]
        self.self_name = first if self.method else None
        self.owner = owner

    def signature(self) -> str:
        params = ([self.self_name] if self.method else []) + self.params
        return f"def {self.name}({', '.join(params)}):"

    def call(self) -> str:
        callee = f"{self.self_name}.{self.name}" if self.method else self.name
        return f"{callee}({', '.join(self.params)})"

    def placed(self, definition: cst.FunctionDef, after: bool) -> tuple[dict, dict, dict]:
        """(replace, before, after) for Edit that put `definition` next to its caller; defined
        before, it takes over the caller's leading comments and blank lines."""
        anchor = self.function if self.method else self.subject.top_level(self.function)
        gap = blank_lines(1 if self.method else 2)
        if after:
            return {}, {}, {anchor: [definition.with_changes(leading_lines=gap)]}
        return ({anchor: lambda node: node.with_changes(leading_lines=gap)},
                {anchor: [definition.with_changes(leading_lines=anchor.leading_lines)]}, {})


def _decorated_static(function: cst.FunctionDef) -> bool:
    return any(isinstance(d.decorator, cst.Name) and d.decorator.value in ("staticmethod", "classmethod")
               for d in function.decorators)


# ---------------------------------------------------------------------- model calls
def model_calls(subject: Subject, node: cst.CSTNode) -> list[cst.Call]:
    """Calls under `node` of a callable the file holds rather than defines or imports: a parameter
    or variable (`model(x)`), an attribute set on `self` (`self.net(x)`), `self(x)` - in source order."""
    stored = {e.attr.value for n in subject.nodes if isinstance(n, (cst.Assign, cst.AnnAssign))
              for t in (n.targets if isinstance(n, cst.Assign) else [n]) for e in [t.target]
              if isinstance(e, cst.Attribute) and isinstance(e.value, cst.Name) and e.value.value == "self"}
    return [n for n in walk(node) if isinstance(n, cst.Call) and _held(subject, n.func, stored)]


def _held(subject: Subject, func: cst.BaseExpression, stored: set[str]) -> bool:
    if isinstance(func, cst.Attribute):
        return isinstance(func.value, cst.Name) and func.value.value == "self" and func.attr.value in stored
    if not isinstance(func, cst.Name):
        return False
    if func.value == "self":
        return True
    scope = subject.scopes.get(func)
    if scope is None:
        return False
    referents = [a for access in scope.accesses[func] if access.node is func for a in access.referents]
    return bool(referents) and all(type(a) is Assignment and not isinstance(a.node, (cst.FunctionDef, cst.ClassDef))
                                   for a in referents)
