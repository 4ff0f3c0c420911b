"""Stand-ins for the rest of a user's project while an example runs (tests/runtime)."""

from __future__ import annotations

import sys
import types
from contextlib import contextmanager

# The rest of a user's project, which some examples import from (`from .encoder import
# BaseEncoder`, `from training import update_step`): stand-ins of the same names, importable
# both as top-level modules and relative to the example's package.
PROJECT = {
    # skorch's classifier: `fit()` trains the module it builds (a framework's loop: no backward in the example)
    "skorch": (
        "import torch\n\n\nclass NeuralNetClassifier:\n    def __init__(self, module, max_epochs=1, lr=0.1):\n"
        "        self.module_, self.max_epochs, self.lr = module(), max_epochs, lr\n\n    def fit(self, X, y):\n"
        "        opt = torch.optim.SGD(self.module_.parameters(), lr=self.lr)\n        for _ in range(self.max_epochs):\n"
        "            loss = torch.nn.functional.nll_loss(self.module_(X).log(), y)\n"
        "            opt.zero_grad()\n            loss.backward()\n            opt.step()\n        return self\n"
    ),
    "encoder": "from torch import nn\n\nBaseEncoder = nn.Module\n",
    # d2l's utility module (Dive into Deep Learning): a hand-written model, its loss, and SGD over leaves
    "d2l": (
        "import torch\n\n\ndef linreg(X, w, b):\n    return torch.mm(X, w) + b\n\n\n"
        "def squared_loss(y_hat, y):\n    return (y_hat - y.view(y_hat.size())) ** 2 / 2\n\n\n"
        "def sgd(params, lr, batch_size):\n    for param in params:\n        param.data -= lr * param.grad / batch_size\n"
    ),
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
