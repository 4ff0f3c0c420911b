"""reverse: the file's top-level function and class definitions in reverse order.

The definitions trade places among the slots they occupy; other top-level statements (imports,
constants) stay where they are, and so does `observe()` (the oracle's, stripped before checking).
Not applicable where the new order would break the program when it is imported: a definition or
statement that reads, as the module runs, a name a definition now below it binds (a base class,
a decorator, a default value, a class attribute, module-level code calling a function).

The variant carries the mapping of its lines to the original's, so its findings can be compared
with the original's line by line.
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from transforms.subject import Outcome, Subject, walk


def variants(subject: Subject) -> list[Outcome]:
    body = list(subject.module.body)
    slots = [i for i, s in enumerate(body)
             if isinstance(s, (cst.FunctionDef, cst.ClassDef)) and s.name.value != "observe"]
    if len(slots) < 2:
        return [Outcome("", reason="fewer than two definitions")]
    order = list(range(len(body)))
    for slot, moved in zip(slots, reversed(slots)):
        order[slot] = moved
    new = [body[i] for i in order]
    if not _imports_cleanly(new):
        return [Outcome("", reason="a definition is needed above where it would go")]
    module = subject.module.with_changes(body=new)
    code = module.code
    wrapper = MetadataWrapper(cst.parse_module(code), unsafe_skip_copy=True)
    positions = wrapper.resolve(PositionProvider)
    origin = {}
    for now, j in zip(wrapper.module.body, order):
        (start, end), (was, _) = _lines(positions, now), _lines(subject.positions, body[j])
        for line in range(start, end + 1):
            origin[line] = line - start + was
    return [Outcome("", code=code, origin=origin)]


def _lines(positions, statement: cst.BaseStatement) -> tuple[int, int]:
    """The first and last line of a statement, its decorators included."""
    first = statement.decorators[0] if getattr(statement, "decorators", None) else statement
    return positions[first].start.line, positions[statement].end.line


def _imports_cleanly(statements: list[cst.BaseStatement]) -> bool:
    """Whether no statement reads, at import time, a top-level name bound only further down."""
    bound_by = {}
    for i, s in enumerate(statements):
        for name in _binds(s):
            bound_by.setdefault(name, i)
    for i, s in enumerate(statements):
        if any(bound_by.get(name, -1) > i for name in _import_time_reads(s)):
            return False
    return True


def _binds(s: cst.BaseStatement) -> set[str]:
    """The top-level names a statement binds."""
    if isinstance(s, (cst.FunctionDef, cst.ClassDef)):
        return {s.name.value}
    names = set()
    for n in walk(s):
        targets = []
        if isinstance(n, cst.Assign):
            targets = [t.target for t in n.targets]
        elif isinstance(n, (cst.AugAssign, cst.AnnAssign, cst.For)):
            targets = [n.target]
        elif isinstance(n, cst.AsName):
            targets = [n.name]
        elif isinstance(n, (cst.Import, cst.ImportFrom)) and not isinstance(n.names, cst.ImportStar):
            names |= {_dotted_root(a.asname.name if a.asname else a.name) for a in n.names}
        for t in targets:
            names |= {e.value for e in walk(t) if isinstance(e, cst.Name)}
    return names


def _dotted_root(name: cst.BaseExpression) -> str:
    while isinstance(name, cst.Attribute):
        name = name.value
    return name.value


def _import_time_reads(s: cst.CSTNode) -> set[str]:
    """Names the statement may read while the module runs: everything but function bodies (and
    lambdas'), attribute names and keywords."""
    names = set()
    stack = [s]
    while stack:
        n = stack.pop()
        if isinstance(n, cst.Name):
            names.add(n.value)
            continue
        children = n.children
        if isinstance(n, cst.FunctionDef):
            children = [*n.decorators, n.params, *([n.returns] if n.returns else [])]
        elif isinstance(n, cst.Lambda):
            children = [n.params]
        elif isinstance(n, cst.Param):
            children = [c for c in (n.default, n.annotation) if c is not None]
        elif isinstance(n, cst.Attribute):
            children = [n.value]
        elif isinstance(n, cst.Arg):
            children = [n.value]
        stack.extend(children)
    return names
