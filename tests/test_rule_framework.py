"""The rule framework's contract: every rule carries complete docs and examples."""

from __future__ import annotations

import importlib
import re

import pytest

from gradguard.rules import all_rules, rule_by_code
from gradguard.rules.base import DOC_SECTIONS
from gradguard.findings import Severity

RULES = all_rules()


def test_codes_and_names_are_unique():
    codes = [r.code for r in RULES]
    names = [r.name for r in RULES]
    assert len(codes) == len(set(codes))
    assert len(names) == len(set(names))


def test_first_rules_are_discovered():
    assert {"GG101", "GG401", "GG402"} <= {r.code for r in RULES}


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_rule_is_complete(rule):
    assert re.fullmatch(r"GG[1-59]\d\d", rule.code)  # GG9xx: directives, not PyTorch
    assert re.fullmatch(r"[a-z]+(-[a-z]+)+", rule.name)
    assert isinstance(rule.severity, Severity)
    assert rule.summary and not rule.summary.endswith(".")
    sections = rule.doc_sections()
    assert list(sections) == list(DOC_SECTIONS), f"{rule.code} doc sections: {list(sections)}"
    assert all(sections.values())
    assert len(rule.VALID) >= 3 and len(rule.INVALID) >= 3


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_one_rule_per_file_named_after_code_and_pattern(rule):
    module = importlib.import_module(rule.__module__)
    expected = f"gradguard.rules.{rule.code.lower()}_{rule.name.replace('-', '_')}"
    assert rule.__module__ == expected
    assert [r for r in RULES if r.__module__ == module.__name__] == [rule]


def test_lookup_by_code_or_name():
    assert rule_by_code("gg101").code == "GG101"
    assert rule_by_code("graph-kept-across-iterations").code == "GG101"
    assert rule_by_code("GG999") is None
