# source: https://theneuralbase.com/pytorch/learn/intermediate/hidden-state-and-cell-state/
# label: lookalike GG102
# effect: raises "Trying to backward through the graph a second time"
# note: independent sequences: (h_0, c_0) made fresh with zeros for every batch, nothing carried over
import torch
from torch import nn


class SequenceClassifier(nn.Module):
    def __init__(self, input_size=10, hidden_size=20, n_classes=4):
        super().__init__()
        self.lstm = nn.LSTM(input_size, hidden_size, num_layers=1, batch_first=True)
        self.fc = nn.Linear(hidden_size, n_classes)

    def forward(self, x, state):
        output, (h_n, c_n) = self.lstm(x, state)
        return self.fc(h_n[-1]), (h_n, c_n)


def train_epoch(model, loader, optimizer, criterion, hidden_size=20):
    model.train()
    for x_batch, y_batch in loader:
        h_0 = torch.zeros(1, x_batch.shape[0], hidden_size)
        c_0 = torch.zeros(1, x_batch.shape[0], hidden_size)
        logits, (h_n, c_n) = model(x_batch, (h_0, c_0))
        loss = criterion(logits, y_batch)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def observe():
    model = SequenceClassifier()
    loader = [(torch.randn(3, 6, 10), torch.randint(0, 4, (3,))) for _ in range(3)]
    train_epoch(model, loader, torch.optim.Adam(model.parameters(), lr=1e-3), nn.CrossEntropyLoss())
    return {}
