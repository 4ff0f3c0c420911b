# source: https://github.com/sgadgil6/cnslab_fmri/issues/4
# label: GG104 24
# effect: raises "Trying to backward through the graph a second time"
# note: fMRI_LSTM keeps the LSTM state on self.hidden and feeds it into the next forward; the second batch's loss.backward() reaches the first batch's freed graph through self.hidden and raises (the issue; retain_graph=True only ran out of memory)
import torch
import torch.nn as nn


class fMRI_LSTM(nn.Module):
    def __init__(self, hidden_dim, input_dim, batch_size=64):
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
        lstm_out, self.hidden = self.lstm(x, self.hidden)
        lstm_out = lstm_out[:, -1, :]
        out = self.dropout(lstm_out)
        linear_output = self.linear(out)
        final_output = self.activate(linear_output)
        return final_output


def train_epoch(model, train_loader, criterion, optimizer):
    model.train()
    epoch_loss = 0.0
    for data, target in train_loader:
        optimizer.zero_grad()
        output = model(data)
        loss = criterion(output.squeeze(-1), target)
        loss.backward()
        optimizer.step()
        epoch_loss += loss.item()
    return epoch_loss / len(train_loader)


def observe():
    model = fMRI_LSTM(hidden_dim=8, input_dim=5, batch_size=4)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    loader = [(torch.randn(4, 6, 5), torch.randint(0, 2, (4,)).float()) for _ in range(3)]
    train_epoch(model, loader, nn.BCELoss(), optimizer)
    return {}
