# source: https://github.com/source-separation/tutorial/issues/28
# label: GG401 55
# effect: raises "Can't call numpy() on Tensor that requires grad"
# note: the tutorial's "Signs of Healthy Training" sweep trains the line model once per learning rate and keeps each iteration's loss tensor; the plot cell's np.log10(losses[j]) converts a list of tensors that require grad and raises (the issue: "Need to detach() tensor")
import numpy as np
import torch
from torch import nn

LEARNING_RATES = [1e-4, 1e-3, 1e-2, 1e-1]


class Line(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(1, 1)

    def forward(self, x):
        y = self.layer(x)
        return y


def train_line(x, y, lr, n_iter=50):
    line = Line()
    optimizer = torch.optim.SGD(line.parameters(), lr=lr)
    loss_fn = nn.L1Loss()
    grad_norms, losses = [], []
    for _ in range(n_iter):
        optimizer.zero_grad()
        loss = loss_fn(line(x), y)
        loss.backward()
        grad_norm = 0
        for p in line.parameters():
            grad_norm += p.grad.norm(2).item() ** 2
        grad_norms.append(grad_norm ** 0.5)
        losses.append(loss)
        optimizer.step()
    return grad_norms, losses


def sweep_learning_rates(x, y, learning_rates=LEARNING_RATES, n_iter=50):
    grad_norms, losses = [], []
    for lr in learning_rates:
        g, l = train_line(x, y, lr, n_iter=n_iter)
        grad_norms.append(g)
        losses.append(l)
    return grad_norms, losses


def healthy_training_curves(grad_norms, losses, learning_rates=LEARNING_RATES):
    """The two panels of the figure: gradient norm, and log10 of the loss, per learning rate."""
    curves = {}
    for j, lr in enumerate(learning_rates):
        curves[lr] = {"grad_norm": np.asarray(grad_norms[j])}
    for j, lr in enumerate(learning_rates):
        curves[lr]["log_loss"] = np.log10(losses[j])
    return curves


def observe():
    x = torch.randn(32, 1)
    y = 3.0 * x + 1.0 + 0.1 * torch.randn(32, 1)
    grad_norms, losses = sweep_learning_rates(x, y, n_iter=5)
    healthy_training_curves(grad_norms, losses)
    return {}
