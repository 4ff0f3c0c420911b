"""The settings the engine understands (front ends build these from flags and files)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from gradguard.findings import Severity

COPY_ORDERS = ("clone-detach", "detach-clone")


@dataclass(frozen=True)
class Settings:
    select: tuple[str, ...] = ("GG",)  # codes or prefixes
    ignore: tuple[str, ...] = ()
    severity: dict[str, Severity] = field(default_factory=dict)  # per-rule overrides
    strict: bool = False  # also report likely graphs: an unknown function's result, when its arguments carry one
    copy_order: str = "clone-detach"
    types: bool = False  # refine with the jedi type layer (front ends run it; the engine only reads facts)
    python: Optional[str] = None  # with types: the interpreter whose packages jedi reads (None: the running one)
    # Not configuration but the file's place in its project (gradguard/project): how the project's
    # other files call this file's functions, as (symbol, engine.outside.Outside) pairs
    outside: tuple = ()
    # what the functions this file calls of other files keep or build: (target, outside.Keeps | Builds)
    imported: tuple = ()
    # the classes of other modules this file works with (project/neighbours.py): ((where, first line, code), ...)
    neighbours: tuple = ()
    # the file never mentions torch but imports a name from a module of its project that does (a
    # `main.py` running `fit(Net(), data)` of models.py and train.py): analysed all the same
    torch_code: bool = False

    def enabled(self, code: str) -> bool:
        """Longest matching prefix wins, as in ruff: `--select GG --ignore GG4` drops GG4xx."""
        sel = max((len(p) for p in self.select if code.startswith(p)), default=-1)
        ign = max((len(p) for p in self.ignore if code.startswith(p)), default=-1)
        return sel >= 0 and sel > ign

    def shows_info(self, code: str) -> bool:
        """Info findings are opt-in (like ruff's preview, torchfix's noisy families): shown
        only when the code is selected by name or family (`GG202`, `GG2`), not by `GG` alone."""
        return self.enabled(code) and any(code.startswith(p) and p != "GG" for p in self.select)

    def copy_suffix(self) -> str:
        """The method chain a fix appends to make an independent copy."""
        return ".clone().detach()" if self.copy_order == "clone-detach" else ".detach().clone()"
