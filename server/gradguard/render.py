"""How the CLI shows findings: ruff-style text lines, code frames, summaries, JSON and diffs.

JSON output (`gradguard check --output-format json`) is one array, in the order
of the text output (files sorted, findings by position). Lines and columns are
1-based; columns count Unicode code points; an end column is exclusive::

    [
      {
        "code": "GG101",                        # the rule's code
        "name": "graph-kept-across-iterations", # the rule's name
        "severity": "error",                    # "error" | "warning" | "info"
        "path": "train.py",                     # as the text output shows it
        "line": 12, "column": 23,               # where the finding starts
        "end_line": 12, "end_column": 27,       # where it ends (exclusive)
        "message": "`loss` carries an autograd graph ...",
        "related": [                            # places that explain it
          {"line": 11, "column": 12, "end_line": 11, "end_column": 34,
           "message": "the graph is created here"}
        ],
        "fixes": [                              # first is the one --fix applies
          {
            "title": "Store `loss.detach()`",
            "safety": "safe",                   # "safe" | "unsafe"
            "edits": [                          # positions in the file as read
              {"line": 12, "column": 23, "end_line": 12, "end_column": 27,
               "new_text": "loss.detach()"}
            ]
          }
        ]
      }
    ]

Keys may be added in later versions; none will be removed or change meaning.
"""

from __future__ import annotations

import difflib
import json
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

import click

from gradguard.engine.fixes import chosen_fix
from gradguard.findings import Finding, Range, Safety, Severity

CONTEXT_LINES = 2  # source lines shown before and after a finding's range
MAX_RANGE_LINES = 6  # longer ranges show their first and last lines only
TAB_WIDTH = 4
SEVERITY_COLORS = {Severity.ERROR: "red", Severity.WARNING: "yellow", Severity.INFO: "blue"}
# The line breaks libcst counts (so line numbers agree with the findings').
LINE_BREAK = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True)
class Palette:
    """ANSI styles, or none at all (not a terminal, or NO_COLOR)."""

    color: bool = False

    def __call__(self, text: str, **style) -> str:
        return click.style(text, **style) if self.color else text

    def severity(self, text: str, severity: Severity) -> str:
        return self(text, fg=SEVERITY_COLORS[severity], bold=True)


PLAIN = Palette()


# ---------------------------------------------------------------- text
def finding_line(path: str, finding: Finding, style: Palette = PLAIN) -> str:
    """`path:line:col: CODE message`, column 1-based."""
    start = finding.range.start
    return (
        f"{style(path, bold=True)}:{start.line}:{start.column + 1}: "
        f"{style.severity(finding.code, finding.severity)} {finding.message}"
    )


def file_error(
    path: str,
    message: str,
    line: int | None = None,
    column: int | None = None,
    *,
    level: str = "error",
    style: Palette = PLAIN,
) -> str:
    """`path:line:col: error: message` (or `path: error: message` without a position); column 0-based."""
    where = path if line is None else f"{path}:{line}:{(column or 0) + 1}"
    color = "red" if level == "error" else "yellow"
    return f"{style(where, bold=True)}: {style(level, fg=color, bold=True)}: {message}"


def warning(message: str, style: Palette = PLAIN) -> str:
    return f"{style('warning', fg='yellow', bold=True)}: {message}"


def code_frame(source: str, finding: Finding, style: Palette = PLAIN) -> list[str]:
    """The finding's source lines with a little context, carets under its range, and its fix."""
    lines = LINE_BREAK.split(source)
    rng = finding.range
    first, last = rng.start.line, min(rng.end.line, len(lines))
    shown = _lines_to_show(lines, first, last)
    width = len(str(max(shown)))
    bar = style("|", fg="blue", bold=True)
    out = [f"{' ' * width} {bar}"]
    previous = None
    for number in shown:
        if previous is not None and number != previous + 1:
            out.append(f"{style('.' * width, fg='blue', bold=True)} {bar}")
        previous = number
        text, columns = _display(lines[number - 1])
        gutter = style(str(number).rjust(width), fg="blue", bold=True)
        out.append(f"{gutter} {bar} {text}".rstrip())
        span = _underlined(lines[number - 1], number, rng)
        if span is not None:
            start, end = columns[span[0]], columns[span[1]]
            carets = "^" * max(1, end - start)
            out.append(f"{' ' * width} {bar} {' ' * start}{style.severity(carets, finding.severity)}")
    out.append(f"{' ' * width} {bar}")
    for related in finding.related:
        out.append(f"{' ' * width} = {style('note', bold=True)}: {related.message} (line {related.range.start.line})")
    if finding.fixes:
        fix = finding.fixes[0]
        unsafe = " (unsafe)" if fix.safety is Safety.UNSAFE else ""
        out.append(f"{' ' * width} = {style('help', fg='cyan', bold=True)}: {fix.title}{unsafe}")
    return out


