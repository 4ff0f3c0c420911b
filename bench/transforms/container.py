"""container: the anchor statement's value routed through a container the file builds.

The value is the statement's operand: what a store call keeps (`history.append(v)`: `v`), the
receiver of an in-place or argument-less method call (`loss.backward()`: `loss`), the argument of
a library call (`torch.tensor(x)`: `x`), the receiver of a method chain (`preds.numpy()`: `preds`),
or else the whole assigned or returned value. Four variants:

- `dict`:   `as_dict(v)["out"]`, where `def as_dict(value): return {"out": value}`
- `tuple`:  `as_pair(v)[0]`, where `def as_pair(value): return value, None`
- `kwargs`: `Record(out=v).fields["out"]`, where `class Record` keeps its `**fields` on `self`
- `items`:  the statement inside `for key, value in as_dict(v).items():`, reading `value` (the
            `for` line, where the value now is, counts for the label too)

The helpers are defined just before the top-level statement that holds the anchor.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from transforms.edits import apply, blank_lines, call_comment, statement, template
from transforms.subject import NotApplicable, Outcome, Subject

KINDS = ("dict", "tuple", "kwargs", "items")


def variants(subject: Subject) -> list[Outcome]:
    s = subject.anchor
    if not isinstance(s, cst.SimpleStatementLine):
        return [Outcome("", reason="the statement is compound")]
    value = operand(subject, s)
    if value is None:
        return [Outcome("", reason="no value to route")]
    return [_variant(subject, s, value, kind) for kind in KINDS]


def _variant(subject: Subject, s: cst.SimpleStatementLine, value: cst.BaseExpression, kind: str) -> Outcome:
    top = subject.top_level(s)
    if kind == "tuple":
        name = subject.fresh("as_pair")
        helper = f"def {name}(value):\n    return value, None\n"
        routed = f"{name}(VALUE)[0]"
    elif kind == "kwargs":
        name = subject.fresh("Record")
        helper = f"class {name}:\n    def __init__(self, **fields):\n        self.fields = fields\n"
        routed = f'{name}(out=VALUE).fields["out"]'
    else:
        name = subject.fresh("as_dict")
        helper = f'def {name}(value):\n    return {{"out": value}}\n'
        routed = f'{name}(VALUE)["out"]'
    definition = statement(subject, helper).with_changes(leading_lines=top.leading_lines)
    replace = {top: lambda node: node.with_changes(leading_lines=blank_lines(2))}
    if kind != "items":
        replace[value] = _parenthesised(value, template(subject, routed, VALUE=_bare(value)))
        return Outcome(kind, code=apply(subject, replace, before={top: [definition]}))
    key, item = subject.fresh("key"), subject.fresh("value")
    loop = template(subject, f"for {key}, {item} in {name}(VALUE).items():\n    pass\n", VALUE=_bare(value))
    inner = s.deep_replace(value, cst.Name(item)).with_changes(leading_lines=())
    loop = loop.with_changes(leading_lines=s.leading_lines,
                             body=loop.body.with_changes(header=call_comment(), body=[inner]))
    replace[s] = loop
    return Outcome(kind, code=apply(subject, replace, before={top: [definition]}))


def _parenthesised(old: cst.BaseExpression, new: cst.BaseExpression) -> cst.BaseExpression:
    """`new` keeps the parentheses `old` had."""
    return new.with_changes(lpar=old.lpar, rpar=old.rpar) if old.lpar else new


def _bare(value: cst.BaseExpression) -> cst.BaseExpression:
    """A value as an argument: without parentheses of its own, but a tuple in parentheses."""
    if isinstance(value, cst.Tuple):
        return value if value.lpar else value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return value.with_changes(lpar=(), rpar=())


def operand(subject: Subject, s: cst.SimpleStatementLine) -> Optional[cst.BaseExpression]:
    """The value a statement stores, hands on or works on (see the module's docstring)."""
    small = s.body[0]
    if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
        call = small.value
        positional = [a.value for a in call.args if a.keyword is None and not a.star]
        receiver = call.func.value if isinstance(call.func, cst.Attribute) else None
        if receiver is not None and not _imported(subject, receiver):
            method = call.func.attr.value
            if not positional or (method.endswith("_") and not method.endswith("__")):
                return receiver
        return positional[0] if positional else None
    if isinstance(small, (cst.Assign, cst.AugAssign, cst.AnnAssign, cst.Return)) and small.value is not None:
        value = small.value
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute):
            positional = [a.value for a in value.args if a.keyword is None and not a.star]
            if _imported(subject, value.func.value):
                return positional[0] if positional else value
            return _chain_root(value)
        return value
    raise NotApplicable("the statement neither stores nor assigns a value")


def _imported(subject: Subject, node: cst.BaseExpression) -> bool:
    """`torch.nn.functional`, `np`: an expression rooted at an imported name."""
    while isinstance(node, cst.Attribute):
        node = node.value
    if not isinstance(node, cst.Name):
        return False
    scope = subject.scopes.get(node)
    if scope is None:
        return False
    referents = [a for access in scope.accesses[node] if access.node is node for a in access.referents]
    return any(isinstance(a, cst.metadata.ImportAssignment) for a in referents)


def _chain_root(node: cst.BaseExpression) -> cst.BaseExpression:
    """`preds` of `preds.detach().cpu().numpy()`: the receiver a method chain starts from (a call of
    an attribute of `self`, `self.model(x)`, is where it starts)."""
    while isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and not _is_self(node.func.value):
        node = node.func.value
    return node


def _is_self(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "self"
