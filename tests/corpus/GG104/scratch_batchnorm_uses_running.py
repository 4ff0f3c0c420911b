# source: https://discuss.pytorch.org/t/implementing-batchnorm-in-pytorch-problem-with-updating-self-running-mean-and-self-running-var/49314/11
# label: GG104 23
# effect: raises "Trying to backward through the graph a second time"
# note: a from-scratch BatchNorm normalises with self.running_mean, which forward reassigns from the batch mean: batch 2 reaches batch 1's graph
import torch
from torch import nn


class BatchNorm(nn.Module):
    def __init__(self, num_channels, momentum=0.9, epsilon=1e-05):
        super().__init__()
        self.momentum = momentum
        self.epsilon = epsilon
        self.weight = nn.Parameter(torch.rand(num_channels))
        self.bias = nn.Parameter(torch.zeros(num_channels))
        self.register_buffer("running_mean", torch.zeros(num_channels))
        self.register_buffer("running_var", torch.ones(num_channels))

    def forward(self, input, mode=0):
        if mode == 0:
            mean = input.mean([0, 2, 3])
            var = input.var([0, 2, 3])
            self.running_mean = (self.momentum * self.running_mean) + (1.0 - self.momentum) * mean
            self.running_var = (self.momentum * self.running_var) + (1.0 - self.momentum) * (
                input.shape[0] / (input.shape[0] - 1) * var)
            mean = self.running_mean
            var = self.running_var
        else:
            mean, var = self.running_mean, self.running_var
        x = (input - mean[None, :, None, None]) / torch.sqrt(var[None, :, None, None] + self.epsilon)
        return x * self.weight[None, :, None, None] + self.bias[None, :, None, None]


def observe():
    model = nn.Sequential(nn.Conv2d(1, 3, 3), BatchNorm(3), nn.ReLU(), nn.Flatten(), nn.Linear(3 * 4 * 4, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for _ in range(3):
        x, y = torch.randn(4, 1, 6, 6), torch.randint(0, 10, (4,))
        opt.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
    return {}
