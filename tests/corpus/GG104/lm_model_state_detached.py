# source: https://forums.fast.ai/t/rnn-hidden-state-initializations-chapter-12/91887
# label: lookalike GG104
# effect: raises "Trying to backward through the graph a second time"
# note: the book's LMModel5: forward keeps the RNN state in self.h but stores h.detach(), so the next batch starts from values only
import torch
from torch import nn


class LMModel5(nn.Module):
    def __init__(self, vocab_sz, n_hidden, n_layers, bs):
        super().__init__()
        self.i_h = nn.Embedding(vocab_sz, n_hidden)
        self.rnn = nn.RNN(n_hidden, n_hidden, n_layers, batch_first=True)
        self.h_o = nn.Linear(n_hidden, vocab_sz)
        self.h = torch.zeros(n_layers, bs, n_hidden)

    def forward(self, x):
        res, h = self.rnn(self.i_h(x), self.h)
        self.h = h.detach()
        return self.h_o(res)

    def reset(self):
        self.h.zero_()


def observe():
    model = LMModel5(vocab_sz=30, n_hidden=16, n_layers=2, bs=4)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for _ in range(3):
        x, y = torch.randint(0, 30, (4, 6)), torch.randint(0, 30, (4, 6))
        opt.zero_grad()
        nn.functional.cross_entropy(model(x).flatten(0, 1), y.flatten()).backward()
        opt.step()
    return {}
