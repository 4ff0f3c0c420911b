"""A safe fix is proved by running it (rules.md, "A fix marked safe"): every rule
example with a finding is fixed with all its safe fixes - what `gradguard check
--fix` writes - and run with torch 2.13; the fixed program still runs and every
parameter that received a gradient before still receives one."""

from __future__ import annotations

import pytest

from examples import INVALID, VALID
from gradguard.engine.fixes import fix_source
from gradguard.settings import Settings

torch = pytest.importorskip("torch")
from runtime.training import assert_still_trains, run  # noqa: E402 - needs torch


def _fix_and_run(code: str, settings: Settings, name: str) -> None:
    fixed = fix_source(code, settings).source
    if fixed == code:
        return  # nothing safe to apply
    try:
        before = run(code, name)
    except ImportError as e:
        pytest.skip(f"cannot import {e.name or 'a relative module'}: {e}")
    after = run(fixed, f"{name} fixed")
    assert_still_trains(before, after, name)


@pytest.mark.parametrize("rule,ex", INVALID)
def test_safe_fixes_keep_the_invalid_example_training(rule, ex, request):
    _fix_and_run(ex.code, Settings(**ex.settings), request.node.callspec.id)


@pytest.mark.parametrize("rule,ex", VALID)
def test_safe_fixes_of_other_rules_keep_the_valid_example_training(rule, ex, request):
    # A VALID example of one rule may hold another rule's finding: its fix must not break it either.
    _fix_and_run(ex.code, Settings(**ex.settings), request.node.callspec.id)


def _corpus():
    from corpus import oracle

    return oracle, oracle.programs()


@pytest.mark.parametrize("program", _corpus()[1], ids=lambda p: p.name)
def test_safe_fixes_keep_the_corpus_program_training(program):
    """The corpus as an editor sees it (observe() stripped) is fixed with every safe fix,
    then run by its observe(): it still runs and trains."""
    oracle, _ = _corpus()
    body = program.source[: program.source.index("def observe(")]
    fixed = fix_source(oracle.stripped(program.source), Settings()).source
    if fixed == oracle.stripped(program.source):
        return
    before = run(program.source, program.name, "observe()")
    after = run(fixed.rstrip("\n") + "\n\n\n" + program.source[len(body):], f"{program.name} fixed", "observe()")
    assert_still_trains(before, after, program.name)
