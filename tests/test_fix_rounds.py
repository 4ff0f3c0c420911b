"""Fixes applied in rounds (engine/fixes.py), with stand-in rules for what no real rule
should do: a fix that breaks the file, and one that is offered again after every round."""

from __future__ import annotations

import libcst as cst
import pytest

import gradguard.engine
from gradguard.engine.fixes import MAX_ROUNDS, fix_source
from gradguard.findings import Position, Safety
from gradguard.rules.base import PendingFix, Rule
from gradguard.settings import Settings


class StandIn(Rule):
    """`broken(x)` gets a fix that does not parse; `grow(x)` one that makes `grow(x + 1)`,
    reported again; `fine(x)` one that makes `x`."""

    code = "GG999"
    name = "stand-in"

    def visit_Call(self, node: cst.Call) -> None:
        name = node.func.value if isinstance(node.func, cst.Name) else ""
        arg = self.code_of(node.args[0].value) if node.args else ""
        new = {"broken": f"broken({arg}", "grow": f"grow({arg} + 1)", "fine": arg}.get(name)
        if new is not None:
            self.report(node, name, fixes=[PendingFix(name, Safety.SAFE, [(node, new)])])


@pytest.fixture
def stand_in(monkeypatch):
    monkeypatch.setattr(gradguard.engine, "all_rules", lambda: [StandIn])
    return Settings(select=("GG999",))


def test_a_fix_that_breaks_the_file_is_named_and_the_others_apply(stand_in):
    result = fix_source("import torch\nbroken(1)\nfine(2)\n", stand_in)
    assert (result.source, result.fixed) == ("import torch\nbroken(1)\n2\n", 1)
    assert [u.message() for u in result.unapplied] == ["GG999 fix not applied: the file would not parse after it"]
    assert [u.at for u in result.unapplied] == [Position(2, 0)]


def test_a_fix_offered_after_every_round_stops_at_the_limit(stand_in):
    result = fix_source("import torch\ngrow(0)\n", stand_in)
    assert (result.source, result.fixed) == (f"import torch\ngrow(0{' + 1' * MAX_ROUNDS})\n", MAX_ROUNDS)
    assert [u.message() for u in result.unapplied] == [f"GG999 fix not applied: still offered after {MAX_ROUNDS} rounds of fixes"]
