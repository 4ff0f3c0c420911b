"""Engine positions (1-based lines, code-point columns) <-> LSP positions.

The client counts columns in UTF-16 units unless it negotiated UTF-8 or UTF-32.
Every conversion goes through a `LineTable` of one document version, so a
position costs a slice of one line, not a re-split of the whole text.
"""

from __future__ import annotations

import re
from typing import Optional

from lsprotocol import types

from gradguard.findings import Position, Range

UTF8 = types.PositionEncodingKind.Utf8
UTF16 = types.PositionEncodingKind.Utf16
UTF32 = types.PositionEncodingKind.Utf32

_LINE_BREAK = re.compile(r"\r\n|\r|\n")  # what LSP and Python's tokenizer count as line ends


def units(text: str, encoding: str) -> int:
    """How many code units of `encoding` the client counts for `text`."""
    if text.isascii() or encoding == UTF32:
        return len(text)
    if encoding == UTF8:
        return len(text.encode("utf-8", "surrogatepass"))
    return len(text) + sum(1 for c in text if ord(c) > 0xFFFF)


def _column(text: str, character: int, encoding: str) -> int:
    """The code-point column of a client column; inside a character it snaps to that character's end."""
    if text.isascii() or encoding == UTF32:
        return min(character, len(text))
    counted = 0
    for i, c in enumerate(text):
        if counted >= character:
            return i
        counted += units(c, encoding)
    return len(text)


class LineTable:
    """The lines of one document version."""

    def __init__(self, text: str):
        self.lines = text.split("\n") if "\r" not in text else _LINE_BREAK.split(text)

    def line(self, line: int) -> str:
        """Text of a 1-based line ('' past the end)."""
        return self.lines[line - 1] if 0 < line <= len(self.lines) else ""

    def to_lsp(self, pos: Position, encoding: str, line_offset: int = 0) -> types.Position:
        """An engine position, `line_offset` lines into this table, as a client position."""
        line = pos.line - line_offset
        if line > len(self.lines):  # past the end: the end of the last line
            last = self.lines[-1]
            return types.Position(len(self.lines) - 1, units(last, encoding))
        text = self.lines[line - 1]
        return types.Position(line - 1, units(text[: pos.column], encoding))

    def range_to_lsp(self, rng: Range, encoding: str, line_offset: int = 0) -> types.Range:
        return types.Range(self.to_lsp(rng.start, encoding, line_offset), self.to_lsp(rng.end, encoding, line_offset))

    def from_lsp(self, pos: types.Position, encoding: str) -> Position:
        """A client position as an engine position (clamped to the text)."""
        if pos.line >= len(self.lines):
            return Position(len(self.lines), len(self.lines[-1]))
        return Position(pos.line + 1, _column(self.lines[pos.line], pos.character, encoding))


class LineTables:
    """One `LineTable` per document, rebuilt only when the document's version changes."""

    def __init__(self):
        self._tables: dict[str, tuple[Optional[int], str, LineTable]] = {}

    def get(self, uri: str, version: Optional[int], text: str) -> LineTable:
        cached = self._tables.get(uri)
        # The text check guards clients that send no versions (the version stays None).
        if cached is not None and cached[0] == version and (version is not None or cached[1] is text):
            return cached[2]
        table = LineTable(text)
        self._tables[uri] = (version, text, table)
        return table

    def drop(self, uri: str) -> None:
        self._tables.pop(uri, None)
