# source: https://github.com/aradha/recursive_feature_machines/pull/10
# label: lookalike GG402
# effect: warns "To copy construct from a tensor"
# note: the PR's fix: torch.as_tensor keeps a tensor as it is and converts anything else
import torch


class KernelModel:
    def __init__(self, device="cpu"):
        self.device = device

    def tensor(self, data, dtype=None):
        tensor = torch.as_tensor(data, dtype=dtype, device=self.device)
        return tensor

    def predict(self, samples, weights):
        return self.tensor(samples) @ self.tensor(weights)


def observe():
    torch.manual_seed(0)
    return {"pred": KernelModel().predict(torch.randn(3, 4), torch.randn(4, 2))}
