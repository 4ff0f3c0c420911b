# source: https://github.com/pytorch/pytorch/issues/6990
# label: GG202 17
# effect: wrong_grad
# note: the sigmoid output is clamped through .data to keep the log finite: sigmoid saved that output for backward and .data hides the write, so the saturated rows get a gradient computed from the clamped values (the issue: changes through .data are not tracked and the gradients are wrong)
import torch
import torch.nn.functional as F
from torch import nn


class ClickThroughModel(nn.Module):
    def __init__(self, n_features):
        super().__init__()
        self.linear = nn.Linear(n_features, 1)

    def forward(self, x):
        p = torch.sigmoid(self.linear(x)).squeeze(-1)
        p.data.clamp_(1e-4, 1 - 1e-4)
        return p


def train_step(model, optimizer, x, y):
    optimizer.zero_grad()
    loss = F.binary_cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    return loss.item()


def observe():
    torch.manual_seed(0)
    model = ClickThroughModel(3)
    with torch.no_grad():
        model.linear.weight.copy_(torch.tensor([[6.0, -4.0, 2.0]]))
    ref = ClickThroughModel(3)
    ref.load_state_dict(model.state_dict())
    x, y = torch.randn(6, 3) * 2, torch.tensor([1.0, 0.0, 1.0, 0.0, 1.0, 0.0])
    train_step(model, torch.optim.SGD(model.parameters(), lr=0.1), x, y)
    p = torch.sigmoid(ref.linear(x)).squeeze(-1).clamp(1e-4, 1 - 1e-4)
    F.binary_cross_entropy(p, y).backward()
    return {"grad": model.linear.weight.grad, "expected": ref.linear.weight.grad}
