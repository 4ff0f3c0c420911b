"""The analysis engine: source text and settings in, findings out.

It knows nothing of the CLI, LSP or jedi. One parse, one walk (see flow.py);
positions are resolved only when there is something to report.

Where each kind of knowledge lives:
- values.py      the abstract values (grad state, storage alias, container elements)
- model.py       the records the walk builds: scopes and bindings, classes, functions, stores, backwards
- flow.py        the walk over statements, and the API rules read
- summaries.py   the file's functions: the order and context each is analysed in, calls into them
- places.py      assignments, and stores that outlive a loop iteration
- containers.py  lists, tuples, dicts and what their methods and iteration give
- expressions.py names, attributes, subscripts, operators
- calls.py       torch functions, tensor and module methods, builtins, backward
- gradmodes.py   no_grad / inference_mode / set_grad_enabled
- from_use.py    what a name is from how the code uses it (evidence.py holds the scans)
- knowledge.py   facts about torch's API, as data
"""

from __future__ import annotations

import dataclasses
import logging
import re
from dataclasses import dataclass, field
from functools import partial
from typing import Optional

import libcst as cst

from gradguard.engine import insertions
from gradguard.engine import parsing
from gradguard.engine.flow import FlowAnalysis
from gradguard.engine.locate import name_starts
from gradguard.engine.outside import At
from gradguard.engine.parsing import TOO_DEEP, ParseError, Parser, parse, with_room
from gradguard.engine.positions import Positions, RangeCache
from gradguard.engine.suppress import (
    directives,
    is_suppressed,
    skips_file,
    suppressions,
)
from gradguard.findings import Edit, Finding, Fix, Position, Range, Related, Severity
from gradguard.rules import all_rules
from gradguard.rules.base import Report
from gradguard.rules.gg901_unused_noqa import UnusedNoqa, unused_directives
from gradguard.settings import Settings

log = logging.getLogger(__name__)


@dataclass
class Analysis:
    findings: list[Finding] = field(default_factory=list)
    error: Optional[ParseError] = None
    skipped: bool = False  # never mentions torch, or `# gradguard: skip-file`
    internal_errors: list[str] = field(default_factory=list)  # a rule that crashed (others still ran)
    flow: Optional[FlowAnalysis] = None
    positions: Optional[Positions] = None  # kept with the flow, for hovers
    reparsed: int = 0  # module-level statements parsed for this analysis (the rest were re-used)
    module: Optional[cst.Module] = None  # the parse (facts for the type layer are keyed by its nodes)
    type_queries: list = field(default_factory=list)  # (line, column, node): see analyze(ask_types=)
    types: dict = field(default_factory=dict)  # node -> TypeFact the type layer gave this analysis
    calls: list = field(default_factory=list)  # outside.Call: what it calls of other files (see analyze(export_calls=))
    summaries: dict = field(default_factory=dict)  # symbol -> outside.Keeps: what other files' calls of it keep
    asked: frozenset = frozenset()  # (symbol, question): what the analysis read of settings.outside (with export_calls)

    def dispose(self) -> None:
        """Let the kept model go (see FlowAnalysis.dispose); findings stay."""
        if self.flow is not None:
            self.flow.dispose()
        self.flow = self.positions = None


# A file this large is generated or data, not training code: parsing it would take
# a minute and gigabytes (libcst: ~1 KB of objects per source byte).
MAX_SOURCE_CHARS = 2_000_000


def mentions_torch(source: str) -> bool:
    return "torch" in source


class Incremental:
    """What a front end keeps per document between analyses of its versions:
    the statements an edit left alone are not parsed again, nor their ranges found again."""

    def __init__(self):
        self.parser = Parser()
        self.ranges = RangeCache()


