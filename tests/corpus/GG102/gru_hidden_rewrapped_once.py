# source: https://learn.biosrag.com/ai/rnn-training-4.html
# label: GG102 29
# effect: raises "Trying to backward through the graph a second time"
# note: the hidden state is made fresh once per epoch, not per batch: batch 2 chains onto batch 1's freed graph
import torch
from torch import nn


class StockGRU(nn.Module):
    def __init__(self, n_features=3, hidden_size=8, num_layers=1):
        super().__init__()
        self.hidden_size, self.num_layers = hidden_size, num_layers
        self.gru = nn.GRU(n_features, hidden_size, num_layers, batch_first=True)
        self.fc = nn.Linear(hidden_size, 1)

    def init_hidden(self, batch_size):
        return torch.zeros(self.num_layers, batch_size, self.hidden_size)

    def forward(self, x, h):
        out, h = self.gru(x, h)
        return self.fc(out[:, -1]), h


def fit(model, windows, optimizer, criterion, epochs, batch_size):
    for epoch in range(epochs):
        h = model.init_hidden(batch_size)
        for x, y in windows:
            optimizer.zero_grad()
            pred, h = model(x, h)
            loss = criterion(pred, y)
            loss.backward()
            optimizer.step()


def observe():
    model = StockGRU()
    windows = [(torch.randn(2, 5, 3), torch.randn(2, 1)) for _ in range(3)]
    fit(model, windows, torch.optim.Adam(model.parameters(), lr=1e-3), nn.MSELoss(), 1, 2)
    return {}
