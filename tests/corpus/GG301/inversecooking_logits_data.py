# source: https://github.com/facebookresearch/inversecooking/issues/3
# label: GG301 21
# effect: raises "element 0 of tensors does not require grad"
# note: the decoder returns its stacked logits through .data: no output of forward() carries the graph, the training step's backward raises
import torch
from torch import nn


class IngredientDecoder(nn.Module):
    def __init__(self, vocab=7, dim=6, steps=3):
        super().__init__()
        self.steps = steps
        self.cell = nn.GRUCell(dim, dim)
        self.out = nn.Linear(dim, vocab)

    def forward(self, features):
        h, logits = features, []
        for _ in range(self.steps):
            h = self.cell(features, h)
            logits.append(self.out(h))
        logits = torch.stack(logits, 1).data
        return logits


def observe():
    torch.manual_seed(0)
    decoder = IngredientDecoder()
    logits = decoder(torch.randn(2, 6))
    loss = nn.functional.cross_entropy(logits.reshape(-1, 7), torch.randint(0, 7, (6,)))
    loss.backward()
    return {}
