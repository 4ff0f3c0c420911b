"""The analysis engine: source text and settings in, findings out.

It knows nothing of the CLI, LSP or jedi. One parse, one walk (see flow.py);
positions are resolved only when there is something to report.
"""

from __future__ import annotations

import ast
import logging
import re
from dataclasses import dataclass, field
from typing import Optional

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from gradguard.engine.flow import FlowAnalysis
from gradguard.engine.suppress import is_suppressed, skips_file, suppressions
from gradguard.findings import Edit, Finding, Fix, Position, Range, Related
from gradguard.rules import all_rules
from gradguard.rules.base import Report
from gradguard.settings import Settings

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ParseError:
    message: str
    line: int
    column: int  # 0-based


@dataclass
class Analysis:
    findings: list[Finding] = field(default_factory=list)
    error: Optional[ParseError] = None
    skipped: bool = False  # never mentions torch, or `# gradguard: skip-file`
    internal_errors: list[str] = field(default_factory=list)  # a rule that crashed (others still ran)
    flow: Optional[FlowAnalysis] = None


def mentions_torch(source: str) -> bool:
    return "torch" in source


def parse(source: str) -> cst.Module | ParseError:
    try:
        return cst.parse_module(source)
    except cst.ParserSyntaxError as e:
        return ParseError(e.message, e.raw_line, e.raw_column)
    except (RecursionError, MemoryError):
        return ParseError("too deeply nested to parse", 1, 0)
    except Exception as e:  # libcst raises a few other errors on odd input
        return ParseError(f"cannot parse: {e}", 1, 0)


class _Positions:
    """Positions of reported nodes. Resolving them for a whole module costs about
    as much as parsing it, so only the module-level statements that hold reported
    nodes are resolved, each on its own; `ast` (cheap) says where each one starts."""

    def __init__(self, module: cst.Module, source: str, top_of: dict):
        self.module, self.source, self.top_of = module, source, top_of
        self._full = None
        self._parts: dict = {}  # top-level statement -> (position map, line offset)
        self._first_lines = None

    @property
    def map(self):
        if self._full is None:
            self._full = MetadataWrapper(self.module, unsafe_skip_copy=True).resolve(PositionProvider)
        return self._full

    def _code_range(self, node: cst.CSTNode):
        if self._full is None:
            top = self.top_of.get(node)
            part = self._part(top) if top is not None else None
            if part is not None and node in part[0]:
                r, offset = part[0][node], part[1]
                return r.start.line + offset, r.start.column, r.end.line + offset, r.end.column
        r = self.map[node]
        return r.start.line, r.start.column, r.end.line, r.end.column

    def _part(self, top):
        if top not in self._parts:
            first = self._first_line(top)
            if first is None:
                self._parts[top] = None
            else:
                alone = self.module.with_changes(body=[top], header=[], footer=[])
                positions = MetadataWrapper(alone, unsafe_skip_copy=True).resolve(PositionProvider)
                self._parts[top] = (positions, first - positions[top].start.line)
        return self._parts[top]

    def _first_line(self, top):
        """The line a module-level statement starts on, from `ast`; None if ast and libcst disagree."""
        if self._first_lines is None:
            self._first_lines = {}
            try:
                tree = ast.parse(self.source)
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                return None
            linenos = [n.lineno for n in tree.body]
            i = 0
            for stmt in self.module.body:
                if i >= len(linenos):
                    self._first_lines = {}
                    return None
                self._first_lines[stmt] = linenos[i]
                i += len(stmt.body) if isinstance(stmt, cst.SimpleStatementLine) else 1
            if i != len(linenos):
                self._first_lines = {}
        return self._first_lines.get(top)

    def range(self, node: cst.CSTNode) -> Range:
        a, b, c, d = self._code_range(node)
        return Range(Position(a, b), Position(c, d))

    def line(self, node: cst.CSTNode) -> int:
        return self._code_range(node)[0]


