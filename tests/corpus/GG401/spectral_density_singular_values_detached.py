# source: https://github.com/henryscheible/cs89finalproject/blob/HEAD/linalg.py
# label: lookalike GG401
# effect: raises "Can't call numpy() on Tensor that requires grad"
# note: the singular values of a trained layer's weight (the second item of the torch.svd tuple) carry a graph; the histogram helper converts them with .cpu().detach().numpy()
import numpy as np
import torch
from torch import nn


def show_spec_density(weight_layer_name, weight_matrix, bins=5):
    U, S, V = torch.svd(weight_matrix)
    singular_values = S.cpu().detach().numpy()
    counts, edges = np.histogram(singular_values, bins=bins)
    return weight_layer_name, counts, edges


def show_all_spec_density(model):
    results = []
    for name, param in model.named_parameters():
        if 'weight' not in name:
            continue
        results.append(show_spec_density(name, param))
    return results


def observe():
    model = nn.Sequential(nn.Linear(8, 6), nn.ReLU(), nn.Linear(6, 4))
    return {"spectra": show_all_spec_density(model)}
