"""What `--types` asks jedi, and how the CLI's oracle asks it (issue 16: the CPU cost of `--types`).

Fewer questions must never drop a needed answer: a model from another file is still found, a
look-alike of a tensor still left alone, whichever oracle answers (the CLI's batch oracle shares
one jedi inference state between files and freezes jedi's objects out of the garbage collector's
sight; the server's starts afresh for every document)."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from gradguard.engine import Incremental, analyze
from gradguard.typelayer import refine
from gradguard.typelayer.oracle import Oracle

WORKSPACE = Path(__file__).parent / "workspace"


def asked(source: str) -> set[str]:
    """The names the first analysis wants jedi to type."""
    first = analyze(source, ask_types=True)
    return {first.module.code_for_node(node) for _, _, node in first.type_queries}


def test_names_from_the_standard_library_are_not_asked_about():
    source = (
        "import torch\n"
        "from collections import deque\n"
        "from pathlib import Path\n"
        "from models.net import Net\n"
        "from types import Builder\n"  # a project's own `types` module would shadow the library's
        "def train(model, loader):\n"
        "    history = deque(maxlen=10)\n"
        "    root = Path('.')\n"
        "    net = Net()\n"
        "    other = Builder()\n"
        "    for x in loader:\n"
        "        out = model(x)\n"
        "        history.append(out)\n"
    )
    names = asked(source)
    assert {"Net", "model", "Builder"} <= names
    assert not names & {"deque", "Path"}


def test_questions_that_can_only_take_a_finding_away_are_asked_only_where_a_finding_is():
    """`scores.append(s)`, `buf.copy_()`: whether `s` is a float or `buf` a NumPy array can only
    silence a finding, so jedi is asked only in a top-level statement that holds one."""
    source = (
        "import torch\n"
        "from models.net import Net\n"
        "def log(scores, s, buf):\n"
        "    for _ in range(3):\n"
        "        scores.append(s)\n"
        "        buf.copy_(s)\n"
        "def train(loader, history, stats):\n"
        "    net = Net()\n"
        "    for x in loader:\n"
        "        loss = net(x).sum()\n"
        "        loss.backward()\n"
        "        history.append(loss)\n"
        "        stats.copy_(x)\n"
        "def prepare(targets):\n"
        "    return targets.clone()\n"
    )
    first = analyze(source, ask_types=True)
    assert [(f.code, f.range.start.line) for f in first.findings] == [("GG101", 12)]
    names = asked(source)
    # the callee always; receivers beside the finding; `.clone()` / `.detach()` receivers always (a
    # tensor answer can add a finding: a needless copy, a storage alias)
    assert {"Net", "history", "stats", "targets"} <= names
    assert not names & {"scores", "s", "buf"}  # no finding in log(): nothing to take away


def findings(analysis):
    return [(f.code, f.range.start.line, f.message) for f in analysis.findings]


def refined(name: str, oracle):
    source = (WORKSPACE / name).read_text()
    incremental = Incremental()
    first = analyze(source, incremental=incremental, ask_types=True)
    better = refine(first, source, oracle, str(WORKSPACE / name), incremental=incremental)
    return first, better if better is not None else first


@pytest.fixture
def unfrozen():
    yield
    gc.unfreeze()  # what the batch oracle froze goes back to the collector: other tests start as usual


@pytest.mark.parametrize("order", [("train.py", "lookalikes.py"), ("lookalikes.py", "train.py")])
def test_the_batch_oracle_answers_as_the_servers_does(order, unfrozen):
    """One jedi inference state for both files, in either order: the same findings as a fresh one per
    file - the leak through a model of another file found, the look-alikes silent."""
    fresh, batch = Oracle(str(WORKSPACE)), Oracle(str(WORKSPACE), batch=True)
    results = {}
    for name in order:
        first, expected = refined(name, fresh)
        _, got = refined(name, batch)
        assert findings(got) == findings(expected)
        assert {n.value: f for n, f in got.types.items()} == {n.value: f for n, f in expected.types.items()}
        results[name] = (findings(first), findings(got))
    train, lookalikes = results["train.py"], results["lookalikes.py"]
    assert train[0] == [] and [f[0] for f in train[1]] == ["GG101"]  # found only with types
    assert [f[0] for f in lookalikes[0]] == ["GG201"] and lookalikes[1] == []  # syntax's false positive gone
    assert gc.get_freeze_count() > 0  # jedi's objects are out of the collector's sight


def test_the_batch_oracle_collects_what_it_froze_now_and_then(unfrozen, monkeypatch):
    """Frozen objects are never collected: every SETTLE_EVERY batches the oracle thaws them and
    collects once, so that parso's cyclic trees jedi let go of are freed."""
    batch = Oracle(str(WORKSPACE), batch=True)
    monkeypatch.setattr(Oracle, "SETTLE_EVERY", 2)
    collected = []
    real = gc.collect
    monkeypatch.setattr(gc, "collect", lambda *a: collected.append(1) or real(*a))
    source = (WORKSPACE / "train.py").read_text()
    for i in range(4):  # a different text each time: each is a batch (the same text would be answered from the cache)
        batch.facts(source + f"\n# {i}\n", str(WORKSPACE / "train.py"), [(10, 14)])
    assert len(collected) == 2
