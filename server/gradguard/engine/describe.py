"""What the engine knows about the expression at a position, in words (for hovers).

    "`feat` carries an autograd graph: from `model(x)` on line 12"
    "`y` shares storage with `x` (from `x.detach()` on line 30)"
"""

from __future__ import annotations

import re
from typing import Optional

import libcst as cst

from gradguard.engine.values import Grad, Kind, Value


def short(code: str, limit: int = 40) -> str:
    """`code` on one line, cut to `limit` characters at a token boundary (never mid-name)."""
    code = " ".join(code.split())
    if len(code) <= limit:
        return code
    head = code[: limit - 3]
    if (head[-1].isalnum() or head[-1] == "_") and (code[limit - 3].isalnum() or code[limit - 3] == "_"):
        cut = max(i for i, c in enumerate(head) if not (c.isalnum() or c == "_")) + 1 if re.search(r"\W", head) else 0
        if cut > limit // 3:
            head = head[:cut]
    return head.rstrip(" .") + "..."


# On `x.detach()` a hover is about `x`: what detach() is about to do to it.
RECEIVER_METHODS = frozenset(
    "clone detach data item numpy requires_grad_ backward tolist cpu to copy_ add_ mul_ zero_".split()
)


def node_at(analysis, line: int, column: int) -> Optional[cst.CSTNode]:
    """The smallest evaluated expression containing (line, column): 1-based line, 0-based code points."""
    if analysis.flow is None or analysis.positions is None:
        return None
    best, best_size = None, None
    for node, (l1, c1, l2, c2) in analysis.positions.on_line(line, analysis.flow.values):
        if (l1, c1) > (line, column) or (line, column) >= (l2, c2):
            continue
        size = (l2 - l1, c2 - c1 if l2 == l1 else c2)
        if best is None or size < best_size:
            best, best_size = node, size
    return best


def describe_value(name: str, v: Value, line_of, code_for) -> Optional[str]:
    def at(ev):
        if not ev.placed or ev.elsewhere and isinstance(ev.node, cst.Param):
            return ev.text  # what another file says (passes a parameter, how it calls a function): the text says where
        return f"{ev.text} on line {line_of(ev.node)}"

    parts = []
    if v.kind is Kind.MODULE:
        # Evidence from use says why: "`model` is an `nn.Module` (`model.eval()` on line 9)".
        parts.append(f"`{name}` is an `nn.Module`" + (" (a loss function)" if v.loss else "")
                     + (f" ({at(v.why)})" if v.why is not None else ""))
    elif v.kind is Kind.OBJECT and v.why is not None and v.cls is not None:
        # Evidence from use on a plain object: "`user` is a `User` (`user.test`: only `User`, ...)".
        parts.append(f"`{name}` is a `{v.cls.name}` ({at(v.why)})")
    elif v.grad is Grad.YES and v.leaf:
        parts.append(f"`{name}` requires grad" + (f" ({at(v.why)})" if v.why else "") + "; it is a leaf, with no graph behind it")
    elif v.grad is Grad.YES:
        parts.append(f"`{name}` carries an autograd graph" + (f": {at(v.why)}" if v.why else ""))
    elif v.grad is Grad.NO and v.kind in (Kind.TENSOR, Kind.CONTAINER):
        parts.append(f"`{name}` carries no graph" + (f" ({at(v.why)})" if v.why else ""))
    if v.alias is not None:
        made = " ".join(code_for(v.alias.node).split())
        parts.append(f"`{name}` shares storage with `{v.alias.name}` (from `{made}` on line {line_of(v.alias.node)})")
    elif v.fresh:
        parts.append(f"`{name}` has its own storage (a copy)")
    return "; ".join(parts) or None


def told_at(analysis, line: int, column: int) -> Optional[str]:
    """The state of the value at (line, column) when another file of the project says what it is
    (`self.logger`, which fit.py builds the unit with): a hover on any name, not only on a call."""
    node = node_at(analysis, line, column)
    if node is None or isinstance(node, cst.Call):
        return None
    v = analysis.flow.value(node)
    if v.why is None or not v.why.elsewhere:
        return None
    return describe_value(short(analysis.flow.code_for(node)), v, analysis.positions.line, analysis.flow.code_for)


def describe_at(analysis, line: int, column: int) -> Optional[str]:
    """The state of the value at (line, column); for `x.detach` it is the receiver `x`."""
    node = node_at(analysis, line, column)
    if node is None:
        return None
    flow = analysis.flow
    if isinstance(node, cst.Call):
        node = node.func
    if isinstance(node, cst.Attribute) and node.attr.value in RECEIVER_METHODS:
        node = node.value
    v = flow.value(node)
    name = short(flow.code_for(node))
    words = describe_value(name, v, analysis.positions.line, flow.code_for)
    fact = analysis.types.get(node)
    if fact is not None:
        typed = f"`{name}` is {fact.describe()}"
        words = f"{typed}; {words}" if words else typed
    return words
