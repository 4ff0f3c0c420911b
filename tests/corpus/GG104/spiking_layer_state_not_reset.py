# source: https://github.com/jeshraghian/snntorch/issues/250
# label: GG104 18
# effect: raises "Trying to backward through the graph a second time"
# note: a stateful leaky neuron keeps self.mem between forward calls and nothing resets it between batches (the thread's error)
import torch
from torch import nn


class Leaky(nn.Module):
    """Leaky integrate-and-fire neuron that keeps its membrane potential as state."""

    def __init__(self, beta, threshold=1.0):
        super().__init__()
        self.beta, self.threshold = beta, threshold
        self.mem = torch.zeros(1)

    def forward(self, input_):
        self.mem = self.beta * self.mem + input_
        spk = torch.sigmoid(5 * (self.mem - self.threshold))
        self.mem = self.mem - spk * self.threshold
        return spk

    def reset_hidden(self):
        self.mem = torch.zeros(1)


class SpikingCNN(nn.Module):
    def __init__(self, num_steps=4):
        super().__init__()
        self.num_steps = num_steps
        self.conv = nn.Conv2d(1, 4, 3)
        self.lif1 = Leaky(beta=0.9)
        self.fc = nn.Linear(4 * 4 * 4, 3)
        self.lif2 = Leaky(beta=0.9)

    def forward(self, x):
        spk_rec = []
        for step in range(self.num_steps):
            spk1 = self.lif1(self.conv(x))
            spk_rec.append(self.lif2(self.fc(spk1.flatten(1))))
        return torch.stack(spk_rec)


def observe():
    net = SpikingCNN()
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    for _ in range(3):
        x, y = torch.rand(2, 1, 6, 6), torch.randint(0, 3, (2,))
        opt.zero_grad()
        nn.functional.cross_entropy(net(x).sum(0), y).backward()
        opt.step()
    return {}
