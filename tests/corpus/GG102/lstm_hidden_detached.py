# source: https://www.codegenes.net/blog/detach-lstm-pytorch
# label: lookalike GG102
# effect: raises "Trying to backward through the graph a second time"
# note: hidden detached at the start of every chunk (truncated BPTT done right)
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
        if hidden is not None:
            hidden = tuple(h.detach() for h in hidden)
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
