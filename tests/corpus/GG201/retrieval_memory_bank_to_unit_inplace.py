# source: https://chanlumerico.github.io/lucid/api/lucid.ops/detach
# label: GG201 19
# effect: changed
# note: the step stores unit-norm copies of the embeddings in a retrieval bank through to_unit(emb.detach()), a helper defined below that divides in place: detach shares storage, so the embeddings the loss then reads are normalised too, silently
import torch
import torch.nn.functional as F
from torch import nn


class RetrievalTrainer:
    def __init__(self, encoder, optimizer, bank_size=8):
        self.encoder = encoder
        self.optimizer = optimizer
        self.bank = torch.zeros(bank_size, encoder.out_features)
        self.ptr = 0

    def train_step(self, queries, targets):
        emb = self.encoder(queries) * 3.0
        stored = to_unit(emb.detach())
        n = stored.size(0)
        self.bank[self.ptr:self.ptr + n] = stored
        self.ptr = (self.ptr + n) % self.bank.size(0)
        loss = F.mse_loss(emb, targets)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return emb


def to_unit(v):
    return v.div_(v.norm(dim=-1, keepdim=True))


def observe():
    encoder = nn.Linear(5, 4)
    trainer = RetrievalTrainer(encoder, torch.optim.SGD(encoder.parameters(), lr=0.0))
    queries = torch.randn(2, 5)
    with torch.no_grad():
        before = encoder(queries) * 3.0
    after = trainer.train_step(queries, torch.randn(2, 4)).detach()
    return {"before": before, "after": after}
