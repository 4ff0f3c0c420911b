"""A corpus program made ready to transform: its anchor statement marked, parsed with the metadata
the transformations read, and the helpers they share.

The anchor is the statement a transformation works on: a bug's labelled line, or for a look-alike
the statement of its rule's shape (anchor.py). A unique comment marks it before transforming;
libcst keeps a trailing comment with its statement wherever a transformation moves it, so after
transforming the marker says where the labelled line went (`finish`). A second marker, CALL, sits
on a statement that now stands for the anchor where it was (the call of an extracted helper, the
loop that consumes a generator): a finding there counts as well.
"""

from __future__ import annotations

import ast
import builtins
import functools
import io
import keyword
import re
import tokenize
from dataclasses import dataclass
from typing import Iterable, Iterator, Optional

import libcst as cst
from libcst.metadata import MetadataWrapper, ParentNodeProvider, PositionProvider, ScopeProvider

from corpus import oracle

from transforms import anchor as anchor_of

MARK = "# variant-anchor"
CALL = "# variant-call"


class NotApplicable(Exception):
    """The transformation does not apply to this program (the message says why)."""


@dataclass(frozen=True)
class Outcome:
    """One variant a transformation made of a program, or why it made none."""

    kind: str  # the variant's kind within its transformation ("dict", "mul-one"), "" when it has one
    code: Optional[str] = None  # the transformed source, markers still in it (see `finish`)
    reason: Optional[str] = None  # why not applicable, when code is None
    origin: Optional[dict] = None  # a line of the variant -> its line in the original, where known
    modules: Optional[dict] = None  # other modules of the variant's package: name -> source (markers in it)


class Subject:
    """A program's source with its anchor marked, parsed, and its metadata."""

    def __init__(self, program: oracle.Program):
        self.program = program
        line = program.line if program.line is not None else anchor_of.find(program.source, program.cls)
        if line is None:
            raise NotApplicable("no statement of the rule's shape")
        self.line = line
        self.wrapper = MetadataWrapper(cst.parse_module(mark(program.source, line, MARK)))
        self.module = self.wrapper.module
        self.positions = self.wrapper.resolve(PositionProvider)
        self.parents = self.wrapper.resolve(ParentNodeProvider)
        self.scopes = self.wrapper.resolve(ScopeProvider)
        self.anchor = self._statement_at(line)

    def _statement_at(self, line: int) -> cst.BaseStatement:
        """The innermost statement on `line`: a simple statement line spanning it, or a compound
        statement whose header starts there."""
        found = None
        for node, where in self.positions.items():
            if isinstance(node, cst.SimpleStatementLine) and where.start.line <= line <= where.end.line:
                return node
            if isinstance(node, cst.BaseCompoundStatement) and where.start.line == line:
                found = node if found is None or self.positions[found].start.column < where.start.column else found
        if found is None:
            raise NotApplicable(f"no statement on line {line}")
        return found

    # ------------------------------------------------------------------ where things are
    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        while node in self.parents:
            node = self.parents[node]
            yield node

    def function_of(self, node: cst.CSTNode) -> Optional[cst.FunctionDef]:
        """The innermost function holding `node`."""
        return next((a for a in self.ancestors(node) if isinstance(a, cst.FunctionDef)), None)

    def top_level(self, node: cst.CSTNode) -> cst.BaseStatement:
        """The statement of the module's body that holds `node`."""
        chain = [node, *self.ancestors(node)]
        return next(n for n in chain if self.parents.get(n) is self.module)

    def class_of(self, function: cst.FunctionDef) -> Optional[cst.ClassDef]:
        """The class `function` is a method of (defined directly in its body), if any."""
        block = self.parents.get(function)
        owner = self.parents.get(block) if block is not None else None
        return owner if isinstance(owner, cst.ClassDef) else None

    def loops_around(self, node: cst.CSTNode, within: cst.CSTNode) -> list[cst.CSTNode]:
        """The for/while loops holding `node` inside `within`, innermost first."""
        loops = []
        for a in self.ancestors(node):
            if a is within:
                break
            if isinstance(a, (cst.For, cst.While)):
                loops.append(a)
        return loops

    # ------------------------------------------------------------------ names
    def local_reads(self, node: cst.CSTNode, function: cst.FunctionDef) -> list[str]:
        """Names read under `node` that are bound in `function` or a function around it (its
        parameters and locals, closures' cells), in source order, once each."""
        return _unique(name for name, bound in self._reads(node)
                       if bound is not None and self._local_to(bound, function))

    def local_binds(self, node: cst.CSTNode, function: cst.FunctionDef) -> list[str]:
        """Names `node` binds in the scope of `function` (assignment targets, walrus), in order."""
        scope = self.scopes.get(function.body)
        names = []
        for n in walk(node):
            if isinstance(n, cst.Name) and self.scopes.get(n) is scope and n.value in scope.assignments:
                if any(a.node is n for a in scope.assignments[n.value]):
                    names.append(n.value)
        return _unique(names)

    def _reads(self, node: cst.CSTNode) -> Iterator[tuple[str, Optional[object]]]:
        """(name, the scope it is bound in) for every Name read under `node` (an augmented
        assignment's target is read too)."""
        for n in walk(node):
            if isinstance(n, cst.AugAssign) and isinstance(n.target, cst.Name):
                scope = self.scopes.get(n.target)
                yield n.target.value, scope if scope is not None and n.target.value in scope.assignments else None
            if not isinstance(n, cst.Name):
                continue
            scope = self.scopes.get(n)
            if scope is None:
                continue
            for access in scope.accesses[n]:
                if access.node is n:
                    bound = {a.scope for a in access.referents if not isinstance(a, cst.metadata.BuiltinAssignment)}
                    yield n.value, next(iter(bound), None)

    def _local_to(self, scope, function: cst.FunctionDef) -> bool:
        own = self.scopes.get(function.body)
        while own is not None and not isinstance(own, cst.metadata.GlobalScope):
            if scope is own:
                return True
            own = own.parent
        return False

    @functools.cached_property
    def nodes(self) -> list[cst.CSTNode]:
        """Every node of the module, in source order."""
        return list(walk(self.module))

    def used_names(self) -> set[str]:
        return self._names | set(dir(builtins))

    @functools.cached_property
    def _names(self) -> set[str]:
        return {n.value for n in self.nodes if isinstance(n, cst.Name)}

    def fresh(self, base: str) -> str:
        """`base`, or `base2`, `base3`... : the first not used in the file."""
        used = self.used_names()
        name, i = base, 1
        while name in used or keyword.iskeyword(name):
            i += 1
            name = f"{base}{i}"
        return name


