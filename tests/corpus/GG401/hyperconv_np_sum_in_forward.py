# source: https://github.com/xiaxin1998/DHCN/issues/8
# label: GG401 22
# effect: raises "Can't call numpy() on Tensor that requires grad"
# note: a model's forward sums its layers' embeddings with np.sum: the embeddings carry the graph, NumPy's conversion raises
import numpy as np
import torch
from torch import nn


class HyperConv(nn.Module):
    def __init__(self, layers, emb_size=8):
        super().__init__()
        self.layers = layers
        self.mix = nn.Linear(emb_size, emb_size, bias=False)

    def forward(self, adjacency, embedding):
        item_embeddings = embedding
        final = [item_embeddings]
        for _ in range(self.layers):
            item_embeddings = torch.sparse.mm(adjacency, self.mix(item_embeddings))
            final.append(item_embeddings)
        item_embeddings = np.sum(final, 0)
        return item_embeddings


def observe():
    torch.manual_seed(0)
    adjacency = torch.eye(5).to_sparse()
    embedding = nn.Embedding(5, 8).weight
    return {"out": HyperConv(2)(adjacency, embedding)}
