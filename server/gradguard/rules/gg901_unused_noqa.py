from __future__ import annotations

from gradguard.engine.suppress import Directive
from gradguard.findings import Edit, Finding, Fix, Position, Range, Safety, Severity
from gradguard.rules.base import Invalid, Rule, Valid

# Separators a reason may follow a directive with: `# noqa: GG101 - logged, not kept`.
_SEPARATORS = " \t-:;,"


class UnusedNoqa(Rule):
    """
    ## What it does
    Finds suppression directives for GradGuard that suppress nothing: a
    `# noqa: GG101` or `# gradguard: ignore[GG101]` on a line where GG101
    reports nothing, and codes in them that are not GradGuard rules
    (`# noqa: GG999`, a typo of a code). Like ruff's RUF100, it is opt-in:
    select it (`--select GG901`, or `select = ["GG", "GG901"]`).

    Only GradGuard's own codes are judged: a bare `# noqa` and other tools'
    codes (`# noqa: E501`) are left alone, and so is a code whose rule is not
    selected in this run (nothing can say whether it would report).

    ## Why is this bad?
    A stale directive hides the next real finding on its line: the line was
    fixed, the `# noqa` stayed, and a `losses.append(loss)` written there later
    is never reported. A misspelt code suppresses nothing while looking as if
    it does.

    ## Example
    ```python
    losses.append(loss.item())  # noqa: GG101
    ```

    ## Use instead
    ```python
    losses.append(loss.item())
    ```

    ## Fix safety
    Safe: the fix removes the unused codes from the directive, or the
    directive (and a comment that held nothing else); code is never touched,
    and a reason written after the directive is kept.
    """

    code = "GG901"
    name = "unused-noqa"
    severity = Severity.INFO
    summary = "A `# noqa: GG…` / `# gradguard: ignore[…]` that suppresses nothing, or names no GradGuard rule"

    VALID = [
        Valid(
            """
import torch

losses = []
for step in range(3):
    loss = torch.nn.Linear(2, 1)(torch.ones(1, 2)).sum()
    losses.append(loss)  # noqa: GG101 - kept on purpose, freed below
    loss.backward()
losses.clear()
""",
            note="the directive suppresses a GG101 that is reported on its line",
            runtime="",
            settings={"select": ("GG101", "GG901")},
        ),
        Valid(
            """
import torch

x = torch.ones(3)
y = x.clone()  # noqa: E501
z = x * 2  # noqa
""",
            note="other tools' codes and a bare `# noqa` are theirs to judge",
        ),
        Valid(
            """
import torch

losses = []
for step in range(3):
    loss = torch.nn.Linear(2, 1)(torch.ones(1, 2)).sum()
    losses.append(loss)  # noqa: GG101
    loss.backward()
""",
            note="GG101 is not selected in this run: whether it would report is unknown, so the code is not called unused",
            settings={"select": ("GG901",)},
        ),
    ]

    INVALID = [
        Invalid(
            """
import torch

model = torch.nn.Linear(2, 1)
losses = []
for step in range(3):
    loss = model(torch.ones(1, 2)).sum()
    loss.backward()
    losses.append(loss.item())  # noqa: GG101
""",
            range=(9, 32, 9, 45),
            message="unused `# noqa` directive: GG101 reports nothing on this line",
            fixes=(
                """
import torch

model = torch.nn.Linear(2, 1)
losses = []
for step in range(3):
    loss = model(torch.ones(1, 2)).sum()
    loss.backward()
    losses.append(loss.item())
""",
            ),
            settings={"select": ("GG1", "GG901")},
            # the line was fixed: what the directive once suppressed is gone
            runtime="assert not any(has_graph(v) for v in losses if isinstance(v, torch.Tensor))\nassert len(losses) == 3",
        ),
        Invalid(
            """
import torch

model = torch.nn.Linear(2, 1)
losses = []
for step in range(3):
    loss = model(torch.ones(1, 2)).sum()
    losses.append(loss)  # noqa: GG101, GG102, E501 - kept on purpose
    loss.backward()
losses.clear()
""",
            range=(8, 25, 8, 51),
            message="unused `# noqa` directive: GG102 reports nothing on this line",
            fixes=(
                """
import torch

model = torch.nn.Linear(2, 1)
losses = []
for step in range(3):
    loss = model(torch.ones(1, 2)).sum()
    losses.append(loss)  # noqa: GG101, E501 - kept on purpose
    loss.backward()
losses.clear()
""",
            ),
            settings={"select": ("GG1", "GG901")},
            note="the used code, another tool's code and the reason stay",
            runtime="assert losses == []",
        ),
        Invalid(
            """
import torch

x = torch.ones(3, requires_grad=True)
y = (x * 2).sum()  # gradguard: ignore[GG1O1] - typo of GG101
y.backward()
""",
            range=(5, 19, 5, 45),
            message="unused `# gradguard: ignore` directive: GG1O1 is not a GradGuard rule",
            fixes=(
                """
import torch

x = torch.ones(3, requires_grad=True)
y = (x * 2).sum()  # typo of GG101
y.backward()
""",
            ),
            settings={"select": ("GG", "GG901")},
            note="a misspelt code (letter O for zero) suppresses nothing",
            runtime="assert torch.equal(x.grad, torch.full((3,), 2.0))",
        ),
    ]


