"""Runtime truth: every example's claim, checked by running it with real PyTorch (CPU).

INVALID examples must show the effect their rule claims (`runtime` assertions,
or the exact error / warning text); VALID examples must run without it.
"""

from __future__ import annotations

import re
import sys
import types
import warnings
from contextlib import contextmanager

import pytest

from examples import INVALID, VALID
from runtime import effects

torch = pytest.importorskip("torch")


# The rest of a user's project, which some examples import from (`from .encoder import
# BaseEncoder`, `from training import update_step`): stand-ins of the same names, importable
# both as top-level modules and relative to the example's package.
PROJECT = {
    "encoder": "from torch import nn\n\nBaseEncoder = nn.Module\n",
    "training": "def update_step(value):\n    value.sum().backward()\n",
    # yolov5's utils/torch_utils.py
    "torch_utils": (
        "import torch\n\n\ndef select_device(device):\n    return torch.device(device)\n\n\n"
        "def smart_inference_mode():\n    def decorate(fn):\n        return torch.inference_mode()(fn)\n    return decorate\n"
    ),
    # p-christ's DQN agent, the base of its prioritised-replay agent
    "ddqn": (
        "import torch\n\n\nclass Memory:\n    def sample(self):\n"
        "        return (torch.randn(4, 3), torch.randint(0, 2, (4, 1)), torch.randn(4, 1), torch.randn(4, 3),\n"
        "                torch.zeros(4, 1), torch.ones(4, 1))\n\n    def update_td_errors(self, errors):\n"
        "        self.errors = errors\n\n\nclass DDQN:\n    def __init__(self):\n"
        "        self.q_network_local, self.q_network_target = torch.nn.Linear(3, 2), torch.nn.Linear(3, 2)\n"
        "        self.q_network_optimizer = torch.optim.SGD(self.q_network_local.parameters(), lr=0.1)\n"
        "        self.memory = Memory()\n\n    def compute_q_targets(self, next_states, rewards, dones):\n"
        "        return rewards + 0.99 * self.q_network_target(next_states).detach().max(1)[0].unsqueeze(1) * (1 - dones)\n\n"
        "    def compute_expected_q_values(self, states, actions):\n"
        "        return self.q_network_local(states).gather(1, actions.long())\n\n"
        "    def take_optimisation_step(self, optimizer, network, loss):\n"
        "        optimizer.zero_grad()\n        loss.backward()\n        optimizer.step()\n"
    ),
}


def project_modules() -> dict[str, types.ModuleType]:
    package = types.ModuleType("userproject")
    package.__path__ = []
    modules = {"userproject": package}
    for name, source in PROJECT.items():
        module = types.ModuleType(name)
        exec(compile(source, f"<userproject/{name}.py>", "exec"), module.__dict__)
        modules[name] = modules[f"userproject.{name}"] = module
    return modules


@contextmanager
def stand_ins():
    """The project's stand-in modules in sys.modules while an example runs. Only they are taken
    out again: what the example imported stays (restoring all of sys.modules made the next
    `import torch._dynamo` run torch's operator registrations a second time, which raises)."""
    modules = project_modules()
    before = {name: sys.modules.get(name) for name in modules}
    sys.modules.update(modules)
    try:
        yield
    finally:
        for name, old in before.items():
            if old is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = old


def run(code: str, runtime: str, name: str) -> dict:
    ns = {"__name__": "__main__", "__package__": "userproject"}
    try:
        with stand_ins():
            exec(compile(code, f"<{name}>", "exec"), ns)
    except ImportError as e:  # a package the tests do not install, a module PROJECT lacks: static analysis only
        if e.name in ("torch", "numpy"):
            raise
        pytest.skip(f"{name}: cannot import {e.name or 'a relative module'}: {e} (tests/runtime/test_runtime_truth.py: PROJECT)")
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