def analyze(
    source: str,
    settings: Settings | None = None,
    *,
    keep_flow: bool = False,
    line_label=None,
    incremental: Optional[Incremental] = None,
    facts: Optional[dict] = None,
    ask_types: bool = False,
    export_calls: bool = False,
    summarize: bool = False,
    cells: tuple = (),
) -> Analysis:
    """Findings for `source`. `line_label(line)` renders a line in messages ("4 of cell 3"
    for a notebook's joined program); by default the line number itself. `incremental`:
    the document's state from its earlier versions (see `Incremental`). `facts`: what the
    type layer knows about names of this very parse (node -> Value, see gradguard.typelayer);
    `ask_types`: list the names it should be asked about in `Analysis.type_queries`.
    `export_calls`: list the calls it makes of other files' functions in `Analysis.calls` (what
    those files say of this one's comes in `settings.outside`); `summarize`: also a file that never
    mentions torch, for its summaries (a meter class in utils.py). `cells`: for a notebook's joined
    program, the 1-based line each code cell starts on (a fix cannot wrap code of two cells)."""
    settings = settings or Settings()
    if (not mentions_torch(source) and not summarize and not settings.torch_code) or skips_file(source):
        return Analysis(skipped=True)
    if len(source) > MAX_SOURCE_CHARS:
        size = f"{len(source) / 1e6:.1f} million characters; the limit is {MAX_SOURCE_CHARS / 1e6:.0f} million"
        return Analysis(error=ParseError(f"too large to analyse ({size})", 1, 0, syntax=False))
    own_lines = None
    # (a summary of the file alone: without them; with the type layer, which answers about this very
    # parse and finds the other modules' classes itself: without them)
    if settings.neighbours and not (summarize or ask_types or facts):
        lines = re.split(r"\r\n|\r|\n", source)
        own_lines, alone, label = len(lines) - (lines[-1] == ""), source, line_label
        source, line_label = _with_neighbours(source, own_lines, settings.neighbours, line_label)
        # (an editor's document keeps its incremental parse: the joined classes are module-level
        # statements after its own, re-used like any other that an edit left alone)
    parsed = incremental.parser.parse(source) if incremental is not None else parse(source)
    if isinstance(parsed, ParseError):
        if own_lines is not None:  # a neighbour's code did not join: the file alone
            return analyze(alone, dataclasses.replace(settings, neighbours=()), keep_flow=keep_flow, line_label=label,
                           facts=facts, ask_types=ask_types, cells=cells)
        return Analysis(error=parsed)
    # walking, printing and locating nodes all recurse in Python: a valid but deep
    # tree (a 1,000-term sum) is walked again with room
    joined = len(settings.neighbours) if own_lines is not None else 0
    walk = partial(_walk, parsed, settings, keep_flow, line_label, incremental, facts, ask_types, export_calls or summarize,
                   joined, cells)
    analysis = with_room(walk, Analysis(error=TOO_DEEP))
    return analysis if own_lines is None else _own(analysis, own_lines)


def _with_neighbours(source: str, own_lines: int, neighbours: tuple, line_label):
    """The file's text with the code of its neighbours' classes after it (Settings.neighbours), and a
    line label that names a line of theirs by its own file ("12 of models/net.py")."""
    parts = [source if source.endswith(("\n", "\r")) else source + "\n"]
    starts = []  # (first joined line of a part, its file, its first line there)
    line = own_lines + 1
    for where, first, code in neighbours:
        starts.append((line, where, first))
        parts.append(code.rstrip("\n") + "\n")
        line += code.rstrip("\n").count("\n") + 1
    joined = "".join(parts)
    own = parsing.KNOWN_STARTS.get(source)
    if own is not None:  # each neighbour is one statement: where CPython's parser would start them
        parsing.KNOWN_STARTS.put(joined, own + tuple(s[0] for s in starts))

    def label(n: int):
        if n <= own_lines:
            return line_label(n) if line_label is not None else n
        start, where, first = next(s for s in reversed(starts) if s[0] <= n)
        return f"{first + n - start} of {where}"

    return joined, label


def _own(analysis: Analysis, own_lines: int) -> Analysis:
    """What an analysis with neighbours says of the file itself: findings, related places and fixes
    in its own lines (a fix never edits another file)."""
    def mine(r: Range) -> bool:
        return r.end.line <= own_lines

    findings = []
    for f in analysis.findings:
        if mine(f.range):
            findings.append(dataclasses.replace(
                f, related=tuple(r for r in f.related if mine(r.range)),
                fixes=tuple(x for x in f.fixes if all(mine(e.range) for e in x.edits))))
    analysis.findings = findings
    analysis.type_queries = [q for q in analysis.type_queries if q[0] <= own_lines]
    return analysis


