"""A notebook's code cells joined, in order, into one program the engine can read.

The model defined in cell 1 and the loop in cell 3 are one program, so the cells
are analysed together. IPython syntax (`%matplotlib inline`, `!pip install x`,
`files = !ls`, `%%time`, `obj?`) is not Python: those lines are blanked - the
line count stays, so every engine line maps back to one cell line. The language
server (`gradguard.lsp.documents`) and the CLI (`gradguard.notebooks`) both join
cells here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# A line that IPython rewrites before Python sees it.
_LINE_MAGIC = re.compile(r"^[ \t]*(?:[%!]|\w[\w.]*\s*=\s*[%!])")
_HELP = re.compile(r"^[ \t]*[\w.]+\?\??[ \t]*$")
_CELL_MAGIC = re.compile(r"^[ \t]*%%(\w+)")
# Cell magics whose body is still Python.
_PYTHON_CELL_MAGICS = {"time", "timeit", "capture", "prun", "debug"}


def _blank(line: str) -> str:
    """Blank an IPython line; inside a block it becomes `pass`, which keeps the block valid."""
    indent = line[: len(line) - len(line.lstrip(" \t"))]
    return indent + "pass" if indent else ""


def blank_magics(text: str) -> str:
    """The cell's text with IPython-only lines blanked (same number of lines)."""
    lines = text.split("\n")
    first = _CELL_MAGIC.match(lines[0]) if lines else None
    if first is not None:
        if first.group(1) not in _PYTHON_CELL_MAGICS:  # %%bash, %%html ...: not Python at all
            return "\n".join("" for _ in lines)
        lines[0] = ""
    out = []
    scanner = _Scanner()
    magic_continues = False  # a magic ending in a backslash goes on on the next line
    for line in lines:
        if magic_continues:
            out.append("")
            magic_continues = line.rstrip().endswith("\\")
        elif scanner.at_statement_start() and (_LINE_MAGIC.match(line) or _HELP.match(line)):
            out.append(_blank(line))
            magic_continues = line.rstrip().endswith("\\")
        else:
            scanner.feed(line)
            out.append(line)
    return "\n".join(out)


class _Scanner:
    """Just enough of Python's lexer to know whether a line starts a statement
    (not inside brackets, a triple-quoted string or a backslash continuation):
    IPython only rewrites magics there, and `% x` inside parentheses is Python."""

    def __init__(self):
        self.depth = 0
        self.quote = ""  # the open triple quote, if any
        self.continued = False

    def at_statement_start(self) -> bool:
        return self.depth == 0 and not self.quote and not self.continued

    def feed(self, line: str) -> None:
        i, n = 0, len(line)
        self.continued = False
        while i < n:
            if self.quote:
                end = line.find(self.quote, i)
                while end > 0 and _escaped(line, end):
                    end = line.find(self.quote, end + 1)
                if end < 0:
                    return
                i, self.quote = end + 3, ""
                continue
            c = line[i]
            if c == "#":
                return
            if c in "\"'":
                if line.startswith(c * 3, i):
                    self.quote, i = c * 3, i + 3
                    continue
                i += 1
                while i < n and (line[i] != c or _escaped(line, i)):
                    i += 1
            elif c in "([{":
                self.depth += 1
            elif c in ")]}":
                self.depth = max(self.depth - 1, 0)
            elif c == "\\" and i == n - 1:
                self.continued = True
            i += 1


def _escaped(line: str, i: int) -> bool:
    """Is line[i] preceded by an odd number of backslashes?"""
    j = i
    while j > 0 and line[j - 1] == "\\":
        j -= 1
    return (i - j) % 2 == 1


@dataclass(frozen=True)
class Cell:
    uri: str
    version: int
    text: str


@dataclass(frozen=True)
class Program:
    """The joined source and where each cell starts in it."""

    source: str
    cells: tuple[Cell, ...]
    starts: tuple[int, ...]  # 1-based program line of each cell's first line


def join(cells: list[Cell]) -> Program:
    """One program from the code cells, in notebook order, each starting on a fresh line."""
    parts, starts, line = [], [], 1
    for cell in cells:
        text = blank_magics(cell.text)
        if not text.endswith("\n"):
            text += "\n"
        starts.append(line)
        line += text.count("\n")
        parts.append(text)
    return Program("".join(parts), tuple(cells), tuple(starts))


def why_not_in_cell(cell_lines, program_lines, start: int, first: int, last: int):
    """Why an edit of lines `first`..`last` (1-based, in the cell) cannot be made in the
    cell itself, or None. `start` is the program line of the cell's first line. A line
    that reads differently in the program was blanked: the fix was made on `pass` or
    nothing, and writing it would destroy the magic. Shared by the CLI and the language
    server, so a quick fix and `--fix` refuse the same edits."""
    if last > len(cell_lines):
        return "it spans two cells"
    for line in range(first, last + 1):
        if cell_lines[line - 1].rstrip("\r") != program_lines[start + line - 2].rstrip("\r"):
            return "it touches an IPython magic line"
    return None


@dataclass(frozen=True)
class CellMap:
    """Where each code cell of a notebook file sits in its joined program (for the CLI)."""

    numbers: tuple[int, ...]  # 1-based position of each code cell among all the notebook's cells
    starts: tuple[int, ...]  # 1-based program line of each code cell's first line

    def locate(self, line: int) -> tuple[int, int]:
        """A program line as (cell number, 1-based line in that cell)."""
        i = max((k for k, start in enumerate(self.starts) if start <= line), default=0)
        return self.numbers[i], line - self.starts[i] + 1

    def label(self, line: int) -> str:
        """A program line as messages say it: `4 of cell 3`."""
        number, in_cell = self.locate(line)
        return f"{in_cell} of cell {number}"
