"""Fix convergence, over every program the project holds: each rule example (VALID and
INVALID, with its settings), each corpus program as an editor sees it, and each example
program of examples/, with the default rules and with every rule selected. Applying all
safe fixes never adds a finding, gives code that parses, and fixing again changes nothing
(the property is robustness/properties.py's `check_convergence`; the fuzz tests run it
on generated and mutated programs)."""

from __future__ import annotations

import pytest

from corpus import oracle
from gradguard.rules import all_rules
from gradguard.settings import Settings
from robustness.programs import EXAMPLE_FILES
from robustness.properties import check_convergence

EVERY_RULE = {"select": tuple(r.code for r in all_rules())}


def programs():
    for rule in all_rules():
        for kind in ("VALID", "INVALID"):
            for i, ex in enumerate(getattr(rule, kind)):
                yield f"{rule.code}-{kind.lower()}-{i}", ex.code, ex.settings
    for program in oracle.programs():
        yield program.name, oracle.stripped(program.source), {}
    for path in EXAMPLE_FILES:
        yield f"examples/{path.name}", path.read_text(encoding="utf-8"), {}


PROGRAMS = [
    pytest.param(source, {**settings, **chosen}, id=f"{name}-{which}")
    for name, source, settings in programs()
    for which, chosen in (("default", {}), ("every-rule", EVERY_RULE))
]


@pytest.mark.parametrize("source,settings", PROGRAMS)
def test_all_safe_fixes_converge(source, settings):
    check_convergence(source, Settings(**settings))
