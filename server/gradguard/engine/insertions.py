"""A fix never reads a name that is unbound where its code goes (every rule's fixes).

Each edit's new code is read back and compared with the code it replaces: a name it
reads that the old code did not must be bound on every path to the edit (see
bound.py). Where it may be unbound the fix becomes unsafe; where it is unbound the
first time the spot is reached (GG102's `h = h.detach()` at the top of a loop whose
body binds `h` only later), the fix would crash every run, and it is not offered.
"""

from __future__ import annotations

import dataclasses
import keyword
import re
from typing import Optional

import libcst as cst

from gradguard.engine.bound import Bindings, Status, binds, children, read_first, parse_code
from gradguard.findings import Edit, Finding, Safety

KEYWORDS = frozenset(keyword.kwlist)


def judged(module: cst.Module, lines: list[str], findings: list[Finding], checks: list) -> list[Finding]:
    """`findings` with each fix that may read an unbound name made unsafe, and each
    that always would, dropped. `checks`: (finding index, fix index, [(node, edit)]) as
    the engine placed each replacement of the rules' fixes."""
    asked = []  # (finding index, fix index, [(statement, new code, old code)], names the fix binds at module level)
    parents = _Parents(module)
    for i, k, placed in checks:
        reads, extra = [], set()
        for node, edit in placed:
            if not _words(edit.new_text) - _words(_old_text(edit, lines)):
                continue  # it reads no name the code it replaces does not (`x` -> `x.detach()`)
            code = _codes(node, edit, lines, parents)
            if code is None:
                continue
            new, old = code
            if not isinstance(new, cst.BaseExpression) and _top_level(module, node):
                extra |= binds(new)[0] - binds(old if isinstance(old, list) else [])[0]
            if read_first(new) - read_first(old):
                reads.append((node, new, old))
        if reads:
            asked.append((i, k, reads, frozenset(extra)))
    if not asked:
        return findings
    points = {id(parents.statement(node)) for _, _, reads, _ in asked for node, _, _ in reads}
    bindings = Bindings(module, points, walrus=any(":=" in line for line in lines))
    verdicts: dict[tuple[int, int], Status] = {}
    for i, k, reads, extra in asked:
        worst = Status.BOUND
        for node, new, old in reads:
            unbound = bindings.unbound(parents.statement(node), new, old, extra)
            worst = max([worst, *unbound.values()])
        verdicts[(i, k)] = worst
    out = []
    for i, f in enumerate(findings):
        fixes = []
        for k, fix in enumerate(f.fixes):
            status = verdicts.get((i, k), Status.BOUND)
            if status is Status.NEVER:
                continue
            fixes.append(dataclasses.replace(fix, safety=Safety.UNSAFE) if status is Status.MAYBE else fix)
        out.append(f if len(fixes) == len(f.fixes) and all(a is b for a, b in zip(fixes, f.fixes)) else
                   dataclasses.replace(f, fixes=tuple(fixes)))
    return out


def _codes(node, edit: Edit, lines: list[str], parents: "_Parents") -> Optional[tuple]:
    """(new code, old code) of an edit: statements where it replaces or inserts
    statements, else an expression; None where the new code cannot be read on its own."""
    statement = isinstance(node, tuple) or isinstance(node, (cst.BaseStatement, cst.BaseSmallStatement))
    start = edit.range.start
    indent = lines[start.line - 1][: start.column]
    if statement and indent.strip():
        return None  # after `;` or a `:` on the same line: not a statement of its own
    new = parse_code(edit.new_text, indent, statement)
    if new is None:
        return None
    if not isinstance(node, tuple):
        return new, node if isinstance(node, cst.BaseExpression) else [node]
    if node[0] == "span":  # consecutive statements of one block
        body = parents.block(node[1])
        return new, body[body.index(node[1]) : body.index(node[2]) + 1]
    return new, []  # ("before", n): an insertion


def _old_text(edit: Edit, lines: list[str]) -> str:
    start, end = edit.range.start, edit.range.end
    text = "\n".join(lines[start.line - 1 : end.line])
    return text[start.column : len(text) - len(lines[end.line - 1]) + end.column]


_WORD = re.compile(r"(?<![\w.])[^\W\d]\w*")


def _words(text: str) -> set:
    """Every name `text` may read (more: keywords, words in strings); attributes are not names."""
    return set(_WORD.findall(text)) - KEYWORDS


def _top_level(module: cst.Module, node) -> bool:
    target = node[1] if isinstance(node, tuple) else node
    return any(stmt is target for stmt in module.body)


class _Parents:
    """The statement holding a node (the spot an edit's code runs at); a decorator's is its
    `def`, evaluated in the enclosing scope before the function exists."""

    def __init__(self, module: cst.Module):
        self.module = module
        self._parent: Optional[dict] = None

    def statement(self, node) -> cst.CSTNode:
        if isinstance(node, tuple):  # ("before", n) / ("span", first, last)
            node = node[1]
        while not isinstance(node, cst.BaseStatement):
            if self._parent is None:
                self._parent = {}
                self._index(self.module)
            parent = self._parent.get(id(node))
            if parent is None:
                break
            node = parent
        return node

    def block(self, stmt: cst.CSTNode) -> list:
        """The statements of the block (an indented block, the module) holding `stmt`."""
        if self._parent is None:
            self._parent = {}
            self._index(self.module)
        return list(self._parent[id(stmt)].body)

    def _index(self, root) -> None:
        stack = [root]
        while stack:
            node = stack.pop()
            for child in children(node):
                self._parent[id(child)] = node
                stack.append(child)
