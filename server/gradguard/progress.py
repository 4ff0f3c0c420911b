"""A one-line progress bar on stderr, for long runs on a terminal only.

Not click.progressbar: findings are printed while the run goes on, so the bar
must be erased before each and drawn again after (click's leaves its line
behind and cannot be interrupted that way).
"""

from __future__ import annotations

import sys
from typing import TextIO

MIN_FILES = 20  # fewer files finish before a bar would say anything
WIDTH = 30
ERASE = "\r\x1b[K"


class Progress:
    def __init__(self, total: int, stream: TextIO | None = None, enabled: bool = True):
        self.total, self.done = total, 0
        self.stream = stream or sys.stderr
        self.shown = enabled and total >= MIN_FILES and self.stream.isatty()
        self._drawn = False

    def advance(self) -> None:
        self.done += 1
        self.draw()

    def draw(self) -> None:
        if not self.shown:
            return
        filled = WIDTH * self.done // self.total
        self.stream.write(f"{ERASE}Checking [{'#' * filled}{'-' * (WIDTH - filled)}] {self.done}/{self.total} files")
        self.stream.flush()
        self._drawn = True

    def clear(self) -> None:
        """Erase the bar (before other output, and at the end)."""
        if self._drawn:
            self.stream.write(ERASE)
            self.stream.flush()
            self._drawn = False
