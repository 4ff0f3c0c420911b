"""How the CLI shows findings: ruff-style text lines, code frames, summaries, JSON,
GitHub annotations, statistics and diffs (SARIF is `gradguard.sarif`).

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
        ],                                      # (with "path" when in another file of the project)
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

In a notebook, a finding also has `"cell"` (the 1-based position of its cell
among all the notebook's cells) and its lines count from that cell's first line;
so do its related places' and edits' (each with its own `"cell"`).

Keys may be added in later versions; none will be removed or change meaning.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import os
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import click

from gradguard.cells import CellMap
from gradguard.engine.fixes import chosen_fix
from gradguard.findings import Finding, Position, Range, Safety, Severity

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


# ---------------------------------------------------------------- notebooks
def _in_cell(rng: Range, cells: CellMap) -> tuple[int, Range]:
    """A program range in its start's cell; an end in a later cell collapses onto the start."""
    number, line = cells.locate(rng.start.line)
    offset = rng.start.line - line
    end_number, _ = cells.locate(rng.end.line)
    start = Position(line, cells.column(rng.start.line, rng.start.column))
    end = Position(rng.end.line - offset, cells.column(rng.end.line, rng.end.column)) if end_number == number else start
    return number, Range(start, end)


def in_cells(finding: Finding, cells: CellMap) -> tuple[int, Finding, dict]:
    """The finding in its cell's coordinates: (cell number, finding, the cell of each moved range)."""
    where: dict = {}

    def move(rng: Range) -> Range:
        number, moved = _in_cell(rng, cells)
        where[id(moved)] = number
        return moved

    number, rng = _in_cell(finding.range, cells)
    moved = dataclasses.replace(
        finding,
        range=rng,
        related=tuple(r if r.path else dataclasses.replace(r, range=move(r.range)) for r in finding.related),
        fixes=tuple(
            dataclasses.replace(f, edits=tuple(dataclasses.replace(e, range=move(e.range)) for e in f.edits))
            for f in finding.fixes
        ),
    )
    return number, moved, where


# ---------------------------------------------------------------- text
def shown_path(path: str) -> str:
    """Another file as the text output names files: relative to the current directory when under it."""
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


