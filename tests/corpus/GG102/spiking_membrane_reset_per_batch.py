# source: https://github.com/jeshraghian/snntorch/issues/250
# label: lookalike GG102
# effect: raises "Trying to backward through the graph a second time"
# note: the thread's fix: the membrane is reset for every batch and carried only across its time steps
import torch
from torch import nn


class SpikeFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, mem):
        ctx.save_for_backward(mem)
        return (mem > 1.0).float()

    @staticmethod
    def backward(ctx, grad_output):
        (mem,) = ctx.saved_tensors
        return grad_output / (1 + (mem - 1.0).abs()) ** 2


class LeakyNet(nn.Module):
    def __init__(self, n_in=10, n_out=3, beta=0.9):
        super().__init__()
        self.fc = nn.Linear(n_in, n_out)
        self.beta = beta

    def forward(self, x, mem):
        mem = self.beta * mem + self.fc(x)
        spk = SpikeFn.apply(mem)
        mem = mem - spk
        return spk, mem


def train(net, loader, optimizer, loss_fn, num_steps):
    for data, targets in loader:
        mem = torch.zeros(1)
        spk_rec = []
        for step in range(num_steps):
            spk, mem = net(data, mem)
            spk_rec.append(spk)
        loss = loss_fn(torch.stack(spk_rec).sum(0), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def observe():
    net = LeakyNet()
    loader = [(torch.rand(4, 10) * 2, torch.randint(0, 3, (4,))) for _ in range(3)]
    train(net, loader, torch.optim.Adam(net.parameters(), lr=5e-3), nn.CrossEntropyLoss(), 5)
    return {}