def _walk(parsed, settings: Settings, keep_flow, line_label, incremental, facts, ask_types, export_calls,
          joined: int = 0, cells: tuple = ()) -> Analysis:
    """The walk and its findings; `joined`: how many module-level statements at the end are the
    neighbours' code (each neighbour is one class or one import statement)."""
    source, module = parsed.source, parsed.module
    if facts:
        from gradguard.typelayer.constructors import as_classes

        facts = as_classes(module, facts)
    reports: list[Report] = []
    internal: list[str] = []
    hooks: dict = {}
    flow = FlowAnalysis(module, hooks, _printer(module, parsed.memo.setdefault("printed", {})), facts, strict=settings.strict, source=source,
                        outside=dict(settings.outside), export_calls=export_calls,
                        imported=dict(settings.imported))
    flow.cell_starts = tuple(cells)
    flow.memo = parsed.memo
    if joined:  # each joined statement, and the file it comes from
        flow.foreign = {stmt: where for stmt, (where, _, _) in zip(module.body[len(module.body) - joined:], settings.neighbours)}
    rules = [cls(flow, settings, reports) for cls in all_rules() if settings.enabled(cls.code)]
    for rule in rules:
        _register(rule, hooks, internal)
    flow.on_drop.append(lambda fns: reports.__setitem__(slice(None), [r for r in reports if r.function not in fns]))
    _recall(parsed.memo, flow)
    flow.run()
    _remember(parsed.memo, flow)
    for rule in rules:
        _guarded(rule, rule.finish, internal)()
    ranges = incremental.ranges if incremental is not None else None
    if ranges is not None:
        ranges.keep_only(module.body)
    positions = Positions(parsed, flow.top_of, ranges)
    findings = _resolve(module, source, reports, settings, positions, line_label) if reports else []
    if settings.enabled(UnusedNoqa.code) and (
        settings.shows_info(UnusedNoqa.code) or UnusedNoqa.code in settings.severity
    ):
        findings = _with_unused_noqa(findings, source, reports, settings, positions)
    queries = _queries(parsed, flow, positions, findings) if ask_types else []
    calls = flow.exported_calls(partial(_ascii_places, parsed, flow, positions)) if export_calls else []
    summaries = flow.exported_summaries(partial(_line, positions)) if export_calls else {}
    asked = frozenset(flow.asked or ())
    positions.release()
    reports.clear()  # reports, rules and their message closures refer to each other
    flow.hooks.clear()
    flow.on_drop.clear()
    if not keep_flow:
        flow.dispose()
    return Analysis(
        findings=findings,
        internal_errors=internal,
        flow=flow if keep_flow else None,
        positions=positions if keep_flow else None,
        reparsed=parsed.reparsed,
        module=module,
        type_queries=queries,
        calls=calls,
        summaries=summaries,
        asked=asked,
    )


def _recall(memo: dict, flow: FlowAnalysis) -> None:
    """Give a walk what an earlier walk of the same parse read of the tree alone: each scope's uses
    (evidence.uses_of, class_uses), each function's facts, the file's imports and helpers - none of
    them depends on the settings or on what the walk found."""
    if "uses" in memo:
        flow.uses.update(memo["uses"])
        flow.function_facts.update(memo["facts"])
        flow.imported = memo["imported"]
        if memo["helpers"] is not None:
            flow.__dict__["_helpers"] = memo["helpers"]


def _remember(memo: dict, flow: FlowAnalysis) -> None:
    memo.update(uses=dict(flow.uses), facts=dict(flow.function_facts), imported=flow.imported,
                helpers=flow.__dict__.get("_helpers"))


def _line(positions: Positions, node: cst.CSTNode) -> int:
    """A node's line, for another file's message (0: a node the walk made up has no place)."""
    try:
        return positions.span(node)[0]
    except Exception:  # noqa: BLE001
        return 0


def _ascii_places(parsed, flow: FlowAnalysis, positions: Positions, names: dict) -> dict:
    """Where each name node (of `names`: name -> its call) starts, (line, column), for another file's
    related location, placed from the text where it can be (a tree position costs a statement's
    metadata): a column
    after non-ASCII text (a Chinese string before the call) becomes the line's indentation, so that
    it means the same in every encoding, without that file's text."""
    for name, call in names.items():  # a callee's attribute name is not evaluated: place it by its call's statement
        top = flow.top_of.get(call)
        if top is not None:
            flow.top_of.setdefault(name, top)
    placed = name_starts(parsed, flow.top_of, [n for n in names if isinstance(n, cst.Name) and n in flow.top_of])
    lines = parsed.source.split("\n")
    out = {}
    for name in names:
        at = placed.get(name)
        if at is None:
            try:
                at = positions.span(name)[:2]
            except Exception:  # noqa: BLE001 - a node the walk made up has no place: no related location
                continue
        line, column = at
        text = lines[line - 1] if 0 < line <= len(lines) else ""
        out[name] = (line, column if text[:column].isascii() else len(text) - len(text.lstrip()))
    return out


def _printer(module: cst.Module, printed: dict):
    """`module.code_for_node`, once per node: re-analysed functions ask for the same code again
    (`printed`: node -> its code, kept with the parse for its next analysis)."""

    def code_for(node: cst.CSTNode) -> str:
        code = printed.get(node)
        if code is None:
            code = printed[node] = module.code_for_node(node)
        return code

    return code_for


