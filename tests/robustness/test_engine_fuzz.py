"""Engine fuzzing: generated training loops and mutated corpus programs never
crash or hang the analysis, keep every range inside the document, and every
fix is sound (the properties are in properties.py, the programs in programs.py).

The profile in conftest.py makes every run draw the same examples."""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings

from gradguard.rules import all_rules
from gradguard.settings import Settings
from programs import SEEDS, mutated_seed, training_program
from properties import check_analysis, check_fixes

EVERY_RULE = Settings(select=tuple(r.code for r in all_rules()))  # info rules by name: they are opt-in

GENERATED = 400  # enough for the grammar to reach every rule (asserted below)


def test_generated_training_loops():
    reached: Counter = Counter()

    @settings(max_examples=GENERATED)
    @given(training_program())
    def run(source):
        result = check_analysis(source, EVERY_RULE)
        assert result.error is None, f"the grammar made code that does not parse: {result.error}"
        check_fixes(source, result, EVERY_RULE)
        reached.update(f.code for f in result.findings)

    run()
    # The grammar is only worth its examples if they exercise every rule.
    assert sorted(reached) == sorted(r.code for r in all_rules())


@settings(max_examples=400)
@given(mutated_seed())
def test_mutated_examples_and_rule_examples(case):
    _, source = case
    check_fixes(source, check_analysis(source))


def test_every_rule_example_cut_in_the_middle_of_each_line():
    # Half-typed code, line by line, for every corpus program (bench/fuzz.py cuts at every character).
    for name, source in SEEDS:
        lines = source.splitlines(keepends=True)
        for n in range(len(lines)):
            check_analysis("".join(lines[:n]) + lines[n][: len(lines[n]) // 2])
