"""Applying fixes: edits in code-point positions, never overlapping, re-checked."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable

from gradguard.findings import Edit, Finding, Fix, Position, Safety

MAX_ROUNDS = 5


LINE_BREAK = re.compile(r"\r\n|\r|\n")  # what libcst counts as a line break


def line_starts(source: str) -> list[int]:
    return [0] + [m.end() for m in LINE_BREAK.finditer(source)]


def offset(starts: list[int], pos: Position) -> int:
    return starts[pos.line - 1] + pos.column


def apply_edits(source: str, edits: Iterable[Edit]) -> str:
    starts = line_starts(source)
    spans = sorted(((offset(starts, e.range.start), offset(starts, e.range.end), e.new_text) for e in edits), reverse=True)
    out = source
    for start, end, text in spans:
        out = out[:start] + text + out[end:]
    return out


def chosen_fix(finding: Finding, unsafe: bool) -> Fix | None:
    """The fix --fix applies: the rule's first safe fix (or first fix at all with --unsafe-fixes)."""
    for fix in finding.fixes:
        if unsafe or fix.safety is Safety.SAFE:
            return fix
    return None


def apply_fixes(source: str, findings: Iterable[Finding], *, unsafe: bool = False) -> tuple[str, int]:
    """Apply one fix per finding; a fix overlapping an earlier one waits for the next round."""
    starts = line_starts(source)
    taken: list[tuple[int, int]] = []
    edits: list[Edit] = []
    applied = 0
    for finding in findings:
        fix = chosen_fix(finding, unsafe)
        if fix is None:
            continue
        spans = [(offset(starts, e.range.start), offset(starts, e.range.end)) for e in fix.edits]
        if any(s < te and ts < e or (s == e == ts == te) for s, e in spans for ts, te in taken):
            continue
        taken.extend(spans)
        edits.extend(fix.edits)
        applied += 1
    return apply_edits(source, edits), applied


@dataclass
class FixResult:
    source: str
    fixed: int  # findings fixed
    remaining: list  # findings left in the result


def fix_source(source: str, settings=None, *, unsafe: bool = False, analysis=None) -> FixResult:
    """Fix until nothing more applies; never return text that does not parse.
    `analysis` is the caller's analysis of `source`, if it already has one."""
    from gradguard.engine import analyze

    result = analysis if analysis is not None else analyze(source, settings)
    if result.error is not None:
        return FixResult(source, 0, [])
    fixed = 0
    current = source
    for _ in range(MAX_ROUNDS):
        new, n = apply_fixes(current, result.findings, unsafe=unsafe)
        if n == 0 or new == current:
            break
        check = analyze(new, settings)
        if check.error is not None:  # a fix that breaks the file is a bug: keep what we had
            break
        current, result = new, check
        fixed += n
    return FixResult(current, fixed, result.findings)
