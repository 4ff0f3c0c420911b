"""The same character-level language model as `rnn_leaky.py`, written the way
GradGuard suggests: the hidden state detached at each batch boundary, the
update under `torch.no_grad()`, real copies where a copy is written to.

Run it with: python examples/rnn_fixed.py
"""

import torch
import torch.nn.functional as F
from torch import nn

VOCAB, HIDDEN, SEQ, BATCH = 16, 32, 12, 4


class CharLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, HIDDEN)
        self.rnn = nn.GRU(HIDDEN, HIDDEN)
        self.decoder = nn.Linear(HIDDEN, VOCAB)
        self.length_head = nn.Linear(HIDDEN, 1)

    def forward(self, tokens, hidden):
        emb = 0.5 * torch.tanh(self.embed(tokens))  # damp the embeddings
        out, hidden = self.rnn(emb, hidden)
        return self.decoder(out), self.length_head(out), hidden


def batches(n):
    gen = torch.Generator().manual_seed(0)
    text = torch.randint(0, VOCAB, (n * SEQ + 1, BATCH), generator=gen)
    for i in range(n):
        chunk = text[i * SEQ : (i + 1) * SEQ + 1]
        yield chunk[:-1], chunk[1:]


def train(model, n_batches, lr=0.5):
    hidden = torch.zeros(1, BATCH, HIDDEN)
    for inputs, targets in batches(n_batches):
        hidden = hidden.detach()  # truncated BPTT: the graph ends at the batch boundary
        model.zero_grad()
        logits, length_pred, hidden = model(inputs, hidden)
        lm_loss = F.cross_entropy(logits.reshape(-1, VOCAB), targets.reshape(-1))
        length_loss = F.mse_loss(length_pred, torch.ones_like(length_pred))
        (lm_loss + 0.1 * length_loss).backward()
        with torch.no_grad():
            for p in model.parameters():
                p -= lr * p.grad
        print(f"loss {lm_loss.item():.3f}, decoder norm {model.decoder.weight.detach().norm():.2f}")


def sample(model, steps, temperature=0.8):
    hidden = torch.zeros(1, 1, HIDDEN)
    token = torch.zeros(1, 1, dtype=torch.long)
    chars = []
    with torch.no_grad():
        for _ in range(steps):
            logits, _, hidden = model(token, hidden)
            scaled = logits.clone().detach()
            scaled /= temperature
            probs = scaled[-1].softmax(-1)
            token = torch.multinomial(probs, 1).view(1, 1)
            chars.append((token.item(), logits[-1].max().item()))  # with the raw score of the best char
    return chars


def calibrate_length_head(model, tokens, steps=3):
    opt = torch.optim.SGD(model.length_head.parameters(), lr=0.1)
    for _ in range(steps):
        opt.zero_grad()
        _, length_pred, _ = model(tokens, torch.zeros(1, BATCH, HIDDEN))
        loss = F.mse_loss(length_pred, torch.ones_like(length_pred))
        loss.backward()
        opt.step()


class StreamingLM(nn.Module):
    """Reads a long text chunk by chunk, keeping its LSTM state between calls."""

    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, HIDDEN)
        self.lstm = nn.LSTM(HIDDEN, HIDDEN)
        self.head = nn.Linear(HIDDEN, VOCAB)
        self.state = None

    def forward(self, tokens):
        out, state = self.lstm(self.embed(tokens), self.state)
        self.state = tuple(s.detach() for s in state)  # the next chunk starts from the values, not the graph
        return self.head(out)


def train_streaming(model, chunks):
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for chunk in chunks:
        opt.zero_grad()
        logits = model(chunk[:-1])
        loss = F.cross_entropy(logits.reshape(-1, VOCAB), chunk[1:].reshape(-1))
        loss.backward()
        opt.step()


if __name__ == "__main__":
    lm = CharLM()
    train(lm, 6)
    calibrate_length_head(lm, torch.randint(0, VOCAB, (SEQ, BATCH)))
    print(sample(lm, 20))
    train_streaming(StreamingLM(), [torch.randint(0, VOCAB, (SEQ + 1, BATCH)) for _ in range(3)])
