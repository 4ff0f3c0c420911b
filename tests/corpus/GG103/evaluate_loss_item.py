# source: https://theneuralbase.com/pytorch/learn/intermediate/evaluation-on-custom-classes/
# label: GG103 14
# effect: graph_built
# note: evaluate() sums loss.item() but the forward still records a graph
import torch

from corpus.oracle import hook_outputs


def evaluate(model, loader, criterion):
    model.eval()
    total = 0.0
    for x, y in loader:
        total += criterion(model(x), y).item()
    return total / len(loader)


def observe():
    model = torch.nn.Linear(4, 2)
    built = hook_outputs(model)
    evaluate(model, [(torch.randn(3, 4), torch.randn(3, 2))] * 2, torch.nn.MSELoss())
    return {"built": built}
