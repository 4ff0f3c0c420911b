# source: https://github.com/pytorch/examples/blob/main/word_language_model/main.py
# label: lookalike GG102
# effect: raises "Trying to backward through the graph a second time"
# note: the word language model's repackage_hidden(): the carried state is detached (tuples item by item) at every bptt chunk
import torch
from torch import nn


def repackage_hidden(h):
    """Wraps hidden states in new Tensors, to detach them from their history."""
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)


class RNNModel(nn.Module):
    def __init__(self, ntoken=20, ninp=8, nhid=8, nlayers=2):
        super().__init__()
        self.nlayers, self.nhid = nlayers, nhid
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.LSTM(ninp, nhid, nlayers)
        self.decoder = nn.Linear(nhid, ntoken)

    def forward(self, input, hidden):
        output, hidden = self.rnn(self.encoder(input), hidden)
        return self.decoder(output).view(-1, self.decoder.out_features), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        return (weight.new_zeros(self.nlayers, bsz, self.nhid), weight.new_zeros(self.nlayers, bsz, self.nhid))


def train_epoch(model, train_data, criterion, lr, bptt, batch_size, clip=0.25):
    model.train()
    hidden = model.init_hidden(batch_size)
    for i in range(0, train_data.size(0) - 1, bptt):
        seq_len = min(bptt, len(train_data) - 1 - i)
        data, targets = train_data[i:i + seq_len], train_data[i + 1:i + 1 + seq_len].view(-1)
        model.zero_grad()
        hidden = repackage_hidden(hidden)
        output, hidden = model(data, hidden)
        loss = criterion(output, targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        for p in model.parameters():
            p.data.add_(p.grad, alpha=-lr)


def observe():
    model = RNNModel()
    train_data = torch.randint(0, 20, (16, 2))
    train_epoch(model, train_data, nn.CrossEntropyLoss(), 0.5, 5, 2)
    return {}
