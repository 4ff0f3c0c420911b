"""A safe fix is proved by running it (rules.md, "A fix marked safe"): every rule
example with a finding is fixed with all its safe fixes - what `gradguard check
--fix` writes - and run with torch 2.13; the fixed program still runs and every
parameter that received a gradient before still receives one."""

from __future__ import annotations

import pytest

from examples import INVALID, VALID
from gradguard.engine import analyze
from gradguard.engine.fixes import apply_edits, fix_source
from gradguard.settings import Settings

torch = pytest.importorskip("torch")
from runtime.stand_ins import stand_ins  # noqa: E402
from runtime.training import assert_still_trains, run  # noqa: E402 - needs torch


def _fix_and_run(code: str, settings: Settings, name: str) -> None:
    fixed = fix_source(code, settings).source
    if fixed == code:
        return  # nothing safe to apply
    with stand_ins():  # the modules of the user's project an example imports (runtime/stand_ins.py)
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


# The shape of the issue: GG102's detach went to the top of the batch loop, where
# `decoder_hidden` is first bound by the first step's call below it.
DECODER = """\
import torch
from torch import nn


def train(decoder, head, batches, optimizer):
    for x, y in batches:
        optimizer.zero_grad()
        out, decoder_hidden = decoder(x[0:1])
        loss = 0
        for t in range(1, x.size(0)):
            out, decoder_hidden = decoder(x[t:t + 1], decoder_hidden)
            loss = loss + (head(out) - y[t]).pow(2).mean()
        loss.backward()
        optimizer.step()


decoder, head = nn.GRU(3, 5), nn.Linear(5, 1)
optimizer = torch.optim.SGD([*decoder.parameters(), *head.parameters()], lr=0.1)
train(decoder, head, [(torch.randn(4, 2, 3), torch.randn(4, 2, 1)) for _ in range(2)], optimizer)
"""

# What `gradguard check --fix` wrote before the engine checked insertions.
DECODER_OLD_FIX = DECODER.replace(
    "    for x, y in batches:\n", "    for x, y in batches:\n        decoder_hidden = decoder_hidden.detach()\n")


def test_a_detach_where_the_state_is_not_bound_yet_is_never_offered():
    """The fix the engine used to write crashed on the first batch; the program itself runs.
    A fix reading a name unbound where it goes is dropped by the engine (engine/insertions.py)."""
    assert run(DECODER_OLD_FIX, "decoder old fix").error == (
        "UnboundLocalError: cannot access local variable 'decoder_hidden' where it is not associated with a value")
    assert run(DECODER, "decoder").error is None
    found = [f for f in analyze(DECODER, Settings()).findings if f.code == "GG102"]
    assert [f.fixes for f in found] in ([()], [])  # reported without a fix (or not reported at all)
    assert fix_source(DECODER, Settings()).source == DECODER
    assert all(apply_edits(DECODER, fix.edits) != DECODER_OLD_FIX for f in found for fix in f.fixes)


def test_a_fix_that_waited_for_an_overlapping_one_still_fixes_the_crash():
    """`loss.data[0]` inside a loop GG103 wraps in no_grad: its `.item()` fix waits a round
    and is applied on the wrapped code (it used to be dropped, and the IndexError stayed)."""
    from cli.test_fix import EVAL_LOSS, EVAL_LOSS_FIXED

    assert run(EVAL_LOSS, "eval loss").error == "IndexError: invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in C++ to convert a 0-dim tensor to a number"
    result = fix_source(EVAL_LOSS, Settings())
    assert (result.source, result.fixed, result.unapplied) == (EVAL_LOSS_FIXED, 2, [])
    assert run(EVAL_LOSS_FIXED, "eval loss fixed").error is None


# GG103's wrap reads `torch`, imported only after the loop: the wrapped loop raised NameError.
LATE_IMPORT = """\
from torch import nn, randn

model = nn.Linear(4, 2)
model.eval()
outputs = []
for x in [randn(3, 4) for _ in range(2)]:
    outputs.append(model(x).argmax(1))

import torch

kept = torch.stack(outputs)
"""
LATE_IMPORT_OLD_FIX = LATE_IMPORT.replace(
    "for x in [randn(3, 4) for _ in range(2)]:\n    outputs.append(model(x).argmax(1))\n",
    "with torch.no_grad():\n    for x in [randn(3, 4) for _ in range(2)]:\n        outputs.append(model(x).argmax(1))\n",
)


def test_a_wrap_reading_a_name_bound_only_later_is_never_offered():
    assert run(LATE_IMPORT_OLD_FIX, "late import old fix").error == "NameError: name 'torch' is not defined"
    assert run(LATE_IMPORT, "late import").error is None
    (finding,) = analyze(LATE_IMPORT, Settings()).findings
    assert (finding.code, finding.fixes) == ("GG103", ())
