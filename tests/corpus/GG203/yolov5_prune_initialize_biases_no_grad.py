# source: https://github.com/xhwNobody/yolov5_prune_sfp/issues/17
# label: lookalike GG203
# effect: raises "a view of a leaf Variable that requires grad is being used in an in-place operation"
# note: the fix posted in the thread: the same in-place bias initialisation through mi.bias.view(...), inside `with torch.no_grad():`
import math

import torch
import torch.nn as nn


class Detect(nn.Module):
    def __init__(self, nc=2, ch=(8, 16), na=3):
        super().__init__()
        self.nc = nc
        self.no = nc + 5
        self.na = na
        self.m = nn.ModuleList(nn.Conv2d(x, self.no * self.na, 1) for x in ch)
        self.stride = torch.tensor([8.0, 16.0])

    def forward(self, xs):
        return [m(x) for m, x in zip(self.m, xs)]


class Model(nn.Module):
    def __init__(self, nc=2):
        super().__init__()
        self.backbone = nn.ModuleList([nn.Conv2d(3, 8, 3, 2, 1), nn.Conv2d(8, 16, 3, 2, 1)])
        self.head_self = Detect(nc=nc)
        self._initialize_biases()

    def _initialize_biases(self, cf=None):
        m = self.head_self
        for mi, s in zip(m.m, m.stride):
            b = mi.bias.view(m.na, -1)
            with torch.no_grad():
                b[:, 4] += math.log(8 / (640 / s) ** 2)
                b[:, 5:] += math.log(0.6 / (m.nc - 0.99)) if cf is None else torch.log(cf / cf.sum())
            mi.bias = torch.nn.Parameter(b.view(-1), requires_grad=True)

    def forward(self, x):
        p3 = self.backbone[0](x)
        return self.head_self([p3, self.backbone[1](p3)])


def observe():
    model = Model(nc=2)
    model(torch.randn(1, 3, 16, 16))[0].sum().backward()
    return {}