def analyze(
    source: str, settings: Settings | None = None, *, keep_flow: bool = False, line_label=None
) -> Analysis:
    """Findings for `source`. `line_label(line)` renders a line in messages ("4 of cell 3"
    for a notebook's joined program); by default the line number itself."""
    settings = settings or Settings()
    if not mentions_torch(source) or skips_file(source):
        return Analysis(skipped=True)
    module = parse(source)
    if isinstance(module, ParseError):
        return Analysis(error=module)

    reports: list[Report] = []
    internal: list[str] = []
    hooks: dict = {}
    flow = FlowAnalysis(module, hooks, module.code_for_node)
    rules = [cls(flow, settings, reports) for cls in all_rules() if settings.enabled(cls.code)]
    for rule in rules:
        _register(rule, hooks, internal)
    flow.on_drop.append(lambda fns: reports.__setitem__(slice(None), [r for r in reports if r.function not in fns]))
    try:
        flow.run()
    except RecursionError:
        return Analysis(error=ParseError("too deeply nested to analyse", 1, 0))
    for rule in rules:
        _guarded(rule, rule.finish, internal)()
    positions = _Positions(module, source, flow.top_of) if reports else None
    findings = _resolve(module, source, reports, settings, positions, line_label) if reports else []
    analysis = Analysis(findings=findings, internal_errors=internal, flow=flow if keep_flow else None)
    if keep_flow and positions is not None and positions._full is not None:
        analysis._positions = positions._full  # describe_at reuses them rather than resolving again
    return analysis


def _register(rule, hooks: dict, internal: list) -> None:
    for name in rule.hook_names():
        fn = _guarded(rule, getattr(rule, name), internal)
        if name == "on_store":
            hooks.setdefault("store", []).append(fn)
            continue
        kind, _, node_name = name.partition("_")
        node_type = getattr(cst, node_name, None)
        if node_type is None:
            raise TypeError(f"{type(rule).__name__}.{name}: no libcst node {node_name}")
        hooks.setdefault(node_type if kind == "visit" else ("leave", node_type), []).append(fn)


def _guarded(rule, fn, internal: list):
    """A crashing rule is switched off and reported; the others keep running."""

    def call(*args):
        if getattr(rule, "_crashed", False):
            return
        try:
            fn(*args)
        except Exception as e:  # noqa: BLE001 - isolate rule bugs from the user
            rule._crashed = True
            log.exception("rule %s crashed", rule.code)
            internal.append(f"{rule.code} crashed: {type(e).__name__}: {e}")

    return call


@dataclass(frozen=True)
class Spot:
    """What a text-building replacement sees of the place it replaces."""

    indent: str  # the leading whitespace of the node's first line
    text: str  # the node's source text (its range)


def _edit(module: cst.Module, positions: _Positions, lines: list[str], node, new) -> Edit:
    """A replacement becomes an edit: `node` may be ("before", n) for an insertion;
    `new` a node, source text, or a function of the Spot (for re-indenting)."""
    if isinstance(node, tuple):
        start = positions.range(node[1]).start
        rng = Range(start, start)
    else:
        rng = positions.range(node)
    if isinstance(new, str):
        text = new
    elif callable(new):
        line = lines[rng.start.line - 1]
        body = "\n".join(lines[rng.start.line - 1 : rng.end.line])
        offset_end = len(body) - len(lines[rng.end.line - 1]) + rng.end.column
        spot = Spot(line[: len(line) - len(line.lstrip())], body[rng.start.column : offset_end])
        text = new(spot)
    else:
        text = module.code_for_node(new)
    return Edit(rng, text)


def _resolve(module, source: str, reports: list[Report], settings: Settings, positions, line_label) -> list[Finding]:
    line_of = positions.line if line_label is None else (lambda node: line_label(positions.line(node)))
    lines = re.split(r"\r\n|\r|\n", source)
    noqa = suppressions(source)
    findings = []
    for r in reports:
        rng = positions.range(r.node)
        if is_suppressed(r.rule.code, rng.start.line, noqa):
            continue
        message = r.message if isinstance(r.message, str) else r.message(line_of)
        fixes = tuple(
            Fix(f.title, f.safety, tuple(_edit(module, positions, lines, node, new) for node, new in f.replacements))
            for f in r.fixes
        )
        related = tuple(Related(positions.range(node), text) for node, text in r.related)
        findings.append(
            Finding(
                code=r.rule.code,
                name=r.rule.name,
                severity=settings.severity.get(r.rule.code, r.severity),
                message=message,
                range=rng,
                related=related,
                fixes=fixes,
                tags=r.tags,
            )
        )
    unique = {(f.code, f.range, f.message): f for f in findings}
    return sorted(unique.values(), key=lambda f: f.sort_key)


from gradguard.engine.describe import describe_at  # noqa: E402 - re-exported for front ends
