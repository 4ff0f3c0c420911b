"""One test per rule example: exact range, message, severity and fixed text,
and the four properties every fix must have."""

from __future__ import annotations

import libcst as cst
import pytest

from examples import INVALID, VALID
from robustness.properties import comments as robustness_comments
from robustness.properties import prose
from gradguard.engine import analyze
from gradguard.engine.fixes import apply_edits, fix_source
from gradguard.findings import Safety
from gradguard.rules.gg901_unused_noqa import UnusedNoqa
from gradguard.settings import Settings


def findings_of(rule, ex):
    # the rule selected by name: info findings are opt-in
    result = analyze(ex.code, Settings(**{"select": (rule.code,), **ex.settings}))
    assert result.error is None and not result.internal_errors
    return [f for f in result.findings if f.code == rule.code]


def own_settings(rule, ex) -> Settings:
    """Only the rule itself: other rules' fixes are theirs to test. GG901 judges
    directives against the rules an example selects, so it keeps them."""
    if rule.code == UnusedNoqa.code:
        return Settings(**{"select": (rule.code,), **ex.settings})
    return Settings(**{**ex.settings, "select": (rule.code,)})


def comments(source: str, directives: bool = True) -> list[str]:
    # without directives: the text of the comments apart from suppression directives (GG901's fix edits those)
    return robustness_comments(source) if directives else prose(source)


@pytest.mark.parametrize("rule,ex", VALID)
def test_valid_example_is_silent(rule, ex):
    assert findings_of(rule, ex) == []


@pytest.mark.parametrize("rule,ex", INVALID)
def test_invalid_example_reports_exactly(rule, ex):
    found = findings_of(rule, ex)
    assert len(found) == 1, found
    f = found[0]
    assert (f.range.start.line, f.range.start.column, f.range.end.line, f.range.end.column) == ex.range
    assert f.message == ex.message
    assert f.severity is (ex.severity or rule.severity)
    assert f.name == rule.name


@pytest.mark.parametrize("rule,ex", INVALID)
def test_invalid_example_fixes(rule, ex):
    (f,) = findings_of(rule, ex)
    assert [apply_edits(ex.code, fix.edits) for fix in f.fixes] == list(ex.fixes)
    if f.fixes:
        assert f.fixes[0].safety is Safety.SAFE or all(x.safety is Safety.UNSAFE for x in f.fixes)


@pytest.mark.parametrize("rule,ex", INVALID)
def test_every_fix_parses_keeps_comments_removes_finding_and_is_idempotent(rule, ex):
    settings = own_settings(rule, ex)
    (f,) = findings_of(rule, ex)
    for fix in f.fixes:
        fixed = apply_edits(ex.code, fix.edits)
        cst.parse_module(fixed)  # parses
        own = rule.code != UnusedNoqa.code  # GG901 removes directives, and only them
        assert comments(fixed, own) == comments(ex.code, own)  # keeps comments
        after = analyze(fixed, settings)
        assert [g for g in after.findings if g.code == rule.code] == []  # removes its finding
        again = fix_source(fixed, settings, unsafe=fix.safety is Safety.UNSAFE)
        assert again.source == fixed  # idempotent


@pytest.mark.parametrize("rule,ex", INVALID)
def test_fix_all_yields_code_without_findings_of_the_rule(rule, ex):
    settings = own_settings(rule, ex)
    result = fix_source(ex.code, settings)
    if any(fix.safety is Safety.SAFE for f in findings_of(rule, ex) for fix in f.fixes):
        assert result.fixed >= 1
        assert [g for g in result.remaining if g.code == rule.code] == []
    else:
        assert result.source == ex.code
