# source: https://discuss.pytorch.org/t/cuda-out-of-memory-error-understanding-how-pytorch-stores-class-variable/13778
# label: GG101 25
# effect: graph_kept
# note: a DenseNet bottleneck caches each batch's output (with its graph) in a class-level list to replay it once frozen
import torch
import torch.nn.functional as F
from torch import nn


class Bottleneck(nn.Module):
    out_saved = [0] * 900

    def __init__(self, n_channels, growth_rate, max_counter):
        super().__init__()
        self.bn1 = nn.BatchNorm2d(n_channels)
        self.conv1 = nn.Conv2d(n_channels, growth_rate, kernel_size=3, padding=1, bias=False)
        self.active = True
        self.counter = 0
        self.max_counter = max_counter

    def forward(self, x):
        if self.active:
            out = self.conv1(F.relu(self.bn1(x)))
            out = torch.cat((x, out), 1)
            Bottleneck.out_saved[self.counter] = out
            self.counter += 1
            if self.counter >= self.max_counter:
                self.counter = 0
            return out
        detached = Bottleneck.out_saved[self.counter].detach()
        self.counter = (self.counter + 1) % self.max_counter
        return detached


def observe():
    block = Bottleneck(3, 4, max_counter=3)
    head = nn.Linear(7 * 4 * 4, 2)
    opt = torch.optim.SGD(list(block.parameters()) + list(head.parameters()), lr=0.1)
    for _ in range(3):
        x, y = torch.randn(2, 3, 4, 4), torch.randint(0, 2, (2,))
        opt.zero_grad()
        loss = F.cross_entropy(head(block(x).flatten(1)), y)
        loss.backward()
        opt.step()
    return {"kept": [t for t in Bottleneck.out_saved if isinstance(t, torch.Tensor)]}
