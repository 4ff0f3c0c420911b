"""The statement of a look-alike that corresponds to its rule's bug: what a transformation of the
look-alike works on, as a bug's transformations work on its labelled line.

A look-alike has no labelled line. Its anchor is the first statement (outside `observe()`, inside
a function) of the shape its rule is about - the store of GG101, the forward of GG103, the
`.detach()` of GG301 - and failing that the first store or forward, in a loop first.
"""

from __future__ import annotations

import re
from typing import Optional

import libcst as cst
from libcst.metadata import MetadataWrapper, ParentNodeProvider, PositionProvider

_BUILTINS = "min|max|len|range|int|float|bool|str|sum|tuple|list|dict|set|zip|enumerate|next|iter|abs|round|print|" \
            "isinstance|sorted|reversed|map|filter|any|all|super|type|getattr|hasattr|setattr"
_HELD_CALL = rf"(?<![\w.])(?:self\.\w+|(?!(?:{_BUILTINS})\()[a-z_]\w*)\("  # `model(x)`, `self.net(x)`
_FORWARD = rf"^[^=\n]*[^=!<>\n]=[^=][\s\S]*{_HELD_CALL}"  # an assignment of a call's result
_KEEP = r"\.(append|extend|insert|add|log|put|push|record)\(|\+=|-="
_STORE_AT = r"\.update\(|\w\[[^\]]*\]\s*=[^=]"
_INPLACE = (r"(?<![\w.])(?!torch\b|nn\b|F\b|np\b)\w+(?:\.\w+|\[[^\]]*\])*\.[A-Za-z]\w*[A-Za-z0-9]_\("  # x.add_(
            r"|[-+*/]=|\w\[[^\]]*\]\s*=[^=]")
_SELF_STATE = r"^\s*self\.\w+\s*=|self\.\w+\.[A-Za-z]\w*[A-Za-z0-9]_\("

# per rule: (pattern, where the statement must be: "loop", "forward", "method" (not __init__) or
# "any"); the first pair that matches some statement wins
SHAPES = {
    "GG101": [(_KEEP, "loop"), (_STORE_AT, "loop")],
    "GG102": [(_FORWARD, "loop")],
    "GG103": [(_FORWARD, "loop"), (_FORWARD, "any")],
    "GG104": [(_SELF_STATE, "forward"), (_SELF_STATE, "method")],
    "GG201": [(_INPLACE, "any"), (r"\.detach\(\)", "any")],
    "GG202": [(r"\.data\b", "any")],
    "GG203": [(_INPLACE, "any"), (r"\.data\b", "any")],
    "GG301": [(r"\.detach\(\)|\.data\b|\.item\(\)|\.numpy\(\)|torch\.(Tensor|tensor)\(", "any")],
    "GG302": [(r"\.backward\(|autograd\.grad\(", "any")],
    "GG303": [(r"requires_grad|Variable\(", "any")],
    "GG401": [(r"\.numpy\(\)|\bnp\.", "any")],
    "GG402": [(r"torch\.(as_)?tensor\(", "any")],
}
FALLBACK = [(_KEEP, "loop"), (_FORWARD, "loop"), (_FORWARD, "any"), (_HELD_CALL, "loop"), (_HELD_CALL, "any")]


def find(source: str, rule: str) -> Optional[int]:
    """The 1-based line of a look-alike's anchor statement, or None."""
    wrapper = MetadataWrapper(cst.parse_module(source))
    positions = wrapper.resolve(PositionProvider)
    parents = wrapper.resolve(ParentNodeProvider)
    candidates = []  # (statement text, where it is, line), in source order
    for node, where in sorted(positions.items(), key=lambda item: (item[1].start.line, item[1].start.column)):
        if not isinstance(node, cst.SimpleStatementLine):
            continue
        chain = []
        up = node
        while up in parents:
            up = parents[up]
            chain.append(up)
        functions = [a for a in chain if isinstance(a, cst.FunctionDef)]
        if not functions or functions[-1].name.value == "observe":
            continue
        places = {"any"}
        if any(isinstance(a, (cst.For, cst.While)) for a in chain[:chain.index(functions[0])]):
            places.add("loop")
        if functions[0].name.value == "forward":
            places.add("forward")
        if functions[0].name.value != "__init__" and isinstance(parents.get(parents.get(functions[0])), cst.ClassDef):
            places.add("method")
        bare = node.with_changes(leading_lines=(), trailing_whitespace=cst.TrailingWhitespace())
        text = wrapper.module.code_for_node(bare)
        candidates.append((text, places, where.start.line))
    for pattern, place in SHAPES.get(rule, []) + FALLBACK:
        for text, places, line in candidates:
            if place in places and re.search(pattern, text, re.M):
                return line
    return None
