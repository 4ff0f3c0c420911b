# source: https://blog.youkuaiyun.com/windhawk_fly/article/details/143405685
# label: GG102 26
# effect: raises "modified by an inplace operation"
# note: (h0, c0) carried across batches and backward(retain_graph=True) to silence the first error: the old graph then meets weights optimizer.step() changed in place
import torch
from torch import nn


class LanguageLSTM(nn.Module):
    def __init__(self, embedding_dim=6, hidden_dim=8, num_layers=1):
        super().__init__()
        self.lstm = nn.LSTM(embedding_dim, hidden_dim, num_layers, batch_first=True)
        self.proj = nn.Linear(hidden_dim, embedding_dim)

    def forward(self, x, h0, c0):
        out, (h, c) = self.lstm(x, (h0, c0))
        return self.proj(out), (h, c)


def train(lstm, data_loader, optimizer, loss_fn, epochs, num_layers, batch_size, hidden_dim, embedding_dim):
    for epoch in range(epochs):
        h0 = torch.randn((num_layers, batch_size, hidden_dim), requires_grad=False)
        c0 = torch.randn((num_layers, batch_size, hidden_dim), requires_grad=False)
        for batch in data_loader:
            optimizer.zero_grad()
            output, (h0, c0) = lstm(batch[0], h0, c0)
            loss = loss_fn(output.reshape(-1, embedding_dim), batch[1].reshape(-1, embedding_dim))
            loss.backward(retain_graph=True)
            optimizer.step()


def observe():
    model = LanguageLSTM()
    loader = [(torch.randn(2, 4, 6), torch.randn(2, 4, 6)) for _ in range(3)]
    train(model, loader, torch.optim.Adam(model.parameters(), lr=1e-3), nn.MSELoss(), 1, 1, 2, 8, 6)
    return {}
