# source: https://openillumi.com/en/en-pytorch-inference-mode-no-grad-eval
# label: lookalike GG103
# effect: graph_built
# note: @torch.inference_mode() on the evaluation function
import torch

from corpus.oracle import hook_outputs


@torch.inference_mode()
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
