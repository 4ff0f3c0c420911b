"""What the engine knows about the expression at a position, in words (for hovers).

    "`feat` carries an autograd graph: from `model(x)` on line 12"
    "`y` shares storage with `x` (from `x.detach()` on line 30)"
"""

from __future__ import annotations

from typing import Optional

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from gradguard.engine.values import Grad, Kind, Value



# On `x.detach()` a hover is about `x`: what detach() is about to do to it.
RECEIVER_METHODS = frozenset(
    "clone detach data item numpy requires_grad_ backward tolist cpu to copy_ add_ mul_ zero_".split()
)


def _positions(analysis):
    cached = getattr(analysis, "_positions", None)
    if cached is None:
        cached = MetadataWrapper(analysis.flow.module, unsafe_skip_copy=True).resolve(PositionProvider)
        analysis._positions = cached
    return cached


def _by_line(analysis) -> dict:
    """Evaluated expressions by each line they span, built once per analysis."""
    index = getattr(analysis, "_by_line", None)
    if index is None:
        positions = _positions(analysis)
        index = {}
        for node in analysis.flow.values:
            r = positions.get(node)
            if r is not None:
                for line in range(r.start.line, r.end.line + 1):
                    index.setdefault(line, []).append(node)
        analysis._by_line = index
    return index


def node_at(analysis, line: int, column: int) -> Optional[cst.CSTNode]:
    """The smallest evaluated expression containing (line, column): 1-based line, 0-based code points."""
    if analysis.flow is None:
        return None
    positions = _positions(analysis)
    best, best_size = None, None
    for node in _by_line(analysis).get(line, ()):
        r = positions.get(node)
        if r is None or (r.start.line, r.start.column) > (line, column) or (line, column) >= (r.end.line, r.end.column):
            continue
        size = (r.end.line - r.start.line, r.end.column - r.start.column if r.end.line == r.start.line else r.end.column)
        if best is None or size < best_size:
            best, best_size = node, size
    return best


def describe_value(name: str, v: Value, line_of, code_for) -> Optional[str]:
    def at(ev):
        return f"{ev.text} on line {line_of(ev.node)}"

    parts = []
    if v.kind is Kind.MODULE:
        parts.append(f"`{name}` is an `nn.Module`" + (" (a loss function)" if v.loss else ""))
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
    positions = _positions(analysis)
    name = " ".join(flow.code_for(node).split())
    if len(name) > 40:
        name = name[:37] + "..."
    return describe_value(name, v, lambda n: positions[n].start.line, flow.code_for)
