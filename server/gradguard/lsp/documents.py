"""What one analysis reads: a text document, or a notebook's code cells joined,
frozen at one version, and how its engine positions map to client documents.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Optional

from lsprotocol import types
from pygls.uris import to_fs_path

from gradguard.cells import NO_INDENT, Indent, why_not_in_cell
from gradguard.findings import Position, Range
from gradguard.lsp import notebook
from gradguard.lsp.positions import LineTable, LineTables

PYTHON = "python"


@dataclass(frozen=True)
class Part:
    """One client document of a snapshot: the whole file, or one notebook cell."""

    uri: str
    version: Optional[int]
    table: LineTable
    offset: int  # program lines before it
    size: int  # program lines it holds
    number: int = 1  # 1-based position among the notebook's cells, as the CLI counts them
    text: str = ""  # a notebook cell's text (fix-all fixes the cells themselves)
    indent: Indent = NO_INDENT  # what IPython's dedent removes from the cell (program columns are the rest)
    skipped: str = ""  # why the cell is left out of the analysis (Python cannot parse it), if it is

    def to_cell(self, pos: Position) -> Position:
        """A program position in this part as the position in the client document's text."""
        return Position(pos.line, pos.column + self.indent.width(pos.line - self.offset))


@dataclass(frozen=True)
class Snapshot:
    key: str  # the text document's or the notebook's URI
    version: Optional[int]  # of that document or notebook
    source: str  # the program the engine reads
    parts: tuple[Part, ...]
    encoding: str
    path: Optional[str]  # file path, for the project's settings

    def line_label(self, line: int):
        """How a program line reads in a message: `12`, or `4 of cell 3` in a notebook."""
        if len(self.parts) == 1 and self.parts[0].uri == self.key:
            return line
        part = self.part_at(line)
        return f"{line - part.offset} of cell {part.number}"

    @property
    def cell_starts(self) -> tuple:
        """The 1-based program line each notebook cell starts on (a plain file: none)."""
        if len(self.parts) == 1 and self.parts[0].uri == self.key:
            return ()
        return tuple(p.offset + 1 for p in self.parts)

    def part_at(self, line: int) -> Part:
        """The part holding a 1-based program line."""
        part = self.parts[0]
        for candidate in self.parts:
            if candidate.offset >= line:
                break
            part = candidate
        return part

    def part(self, uri: str) -> Optional[Part]:
        return next((p for p in self.parts if p.uri == uri), None)

    def place(self, rng: Range, *, clamp: bool = True) -> Optional[tuple[Part, types.Range]]:
        """A program range in its client document. A range that leaves its cell is cut at
        the cell's end (`clamp`) or has no place (edits must not straddle cells)."""
        part = self.part_at(rng.start.line)
        last = part.offset + part.size
        if rng.end.line > last:
            if not clamp:
                return None
            rng = Range(rng.start, Position(last, len(part.table.line(part.size)) - part.indent.width(part.size)))
        return part, part.table.range_to_lsp(Range(part.to_cell(rng.start), part.to_cell(rng.end)), self.encoding, part.offset)

    def edit(self, rng: Range, text: str) -> Optional[tuple[Part, types.Range, str]]:
        """An edit made on the program as one of a client document: (part, range, text), or
        None where it cannot be made there (it leaves its cell, or rewrites a magic)."""
        placed = self.place(rng, clamp=False)
        if placed is None or self.why_not_editable(placed[0], rng) is not None:
            return None
        part, lsp_range = placed
        if part.indent.prefix:
            first, last = rng.start.line - part.offset, rng.end.line - part.offset
            _, _, text = part.indent.edit(part.table.lines, (first, rng.start.column), (last, rng.end.column), text)
        return part, lsp_range, text

    def program_line(self, line: int) -> str:
        """A 1-based line of the program the engine read (a notebook cell's line once dedented)."""
        if len(self.parts) == 1 and self.parts[0].uri == self.key:  # a text document: the program is its text
            return self.parts[0].table.line(line)
        return self._program_lines[line - 1].rstrip("\r") if 0 < line <= len(self._program_lines) else ""

    def why_not_editable(self, part: Part, rng: Range) -> Optional[str]:
        """Why a program range inside `part` cannot be edited in the client document, or
        None: in a notebook cell, a line IPython reads (a magic) is blanked in the program,
        and a fix written over it would destroy it - `gradguard check --fix` refuses the same."""
        if part.uri == self.key:  # a text document: the program is its text
            return None
        first, last = rng.start.line - part.offset, rng.end.line - part.offset
        return why_not_in_cell(part.table.lines, self._program_lines, part.offset + 1, first, last, part.indent)

    @cached_property
    def _program_lines(self) -> list[str]:
        return self.source.split("\n")

    def to_program(self, uri: str, position: types.Position) -> Optional[Position]:
        """A client position in one of the parts as a program position."""
        part = self.part(uri)
        if part is None:
            return None
        pos = part.table.from_lsp(position, self.encoding)
        return Position(pos.line + part.offset, max(pos.column - part.indent.width(pos.line), 0))


def text_snapshot(uri: str, version: Optional[int], text: str, encoding: str, tables: LineTables) -> Snapshot:
    table = tables.get(uri, version, text)
    part = Part(uri, version, table, 0, len(table.lines))
    return Snapshot(uri, version, text, (part,), encoding, _path(uri))


def notebook_snapshot(nb: types.NotebookDocument, workspace, encoding: str, tables: LineTables) -> Snapshot:
    """The notebook's Python code cells, in order, as one program."""
    cells, numbers = [], []
    for number, cell in enumerate(nb.cells, 1):
        if cell.kind != types.NotebookCellKind.Code:
            continue
        doc = workspace.get_text_document(cell.document)
        if doc.language_id not in (None, PYTHON):
            continue
        cells.append(notebook.Cell(cell.document, doc.version, doc.source))
        numbers.append(number)
    program = notebook.join(cells)
    ends = (*program.starts[1:], program.source.count("\n") + 1)
    skipped = dict(program.skipped)
    parts = tuple(
        Part(cell.uri, cell.version, tables.get(cell.uri, cell.version, cell.text), start - 1, end - start, number,
             cell.text, indent, skipped.get(k, ""))
        for k, (cell, start, end, number, indent) in enumerate(zip(program.cells, program.starts, ends, numbers, program.indents))
    )
    return Snapshot(nb.uri, nb.version, program.source, parts, encoding, _path(nb.uri))


def _path(uri: str) -> Optional[str]:
    return to_fs_path(uri) if uri.startswith("file:") else None
