# source: https://github.com/yifita/deep_cage/issues/16
# label: GG301 27
# effect: wrong_grad
# note: the weight predictor's output is detached before it is returned and regularised: the regulariser never reaches the predictor ("no matter how big mvc_weight is, the result has not changed")
import torch
from torch import nn


class CageDeformer(nn.Module):
    def __init__(self, n_cage=4, n_points=6):
        super().__init__()
        self.weight_net = nn.Linear(3, n_cage)
        self.offset_net = nn.Linear(3, 3)

    def forward(self, points, cage):
        weights = torch.softmax(self.weight_net(points), dim=-1)
        deformed = weights @ (cage + self.offset_net(cage))
        return {"deformed": deformed, "weight": weights}


def mvc_reg_loss(weights):
    return weights.clamp(max=0).pow(2).mean() + (weights ** 2).mean()


def compute_losses(model, points, cage, target, mvc_weight=1.0):
    outputs = model(points, cage)
    weights = outputs["weight"].detach()
    loss = ((outputs["deformed"] - target) ** 2).mean()
    loss = loss + mvc_reg_loss(weights) * mvc_weight
    return loss


def observe():
    torch.manual_seed(0)
    model = CageDeformer()
    points, cage, target = torch.randn(6, 3), torch.randn(4, 3), torch.randn(6, 3)
    compute_losses(model, points, cage, target, mvc_weight=10.0).backward()
    got = model.weight_net.weight.grad.clone()
    model.zero_grad()
    outputs = model(points, cage)  # the loss the code means: the regulariser in the graph
    (((outputs["deformed"] - target) ** 2).mean() + mvc_reg_loss(outputs["weight"]) * 10.0).backward()
    return {"grad": got, "expected": model.weight_net.weight.grad}
