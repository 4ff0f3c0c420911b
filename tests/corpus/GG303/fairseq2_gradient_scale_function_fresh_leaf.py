# source: https://github.com/facebookresearch/fairseq2/pull/733
# label: lookalike GG303
# effect: no_grad_arrived
# note: a custom autograd Function's forward returns x.detach().clone().requires_grad_(True), but autograd links the Function's output to its input: backward() scales the gradient and passes it on to the feature extractor
from typing import Any

import torch
from torch import Tensor, nn
from torch.autograd import Function


class _GradientScaleFunction(Function):
    @staticmethod
    def forward(ctx: Any, x: Tensor, scale: float) -> Tensor:
        if not x.dtype.is_floating_point:
            raise TypeError(f"`x` must be a float tensor, but is a `{x.dtype}` tensor instead.")
        ctx.scale = scale
        return x.detach().clone().requires_grad_(True)

    @staticmethod
    def backward(ctx: Any, grad_output: Tensor) -> tuple[Tensor, None]:
        return grad_output * ctx.scale, None


def scale_gradient(x: Tensor, scale: float) -> Tensor:
    return _GradientScaleFunction.apply(x, scale)


class Wav2Vec2Frontend(nn.Module):
    def __init__(self, feature_grad_scale=0.1):
        super().__init__()
        self.feature_extractor = nn.Conv1d(1, 4, kernel_size=3, stride=2)
        self.post_extract_proj = nn.Linear(4, 6)
        self.feature_grad_scale = feature_grad_scale

    def forward(self, waveforms):
        features = self.feature_extractor(waveforms).transpose(1, 2)
        if self.feature_grad_scale != 1.0:
            features = scale_gradient(features, self.feature_grad_scale)
        return self.post_extract_proj(features)


def observe():
    from corpus.oracle import grad_arrivals

    frontend = Wav2Vec2Frontend()
    arrived = grad_arrivals([frontend.feature_extractor.weight])
    optimizer = torch.optim.Adam(frontend.parameters(), lr=1e-3)
    loss = frontend(torch.randn(2, 1, 11)).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return {"arrived": arrived}
