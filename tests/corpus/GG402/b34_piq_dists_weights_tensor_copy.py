# source: https://github.com/photosynthesis-team/piq/issues/255
# label: GG402 37
# effect: warns "To copy construct from a tensor"
# note: piq's ContentLoss turns each layer weight into a tensor with [torch.tensor(w) for w in weights]; DISTS (and LPIPS) pass weights that are already tensors - the splits of the downloaded alpha/beta - so building the metric warns (the issue, perceptual.py:139)
from typing import Callable, List, Tuple, Union

import torch
import torch.nn as nn
from torch.nn.modules.loss import _Loss


def _tiny_vgg():
    return nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.Conv2d(4, 8, 3, padding=1), nn.ReLU())


class ContentLoss(_Loss):
    def __init__(self, feature_extractor: Union[str, Callable] = "vgg16", layers: Tuple[str] = ("1",),
                 weights: List[Union[float, torch.Tensor]] = [1.], distance: str = "mse", reduction: str = "mean",
                 mean: List[float] = [0.485, 0.456, 0.406], std: List[float] = [0.229, 0.224, 0.225],
                 normalize_features: bool = False) -> None:
        super().__init__()
        if callable(feature_extractor):
            self.model = feature_extractor
        else:
            self.model = _tiny_vgg()
        self.layers = layers

        # Disable gradients
        for param in self.model.parameters():
            param.requires_grad_(False)

        self.distance = {
            "mse": nn.MSELoss,
            "mae": nn.L1Loss,
        }[distance](reduction="none")

        self.weights = [torch.tensor(w) for w in weights]
        mean = torch.tensor(mean)
        std = torch.tensor(std)
        self.mean = mean.view(1, -1, 1, 1)
        self.std = std.view(1, -1, 1, 1)
        self.normalize_features = normalize_features
        self.reduction = reduction

    def forward(self, prediction: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        prediction_features = self.get_features(prediction)
        target_features = self.get_features(target)
        distances = self.compute_distance(prediction_features, target_features)
        loss = torch.cat([(d * w.to(d)).mean(dim=[2, 3]) for d, w in zip(distances, self.weights)], dim=1).sum(dim=1)
        return loss.mean(dim=0) if self.reduction == "mean" else loss

    def compute_distance(self, prediction_features, target_features):
        return [self.distance(x, y) for x, y in zip(prediction_features, target_features)]

    def get_features(self, x: torch.Tensor) -> List[torch.Tensor]:
        x = (x - self.mean.to(x)) / self.std.to(x)
        features = []
        for name, module in self.model._modules.items():
            x = module(x)
            if name in self.layers:
                features.append(x)
        return features


class DISTS(ContentLoss):
    r"""Deep Image Structure and Texture Similarity metric."""

    def __init__(self, weights_state=None, reduction: str = "mean") -> None:
        dists_layers = ["1", "3"]
        channels = [4, 8]
        weights = weights_state if weights_state is not None else {"alpha": torch.rand(1, 12, 1, 1),
                                                                   "beta": torch.rand(1, 12, 1, 1)}
        dists_weights = list(torch.split(weights["alpha"], channels, dim=1))
        dists_weights.extend(torch.split(weights["beta"], channels, dim=1))
        super().__init__("vgg16", layers=dists_layers, weights=dists_weights, reduction=reduction)

    def forward(self, prediction: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        loss = super().forward(prediction, target)
        return 1 - loss

    def compute_distance(self, prediction_features, target_features):
        structure_distance, texture_distance = [], []
        EPS = 1e-6
        for x, y in zip(prediction_features, target_features):
            x_mean = x.mean([2, 3], keepdim=True)
            y_mean = y.mean([2, 3], keepdim=True)
            structure_distance.append((2 * x_mean * y_mean + EPS) / (x_mean ** 2 + y_mean ** 2 + EPS))
            x_var = ((x - x_mean) ** 2).mean([2, 3], keepdim=True)
            y_var = ((y - y_mean) ** 2).mean([2, 3], keepdim=True)
            xy_cov = (x * y).mean([2, 3], keepdim=True) - x_mean * y_mean
            texture_distance.append((2 * xy_cov + EPS) / (x_var + y_var + EPS))
        return structure_distance + texture_distance


def observe():
    metric = DISTS()
    metric(torch.rand(2, 3, 8, 8), torch.rand(2, 3, 8, 8))
    return {}
