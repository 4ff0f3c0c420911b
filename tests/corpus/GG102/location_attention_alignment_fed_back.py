# source: https://github.com/pytorch/pytorch/issues/7142
# label: GG102 28
# effect: graph_grows
# note: a location-sensitive attention fed its own last alignment frame after frame with grad on: every step's graph stays reachable
import torch
from torch import nn


class LocationAttention(nn.Module):
    """Simple mock of a location sensitive alignment (https://arxiv.org/pdf/1506.07503.pdf)."""

    def __init__(self, hidden_size):
        super().__init__()
        self.project_alignment = nn.Linear(1, hidden_size)
        self.score = nn.Linear(hidden_size, 1)
        self.softmax = nn.Softmax(dim=1)

    def forward(self, last_alignment):
        last_alignment = self.project_alignment(last_alignment.unsqueeze(2))
        score = self.score(last_alignment).squeeze(2)
        return self.softmax(score)


def align_frames(attention, batch_size, num_tokens, num_frames):
    last_alignment = torch.zeros(batch_size, num_tokens)
    alignments = []
    for _ in range(num_frames):
        last_alignment = attention(last_alignment)
        alignments.append(last_alignment.argmax(dim=1))
    return torch.stack(alignments, dim=1)


def observe():
    from corpus.oracle import graph_size

    attention = LocationAttention(hidden_size=8)
    sizes = []
    attention.register_forward_hook(lambda m, inp, out: sizes.append(graph_size(out)))
    align_frames(attention, batch_size=2, num_tokens=5, num_frames=4)
    return {"sizes": sizes}
