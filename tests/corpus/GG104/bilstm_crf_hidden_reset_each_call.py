# source: https://github.com/pytorch/tutorials/pull/95
# label: lookalike GG104
# effect: raises "Trying to backward through the graph a second time"
# note: the BiLSTM-CRF tutorial: _get_lstm_features() resets self.hidden = self.init_hidden() before `lstm_out, self.hidden = self.lstm(embeds, self.hidden)`
import torch
from torch import nn


class BiLSTM_CRF(nn.Module):
    def __init__(self, vocab_size, tagset_size, embedding_dim=6, hidden_dim=8):
        super().__init__()
        self.hidden_dim = hidden_dim
        self.word_embeds = nn.Embedding(vocab_size, embedding_dim)
        self.lstm = nn.LSTM(embedding_dim, hidden_dim // 2, num_layers=1, bidirectional=True)
        self.hidden2tag = nn.Linear(hidden_dim, tagset_size)
        self.hidden = self.init_hidden()

    def init_hidden(self):
        return (torch.randn(2, 1, self.hidden_dim // 2), torch.randn(2, 1, self.hidden_dim // 2))

    def _get_lstm_features(self, sentence):
        self.hidden = self.init_hidden()
        embeds = self.word_embeds(sentence).view(len(sentence), 1, -1)
        lstm_out, self.hidden = self.lstm(embeds, self.hidden)
        lstm_out = lstm_out.view(len(sentence), self.hidden_dim)
        return self.hidden2tag(lstm_out)

    def neg_log_likelihood(self, sentence, tags):
        feats = self._get_lstm_features(sentence)
        return nn.functional.cross_entropy(feats, tags, reduction="sum")

    def forward(self, sentence):
        return self._get_lstm_features(sentence).argmax(-1)


def observe():
    model = BiLSTM_CRF(vocab_size=12, tagset_size=5)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, weight_decay=1e-4)
    for _ in range(3):
        sentence, tags = torch.randint(0, 12, (7,)), torch.randint(0, 5, (7,))
        model.zero_grad()
        model.neg_log_likelihood(sentence, tags).backward()
        opt.step()
    return {}
