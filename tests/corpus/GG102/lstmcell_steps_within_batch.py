# source: https://glaringlee.github.io/generated/torch.nn.LSTMCell.html
# label: lookalike GG102
# effect: raises "Trying to backward through the graph a second time"
# note: (hx, cx) fed back across the time steps of one batch (that is the BPTT) and started fresh for the next batch
import torch
from torch import nn


class CellForecaster(nn.Module):
    def __init__(self, input_size=10, hidden_size=20):
        super().__init__()
        self.hidden_size = hidden_size
        self.cell = nn.LSTMCell(input_size, hidden_size)
        self.head = nn.Linear(hidden_size, 1)


def train(model, loader, optimizer, criterion):
    for inputs, target in loader:
        hx = torch.zeros(inputs.size(1), model.hidden_size)
        cx = torch.zeros(inputs.size(1), model.hidden_size)
        output = []
        for i in range(inputs.size(0)):
            hx, cx = model.cell(inputs[i], (hx, cx))
            output.append(hx)
        output = torch.stack(output, dim=0)
        loss = criterion(model.head(output[-1]), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def observe():
    model = CellForecaster()
    loader = [(torch.randn(6, 3, 10), torch.randn(3, 1)) for _ in range(3)]
    train(model, loader, torch.optim.SGD(model.parameters(), lr=0.05), nn.MSELoss())
    return {}
