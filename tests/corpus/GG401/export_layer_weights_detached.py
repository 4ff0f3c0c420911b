# source: https://github.com/tkalayci71/embedding-inspector/issues/22
# label: lookalike GG401
# effect: raises "Can't call numpy() on Tensor that requires grad"
# note: weights handed to NumPy/matplotlib after .detach(): parameters require grad even under no_grad, and detaching first is what makes this safe
import numpy as np
import torch
from torch import nn


def weight_norms(model):
    """Per-layer weight norms for a plot, from a model being trained."""
    norms = {}
    with torch.no_grad():
        for name, module in model.named_modules():
            if isinstance(module, nn.Linear):
                w = module.weight.detach().cpu().numpy()
                norms[name] = float(np.linalg.norm(w))
    return norms


def observe():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    return {"kept": [], "norms": weight_norms(model)}
