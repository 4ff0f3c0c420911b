# source: https://github.com/pytorch/pytorch/issues/20275
# label: lookalike GG104
# effect: graph_grows
# note: the fix given in the issue: the running-stat assignments run under torch.no_grad(), so the buffers never join a graph
import torch
from torch import nn


class MyBatchNorm2d(nn.BatchNorm2d):
    def forward(self, input):
        exponential_average_factor = 0.0
        if self.training and self.track_running_stats:
            self.num_batches_tracked += 1
            exponential_average_factor = self.momentum
        if self.training:
            mean = input.mean([0, 2, 3])
            var = input.var([0, 2, 3], unbiased=False)
            n = input.numel() / input.size(1)
            with torch.no_grad():
                self.running_mean = exponential_average_factor * mean + (1 - exponential_average_factor) * self.running_mean
                self.running_var = (exponential_average_factor * var * n / (n - 1)
                                    + (1 - exponential_average_factor) * self.running_var)
        else:
            mean = self.running_mean
            var = self.running_var
        input = (input - mean[None, :, None, None]) / torch.sqrt(var[None, :, None, None] + self.eps)
        if self.affine:
            input = input * self.weight[None, :, None, None] + self.bias[None, :, None, None]
        return input


def observe():
    from corpus.oracle import graph_size

    model = nn.Sequential(nn.Conv2d(3, 4, 3), MyBatchNorm2d(4), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 4 * 4, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    sizes = []
    for _ in range(3):
        x, y = torch.randn(2, 3, 6, 6), torch.randint(0, 2, (2,))
        opt.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
        sizes.append(graph_size(model[1].running_mean))
    return {"sizes": sizes}
