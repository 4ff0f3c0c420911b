"""The properties every analysis and every fix must have, on any input.

Each check raises AssertionError with what went wrong; `bench/fuzz.py` runs the
same checks for longer.

Time bound: CPU seconds of this process (`time.process_time`), so a busy shared
machine does not make a fast analysis look slow, and generous - 50 ms per line
plus 2 s - so it only catches hangs and blow-ups (the engine needs well under
1 ms per line), never an ordinary slow run.
"""

from __future__ import annotations

import io
import re
import time
import tokenize
from collections import Counter

import libcst as cst

from gradguard.engine import analyze
from gradguard.engine.fixes import BREAKS, LIMIT, Rounds, apply_edits, carry, fix_source
from gradguard.engine.suppress import IGNORE, NOQA
from gradguard.findings import Range

UNUSED_NOQA = "GG901"  # its fix edits suppression directives, and only them

CPU_S_PER_LINE = 0.05
CPU_S_BASE = 2.0

LINE_BREAK = re.compile(r"\r\n|\r|\n")


def comments(source: str) -> list[str]:
    """The comments of a source, in order (tokenize; libcst-parsable code tokenizes)."""
    return [t.string for t in tokenize.generate_tokens(io.StringIO(source).readline) if t.type == tokenize.COMMENT]


def prose(source: str) -> list[str]:
    """The comments without their suppression directives: what GG901's fix (which removes
    unused `# noqa: GG…` codes) must keep."""
    stripped = (re.sub(r"[#\s,;:-]+", " ", NOQA.sub("", IGNORE.sub("", c))).strip() for c in comments(source))
    return [c for c in stripped if c]


def check_range(source: str, rng: Range, what: str) -> None:
    lines = LINE_BREAK.split(source)
    start, end = rng.start, rng.end
    assert (start.line, start.column) <= (end.line, end.column), f"{what}: {rng} ends before it starts"
    for pos in (start, end):
        assert 1 <= pos.line <= len(lines), f"{what}: line {pos.line} outside 1..{len(lines)}"
        assert 0 <= pos.column <= len(lines[pos.line - 1]), f"{what}: {pos} past the end of its line"


def analysed(source: str, settings=None):
    """analyze(), which must not raise, report an internal error, or take unbounded time."""
    lines = source.count("\n") + 1
    start = time.process_time()
    result = analyze(source, settings)
    spent = time.process_time() - start
    assert not result.internal_errors, result.internal_errors
    assert spent <= CPU_S_BASE + CPU_S_PER_LINE * lines, f"{spent:.1f} CPU s for {lines} lines"
    return result


def check_analysis(source: str, settings=None):
    """The analysis properties; returns the analysis."""
    result = analysed(source, settings)
    for f in result.findings:
        check_range(source, f.range, f"{f.code} range")
        for r in f.related:
            check_range(source, r.range, f"{f.code} related")
        for fix in f.fixes:
            for e in fix.edits:
                check_range(source, e.range, f"{f.code} fix {fix.title!r}")
    return result


def check_fixes(source: str, result, settings=None) -> None:
    """Every fix parses, keeps comments, removes its finding and is not offered again;
    all safe fixes together (fix_source) add no finding and are idempotent."""
    if result.error is not None or not result.findings:
        return
    before = Counter(f.code for f in result.findings)
    for f in result.findings:
        for fix in f.fixes:
            what = f"{f.code} fix {fix.title!r}"
            fixed = apply_edits(source, fix.edits)
            cst.parse_module(fixed)  # raises if the fix broke the file
            keeps = prose if f.code == UNUSED_NOQA else comments
            assert keeps(fixed) == keeps(source), f"{what} changed the comments"
            after = analysed(fixed, settings)
            assert after.error is None, f"{what}: {after.error}"
            remaining = Counter(g.code for g in after.findings)
            assert remaining[f.code] < before[f.code], f"{what} left {f.code} in place"
            again = [g for g in after.findings for h in g.fixes if h.title == fix.title and h.edits == fix.edits]
            assert not again, f"{what} is offered again after it was applied"

    fixed = check_convergence(source, settings, result)
    keeps = prose if before[UNUSED_NOQA] else comments
    assert keeps(fixed) == keeps(source), "fix_source changed the comments"


def check_convergence(source: str, settings=None, result=None) -> str:
    """Fix convergence, as ruff has it: every safe fix applied (rounds, as `--fix` does) gives
    code that parses, with no finding that was not there before (a finding is matched to
    the one it was, carried across the edits), with no fix that broke the file or was
    still offered at the round limit, and fixing it again changes nothing. Returns the
    fixed source."""
    result = result if result is not None else analysed(source, settings)
    if result.error is not None or not result.findings:
        return source
    rounds = Rounds(source, result)
    while (text := rounds.next()) is not None:
        rounds.checked(analysed(text, settings))
    fixed = rounds.result()
    cst.parse_module(fixed.source)  # raises if the fixes broke the file
    broken = [u.message() for u in fixed.unapplied if u.why in (BREAKS, LIMIT)]
    assert not broken, f"fixes that do not converge: {broken}"
    last = len(rounds.texts) - 1
    was = Counter((f.code, carry(f.range.start, rounds.texts, rounds.edits, 0, last)) for f in result.findings)
    now = Counter((f.code, f.range.start) for f in fixed.remaining)
    new = [f"{code} at {at.line}:{at.column + 1}" for (code, at), n in now.items() if n > was[(code, at)]]
    assert not new, f"the fixes added findings: {new}\n{fixed.source}"
    again = fix_source(fixed.source, settings)
    assert (again.source, again.fixed) == (fixed.source, 0), f"fixing again changes the code:\n{again.source}"
    return fixed.source
