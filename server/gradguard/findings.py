"""What the engine reports: findings, their evidence and their fixes.

Positions are 1-based lines and 0-based columns counted in Unicode code points
(what libcst reports); front ends convert to UTF-16 or UTF-8 at their edge.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Optional


class Severity(enum.Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


class Safety(enum.Enum):
    SAFE = "safe"  # behaviour kept: applied by --fix and fix-all
    UNSAFE = "unsafe"  # changes a type or semantics: only on request


@dataclass(frozen=True, order=True)
class Position:
    line: int  # 1-based
    column: int  # 0-based, code points


@dataclass(frozen=True, order=True)
class Range:
    start: Position
    end: Position


@dataclass(frozen=True)
class Edit:
    range: Range
    new_text: str


@dataclass(frozen=True)
class Fix:
    title: str
    safety: Safety
    edits: tuple[Edit, ...]


@dataclass(frozen=True)
class Related:
    """A place that explains a finding: where the graph came from, where backward runs."""

    range: Range
    message: str
    # another file of the project (absolute path), where the call that explains the finding is: the
    # range's column is one whose line prefix is ASCII, the same in every encoding
    path: Optional[str] = None


@dataclass(frozen=True)
class Finding:
    code: str
    name: str
    severity: Severity
    message: str
    range: Range
    related: tuple[Related, ...] = ()
    fixes: tuple[Fix, ...] = ()
    tags: tuple[str, ...] = field(default=())  # e.g. "unnecessary"

    @property
    def sort_key(self) -> tuple:
        return (self.range.start, self.range.end, self.code)


def utf16_column(line_text: str, column: int) -> int:
    """A code-point column on `line_text` in UTF-16 code units (LSP's default)."""
    return len(line_text[:column].encode("utf-16-le")) // 2


def utf8_column(line_text: str, column: int) -> int:
    """A code-point column on `line_text` in UTF-8 bytes (Neovim, ruff's LSP option)."""
    return len(line_text[:column].encode("utf-8"))
