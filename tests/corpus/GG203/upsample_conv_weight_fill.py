# source: https://github.com/pytorch/audio/pull/1993
# label: GG203 32
# effect: raises "a leaf Variable that requires grad is being used in an in-place operation"
# note: WaveRNN's upsampling convolutions set to a box filter with conv.weight.fill_() once .data is dropped: an in-place write to a parameter outside no_grad (the PR's error; the maintainers' fix: nn.init.constant_)
import torch
from torch import nn


class Stretch2d(nn.Module):
    def __init__(self, time_scale, freq_scale):
        super().__init__()
        self.freq_scale = freq_scale
        self.time_scale = time_scale

    def forward(self, specgram):
        return specgram.repeat_interleave(self.freq_scale, -2).repeat_interleave(self.time_scale, -1)


class UpsampleNetwork(nn.Module):
    def __init__(self, upsample_scales):
        super().__init__()
        total_scale = 1
        for upsample_scale in upsample_scales:
            total_scale *= upsample_scale
        self.total_scale = total_scale

        up_layers = []
        for scale in upsample_scales:
            stretch = Stretch2d(scale, 1)
            conv = nn.Conv2d(in_channels=1, out_channels=1, kernel_size=(1, scale * 2 + 1),
                             padding=(0, scale), bias=False)
            conv.weight.fill_(1. / (scale * 2 + 1))
            up_layers.append(stretch)
            up_layers.append(conv)
        self.upsample_layers = nn.Sequential(*up_layers)

    def forward(self, specgram):
        return self.upsample_layers(specgram.unsqueeze(1)).squeeze(1)


def observe():
    torch.manual_seed(0)
    net = UpsampleNetwork([2, 3])
    return {"out": net(torch.rand(2, 4, 5))}
