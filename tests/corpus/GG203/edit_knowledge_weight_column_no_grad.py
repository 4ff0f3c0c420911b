# source: https://github.com/Hunter-DDM/knowledge-neurons/issues/14
# label: lookalike GG203
# effect: raises "a view of a leaf Variable that requires grad is being used in an in-place operation"
# note: the same edit under torch.no_grad(): in-place writes to parameters are allowed there
import torch
from torch import nn


class FFN(nn.Module):
    def __init__(self, hidden=6, inner=10):
        super().__init__()
        self.dense = nn.Linear(inner, hidden)

    def forward(self, x):
        return self.dense(x)


def edit_knowledge(model, layer, pos, ori_pred_emb, tgt_emb, lambda_1, lambda_2):
    """Erase one fact and write another into a knowledge neuron's value vector."""
    weight = model.layers[layer].dense.weight
    with torch.no_grad():
        weight[:, pos] -= ori_pred_emb * lambda_1
        weight[:, pos] += tgt_emb * lambda_2


def observe():
    torch.manual_seed(0)
    model = nn.Module()
    model.layers = nn.ModuleList([FFN(), FFN()])
    edit_knowledge(model, 1, 3, torch.randn(6), torch.randn(6), 1.0, 2.0)
    return {}
