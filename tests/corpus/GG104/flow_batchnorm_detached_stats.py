# source: https://github.com/bayesiains/nflows/pull/11
# label: lookalike GG104
# effect: graph_grows
# note: the PR's fix: the running stats are updated from detached batch statistics, so the buffers stay plain values
import torch
from torch import nn


class BatchNorm(nn.Module):
    """Transform that performs batch normalization (a normalizing-flow layer)."""

    def __init__(self, features, eps=1e-5, momentum=0.1):
        super().__init__()
        self.momentum = momentum
        self.eps = eps
        constant = torch.log(torch.exp(torch.tensor(1 - eps)) - 1)
        self.unconstrained_weight = nn.Parameter(constant * torch.ones(features))
        self.bias = nn.Parameter(torch.zeros(features))
        self.register_buffer("running_mean", torch.zeros(features))
        self.register_buffer("running_var", torch.zeros(features))

    @property
    def weight(self):
        return nn.functional.softplus(self.unconstrained_weight) + self.eps

    def forward(self, inputs):
        if self.training:
            mean, var = inputs.mean(0), inputs.var(0)
            self.running_mean.mul_(1 - self.momentum).add_(mean.detach() * self.momentum)
            self.running_var.mul_(1 - self.momentum).add_(var.detach() * self.momentum)
        else:
            mean, var = self.running_mean, self.running_var
        outputs = self.weight * ((inputs - mean) / torch.sqrt(var + self.eps)) + self.bias
        logabsdet = torch.sum(torch.log(self.weight) - 0.5 * torch.log(var + self.eps)) * inputs.new_ones(inputs.shape[0])
        return outputs, logabsdet


def observe():
    from corpus.oracle import graph_size

    flow = nn.ModuleList([nn.Linear(3, 3), BatchNorm(3)])
    opt = torch.optim.Adam(flow.parameters(), lr=1e-3)
    sizes = []
    for _ in range(3):
        x = torch.randn(8, 3)
        z, logabsdet = flow[1](flow[0](x))
        loss = -(-0.5 * z.pow(2).sum(1) + logabsdet).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        sizes.append(graph_size(flow[1].running_mean))
    return {"sizes": sizes}
