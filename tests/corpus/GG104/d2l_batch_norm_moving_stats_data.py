# source: https://github.com/d2l-ai/d2l-en/pull/1342
# label: lookalike GG104
# effect: graph_grows
# note: the PR's fix: batch_norm() returns moving_mean.data / moving_var.data, so forward stores values without a graph
import torch
from torch import nn


def batch_norm(X, gamma, beta, moving_mean, moving_var, eps, momentum):
    if not torch.is_grad_enabled():
        X_hat = (X - moving_mean) / torch.sqrt(moving_var + eps)
    else:
        if len(X.shape) == 2:
            mean = X.mean(dim=0)
            var = ((X - mean) ** 2).mean(dim=0)
        else:
            mean = X.mean(dim=(0, 2, 3), keepdim=True)
            var = ((X - mean) ** 2).mean(dim=(0, 2, 3), keepdim=True)
        X_hat = (X - mean) / torch.sqrt(var + eps)
        moving_mean = momentum * moving_mean + (1.0 - momentum) * mean
        moving_var = momentum * moving_var + (1.0 - momentum) * var
    Y = gamma * X_hat + beta
    return Y, moving_mean.data, moving_var.data


class BatchNorm(nn.Module):
    def __init__(self, num_features, num_dims):
        super().__init__()
        shape = (1, num_features) if num_dims == 2 else (1, num_features, 1, 1)
        self.gamma = nn.Parameter(torch.ones(shape))
        self.beta = nn.Parameter(torch.zeros(shape))
        self.moving_mean = torch.zeros(shape)
        self.moving_var = torch.ones(shape)

    def forward(self, X):
        if self.moving_mean.device != X.device:
            self.moving_mean = self.moving_mean.to(X.device)
            self.moving_var = self.moving_var.to(X.device)
        Y, self.moving_mean, self.moving_var = batch_norm(
            X, self.gamma, self.beta, self.moving_mean, self.moving_var, eps=1e-5, momentum=0.9)
        return Y


def observe():
    from corpus.oracle import graph_size

    net = nn.Sequential(nn.Linear(6, 8), BatchNorm(8, num_dims=2), nn.Sigmoid(), nn.Linear(8, 3))
    opt = torch.optim.SGD(net.parameters(), lr=0.5)
    sizes = []
    for _ in range(3):
        X, y = torch.randn(4, 6), torch.randint(0, 3, (4,))
        opt.zero_grad()
        nn.functional.cross_entropy(net(X), y).backward()
        opt.step()
        sizes.append(graph_size(net[1].moving_mean))
    return {"sizes": sizes}
