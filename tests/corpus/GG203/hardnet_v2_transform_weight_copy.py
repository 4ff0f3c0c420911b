# source: https://github.com/PingoLH/FCHarDNet/issues/61
# label: GG203 33
# effect: raises "a leaf Variable that requires grad is being used in an in-place operation"
# note: the v2 block copies the trained block's kernels into its own convolutions by slice assignment, outside no_grad: an in-place write to a parameter
import torch
from torch import nn


class ConvLayer(nn.Sequential):
    def __init__(self, in_channels, out_channels, kernel=3, stride=1):
        super().__init__()
        self.add_module('conv', nn.Conv2d(in_channels, out_channels, kernel_size=kernel,
                                          stride=stride, padding=kernel // 2, bias=False))
        self.add_module('norm', nn.BatchNorm2d(out_channels))
        self.add_module('relu', nn.ReLU(inplace=True))


class HarDBlock(nn.Module):
    def __init__(self, channels, n_layers):
        super().__init__()
        self.layers = nn.ModuleList([ConvLayer(channels, channels) for _ in range(n_layers)])


class HarDBlockV2(nn.Module):
    """The inference form of a block: one convolution with a bias per layer."""

    def __init__(self, channels, n_layers):
        super().__init__()
        self.layers = nn.ModuleList([nn.Conv2d(channels, channels, 3, padding=1) for _ in range(n_layers)])

    def transform(self, blk):
        for i in range(len(self.layers)):
            self.layers[i].weight[:, :, :, :] = blk.layers[i][0].weight[:, :, :, :]
            self.layers[i].bias[:] = 0.0

    def forward(self, x):
        for layer in self.layers:
            x = torch.relu(layer(x))
        return x


def observe():
    torch.manual_seed(0)
    trained = HarDBlock(4, 2)
    fast = HarDBlockV2(4, 2)
    fast.transform(trained)
    return {"out": fast(torch.randn(1, 4, 5, 5))}
