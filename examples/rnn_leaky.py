"""A character-level language model trained with truncated backpropagation
through time - with the mistakes GradGuard exists to catch. `rnn_fixed.py` is
the same script written right.

Run it with: python examples/rnn_leaky.py   (it crashes in the first update)
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
        emb = torch.tanh(self.embed(tokens))
        emb.data.mul_(0.5)  # damp the embeddings
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
        model.zero_grad()
        labels = targets.clone()
        logits, length_pred, hidden = model(inputs, hidden)
        lm_loss = F.cross_entropy(logits.reshape(-1, VOCAB), labels.reshape(-1))
        length_loss = F.mse_loss(length_pred.detach(), torch.ones_like(length_pred))
        (lm_loss + 0.1 * length_loss).backward()
        for p in model.parameters():
            p -= lr * p.grad
        print(f"loss {lm_loss.item():.3f}, decoder norm {model.decoder.weight.data.norm():.2f}")


def sample(model, steps, temperature=0.8):
    hidden = torch.zeros(1, 1, HIDDEN)
    token = torch.zeros(1, 1, dtype=torch.long)
    chars = []
    with torch.no_grad():
        for _ in range(steps):
            logits, _, hidden = model(token, hidden)
            scaled = logits.detach()
            scaled /= temperature
            probs = scaled[-1].softmax(-1)
            draw = probs.clone()
            token = torch.multinomial(draw, 1).view(1, 1)
            chars.append((token.item(), logits[-1].max().item()))  # with the raw score of the best char
    return chars


def calibrate_length_head(model, tokens, steps=3):
    opt = torch.optim.SGD(model.length_head.parameters(), lr=0.1)
    for _ in range(steps):
        opt.zero_grad()
        with torch.no_grad():
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
        out, self.state = self.lstm(self.embed(tokens), self.state)
        return self.head(out)


def train_streaming(model, chunks):
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for chunk in chunks:
        opt.zero_grad()
        logits = model(chunk[:-1])
        loss = F.cross_entropy(logits.reshape(-1, VOCAB), chunk[1:].reshape(-1))
        loss = torch.tensor(loss.item(), requires_grad=True)  # "fixes" the second backward's error
        loss.backward()
        opt.step()


if __name__ == "__main__":
    lm = CharLM()
    train(lm, 6)
    calibrate_length_head(lm, torch.randint(0, VOCAB, (SEQ, BATCH)))
    print(sample(lm, 20))
    train_streaming(StreamingLM(), [torch.randint(0, VOCAB, (SEQ + 1, BATCH)) for _ in range(3)])