def finding_line(path: str, finding: Finding, style: Palette = PLAIN, cell: int | None = None) -> str:
    """`path:line:col: severity: CODE message` (`path:cell 3:line:col: ...` in a notebook), column 1-based:
    the shape of `file_error`'s lines, and of a compiler's, which editors and CI already read."""
    start = finding.range.start
    where = path if cell is None else f"{path}:cell {cell}"
    return (
        f"{style(where, bold=True)}:{start.line}:{start.column + 1}: "
        f"{style.severity(finding.severity.value + ':', finding.severity)} {style(finding.code, bold=True)} "
        f"{finding.message}"
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


def skipped(path: str, why: str, style: Palette = PLAIN) -> str:
    """`path: skipped: why` (check -v: a file or directory a walk passed over)."""
    return f"{style(path, bold=True)}: skipped: {why}"


def warning(message: str, style: Palette = PLAIN) -> str:
    return f"{style('warning', fg='yellow', bold=True)}: {message}"


def code_frame(
    source: str, finding: Finding, style: Palette = PLAIN, note_line: Callable[[Range], str] | None = None
) -> list[str]:
    """The finding's source lines with a little context, carets under its range, and its fix.
    `note_line` names a related place's line (`4 of cell 2` in a notebook)."""
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
        if related.path:
            line = f"{shown_path(related.path)} line {related.range.start.line}"
        else:
            line = f"line {note_line(related.range) if note_line else related.range.start.line}"
        out.append(f"{' ' * width} = {style('note', bold=True)}: {related.message} ({line})")
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


def summary(
    findings: list[Finding], *, unsafe: bool, failed: int = 0, fixed: int = 0, checked: int | None = None
) -> list[str]:
    """Ruff-style closing lines: what was fixed, what is left, how many files had errors (on stderr),
    and how many files were checked."""
    out = [f"Fixed {plural(fixed, 'finding')}."] if fixed else []
    problem = f"{plural(failed, 'file')} had errors" if failed else ""
    if findings:
        found = f"Found {plural(len(findings), 'finding')}{fix_hint(findings, unsafe)}"
        out.append(f"{found}; {problem}." if problem else f"{found}.")
    elif problem:
        out.append(f"No findings, but {problem}.")
    elif not fixed:
        out.append("All checks passed!")
    if checked is not None:
        out[-1] += f" {plural(checked, 'file')} checked."
    return out


# ---------------------------------------------------------------- JSON
def _span(rng: Range) -> dict:
    return {
        "line": rng.start.line,
        "column": rng.start.column + 1,
        "end_line": rng.end.line,
        "end_column": rng.end.column + 1,
    }


def finding_json(path: str, finding: Finding, cell: int | None = None, cells: dict | None = None) -> dict:
    """One finding in the schema of this module's docstring; `cell` and `cells` (the cell of
    each related place and edit, from `in_cells`) for a notebook."""

    def where(rng: Range) -> dict:
        return {"cell": cells[id(rng)], **_span(rng)} if cells is not None else _span(rng)

    return {
        "code": finding.code,
        "name": finding.name,
        "severity": finding.severity.value,
        "path": path,
        **({"cell": cell} if cell is not None else {}),
        **_span(finding.range),
        "message": finding.message,
        "related": [{"path": shown_path(r.path), **_span(r.range), "message": r.message} if r.path
                    else {**where(r.range), "message": r.message} for r in finding.related],
        "fixes": [
            {
                "title": fix.title,
                "safety": fix.safety.value,
                "edits": [{**where(e.range), "new_text": e.new_text} for e in fix.edits],
            }
            for fix in finding.fixes
        ],
    }


def json_report(items: Iterable[dict]) -> str:
    # ASCII-only, so the output is valid under any locale's stdout encoding.
    return json.dumps(list(items), indent=2)


# ---------------------------------------------------------------- GitHub Actions
GITHUB_LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def github_annotation(path: str, finding: Finding, cell: int | None = None) -> str:
    """A workflow command that annotates the finding's lines in the pull request.
    A notebook's lines are in its cells, not its JSON: the annotation names the file,
    and the message the cell and line."""
    rng = finding.range
    props = [f"file={_escape_property(path)}"]
    message = finding.message
    if cell is None:
        props += [
            f"line={rng.start.line}",
            f"col={rng.start.column + 1}",
            f"endLine={rng.end.line}",
            f"endColumn={rng.end.column + 1}",
        ]
    else:
        message = f"cell {cell}, line {rng.start.line}: {message}"
    props.append(f"title={_escape_property(f'{finding.code} {finding.name}')}")
    return f"::{GITHUB_LEVELS[finding.severity]} {','.join(props)}::{_escape_data(message)}"


# ---------------------------------------------------------------- statistics
def statistics(findings: list[Finding], unsafe: bool) -> list[tuple[int, str, str, bool]]:
    """(count, code, name, fixable) per rule, most frequent first."""
    counts = Counter((f.code, f.name) for f in findings)
    fixable = {f.code for f in findings if chosen_fix(f, unsafe) is not None}
    rows = [(n, code, name, code in fixable) for (code, name), n in counts.items()]
    return sorted(rows, key=lambda row: (-row[0], row[1]))


def statistics_lines(rows: list[tuple[int, str, str, bool]]) -> list[str]:
    """`12  GG101  [*] graph-kept-across-iterations`, counts right-aligned; [*]: fixable with --fix."""
    width = max((len(str(n)) for n, *_ in rows), default=1)
    any_fixable = any(fixable for *_, fixable in rows)
    out = []
    for n, code, name, fixable in rows:
        mark = ("[*] " if fixable else "[ ] ") if any_fixable else ""
        out.append(f"{str(n).rjust(width)}  {code}  {mark}{name}")
    return out


def statistics_json(rows: list[tuple[int, str, str, bool]]) -> str:
    return json.dumps([{"code": c, "name": name, "count": n, "fixable": f} for n, c, name, f in rows], indent=2)


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
