# source: https://github.com/MorvanZhou/PyTorch-Tutorial/issues/57
# label: lookalike GG102
# effect: raises "Trying to backward through the graph a second time"
# note: the tutorial as written: `h_state = h_state.data` cuts the carried state from the previous step's graph
import math

import torch
from torch import nn


class RNN(nn.Module):
    def __init__(self, hidden_size=32):
        super().__init__()
        self.rnn = nn.RNN(input_size=1, hidden_size=hidden_size, num_layers=1, batch_first=True)
        self.out = nn.Linear(hidden_size, 1)

    def forward(self, x, h_state):
        r_out, h_state = self.rnn(x, h_state)
        outs = [self.out(r_out[:, t, :]) for t in range(r_out.size(1))]
        return torch.stack(outs, dim=1), h_state


def train(rnn, optimizer, loss_func, n_steps, time_step=10):
    h_state = None
    for step in range(n_steps):
        start, end = step * math.pi, (step + 1) * math.pi
        steps = torch.linspace(start, end, time_step)
        x = torch.sin(steps)[None, :, None]
        y = torch.cos(steps)[None, :, None]
        prediction, h_state = rnn(x, h_state)
        h_state = h_state.data
        loss = loss_func(prediction, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def observe():
    rnn = RNN()
    train(rnn, torch.optim.Adam(rnn.parameters(), lr=0.02), nn.MSELoss(), 3)
    return {}
