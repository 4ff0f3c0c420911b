# source: https://github.com/jlamprou/Infini-Attention/issues/3
# label: GG102 55
# effect: raises "Trying to backward through the graph a second time"
# note: the compressive memory (M, z) returned for one segment is fed into the next segment's forward without detach; the second segment's backward walks back into the first segment's freed graph (the fix: detach M and z in _update_memory)
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class InfiniAttention(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim
        self.q_proj = nn.Linear(dim, dim)
        self.k_proj = nn.Linear(dim, dim)
        self.v_proj = nn.Linear(dim, dim)
        self.o_proj = nn.Linear(dim, dim)
        self.beta = nn.Parameter(torch.zeros(1))

    def _retrieve_from_memory(self, sigma_q, M, z):
        return (sigma_q @ M) / ((sigma_q @ z.unsqueeze(-1)) + 1e-6)

    def _update_memory(self, sigma_k, v, M, z):
        M = M + sigma_k.transpose(-2, -1) @ v
        z = z + sigma_k.sum(dim=-2)
        return M, z

    def forward(self, x, memory=None):
        bsz, seg_len, _ = x.shape
        q, k, v = self.q_proj(x), self.k_proj(x), self.v_proj(x)
        sigma_q, sigma_k = F.elu(q) + 1, F.elu(k) + 1
        if memory is None:
            M = torch.zeros(bsz, self.dim, self.dim, device=x.device)
            z = torch.zeros(bsz, self.dim, device=x.device)
        else:
            M, z = memory
        a_mem = self._retrieve_from_memory(sigma_q, M, z)
        causal = torch.ones(seg_len, seg_len, dtype=torch.bool, device=x.device).tril()
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(self.dim)
        a_dot = scores.masked_fill(~causal, float("-inf")).softmax(-1) @ v
        gate = torch.sigmoid(self.beta)
        out = self.o_proj(gate * a_mem + (1 - gate) * a_dot)
        M, z = self._update_memory(sigma_k, v, M, z)
        return out, (M, z)


def train_long_documents(model, lm_head, documents, optimizer, segment_len):
    model.train()
    for embeds, targets in documents:
        memory = None
        for start in range(0, embeds.size(1), segment_len):
            segment = embeds[:, start:start + segment_len]
            out, memory = model(segment, memory)
            logits = lm_head(out)
            loss = F.cross_entropy(logits.flatten(0, 1), targets[:, start:start + segment_len].flatten())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


def observe():
    dim, vocab = 8, 11
    model = InfiniAttention(dim)
    lm_head = nn.Linear(dim, vocab)
    optimizer = torch.optim.AdamW(list(model.parameters()) + list(lm_head.parameters()), lr=1e-3)
    documents = [(torch.randn(2, 12, dim), torch.randint(0, vocab, (2, 12)))]
    train_long_documents(model, lm_head, documents, optimizer, segment_len=4)
    return {}
