"""A fix never reads a name that is unbound where its code goes: checked by the engine
for every rule's fixes (engine/insertions.py), not by each rule. A stand-in rule offers
the fixes each shape of rule offers (a statement inserted, a block wrapped, a decorator
added, an expression replaced), at a spot where the name they read is bound, bound on
some paths, or bound only later."""

from __future__ import annotations

import libcst as cst
import pytest

import gradguard.engine
from gradguard.engine import analyze
from gradguard.findings import Safety
from gradguard.rules._build import import_torch, wrap_in_no_grad
from gradguard.rules.base import PendingFix, Rule
from gradguard.settings import Settings


class StandIn(Rule):
    """Reports each `mark(...)` call; its fixes are put before the marked statement."""

    code = "GG999"
    name = "stand-in"

    def visit_Call(self, node: cst.Call) -> None:
        if not (isinstance(node.func, cst.Name) and node.func.value == "mark"):
            return
        stmt = self.flow.statement
        fn = self.flow.function
        fixes = [
            PendingFix("Insert", Safety.SAFE, [(("before", stmt), lambda spot: f"h = h.detach()\n{spot.indent}")]),
            PendingFix("Wrap", Safety.SAFE, [(stmt, wrap_in_no_grad("torch"))] + import_torch(self.flow)),
            PendingFix("Replace", Safety.SAFE, [(node, cst.parse_expression("mark(h)"))]),
        ]
        if fn is not None:
            fixes.append(PendingFix("Decorate", Safety.SAFE, [(("before", fn.node), lambda spot: f"@torch.no_grad()\n{spot.indent}")]
                                    + import_torch(self.flow)))
        self.report(node, "marked", fixes=fixes)


@pytest.fixture
def stand_in(monkeypatch):
    monkeypatch.setattr(gradguard.engine, "all_rules", lambda: [StandIn])
    return Settings(select=("GG999",))


def offered(source: str, settings) -> dict[str, Safety]:
    (finding,) = analyze(source, settings).findings
    return {fix.title: fix.safety for fix in finding.fixes}


def test_bound_on_every_path_stays_safe(stand_in):
    source = "import torch\n\n\ndef f(h):\n    mark(h)\n"
    assert offered(source, stand_in) == {"Insert": Safety.SAFE, "Wrap": Safety.SAFE, "Replace": Safety.SAFE,
                                         "Decorate": Safety.SAFE}


def test_bound_on_some_paths_becomes_unsafe(stand_in):
    source = "import torch\n\n\ndef f(c, g):\n    if c:\n        h = g()\n    mark(1)\n"
    assert offered(source, stand_in) == {"Insert": Safety.UNSAFE, "Wrap": Safety.SAFE, "Replace": Safety.UNSAFE,
                                         "Decorate": Safety.SAFE}


def test_bound_only_later_in_the_loop_is_not_offered(stand_in):
    source = "import torch\n\n\ndef f(xs, g):\n    for x in xs:\n        mark(x)\n        h = g(x)\n"
    assert offered(source, stand_in) == {"Wrap": Safety.SAFE, "Decorate": Safety.SAFE}


def test_the_import_a_fix_adds_binds_what_it_reads(stand_in):
    # no `import torch`: the wrap and the decorator each add it at the top
    source = "# torch is not imported\ndef f(h):\n    mark(h)\n"
    assert offered(source, stand_in) == {"Insert": Safety.SAFE, "Wrap": Safety.SAFE, "Replace": Safety.SAFE,
                                         "Decorate": Safety.SAFE}


def test_a_decorator_read_before_its_import_is_not_offered(stand_in):
    source = "def f(h):\n    mark(h)\n\n\nimport torch\n"
    assert offered(source, stand_in) == {"Insert": Safety.SAFE, "Wrap": Safety.SAFE, "Replace": Safety.SAFE}
