# source: https://github.com/karpathy/minGPT/blob/master/mingpt/utils.py
# label: lookalike GG103
# effect: graph_built
# note: the sampling helper feeds its own predictions back into the model, under the @torch.no_grad() decorator; the notebook calls it right after training
import torch
import torch.nn as nn
from torch.nn import functional as F


def top_k_logits(logits, k):
    v, ix = torch.topk(logits, k)
    out = logits.clone()
    out[out < v[:, [-1]]] = -float('Inf')
    return out


@torch.no_grad()
def sample(model, x, steps, temperature=1.0, sample=False, top_k=None):
    block_size = model.get_block_size()
    model.eval()
    for k in range(steps):
        x_cond = x if x.size(1) <= block_size else x[:, -block_size:]
        logits, _ = model(x_cond)
        logits = logits[:, -1, :] / temperature
        if top_k is not None:
            logits = top_k_logits(logits, top_k)
        probs = F.softmax(logits, dim=-1)
        if sample:
            ix = torch.multinomial(probs, num_samples=1)
        else:
            _, ix = torch.topk(probs, k=1, dim=-1)
        x = torch.cat((x, ix), dim=1)
    return x


class CharGPT(nn.Module):
    def __init__(self, vocab_size=10, n_embd=8, block_size=6):
        super().__init__()
        self.block_size = block_size
        self.tok_emb = nn.Embedding(vocab_size, n_embd)
        self.block = nn.TransformerEncoderLayer(n_embd, nhead=2, dim_feedforward=16, batch_first=True)
        self.head = nn.Linear(n_embd, vocab_size)

    def get_block_size(self):
        return self.block_size

    def forward(self, idx, targets=None):
        logits = self.head(self.block(self.tok_emb(idx)))
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
        return logits, loss


def train(model, batches, lr=3e-4):
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    model.train()
    for x, y in batches:
        logits, loss = model(x, y)
        model.zero_grad()
        loss.backward()
        optimizer.step()


def observe():
    from corpus.oracle import hook_outputs

    model = CharGPT()
    train(model, [(torch.randint(0, 10, (2, 6)), torch.randint(0, 10, (2, 6))) for _ in range(2)])
    built = hook_outputs(model)
    context = torch.tensor([[1, 2, 3]])
    y = sample(model, context, 5, temperature=1.0, sample=True, top_k=4)[0]
    return {"built": built, "completion": y.tolist()}
