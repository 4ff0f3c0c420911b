# source: https://e-com-net.com/article/1600156146990088192.htm
# label: GG104 21
# effect: raises "Trying to backward through the graph a second time"
# note: forward writes the LSTM's returned (h, c) back into self.h0 / self.c0; the next batch back-propagates into the previous one
import torch
from torch import nn


class SensorLSTM(nn.Module):
    def __init__(self, n_features=12, hidden=16, batch_size=4, n_out=3):
        super().__init__()
        self.flat = nn.Flatten(2)
        self.lstm = nn.LSTM(n_features, hidden, batch_first=True)
        self.h0 = torch.zeros(1, batch_size, hidden)
        self.c0 = torch.zeros(1, batch_size, hidden)
        self.model1 = nn.Sequential(nn.Linear(hidden, n_out))

    def forward(self, inp):
        to_in = self.flat(inp)
        f, _ = self.lstm(to_in, (self.h0, self.c0))
        (self.h0, self.c0) = _
        return self.model1(f[:, -1])


def observe():
    model = SensorLSTM()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for _ in range(3):
        x, y = torch.randn(4, 5, 3, 4), torch.randint(0, 3, (4,))
        opt.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
    return {}
