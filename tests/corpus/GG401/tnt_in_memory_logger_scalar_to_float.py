# source: https://github.com/meta-pytorch/tnt/pull/551
# label: GG401 16
# effect: raises "Can't call numpy() on Tensor that requires grad"
# note: the training unit logs its loss through an in-memory logger whose scalar_to_float() helper converts tensors with .cpu().numpy(); a loss that still requires grad makes it raise (the PR adds .detach())
from typing import Dict, Union

import torch
from torch import nn


def scalar_to_float(scalar: Union[int, float, torch.Tensor]) -> float:
    if isinstance(scalar, (int, float)):
        return float(scalar)
    if scalar.numel() != 1:
        raise ValueError(f"Scalar tensor must contain a single item, {scalar.numel()} given.")
    return float(scalar.cpu().numpy().reshape(-1)[0])


class InMemoryLogger:
    def __init__(self) -> None:
        self._log_buffer: Dict[int, Dict[str, float]] = {}

    def log(self, name: str, data: Union[int, float, torch.Tensor], step: int) -> None:
        self._log_buffer.setdefault(step, {})[name] = scalar_to_float(data)


class RegressionUnit:
    def __init__(self, module, optimizer, logger, log_every_n_steps=1):
        self.module = module
        self.optimizer = optimizer
        self.logger = logger
        self.log_every_n_steps = log_every_n_steps
        self.step = 0

    def train_step(self, batch):
        inputs, targets = batch
        outputs = self.module(inputs)
        loss = nn.functional.mse_loss(outputs, targets)
        loss.backward()
        self.optimizer.step()
        self.optimizer.zero_grad()
        if self.step % self.log_every_n_steps == 0:
            self.logger.log("loss", loss, self.step)
        self.step += 1
        return loss, outputs


def observe():
    module = nn.Linear(4, 1)
    unit = RegressionUnit(module, torch.optim.SGD(module.parameters(), lr=0.01), InMemoryLogger())
    for _ in range(2):
        unit.train_step((torch.randn(3, 4), torch.randn(3, 1)))
    return {}
