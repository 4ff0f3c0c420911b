# source: https://github.com/dpressel/dliss-tutorial/issues/1
# label: GG102 34
# effect: raises "Trying to backward through the graph a second time"
# note: the trainer starts each batch from the previous batch's LSTM state (h, c) without detaching it, so the second backward runs into the first batch's freed graph (the tutorial detaches the hidden states at every step for truncated BPTT)
import torch
import torch.nn as nn
import torch.nn.functional as F


class LSTMLanguageModel(nn.Module):
    def __init__(self, vocab_size, embed_dim=16, hidden_dim=16):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, embed_dim)
        self.rnn = nn.LSTM(embed_dim, hidden_dim, batch_first=True)
        self.proj = nn.Linear(hidden_dim, vocab_size)

    def forward(self, x, hidden=None):
        out, hidden = self.rnn(self.embed(x), hidden)
        return self.proj(out), hidden


class LanguageModelTrainer:
    def __init__(self, model, optimizer, clip=0.25):
        self.model = model
        self.optimizer = optimizer
        self.clip = clip

    def train_epoch(self, batches):
        self.model.train()
        hidden = None
        total, steps = 0.0, 0
        for x, y in batches:
            self.optimizer.zero_grad()
            logits, hidden = self.model(x, hidden)
            loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1))
            loss.backward()
            nn.utils.clip_grad_norm_(self.model.parameters(), self.clip)
            self.optimizer.step()
            total += loss.item()
            steps += 1
        return total / steps


def observe():
    model = LSTMLanguageModel(vocab_size=12)
    stream = torch.randint(0, 12, (2, 13))
    batches = [(stream[:, i:i + 4], stream[:, i + 1:i + 5]) for i in range(0, 9, 4)]
    LanguageModelTrainer(model, torch.optim.SGD(model.parameters(), lr=0.1)).train_epoch(batches)
    return {}