def walk(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Every node under `node` (itself included), in source order."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(n.children))


def _unique(names: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(names))


# ---------------------------------------------------------------------- markers
def mark(source: str, line: int, marker: str) -> str:
    """`source` with `marker` as a comment at the end of `line` (raises NotApplicable where a comment
    cannot end that line: inside a string, after a backslash)."""
    lines = source.splitlines(keepends=True)
    if not 1 <= line <= len(lines) or not lines[line - 1].strip():
        raise NotApplicable(f"line {line} holds no code")
    text = lines[line - 1]
    body = text.rstrip("\r\n")
    lines[line - 1] = f"{body}  {marker}{text[len(body):]}"
    marked = "".join(lines)
    try:
        comments = [t for t in tokenize.generate_tokens(io.StringIO(marked).readline)
                    if t.type == tokenize.COMMENT and t.start[0] == line]
    except (tokenize.TokenError, SyntaxError):
        comments = []
    if not any(t.string.endswith(marker) for t in comments) or not _parses(marked):
        raise NotApplicable(f"line {line} cannot end with a comment")
    return marked


def _parses(source: str) -> bool:
    try:
        ast.parse(source)
    except SyntaxError:
        return False
    return True


def finish_package(code: str, modules: dict, program: oracle.Program) -> tuple[str, dict, str, frozenset[int]]:
    """`finish` for a program split into modules: (the program, {module: source}, the module the
    anchor went to - "" for the program itself -, the lines where a finding counts there)."""
    files = {"": code, **modules}
    holding = [name for name, text in files.items() if MARK in text]
    if len(holding) != 1:
        raise ValueError(f"the anchor marker is in {len(holding)} files")
    out, lines = {}, frozenset()
    for name, text in files.items():
        if name == holding[0]:
            out[name], lines = finish(text, program)
        else:
            out[name] = text.replace(f"  {CALL}", "").replace(CALL, "")
    return out.pop(""), out, holding[0], lines


def finish(code: str, program: oracle.Program) -> tuple[str, frozenset[int]]:
    """Markers removed from transformed `code`; the lines where a finding counts for the label
    (the anchor's line, and the lines marked CALL). Raises ValueError when the anchor marker is
    not there exactly once (the transformation lost the labelled statement). A bug's header gets
    the anchor's new line (`# label: GG101 31`), so a written variant is a corpus program again."""
    lines = code.splitlines(keepends=True)
    anchors = [i for i, text in enumerate(lines, 1) if MARK in text]
    if len(anchors) != 1:
        raise ValueError(f"the anchor marker is there {len(anchors)} times")
    found = set(anchors)
    for i, text in enumerate(lines, 1):
        for marker in (MARK, CALL):
            if marker in text:
                text = text.replace(f"  {marker}", "").replace(marker, "")
                found.add(i)
        lines[i - 1] = text
    out = "".join(lines)
    if program.line is not None:
        out = re.sub(r"^(# label: \S+) \d+$", lambda m: f"{m.group(1)} {anchors[0]}", out, count=1, flags=re.M)
    return out, frozenset(found)
