# source: https://github.com/jeshraghian/snntorch/issues/250
# label: lookalike GG104
# effect: raises "Trying to backward through the graph a second time"
# note: the issue's fix: the network resets its neurons' hidden state at the start of every forward
import torch
from torch import nn


class Leaky(nn.Module):
    def __init__(self, beta=0.9):
        super().__init__()
        self.beta = beta
        self.mem = None

    def forward(self, cur):
        if self.mem is None:
            self.mem = torch.zeros_like(cur)
        self.mem = self.beta * self.mem + cur
        return torch.sigmoid(self.mem - 1.0)

    def reset(self):
        self.mem = None


class SpikingNet(nn.Module):
    def __init__(self, num_steps=3):
        super().__init__()
        self.num_steps = num_steps
        self.fc1 = nn.Linear(4, 6)
        self.lif1 = Leaky()
        self.fc2 = nn.Linear(6, 2)

    def forward(self, x):
        self.lif1.reset()
        spk_rec = []
        for _ in range(self.num_steps):
            spk_rec.append(self.fc2(self.lif1(self.fc1(x))))
        return torch.stack(spk_rec)


def observe():
    torch.manual_seed(0)
    net = SpikingNet()
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    for _ in range(2):
        optimizer.zero_grad()
        net(torch.randn(3, 4)).pow(2).mean().backward()
        optimizer.step()
    return {}
