"""Classes are not instances (issue 16): a parameter annotated `Model: nn.Module` that the code
calls to build a model it then uses as a module holds the class; `Model(envs)` constructs, and
only the call of what it made is a forward. `type[nn.Module]` is a class for jedi already."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SOURCE = '''\
import torch
from torch import nn


def evaluate(Model: nn.Module, envs, state, x):
    model = Model(envs)
    model.load_state_dict(state)
    out = model(x)
    return out.sum().item()


def evaluate_typed(Model: type[nn.Module], envs, state, x):
    model = Model(envs)
    model.load_state_dict(state)
    out = model(x)
    return out.sum().item()


def evaluate_instance(model: nn.Module, x):
    model.eval()
    return model(x).sum().item()
'''

FORWARD = (  # (said by where the outputs go, not by the function's name)
    "warning: GG103 `model(x)` runs with grad enabled and its outputs reach only `.item()` (line {}), never a "
    "`.backward()`: autograd records the graph and keeps its activations for nothing\n"
)


def check(tmp_path: Path, *args: str):
    (tmp_path / "evaluate.py").write_text(SOURCE)
    return subprocess.run(
        [sys.executable, "-m", "gradguard", "check", "--no-cache", "-q", *args, "evaluate.py"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )


INSTANCE = (
    "evaluate.py:21:12: warning: GG103 `model(x)` runs with grad enabled after `.eval()` on line 20 and its output "
    "never reaches a `.backward()`: autograd records the graph and keeps its activations for nothing (`eval()` does "
    "not disable gradients)\n"
)


def test_without_types_only_the_instance_used_as_a_module_is_known(tmp_path):
    assert check(tmp_path).stdout == INSTANCE


def test_with_types_the_constructor_is_not_a_forward_and_the_forward_is_found(tmp_path):
    run = check(tmp_path, "--types")
    assert (run.returncode, run.stderr) == (1, "")
    assert run.stdout == (
        "evaluate.py:8:11: " + FORWARD.format(9) + "evaluate.py:15:11: " + FORWARD.format(16) + INSTANCE
    )
