"""The bug corpus (tests/corpus): every program's label is proved by running it with
torch 2.13 - the bug's effect is there, a look-alike's is not."""

from __future__ import annotations

import pytest

from corpus import oracle

pytest.importorskip("torch")

PROGRAMS = oracle.programs()


def test_corpus_headers_are_complete():
    for p in PROGRAMS:
        assert p.url.startswith(("https://", "http://")), p.name
        assert p.effect in oracle.CHECKERS, f"{p.name}: unknown effect {p.effect}"
        assert all(c.startswith("GG") for c in p.codes), p.name
        if p.line is not None:
            assert 1 <= p.line <= p.source.count("\n"), p.name
            assert "observe" not in p.source.splitlines()[p.line - 1], f"{p.name}: the label is on observe()"
        assert "def observe(" in p.source, p.name


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.name for p in PROGRAMS])
def test_label_is_proved_by_running_it(program):
    obs = oracle.run(program)
    if program.effect not in ("raises",):
        assert obs["error"] is None, f"observe() failed: {obs['error']}"
    effect = oracle.present(program, obs)
    if program.lookalike:
        assert not effect, f"a look-alike shows the effect {program.effect}"
    else:
        assert effect, f"the bug's effect {program.effect} did not show"
