"""Where a name starts, without libcst's position pass: for the type layer's questions.

jedi is asked about names at (line, column). Resolving those through
`Positions` costs a position pass over every module-level statement that holds
a question - about as much as parsing the file, for a few dozen names. A name's
place is found here instead from the text: the k-th `Name` with that identifier
in a statement's tree (walked in source order) is the k-th occurrence of the
identifier in the statement's text outside strings and comments. Where the two
counts differ (an f-string, a soft keyword) the caller falls back to `Positions`.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Iterable, Optional

import libcst as cst

from gradguard.engine.parsing import Parsed
from gradguard.engine.walk import is_node

# Fields in source order where a node's dataclass order differs (checked against
# libcst's PositionProvider on 800 real files; tests/test_locate.py).
_SOURCE_ORDER = {
    cst.Arg: ("keyword", "value"),
    cst.ClassDef: ("decorators", "name", "type_parameters", "bases", "keywords", "body"),
    cst.IfExp: ("body", "test", "orelse"),
    cst.FunctionDef: ("decorators", "name", "type_parameters", "params", "returns", "body"),
    cst.ExceptHandler: ("type", "name", "body"),
    cst.ExceptStarHandler: ("type", "name", "body"),
    cst.TypeAlias: ("name", "type_parameters", "value"),
    cst.Parameters: ("posonly_params", "params", "star_arg", "kwonly_params", "star_kwarg"),
}
# Fields that never hold a Name (engine/walk.py's list would skip `*args` too: `star_arg`).
_NO_NAMES = frozenset(
    "asynchronous colon comma dot equal footer header leading_lines lines_after_decorators lpar rpar operator "
    "semicolon star posonly_ind".split()
)
_FIELDS: dict = {}


def _fields(cls) -> tuple[str, ...]:
    found = _FIELDS.get(cls)
    if found is None:
        found = _FIELDS[cls] = _SOURCE_ORDER.get(cls) or tuple(
            f.name for f in dataclasses.fields(cls) if f.name not in _NO_NAMES and not f.name.startswith("whitespace")
        )
    return found

# Comments, strings (any prefix, triple-quoted first) and identifiers, in one pass.
_TOKENS = re.compile(
    r"""\#[^\r\n]*"""
    r"""|(?:[rRbBuUfF]{1,2})?(?:'''(?:\\.|[^\\])*?'''|\"\"\"(?:\\.|[^\\])*?\"\"\"|'(?:\\.|[^\\'\r\n])*'|"(?:\\.|[^\\"\r\n])*")"""
    r"""|(?P<name>[^\W\d]\w*)""",
    re.S,
)


def names_in_order(node: cst.CSTNode, wanted: set[str], out: dict[str, list]) -> None:
    """Every `Name` under `node` whose identifier is in `wanted`, per identifier, in source order."""
    stack = [node]  # (a pre-order walk without recursion: it runs over whole classes)
    while stack:
        n = stack.pop()
        cls = type(n)
        if cls is cst.Name:
            if n.value in wanted:
                out.setdefault(n.value, []).append(n)
            continue
        children = []
        for f in _fields(cls):
            value = getattr(n, f)
            t = type(value)
            if t is list or t is tuple:
                children.extend(item for item in value if is_node(item))
            elif is_node(value):  # (a type cache: a failed isinstance on CSTNode, an ABC, is slow)
                children.append(value)
        children.reverse()
        stack.extend(children)


_BREAK = re.compile(r"\r\n?|\n")
_LINES = re.compile(r"[^\r\n]*(?:\r\n?|\n)|[^\r\n]+\Z")  # as CPython and jedi count lines (not str.splitlines)


def occurrences(text: str, first_line: int, wanted: set[str]) -> dict[str, list[tuple[int, int]]]:
    """(1-based line, code-point column) of each identifier in `wanted` outside strings and comments."""
    found: dict[str, list[tuple[int, int]]] = {}
    line, line_start, scanned = first_line, 0, 0
    for m in _TOKENS.finditer(text):
        name = m.group("name")
        if name is None or name not in wanted:
            continue
        start = m.start()
        crossed = list(_BREAK.finditer(text, scanned, start))
        if crossed:
            line += len(crossed)
            line_start = crossed[-1].end()
        scanned = start
        found.setdefault(name, []).append((line, start - line_start))
    return found


def name_starts(parsed: Parsed, top_of: dict, names: Iterable[cst.Name]) -> dict[cst.Name, tuple[int, int]]:
    """Where each of `names` starts, for those this can place (the rest: ask `Positions`)."""
    if not parsed.laid_out:
        return {}
    by_top: dict = {}
    for name in names:
        top = top_of.get(name)
        if top is not None:
            by_top.setdefault(top, set()).add(name)
    lines: Optional[list[str]] = None
    found: dict[cst.Name, tuple[int, int]] = {}
    breaks = dict(zip(parsed.module.body, parsed.breaks))
    for top, wanted_nodes in by_top.items():
        first = parsed.first_line(top)
        if first is None or top not in breaks:
            continue
        if lines is None:
            lines = _LINES.findall(parsed.source)
        text = "".join(lines[first - 1 : first - 1 + breaks[top]])
        wanted = {n.value for n in wanted_nodes}
        in_tree: dict[str, list] = {}
        names_in_order(top, wanted, in_tree)
        in_text = occurrences(text, first, wanted)
        for ident, nodes in in_tree.items():
            places = in_text.get(ident, [])
            if len(places) != len(nodes):
                continue  # an f-string or a soft keyword: Positions will place these
            for node, place in zip(nodes, places):
                if node in wanted_nodes:
                    found[node] = place
    return found
