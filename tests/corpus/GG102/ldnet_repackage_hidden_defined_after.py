# source: https://github.com/LiyuanLucasLiu/LD-Net/issues/6
# label: lookalike GG102
# effect: raises "Trying to backward through the graph a second time"
# note: the language model carries its hidden state across batches, cut at every batch by repackage_hidden() ("to detach the gradient of hidden"), a helper the file defines after the loop that uses it
import torch
import torch.nn as nn


class RNNLanguageModel(nn.Module):
    def __init__(self, ntoken=10, ninp=6, nhid=8):
        super().__init__()
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.LSTM(ninp, nhid)
        self.decoder = nn.Linear(nhid, ntoken)
        self.nhid = nhid

    def forward(self, input, hidden):
        output, hidden = self.rnn(self.encoder(input), hidden)
        return self.decoder(output), hidden

    def init_hidden(self, bsz):
        return (torch.zeros(1, bsz, self.nhid), torch.zeros(1, bsz, self.nhid))


def train_epoch(model, train_data, optimizer, criterion, bptt=4, batch_size=2, clip=0.25):
    model.train()
    hidden = model.init_hidden(batch_size)
    for i in range(0, train_data.size(0) - 1, bptt):
        seq_len = min(bptt, train_data.size(0) - 1 - i)
        data, targets = train_data[i:i + seq_len], train_data[i + 1:i + 1 + seq_len].reshape(-1)
        hidden = repackage_hidden(hidden)
        model.zero_grad()
        output, hidden = model(data, hidden)
        loss = criterion(output.view(-1, output.size(-1)), targets)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), clip)
        optimizer.step()


def repackage_hidden(h):
    """Wraps hidden states in new Tensors, to detach them from their history."""
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)


def observe():
    model = RNNLanguageModel()
    train_epoch(model, torch.randint(0, 10, (13, 2)), torch.optim.SGD(model.parameters(), lr=0.5),
                nn.CrossEntropyLoss())
    return {}
