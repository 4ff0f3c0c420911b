"""The type layer (jedi) on a workspace whose model is defined in another file:
the graph leak appears only with types; look-alikes of tensors stop being taken
for tensors. jedi reads the files; nothing in the workspace is imported."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from gradguard.engine import Incremental, analyze
from gradguard.findings import Position, Range
from gradguard.typelayer import refine
from gradguard.typelayer.oracle import Oracle

WORKSPACE = Path(__file__).parent / "workspace"
LEAK = (
    "GG101",
    Range(Position(11, 23), Position(11, 26)),
    "`out` carries an autograd graph (from `model(x)` on line 10) that is never back-propagated; "
    "storing it in `outputs` keeps every saved activation alive across iterations",
)


@pytest.fixture(scope="module")
def oracle():
    return Oracle(str(WORKSPACE))


def findings(analysis):
    return [(f.code, f.range, f.message) for f in analysis.findings]


def refined(name: str, oracle):
    source = (WORKSPACE / name).read_text()
    incremental = Incremental()
    first = analyze(source, incremental=incremental, ask_types=True)
    return first, refine(first, source, oracle, str(WORKSPACE / name), incremental=incremental)


def test_a_model_from_another_file_makes_the_leak_visible(oracle):
    first, better = refined("train.py", oracle)
    assert findings(first) == []
    assert findings(better) == [LEAK]
    typed = {n.value: f.describe() for n, f in better.types.items()}
    assert typed["model"] == "`models.net.Net` (an nn.Module, from `models/net.py`)"
    assert typed["Net"] == "`models.net.Net` (an nn.Module subclass, from `models/net.py`)"


def test_look_alikes_are_not_tensors_once_types_are_known(oracle):
    first, better = refined("lookalikes.py", oracle)
    # Syntax alone takes `checkout.detach()` for a tensor's: a wrong GG201.
    assert [f[0] for f in findings(first)] == ["GG201"]
    assert findings(better) == []
    typed = {n.value: f.kind for n, f in better.types.items()}
    assert typed["acc"] == "number"  # a float from a helper: history.append(acc) keeps nothing
    assert typed["checkout"] == typed["copy"] == "object"


def test_the_leak_is_real_at_run_time():
    """What the finding claims, run with torch: every kept `out` still holds its graph."""
    code = (
        "import torch\nfrom train import collect\nfrom models.net import Net\n"
        "outs, _ = collect(Net(), [torch.randn(2, 4) for _ in range(3)])\n"
        "print(all(o.grad_fn is not None for o in outs), len(outs))\n"
    )
    run = subprocess.run([sys.executable, "-c", code], cwd=WORKSPACE, capture_output=True, text=True, check=True)
    assert run.stdout.split() == ["True", "3"]


def test_without_torch_importable_the_bundled_stubs_resolve_the_model(tmp_path):
    """An interpreter without torch: GradGuard's own torch stubs stand in for it, so `Net`
    (a subclass of `nn.Module` in another file) is still a module and the leak is found."""
    venv = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    bare = Oracle(str(WORKSPACE), str(venv / "bin" / "python"))
    assert bare.status().state == "stubs"
    first, better = refined("train.py", bare)
    assert findings(first) == []
    assert findings(better) == [LEAK]
