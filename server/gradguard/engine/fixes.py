"""Applying fixes: edits in code-point positions, never overlapping, re-checked.

Fixes are applied in rounds, as ruff does: a round takes each finding's chosen fix
unless it overlaps one taken before it, the result is analysed again, and a fix
that had to wait is applied in a later round if that analysis still offers it.
Only applied fixes are counted; each one not applied is named with the reason
(it waited and the finding went, the round limit, the file would not parse).
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from typing import Iterable, Optional

from gradguard.findings import Edit, Finding, Fix, Position, Safety

MAX_ROUNDS = 10  # ruff's is 100; chains of overlapping fixes here are two or three long


LINE_BREAK = re.compile(r"\r\n|\r|\n")  # what libcst counts as a line break


def line_starts(source: str) -> list[int]:
    return [0] + [m.end() for m in LINE_BREAK.finditer(source)]


def offset(starts: list[int], pos: Position) -> int:
    return starts[pos.line - 1] + pos.column


def position(starts: list[int], at: int) -> Position:
    line = bisect.bisect_right(starts, at) - 1
    return Position(line + 1, at - starts[line])


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


def overlaps(spans: list, taken: list) -> bool:
    """Do any of `spans` overlap any of `taken` ((start, end) pairs)? Two insertions at the
    same place overlap too: their order would be a guess."""
    return any(s < te and ts < e or s == e == ts == te for s, e in spans for ts, te in taken)


def plan(source: str, findings: Iterable[Finding], unsafe: bool = False) -> tuple[list, list]:
    """One round: the (finding, fix) pairs to apply together, each overlapping none taken
    before it, and the (finding, the finding whose fix it overlaps) that wait."""
    starts = line_starts(source)
    taken: list[tuple[int, int, Finding]] = []
    chosen, waiting = [], []
    for finding in findings:
        fix = chosen_fix(finding, unsafe)
        if fix is None:
            continue
        spans = [(offset(starts, e.range.start), offset(starts, e.range.end)) for e in fix.edits]
        blocker = next((f for s, e in spans for ts, te, f in taken if overlaps([(s, e)], [(ts, te)])), None)
        if blocker is not None:
            waiting.append((finding, blocker))
            continue
        taken.extend((s, e, finding) for s, e in spans)
        chosen.append((finding, fix))
    return chosen, waiting


def key(finding: Finding, source: str, starts: Optional[list] = None) -> tuple[str, str]:
    """What identifies a finding from one round to the next: its code and its text."""
    starts = starts if starts is not None else line_starts(source)
    text = source[offset(starts, finding.range.start) : offset(starts, finding.range.end)]
    return finding.code, " ".join(text.split())


def still_offered(waiting: list[tuple[str, str]], findings: Iterable[Finding], source: str, unsafe: bool) -> list:
    """For each key of a finding that waited a round: None if the analysis of the round's
    result (`findings` of `source`) still offers its fix, else why not."""
    starts = line_starts(source)
    offered: dict = {}
    present = set()
    for f in findings:
        k = key(f, source, starts)
        present.add(k)
        if chosen_fix(f, unsafe) is not None:
            offered[k] = offered.get(k, 0) + 1
    out = []
    for k in waiting:
        if offered.get(k, 0) > 0:
            offered[k] -= 1
            out.append(None)
        else:
            out.append(NO_FIX.format(safe="" if unsafe else "safe ") if k in present else GONE)
    return out


GONE = "the code after that fix no longer shows this finding"
NO_FIX = "after that fix the finding has no {safe}fix"
BREAKS = "the file would not parse after it"
LIMIT = f"still offered after {MAX_ROUNDS} rounds of fixes"
WAITED = "it overlaps a fix that was not applied"


@dataclass(frozen=True)
class Unapplied:
    """A fix not applied: its finding's place and that of the fix it overlapped, both in
    the fixed text and in the text as read (what --diff shows)."""

    code: str
    at: Position
    at_before: Position
    why: str
    blocker: Optional[tuple[str, Position, Position]] = None  # (code, at, at_before) of the overlapped fix

    def where(self, *, as_read: bool = False) -> Position:
        return self.at_before if as_read else self.at

    def message(self, *, as_read: bool = False) -> str:
        """`GG202 fix not applied: it overlaps the fix of the GG103 finding at 10:1, applied first, and ...`."""
        if self.blocker is None:
            return f"{self.code} fix not applied: {self.why}"
        code, at, before = self.blocker
        pos = before if as_read else at
        return (f"{self.code} fix not applied: it overlaps the fix of the {code} finding at "
                f"{pos.line}:{pos.column + 1}, applied first, and {self.why}")


@dataclass
class FixResult:
    source: str
    fixed: int  # fixes applied
    remaining: list  # findings left in the result
    unapplied: list = field(default_factory=list)  # Unapplied, in the order they were found


@dataclass
class _Pending:
    """An Unapplied with its places in the text of round `round`."""

    code: str
    at: Position
    round: int
    why: str
    blocker: Optional[tuple[str, Position]] = None


class Rounds:
    """The rounds of fixing one text, for any caller's way of analysing (`fix_source` in
    this process; the language server off its event loop, with the type layer):

        rounds = Rounds(source, analysis)
        while (text := rounds.next()) is not None:
            rounds.checked(analyse(text))  # None, or an analysis with an error: it does not parse
        result = rounds.result()

    A round whose result does not parse (a fix's bug) is retried one fix at a time."""

    def __init__(self, source: str, analysis, *, unsafe: bool = False):
        self.unsafe = unsafe
        self.texts = [source]
        self.edits: list[list[Edit]] = []  # the edits of each applied round, in the text before it
        self.analysis = analysis
        self.fixed = 0
        self._pending: list[_Pending] = []
        self._waiting: list = []  # (finding, blocker) of the last round, in its text
        self._done = analysis is None or analysis.error is not None
        self._proposal: Optional[tuple[str, list]] = None  # (text, (finding, fix) pairs) being analysed
        self._trial: Optional[dict] = None  # one fix at a time, after a round that did not parse
        self._applied: set = set()  # ids of the findings whose fixes the last round applied
        self._broken: set = set()  # keys (see `key`) of the findings whose fixes broke the file

    def next(self) -> Optional[str]:
        """The text to analyse next, or None: nothing more applies."""
        if self._done:
            return None
        current = self.texts[-1]
        if self._trial is not None:
            return self._try_next(current)
        findings = self.analysis.findings
        self._settle(current, findings)
        if self._broken:
            starts = line_starts(current)
            findings = [f for f in findings if key(f, current, starts) not in self._broken]
        chosen, waiting = plan(current, findings, self.unsafe)
        if chosen and len(self.edits) == MAX_ROUNDS:
            self._pending += [self._here(f, LIMIT) for f, _ in chosen + waiting]
            chosen = waiting = []
        self._waiting = waiting
        new = apply_edits(current, [e for _, fix in chosen for e in fix.edits]) if chosen else current
        if new == current:  # nothing to apply, or fixes that change nothing (applying them again would not either)
            self._stop()
            return None
        self._proposal = (new, chosen)
        return new

    def checked(self, analysis) -> None:
        """The analysis of the text `next()` returned (None, or with an error: it does not parse)."""
        ok = analysis is not None and analysis.error is None
        text, chosen = self._proposal
        if self._trial is not None:
            trial = self._trial
            finding, fix = trial["chosen"][trial["i"]]
            if ok:
                trial["accepted"].append((finding, fix))
                trial["good"] = (text, analysis)
            else:
                self._pending.append(self._here(finding, BREAKS))
                self._broken.add(key(finding, self.texts[-1]))
            trial["i"] += 1
            if trial["i"] == len(trial["chosen"]):
                self._trial = None
                if trial["good"] is None:
                    self._stop()
                else:
                    self._commit(*trial["good"], trial["accepted"])
            return
        if ok:
            self._commit(text, analysis, chosen)
        else:
            self._trial = {"chosen": chosen, "i": 0, "accepted": [], "good": None}

    def result(self) -> FixResult:
        if not self._done:
            raise RuntimeError("Rounds.result() before next() returned None")
        remaining = self.analysis.findings if self.analysis is not None and self.analysis.error is None else []
        return FixResult(self.texts[-1], self.fixed, remaining, [self._placed(p) for p in self._pending])

    # ------------------------------------------------------------------ inside
    def _try_next(self, current: str) -> str:
        trial = self._trial
        pairs = [*trial["accepted"], trial["chosen"][trial["i"]]]
        text = apply_edits(current, [e for _, fix in pairs for e in fix.edits])
        self._proposal = (text, None)
        return text

    def _stop(self) -> None:
        """No more rounds; the fixes that waited for this one's are not applied."""
        self._pending += [self._here(f, WAITED) for f, _ in self._waiting]
        self._waiting = []
        self._done = True

    def _commit(self, text: str, analysis, chosen: list) -> None:
        self._applied = {id(f) for f, _ in chosen}
        self.edits.append([e for _, fix in chosen for e in fix.edits])
        self.texts.append(text)
        self.analysis = analysis
        self.fixed += len(chosen)

    def _settle(self, current: str, findings) -> None:
        """The fixes that waited last round: still offered (this round plans them), or not, and why."""
        if not self._waiting:
            return
        before = self.texts[-2]
        starts = line_starts(before)
        reasons = still_offered([key(f, before, starts) for f, _ in self._waiting], findings, current, self.unsafe)
        for (finding, blocker), why in zip(self._waiting, reasons):
            if why is None:
                continue
            round_ = len(self.texts) - 2
            if id(blocker) in self._applied:
                self._pending.append(_Pending(finding.code, finding.range.start, round_, why,
                                              (blocker.code, blocker.range.start)))
            else:  # the fix it waited for broke the file (see `checked`)
                self._pending.append(_Pending(finding.code, finding.range.start, round_, f"{WAITED}, and {why}"))
        self._waiting = []

    def _here(self, finding: Finding, why: str) -> _Pending:
        return _Pending(finding.code, finding.range.start, len(self.texts) - 1, why)

    def _placed(self, p: _Pending) -> Unapplied:
        last = len(self.texts) - 1
        blocker = None
        if p.blocker is not None:
            code, at = p.blocker
            blocker = (code, carry(at, self.texts, self.edits, p.round, last), carry(at, self.texts, self.edits, p.round, 0))
        at, before = carry(p.at, self.texts, self.edits, p.round, last), carry(p.at, self.texts, self.edits, p.round, 0)
        return Unapplied(p.code, at, before, p.why, blocker)


def carry(pos: Position, texts: list[str], edits: list[list[Edit]], source: int, target: int) -> Position:
    """A position in `texts[source]` as it is in `texts[target]`, where `edits[k]` made
    `texts[k + 1]` from `texts[k]`."""
    step = 1 if target > source else -1
    for k in range(source, target, step):
        old = k if step == 1 else k - 1
        pos = _through(pos, texts[old], texts[old + 1], edits[old], forward=step == 1)
    return pos


def _through(pos: Position, old: str, new: str, edits: list[Edit], *, forward: bool) -> Position:
    """`pos` carried across one round's edits, from `old` to `new` text or back."""
    if not forward:
        old, new = new, old
    a_starts, b_starts = line_starts(old), line_starts(new)
    spans, shift = [], 0  # (start, end) of each edit in the text before it and after it
    for e in sorted(edits, key=lambda e: (e.range.start, e.range.end)):
        s, t = offset(a_starts if forward else b_starts, e.range.start), offset(a_starts if forward else b_starts, e.range.end)
        after = (s + shift, s + shift + len(e.new_text))
        spans.append(((s, t), after) if forward else (after, (s, t)))
        shift += len(e.new_text) - (t - s)
    at, delta = offset(a_starts, pos), 0
    for (s, t), (ns, nt) in spans:
        if at < s:
            break
        if at < t:
            return _within(at, old, new, (s, t), (ns, nt), a_starts, b_starts)
        delta = nt - t
    return position(b_starts, at + delta)


def _within(at: int, old: str, new: str, span: tuple, new_span: tuple, old_starts: list, new_starts: list) -> Position:
    """A position inside text an edit rewrote: on the same line re-indented, where the edit
    kept it (a block wrapped in `with torch.no_grad():`), else the edit's start."""
    pos = position(old_starts, at)
    line = LINE_BREAK.split(old)[pos.line - 1]
    text = line.strip()
    first = position(old_starts, span[0]).line
    nth = sum(1 for other in LINE_BREAK.split(old)[first - 1 : pos.line - 1] if other.strip() == text)
    lo, hi = position(new_starts, new_span[0]).line, position(new_starts, new_span[1]).line
    new_lines = LINE_BREAK.split(new)
    for k in range(lo, hi + 1):
        if text and new_lines[k - 1].strip() == text:
            if nth == 0:
                moved = len(new_lines[k - 1]) - len(new_lines[k - 1].lstrip()) - (len(line) - len(line.lstrip()))
                return Position(k, max(pos.column + moved, 0))
            nth -= 1
    return position(new_starts, new_span[0])


def fix_source(source: str, settings=None, *, unsafe: bool = False, analysis=None) -> FixResult:
    """Fix until nothing more applies; never return text that does not parse.
    `analysis` is the caller's analysis of `source`, if it already has one."""
    from gradguard.engine import analyze

    rounds = Rounds(source, analysis if analysis is not None else analyze(source, settings), unsafe=unsafe)
    while (text := rounds.next()) is not None:
        rounds.checked(analyze(text, settings))
    return rounds.result()
