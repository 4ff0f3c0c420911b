# source: https://github.com/sgadgil6/cnslab_fmri/issues/4
# label: lookalike GG104
# effect: raises "Trying to backward through the graph a second time"
# note: the fix posted in the thread: forward() still stores the LSTM state on self.hidden, but never passes it back in (`self.lstm(x)` starts from zeros), so no batch reaches into another's graph
import torch
import torch.nn as nn


class fMRI_LSTM(nn.Module):
    def __init__(self, hidden_dim, input_dim, batch_size=4):
        super(fMRI_LSTM, self).__init__()
        self.hidden_dim = hidden_dim
        self.batch_size = batch_size
        self.lstm = nn.LSTM(input_dim, hidden_dim, num_layers=1, batch_first=True)
        self.linear = nn.Linear(hidden_dim, 1)
        self.hidden = self.init_hidden()
        self.dropout = nn.Dropout(p=0.2)
        self.activate = nn.Sigmoid()

    def init_hidden(self):
        return (torch.randn(1, self.batch_size, self.hidden_dim), torch.randn(1, self.batch_size, self.hidden_dim))

    def forward(self, x):
        lstm_out, self.hidden = self.lstm(x)
        lstm_out = lstm_out[:, -1, :]
        out = self.dropout(lstm_out)
        linear_output = self.linear(out)
        return self.activate(linear_output).squeeze(1)


def run_training(model, loader, epochs=2, lr=1e-3):
    criterion = nn.BCELoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    for epoch in range(epochs):
        for data, label in loader:
            optimizer.zero_grad()
            loss = criterion(model(data), label)
            loss.backward()
            optimizer.step()


def observe():
    model = fMRI_LSTM(hidden_dim=8, input_dim=6)
    run_training(model, [(torch.randn(4, 5, 6), torch.rand(4).round()) for _ in range(3)])
    return {}
