# source: https://github.com/norse/norse/issues/130
# label: lookalike GG102
# effect: raises "Trying to backward through the graph a second time"
# note: the maintainer's use case: the state is carried through the time steps of one sample, and backward runs once after the loop; each batch starts from a fresh state
from collections import namedtuple

import torch
from torch import nn

LIFState = namedtuple("LIFState", ["z", "v", "i"])


class LIFCell(nn.Module):
    def __init__(self, input_size, hidden_size, tau_mem_inv=0.5, tau_syn_inv=0.2, v_th=1.0):
        super().__init__()
        self.input_weights = nn.Parameter(torch.randn(hidden_size, input_size) * 0.5)
        self.tau_mem_inv = tau_mem_inv
        self.tau_syn_inv = tau_syn_inv
        self.v_th = v_th
        self.hidden_size = hidden_size

    def forward(self, input_tensor, state=None):
        if state is None:
            zeros = torch.zeros(input_tensor.shape[0], self.hidden_size)
            state = LIFState(z=zeros, v=zeros, i=zeros)
        i = state.i - self.tau_syn_inv * state.i + input_tensor @ self.input_weights.t()
        v = state.v + self.tau_mem_inv * (i - state.v)
        z = torch.sigmoid(10 * (v - self.v_th))
        v = v - z * v
        return z, LIFState(z=z, v=v, i=i)


def train(model, batches, optimizer, time_steps=10):
    for data in batches:
        s = None
        for ts in range(time_steps):
            out, s = model(data, s)
        loss = out.sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def observe():
    model = LIFCell(12, 3)
    train(model, [torch.ones(4, 12) for _ in range(3)], torch.optim.SGD(model.parameters(), lr=0.01))
    return {}