def _queries(parsed, flow: FlowAnalysis, positions: Positions, findings: list) -> list[tuple[int, int, cst.CSTNode]]:
    """Where to ask jedi about each name: (1-based line, code-point column, node); an
    attribute `a.b` is asked about at `b`. Placed from the text where it can be (see locate.py).
    A question whose answer can only take a finding away is asked only in a top-level statement
    (a function, a class) that holds a finding: most files have none, and jedi costs ~10 ms a
    question."""
    queries = flow.type_queries
    if flow.removal_queries and parsed.laid_out:  # without the statement layout every question stays
        holding = {parsed.statement_at(f.range.start.line) for f in findings}
        # a binding asked about anyway (a callee) keeps all its nodes: one answer serves them all
        asked = {about for n, about in queries.items() if n not in flow.removal_queries or flow.top_of.get(n) in holding}
        queries = {n: about for n, about in queries.items() if about in asked}
    first: dict = {}  # what a question is about -> the first node asking it (jedi is asked there once)
    for node, about in queries.items():
        first.setdefault(about, node)
    asked = {node: node.attr if isinstance(node, cst.Attribute) else node for node in first.values()}
    for node, name in asked.items():
        flow.top_of.setdefault(name, flow.top_of.get(node))
    placed = name_starts(parsed, flow.top_of, [n for n in asked.values() if flow.top_of.get(n) is not None])
    where: dict = {}
    for node, name in asked.items():
        at = placed.get(name)
        if at is None:
            a, b, c, d = positions.span(node)
            at = (c, d - len(name.value)) if isinstance(node, cst.Attribute) else (a, b)
        where[node] = at
    return [(*where[first[about]], node) for node, about in queries.items()]


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
        except RecursionError:  # the tree is too deep, not the rule wrong: see analyze
            raise
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


def _edit(module: cst.Module, positions: Positions, lines: list[str], node, new) -> Edit:
    """A replacement becomes an edit: `node` may be ("before", n) for an insertion or
    ("span", first, last) for consecutive statements;
    `new` a node, source text, or a function of the Spot (for re-indenting)."""
    if isinstance(node, tuple) and node[0] == "span":  # ("span", first, last): consecutive statements
        rng = Range(positions.range(node[1]).start, positions.range(node[2]).end)
    elif isinstance(node, tuple):
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


def _with_unused_noqa(findings: list[Finding], source: str, reports, settings: Settings, positions) -> list[Finding]:
    """GG901 judges the directives against every report, before suppression and the
    info filter (a hidden info finding still uses its `# noqa`)."""
    found = directives(source)
    if not found:
        return findings
    reported = {(positions.range(r.node).start.line, r.rule.code) for r in reports}
    known = {rule.code for rule in all_rules()}
    extra = unused_directives(found, reported, settings.enabled, known)
    severity = settings.severity.get(UnusedNoqa.code)
    if severity is not None:
        extra = [dataclasses.replace(f, severity=severity) for f in extra]
    return sorted(findings + extra, key=lambda f: f.sort_key)


def _resolve(module, source: str, reports: list[Report], settings: Settings, positions, line_label) -> list[Finding]:
    line_of = positions.line if line_label is None else (lambda node: line_label(positions.line(node)))
    lines = re.split(r"\r\n|\r|\n", source)
    noqa = suppressions(source)
    findings = []
    checks = []  # (finding index, fix index, [(node, edit)]): for insertions.judged
    for r in reports:
        severity = settings.severity.get(r.rule.code, r.severity)
        if severity is Severity.INFO and r.rule.code not in settings.severity and not settings.shows_info(r.rule.code):
            continue  # info is opt-in: select the rule by name, or give it a severity
        rng = positions.range(r.node)
        if is_suppressed(r.rule.code, rng.start.line, noqa):
            continue
        message = r.message if isinstance(r.message, str) else r.message(line_of)
        fixes = []
        for f in r.fixes:
            placed = [(node, _edit(module, positions, lines, node, new)) for node, new in f.replacements]
            fixes.append(Fix(f.title, f.safety, tuple(e for _, e in placed)))
            checks.append((len(findings), len(fixes) - 1, placed))
        related = tuple(Related(Range(Position(node.line, node.column), Position(node.line, node.column)), text, node.path)
                        if isinstance(node, At) else Related(positions.range(node), text) for node, text in r.related)
        findings.append(
            Finding(
                code=r.rule.code,
                name=r.rule.name,
                severity=severity,
                message=message,
                range=rng,
                related=related,
                fixes=tuple(fixes),
                tags=r.tags,
            )
        )
    findings = insertions.judged(module, lines, findings, checks)
    unique = {(f.code, f.range, f.message): f for f in findings}
    return sorted(unique.values(), key=lambda f: f.sort_key)


from gradguard.engine.describe import (
    describe_at,  # noqa: E402 - re-exported for front ends
)
