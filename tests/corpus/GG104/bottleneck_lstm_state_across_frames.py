# source: https://github.com/vikrant7/mobile-vod-bottleneck-lstm/issues/31
# label: GG104 33
# effect: raises "modified by an inplace operation"
# note: a video detector's BottleneckLSTM keeps self.hidden_state / self.cell_state from frame to frame; with retain_graph=True the next frame's backward meets weights that optimizer.step() changed in place
import torch
from torch import nn


class BottleneckLSTMCell(nn.Module):
    def __init__(self, input_channels, hidden_channels):
        super().__init__()
        self.W = nn.Conv2d(input_channels, input_channels, 3, padding=1, groups=input_channels)
        self.Wy = nn.Conv2d(input_channels + hidden_channels, hidden_channels, 1)
        self.Wg = nn.Conv2d(hidden_channels, 4 * hidden_channels, 1)

    def forward(self, x, h, c):
        y = self.Wy(torch.cat((self.W(x), h), 1))
        i, f, o, g = self.Wg(torch.relu(y)).chunk(4, dim=1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.relu(g)
        h = torch.sigmoid(o) * torch.relu(c)
        return h, c


class BottleneckLSTM(nn.Module):
    def __init__(self, input_channels, hidden_channels, height, width, batch_size):
        super().__init__()
        self.cell = BottleneckLSTMCell(input_channels, hidden_channels)
        self.hidden_state = torch.zeros(batch_size, hidden_channels, height, width)
        self.cell_state = torch.zeros(batch_size, hidden_channels, height, width)

    def forward(self, input):
        new_h, new_c = self.cell(input, self.hidden_state, self.cell_state)
        self.hidden_state = new_h
        self.cell_state = new_c
        return self.hidden_state


def train_video(model, head, frames, targets, optimizer, criterion):
    for frame, target in zip(frames, targets):
        optimizer.zero_grad()
        loss = criterion(head(model(frame)), target)
        loss.backward(retain_graph=True)
        optimizer.step()


def observe():
    lstm = BottleneckLSTM(4, 4, 5, 5, batch_size=1)
    head = nn.Conv2d(4, 2, 1)
    opt = torch.optim.SGD(list(lstm.parameters()) + list(head.parameters()), lr=0.01)
    frames = [torch.randn(1, 4, 5, 5) for _ in range(3)]
    targets = [torch.randn(1, 2, 5, 5) for _ in range(3)]
    train_video(lstm, head, frames, targets, opt, nn.MSELoss())
    return {}
