# source: https://github.com/facebookresearch/synsin/pull/20
# label: GG104 23
# effect: graph_grows
# note: stored_mean / stored_var, used only at inference, are updated from the batch statistics with grad on in every training forward
import torch
from torch import nn


class BatchNorm_StandingStats(nn.Module):
    def __init__(self, output_size, eps=1e-5, momentum=0.1):
        super().__init__()
        self.gain = nn.Parameter(torch.ones(output_size))
        self.bias = nn.Parameter(torch.zeros(output_size))
        self.eps, self.momentum = eps, momentum
        self.register_buffer("stored_mean", torch.zeros(output_size))
        self.register_buffer("stored_var", torch.ones(output_size))

    def forward(self, x):
        gain, bias = self.gain.view(1, -1, 1, 1), self.bias.view(1, -1, 1, 1)
        if self.training:
            mean = x.mean([0, 2, 3])
            var = x.var([0, 2, 3], unbiased=False)
            self.stored_mean = (1 - self.momentum) * self.stored_mean + self.momentum * mean
            self.stored_var = (1 - self.momentum) * self.stored_var + self.momentum * var
            out = (x - mean.view(1, -1, 1, 1)) / torch.sqrt(var.view(1, -1, 1, 1) + self.eps)
        else:
            out = (x - self.stored_mean.view(1, -1, 1, 1)) / torch.sqrt(self.stored_var.view(1, -1, 1, 1) + self.eps)
        return out * gain + bias


def observe():
    from corpus.oracle import graph_size

    net = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), BatchNorm_StandingStats(4), nn.ReLU(), nn.Conv2d(4, 3, 1))
    opt = torch.optim.Adam(net.parameters(), lr=1e-4)
    sizes = []
    for _ in range(3):
        img = torch.rand(2, 3, 8, 8)
        opt.zero_grad()
        (net(img) - img).abs().mean().backward()
        opt.step()
        sizes.append(graph_size(net[1].stored_mean))
    return {"sizes": sizes}