def unused_directives(
    found: list[Directive], reported: set[tuple[int, str]], enabled, known: set[str]
) -> list[Finding]:
    """GG901's findings: `reported` holds (line, code) of every report of this analysis,
    before suppression and severity filters (a hidden info finding still uses its noqa);
    `enabled(code)`: was that rule run; `known`: every rule code."""
    findings = []
    for d in found:
        if UnusedNoqa.code in d.codes:
            continue  # suppresses this very rule
        unused = [c for c in d.codes if c.startswith("GG") and c in known and enabled(c) and (d.line, c) not in reported]
        unknown = [c for c in d.codes if c.startswith("GG") and c not in known and c != "*"]
        if not unused and not unknown:
            continue
        parts = []
        if unused:
            parts.append(f"{', '.join(unused)} {'reports' if len(unused) == 1 else 'report'} nothing on this line")
        if unknown:
            parts.append(f"{', '.join(unknown)} {'is' if len(unknown) == 1 else 'are'} not a GradGuard rule")
        m = d.match
        start = d.comment_column + m.start()
        findings.append(
            Finding(
                code=UnusedNoqa.code,
                name=UnusedNoqa.name,
                severity=UnusedNoqa.severity,
                message=f"unused `{d.kind}` directive: {'; '.join(parts)}",
                range=Range(Position(d.line, start), Position(d.line, d.comment_column + m.end())),
                fixes=(_removal(d, set(unused) | set(unknown)),),
                tags=("unnecessary",),
            )
        )
    return findings


def _removal(d: Directive, drop: set[str]) -> Fix:
    m, comment = d.match, d.comment
    keep = [c for c in d.codes if c not in drop]
    title = f"Remove unused {', '.join(c for c in d.codes if c in drop)} from the directive"
    if keep:  # rewrite the code list, keep the directive's own spelling around it
        new = comment[: m.start("codes")] + ", ".join(keep) + comment[m.end("codes") :]
        return Fix(title, Safety.SAFE, (_replace(d, 0, len(comment), new),))
    head = comment[: m.start()].rstrip()
    tail = comment[m.end() :].strip().lstrip(_SEPARATORS).strip()
    has_head = bool(head.strip("# \t"))
    title = "Remove the unused directive"
    if not has_head and not tail:  # the comment was the directive: drop it and the spaces before it
        return Fix(title, Safety.SAFE, (Edit(Range(Position(d.line, _code_end(d)), _end(d)), ""),))
    new = (head if has_head else "#") + (" " + tail if tail else "")
    return Fix(title, Safety.SAFE, (_replace(d, 0, len(comment), new),))


def _replace(d: Directive, start: int, end: int, text: str) -> Edit:
    return Edit(Range(Position(d.line, d.comment_column + start), Position(d.line, d.comment_column + end)), text)


def _end(d: Directive) -> Position:
    return Position(d.line, d.comment_column + len(d.comment))


def _code_end(d: Directive) -> int:
    """Where the spaces before the comment start (a comment on its own line leaves its line empty)."""
    return len(d.before.rstrip())

