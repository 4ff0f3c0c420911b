"""A notebook's code cells joined into one program: shared with the CLI, see `gradguard.cells`."""

from gradguard.cells import Cell, Program, blank_magics, join

__all__ = ["Cell", "Program", "blank_magics", "join"]
