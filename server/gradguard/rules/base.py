"""The rule framework: a rule is a class with its docs, examples and hooks.

Hooks are called by the engine's single walk (`gradguard.engine.flow`):
- `visit_<Node>(node)` for expressions, after the node was evaluated, so
  `self.flow.value(node)` and the values of its children are known;
- `visit_<Stmt>(node)` / `leave_<Stmt>(node)` around statements;
- `on_store(store)` when a graph-carrying value is stored past a loop iteration;
- `finish()` after the whole module, for findings that need the full picture.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass, field
from typing import Callable, ClassVar, Optional, Union

import libcst as cst

from gradguard.findings import Safety, Severity

DOC_SECTIONS = ("What it does", "Why is this bad?", "Example", "Use instead", "Fix safety")


@dataclass(frozen=True)
class Valid:
    code: str
    note: str = ""  # why this must stay silent
    # Runtime truth (tests/runtime): statements run after the program, using the
    # helpers of tests/runtime/effects.py, that assert the rule's effect is absent.
    runtime: str = ""
    settings: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Invalid:
    code: str
    range: tuple[int, int, int, int]  # line, column, end line, end column (1-based lines, 0-based columns)
    message: str
    fixes: tuple[str, ...] = ()  # the source after applying each offered fix, in order
    severity: Optional[Severity] = None  # when it differs from the rule's default
    note: str = ""
    settings: dict = field(default_factory=dict)  # Settings overrides, e.g. {"copy_order": "detach-clone"}
    # Runtime truth: statements run after the program that assert the claimed
    # effect, or the exact error / warning text the program must raise.
    runtime: str = ""
    raises: str = ""
    warns: str = ""
    fragment: str = ""  # set when the example is not a whole program: the wrapper that makes it one


# A message may need lines of other nodes ("from `model(x)` on line 12"), which
# are only known once positions are resolved: a callable receives `line_of`.
Message = Union[str, Callable[[Callable[[cst.CSTNode], int]], str]]


@dataclass
class PendingFix:
    title: str
    safety: Safety
    replacements: list  # [(node to replace, replacement node or source text)]


@dataclass
class Report:
    rule: "Rule"
    node: cst.CSTNode
    message: Message
    fixes: list
    related: list  # [(node, message)]
    severity: Severity
    function: object  # the analysed function it came from (dropped if re-analysed)
    tags: tuple = ()


class Rule:
    code: ClassVar[str] = ""
    name: ClassVar[str] = ""
    severity: ClassVar[Severity] = Severity.WARNING
    # Every severity the rule reports, most severe first, where it splits (GG101: a graph
    # never back-propagated is an error, one already freed by backward() a warning).
    severities: ClassVar[tuple] = ()
    summary: ClassVar[str] = ""  # one line, for `gradguard rules`
    VALID: ClassVar[list] = []
    INVALID: ClassVar[list] = []

    @classmethod
    def severity_text(cls) -> str:
        """"error / warning" for a rule that splits, else its one severity."""
        return " / ".join(s.value for s in (cls.severities or (cls.severity,)))

    def __init__(self, flow, settings, reports: list):
        self.flow = flow
        self.settings = settings
        self._reports = reports

    def report(
        self,
        node: cst.CSTNode,
        message: Message,
        *,
        fixes: tuple = (),
        related: tuple = (),
        severity: Optional[Severity] = None,
        tags: tuple = (),
    ) -> None:
        self._reports.append(
            Report(self, node, message, list(fixes), list(related), severity or self.severity, self.flow.function, tags)
        )

    def stamp(self) -> tuple:
        """Marks state a rule keeps for finish(): which analysis of which function it came from."""
        fn = self.flow.function
        return (fn, fn.analyses if fn is not None else 0)

    def current(self, stamp: tuple) -> bool:
        """Was `stamp` made by the last analysis of its function (not one dropped for re-analysis)?"""
        fn, n = stamp
        return fn is None or fn.analyses == n

    def code_of(self, node: cst.CSTNode) -> str:
        return self.flow.code_for(node)

    def finish(self) -> None:
        pass

    # ---------------------------------------------------------------- docs
    @classmethod
    def docs(cls) -> str:
        return inspect.cleandoc(cls.__doc__ or "")

    @classmethod
    def doc_sections(cls) -> dict[str, str]:
        parts = re.split(r"^## (.+)$", cls.docs(), flags=re.M)
        return {parts[i].strip(): parts[i + 1].strip() for i in range(1, len(parts) - 1, 2)}

    @classmethod
    def hook_names(cls) -> list[str]:
        return [n for n in dir(cls) if n.startswith(("visit_", "leave_")) or n == "on_store"]
