# source: https://learn.biosrag.com/ai/rnn-training-4.html
# label: GG102 24
# effect: raises "Trying to backward through the graph a second time"
# note: the hidden state of batch 1 feeds batch 2 without detach
import torch


class CharRNN(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = torch.nn.LSTM(4, 8, batch_first=True)
        self.head = torch.nn.Linear(8, 4)

    def forward(self, x, hidden=None):
        out, hidden = self.lstm(x, hidden)
        return self.head(out), hidden


def train_tbptt(model, chunks, optimizer, criterion):
    model.train()
    hidden = None
    for x, y in chunks:
        optimizer.zero_grad()
        out, hidden = model(x, hidden)
        loss = criterion(out, y)
        loss.backward()
        optimizer.step()


def observe():
    model = CharRNN()
    chunks = [(torch.randn(2, 5, 4), torch.randn(2, 5, 4)) for _ in range(3)]
    train_tbptt(model, chunks, torch.optim.SGD(model.parameters(), lr=0.1), torch.nn.MSELoss())
    return {}
