"""Where nodes are, found one module-level statement at a time.

libcst's PositionProvider for a whole module costs about as much as parsing it
and its map holds ~190 bytes per node (47 MB for a 10,000-line file). Findings
need a few ranges, a hover those of one line: so each statement is resolved on
its own (shifted to the line `Parsed` says it starts on), only the ranges asked
for are kept, and for a document being edited they are kept across analyses for
the statements the edit left alone (`RangeCache`).
"""

from __future__ import annotations

from typing import Iterable, Optional

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from gradguard.engine.parsing import Parsed
from gradguard.findings import Position, Range

Span = tuple[int, int, int, int]  # start line, start column, end line, end column (1-based lines)


def _span(r) -> Span:
    return r.start.line, r.start.column, r.end.line, r.end.column


class RangeCache:
    """A document's ranges per module-level statement, relative to the statement's own
    first line, so they stay right when edits above it move it up or down."""

    def __init__(self):
        self._by_top: dict[cst.CSTNode, dict[cst.CSTNode, Span]] = {}

    def of(self, top: cst.CSTNode) -> dict[cst.CSTNode, Span]:
        return self._by_top.setdefault(top, {})

    def keep_only(self, body: Iterable[cst.CSTNode]) -> None:
        """Forget statements no longer in the module (an edit replaced them)."""
        live = set(body)
        for top in [t for t in self._by_top if t not in live]:
            del self._by_top[top]

    def __len__(self) -> int:
        return sum(len(r) for r in self._by_top.values())


class Positions:
    def __init__(self, parsed: Parsed, top_of: dict, cache: Optional[RangeCache] = None):
        self.parsed, self.top_of = parsed, top_of
        self.cache = cache if cache is not None else RangeCache()
        self._maps: dict = {}  # statement -> its whole position map, while an analysis resolves
        self._whole = None
        self._hovered = (None, None)  # the last statement a hover looked into, and its map
        self.whole_module_passes = 0  # how often a node could not be placed per statement

    def _statement_map(self, top: cst.CSTNode):
        found = self._maps.get(top)
        if found is None:
            alone = self.parsed.module.with_changes(body=[top], header=[], footer=[])
            found = self._maps[top] = MetadataWrapper(alone, unsafe_skip_copy=True).resolve(PositionProvider)
        return found

    def _whole_map(self):
        if self._whole is None:
            self.whole_module_passes += 1
            self._whole = MetadataWrapper(self.parsed.module, unsafe_skip_copy=True).resolve(PositionProvider)
        return self._whole

    def release(self) -> None:
        """Drop the statement maps (the few ranges asked for stay in the cache)."""
        self._maps.clear()
        self._whole = None

    def span(self, node: cst.CSTNode) -> Span:
        top = self.top_of.get(node)
        first = self.parsed.first_line(top) if top is not None else None
        if first is not None:
            ranges = self.cache.of(top)
            rel = ranges.get(node)
            if rel is None:
                r = self._statement_map(top).get(node)
                if r is not None:
                    rel = ranges[node] = _span(r)
            if rel is not None:
                shift = first - 1
                return rel[0] + shift, rel[1], rel[2] + shift, rel[3]
        return _span(self._whole_map()[node])

    def range(self, node: cst.CSTNode) -> Range:
        a, b, c, d = self.span(node)
        return Range(Position(a, b), Position(c, d))

    def line(self, node: cst.CSTNode) -> int:
        return self.span(node)[0]

    def on_line(self, line: int, wanted) -> list[tuple[cst.CSTNode, Span]]:
        """The nodes in `wanted` whose ranges cover a 1-based line (for hovers)."""
        top = self.parsed.statement_at(line) if self.parsed.laid_out else None
        if top is None:
            return [(n, _span(r)) for n, r in self._whole_map().items() if n in wanted and r.start.line <= line <= r.end.line]
        shift = self.parsed.first_line(top) - 1
        if self._hovered[0] is not top:
            self._hovered = (top, self._maps.get(top) or self._statement_map(top))
            self._maps.pop(top, None)
        found = []
        for node, r in self._hovered[1].items():
            if node in wanted and r.start.line + shift <= line <= r.end.line + shift:
                found.append((node, (r.start.line + shift, r.start.column, r.end.line + shift, r.end.column)))
        return found
