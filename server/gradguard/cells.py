"""A notebook's code cells joined, in order, into one program the engine can read.

The model defined in cell 1 and the loop in cell 3 are one program, so the cells
are analysed together, each as IPython runs it: a cell whose first line is indented
loses that indentation on every line that has it (IPython's `leading_indent`), and
IPython syntax (`%matplotlib inline`, `!pip install x`, `files = !ls`, `%%time`,
`obj?`) is not Python: those lines are blanked. A cell Python cannot parse even so
is left out (its lines blank), and said, as Jupyter runs the other cells. The line
count stays, so every engine line maps back to one cell line, and a column to the
cell's column plus what the dedent removed there. The language server
(`gradguard.lsp.documents`) and the CLI (`gradguard.notebooks`) both join cells here.
"""

from __future__ import annotations

import ast
import re
import warnings
from dataclasses import dataclass
from typing import Optional

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
class Indent:
    """The indentation IPython removes from a cell: `prefix`, from each line `removed` says."""

    prefix: str = ""
    removed: tuple[int, ...] = ()  # columns removed from each line (0 or len(prefix))

    def width(self, line: int) -> int:
        """Columns removed from a 1-based line of the cell."""
        return self.removed[line - 1] if 0 < line <= len(self.removed) else 0

    def edit(self, cell_lines: list[str], start: tuple[int, int], end: tuple[int, int], text: str):
        """An edit made on the program, as the cell takes it: (start, end, text), lines in
        the cell's numbering. Columns get the removed indentation back; each line the new
        text starts gets the prefix back, unless it is blank."""
        (l1, c1), (l2, c2) = start, end
        c1, c2 = c1 + self.width(l1), c2 + self.width(l2)
        if self.prefix and "\n" in text:
            rest = cell_lines[l2 - 1][c2:] if l2 <= len(cell_lines) else ""
            first, *others = text.split("\n")
            lines = [first]
            for i, line in enumerate(others):
                shown = line + (rest if i == len(others) - 1 else "")
                lines.append(self.prefix + line if shown.strip() else line)
            text = "\n".join(lines)
        return (l1, c1), (l2, c2), text


NO_INDENT = Indent()


def dedent(text: str) -> tuple[str, Indent]:
    """IPython's cleanup of a cell's indentation (`leading_empty_lines`, then
    `leading_indent`): the first line with code sets the prefix, and every line that
    starts with it loses it. The blank lines before it stay (blank)."""
    lines = text.split("\n")
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    prefix = re.match(r"[ \t]*", lines[first]).group(0) if first is not None else ""
    if not prefix:
        return text, NO_INDENT
    out, removed = [], []
    for i, line in enumerate(lines):
        cut = i >= first and line.startswith(prefix)
        out.append(line[len(prefix):] if cut else line)
        removed.append(len(prefix) if cut else 0)
    return "\n".join(out), Indent(prefix, tuple(removed))


def syntax_error(text: str) -> Optional[str]:
    """Why Python cannot parse a cell (as Jupyter would say it), or None."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escape sequences and the like: Jupyter runs those
            ast.parse(text)
    except SyntaxError as e:
        where = f" (line {e.lineno})" if e.lineno else ""
        return f"{type(e).__name__}: {e.msg}{where}"
    except ValueError as e:  # a NUL byte
        return f"SyntaxError: {e}"
    return None


@dataclass(frozen=True)
class Program:
    """The joined source and where each cell starts in it."""

    source: str
    cells: tuple[Cell, ...]
    starts: tuple[int, ...]  # 1-based program line of each cell's first line
    indents: tuple[Indent, ...] = ()  # what IPython's dedent removed from each cell
    skipped: tuple[tuple[int, str], ...] = ()  # (index among `cells`, why) of cells left out: Python cannot parse them


def join(cells: list[Cell], skip: tuple[tuple[int, str], ...] = ()) -> Program:
    """One program from the code cells, in notebook order, each starting on a fresh line.
    `skip`: (index, why) of cells to leave out even though Python parses them (the
    engine's parser could not)."""
    parts, starts, indents, skipped, line = [], [], [], [], 1
    forced = dict(skip)
    for k, cell in enumerate(cells):
        dedented, indent = dedent(cell.text)
        text = blank_magics(dedented)
        if not text.endswith("\n"):
            text += "\n"
        why = forced.get(k) or syntax_error(text)
        if why is not None:
            skipped.append((k, why))
            text = "\n" * text.count("\n")
        starts.append(line)
        indents.append(indent)
        line += text.count("\n")
        parts.append(text)
    return Program("".join(parts), tuple(cells), tuple(starts), tuple(indents), tuple(skipped))


def why_not_in_cell(cell_lines, program_lines, start: int, first: int, last: int, indent: Indent = NO_INDENT):
    """Why an edit of lines `first`..`last` (1-based, in the cell) cannot be made in the
    cell itself, or None. `start` is the program line of the cell's first line. A line
    that reads differently in the program (once dedented) was blanked: the fix was made
    on `pass` or nothing, and writing it would destroy the magic. Shared by the CLI and
    the language server, so a quick fix and `--fix` refuse the same edits."""
    if last > len(cell_lines):
        return "it spans two cells"
    for line in range(first, last + 1):
        if cell_lines[line - 1][indent.width(line):].rstrip("\r") != program_lines[start + line - 2].rstrip("\r"):
            return "it touches an IPython magic line"
    return None


@dataclass(frozen=True)
class CellMap:
    """Where each code cell of a notebook file sits in its joined program (for the CLI)."""

    numbers: tuple[int, ...]  # 1-based position of each code cell among all the notebook's cells
    starts: tuple[int, ...]  # 1-based program line of each code cell's first line
    indents: tuple[Indent, ...] = ()  # what IPython's dedent removed from each code cell

    def locate(self, line: int) -> tuple[int, int]:
        """A program line as (cell number, 1-based line in that cell)."""
        i = self._index(line)
        return self.numbers[i], line - self.starts[i] + 1

    def column(self, line: int, column: int) -> int:
        """A program column on a program line as the cell's column (its dedent added back)."""
        i = self._index(line)
        indent = self.indents[i] if i < len(self.indents) else NO_INDENT
        return column + indent.width(line - self.starts[i] + 1)

    def _index(self, line: int) -> int:
        return max((k for k, start in enumerate(self.starts) if start <= line), default=0)

    def label(self, line: int) -> str:
        """A program line as messages say it: `4 of cell 3`."""
        number, in_cell = self.locate(line)
        return f"{in_cell} of cell {number}"
