"""The sample package both project-wide test files build (tests/cli/test_project.py through the CLI,
tests/lsp/test_lsp_project.py through the server): a model whose `generate()` calls `.numpy()`, and its
only caller, under `@torch.no_grad()`; a training unit whose logger converts what it is given
(unit.py) and the only code that builds it with that logger (fit.py); a script that builds the model
with the factory and prints a prediction (show.py); a class whose method returns an evaluation loss that
still carries its graph (users.py) and a caller that keeps those losses in a list (server.py)."""

NET = """\
import torch
from torch import nn


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 4)

    def forward(self, z):
        return self.fc(z)

    def generate(self, n):
        z = torch.randn(n, 8)
        return self.forward(z).numpy()


def create_model():
    return Generator()
"""

SAMPLE = """\
import torch

from ganpkg.models import Generator


@torch.no_grad()
def main():
    g = Generator()
    print(g.generate(4))


if __name__ == "__main__":
    main()
"""

UNIT = """\
import torch
from torch import nn


def scalar_to_float(scalar):
    if isinstance(scalar, (int, float)):
        return float(scalar)
    return float(scalar.cpu().numpy().reshape(-1)[0])


class InMemoryLogger:
    def __init__(self):
        self.buffer = {}

    def log(self, name, data, step):
        self.buffer.setdefault(step, {})[name] = scalar_to_float(data)


class RegressionUnit:
    def __init__(self, module, optimizer, logger):
        self.module = module
        self.optimizer = optimizer
        self.logger = logger
        self.step = 0

    def train_step(self, inputs, targets):
        loss = nn.functional.mse_loss(self.module(inputs), targets)
        loss.backward()
        self.optimizer.step()
        self.optimizer.zero_grad()
        self.logger.log("loss", loss, self.step)
        self.step += 1
"""

FIT = """\
import torch
from torch import nn

from ganpkg.unit import InMemoryLogger, RegressionUnit


def fit(steps=2):
    module = nn.Linear(4, 1)
    unit = RegressionUnit(module, torch.optim.SGD(module.parameters(), lr=0.01), InMemoryLogger())
    for _ in range(steps):
        unit.train_step(torch.randn(3, 4), torch.randn(3, 1))
    return unit


if __name__ == "__main__":
    fit()
"""

SHOW = """\
import torch

from ganpkg.models import create_model


def show(path):
    model = create_model()
    model.load_state_dict(torch.load(path))
    z = torch.randn(4, 8)
    print(model(z).argmax(1))
    return model(z)
"""

CLIENT = """\
import torch
from torch import nn


class Client:
    def __init__(self, model, batches):
        self.model = model
        self.batches = batches
        self.criterion = nn.MSELoss()

    def test(self):
        loss = 0
        for x, y in self.batches:
            loss += self.criterion(self.model(x), y)
        return loss, len(self.batches)
"""

SERVER = """\
import torch

from ganpkg.users import Client


def evaluate(clients):
    losses = []
    for client in clients:
        loss, n = client.test()
        losses.append(loss)
    return torch.stack(losses).mean().item()
"""
