# source: https://github.com/dhruvramani/Transformers-RL/issues/6
# label: lookalike GG104
# effect: raises "Trying to backward through the graph a second time"
# note: the repository's update_memory(): the new memory is concatenated and cut under torch.no_grad() and detached before forward stores it
import torch
from torch import nn


class MemoryAttentionLayer(nn.Module):
    def __init__(self, d_model=8, n_heads=2, mem_len=6):
        super().__init__()
        self.mem_len = mem_len
        self.attn = nn.MultiheadAttention(d_model, n_heads)
        self.ff = nn.Linear(d_model, d_model)
        self.memory = None

    def update_memory(self, previous_memory, hidden_states):
        with torch.no_grad():
            if previous_memory is None:
                return hidden_states[-self.mem_len:].detach()
            cat = torch.cat([previous_memory, hidden_states], dim=0)
            return cat[-self.mem_len:].detach()

    def forward(self, x):
        context = x if self.memory is None else torch.cat([self.memory, x], dim=0)
        h, _ = self.attn(x, context, context)
        h = torch.relu(self.ff(h)) + x
        self.memory = self.update_memory(self.memory, h)
        return h


def observe():
    layer = MemoryAttentionLayer()
    head = nn.Linear(8, 1)
    opt = torch.optim.Adam(list(layer.parameters()) + list(head.parameters()), lr=1e-3)
    for _ in range(3):
        segment, target = torch.randn(4, 2, 8), torch.randn(4, 2, 1)
        opt.zero_grad()
        nn.functional.mse_loss(head(layer(segment)), target).backward()
        opt.step()
    return {}
