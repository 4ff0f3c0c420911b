"""Runtime truth: every example's claim, checked by running it with real PyTorch (CPU).

INVALID examples must show the effect their rule claims (`runtime` assertions,
or the exact error / warning text); VALID examples must run without it.
"""

from __future__ import annotations

import re
import warnings

import pytest

from examples import INVALID, VALID
from runtime import effects
from runtime.stand_ins import stand_ins

torch = pytest.importorskip("torch")


def run(code: str, runtime: str, name: str) -> dict:
    ns = {"__name__": "__main__", "__package__": "userproject"}
    try:
        with stand_ins():
            exec(compile(code, f"<{name}>", "exec"), ns)
    except ImportError as e:  # a package the tests do not install, a module PROJECT lacks: static analysis only
        if e.name in ("torch", "numpy"):
            raise
        pytest.skip(f"{name}: cannot import {e.name or 'a relative module'}: {e} (tests/runtime/stand_ins.py: PROJECT)")
    if runtime:
        helpers = {k: getattr(effects, k) for k in ("has_graph", "graph_size", "activations_alive")}
        exec(compile(runtime, f"<{name} runtime>", "exec"), {**ns, **helpers, "torch": torch})
    return ns


def declared_claim(ex) -> bool:
    return bool(ex.runtime or ex.raises or ex.warns)


@pytest.mark.parametrize("rule,ex", INVALID)
def test_invalid_example_has_the_claimed_effect(rule, ex, request):
    assert declared_claim(ex), f"{rule.code}: every INVALID example declares its runtime effect"
    name = request.node.callspec.id
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if ex.raises:
            with pytest.raises((RuntimeError, IndexError), match=re.escape(ex.raises)):
                run(ex.code, "", name)
            return
        run(ex.code, ex.runtime, name)
    if ex.warns:
        assert ex.warns in [str(w.message) for w in caught]


@pytest.mark.parametrize("rule,ex", VALID)
def test_valid_example_runs_without_the_effect(rule, ex, request):
    name = request.node.callspec.id
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run(ex.code, ex.runtime, name)  # raises nothing
    claims = {p.values[1].warns for p in INVALID if p.values[0] is rule and p.values[1].warns}
    assert not claims & {str(w.message) for w in caught}
