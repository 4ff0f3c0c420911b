# source: https://github.com/aradha/recursive_feature_machines/pull/10
# label: GG402 13
# effect: warns "To copy construct from a tensor"
# note: the data is already a tensor: torch.tensor(data, ...) copies it and warns
import torch


class KernelModel:
    def __init__(self, device="cpu"):
        self.device = device

    def tensor(self, data, dtype=None):
        tensor = torch.tensor(data, dtype=dtype, requires_grad=False, device=self.device)
        return tensor

    def predict(self, samples, weights):
        return self.tensor(samples) @ self.tensor(weights)


def observe():
    torch.manual_seed(0)
    return {"pred": KernelModel().predict(torch.randn(3, 4), torch.randn(4, 2))}