def _lines_to_show(lines: list[str], first: int, last: int) -> list[int]:
    if last - first + 1 > MAX_RANGE_LINES:
        body = [*range(first, first + MAX_RANGE_LINES // 2), *range(last - MAX_RANGE_LINES // 2 + 1, last + 1)]
    else:
        body = list(range(first, last + 1))
    before = [n for n in range(max(1, first - CONTEXT_LINES), first)]
    after = [n for n in range(last + 1, min(len(lines), last + CONTEXT_LINES) + 1)]
    # Blank context at the edges says nothing.
    while before and not lines[before[0] - 1].strip():
        before.pop(0)
    while after and not lines[after[-1] - 1].strip():
        after.pop()
    return before + body + after


def _underlined(line: str, number: int, rng: Range) -> tuple[int, int] | None:
    """The code-point span of `line` inside the range, or None when the line is outside it."""
    if not rng.start.line <= number <= rng.end.line:
        return None
    indent = len(line) - len(line.lstrip())
    start = rng.start.column if number == rng.start.line else indent
    end = rng.end.column if number == rng.end.line else len(line)
    start, end = min(start, len(line)), min(end, len(line))
    return start, max(start, end)


def _display(line: str) -> tuple[str, list[int]]:
    """The line with tabs expanded, and the display column of every code point (plus one past the end)."""
    out: list[str] = []
    columns = []
    col = 0
    for ch in line:
        columns.append(col)
        if ch == "\t":
            step = TAB_WIDTH - col % TAB_WIDTH
            out.append(" " * step)
        else:
            step = _char_width(ch)
            out.append(ch)
        col += step
    columns.append(col)
    return "".join(out), columns


def _char_width(ch: str) -> int:
    if unicodedata.combining(ch) or unicodedata.category(ch) in ("Mn", "Me", "Cf"):
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


# ---------------------------------------------------------------- summaries
def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def fix_hint(findings: Iterable[Finding], unsafe: bool) -> str:
    """` (2 fixable with --fix, 1 more with --unsafe-fixes)`, or nothing."""
    findings = list(findings)
    fixable = sum(chosen_fix(f, unsafe) is not None for f in findings)
    hidden = 0 if unsafe else sum(chosen_fix(f, True) is not None for f in findings) - fixable
    parts = []
    if fixable:
        parts.append(f"{fixable} fixable with --fix")
    if hidden:
        parts.append(f"{hidden} more with --unsafe-fixes" if fixable else f"{hidden} fixable with --unsafe-fixes")
    return f" ({', '.join(parts)})" if parts else ""


def summary(findings: list[Finding], *, unsafe: bool, failed: int = 0, fixed: int = 0) -> list[str]:
    """Ruff-style closing lines: what was fixed, what is left, how many files had errors (on stderr)."""
    out = [f"Fixed {plural(fixed, 'finding')}."] if fixed else []
    problem = f"{plural(failed, 'file')} had errors" if failed else ""
    if findings:
        found = f"Found {plural(len(findings), 'finding')}{fix_hint(findings, unsafe)}"
        out.append(f"{found}; {problem}." if problem else f"{found}.")
    elif problem:
        out.append(f"No findings, but {problem}.")
    elif not fixed:
        out.append("All checks passed!")
    return out


# ---------------------------------------------------------------- JSON
def _span(rng: Range) -> dict:
    return {
        "line": rng.start.line,
        "column": rng.start.column + 1,
        "end_line": rng.end.line,
        "end_column": rng.end.column + 1,
    }


def finding_json(path: str, finding: Finding) -> dict:
    """One finding in the schema of this module's docstring."""
    return {
        "code": finding.code,
        "name": finding.name,
        "severity": finding.severity.value,
        "path": path,
        **_span(finding.range),
        "message": finding.message,
        "related": [{**_span(r.range), "message": r.message} for r in finding.related],
        "fixes": [
            {
                "title": fix.title,
                "safety": fix.safety.value,
                "edits": [{**_span(e.range), "new_text": e.new_text} for e in fix.edits],
            }
            for fix in finding.fixes
        ],
    }


def json_report(items: Iterable[dict]) -> str:
    # ASCII-only, so the output is valid under any locale's stdout encoding.
    return json.dumps(list(items), indent=2)


# ---------------------------------------------------------------- diffs
def _diff_lines(text: str) -> list[str]:
    # Split on "\n" only, keeping "\r": that is what patch and git apply compare.
    return re.findall(r"[^\n]*\n|[^\n]+$", text)


def unified_diff(path: str, old: str, new: str) -> str:
    """A patch that turns `old` into `new`, marking a missing final newline as diff does."""
    out = []
    for line in difflib.unified_diff(_diff_lines(old), _diff_lines(new), fromfile=path, tofile=path):
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)
