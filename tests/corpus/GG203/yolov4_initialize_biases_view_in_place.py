# source: https://github.com/WongKinYiu/PyTorch_YOLOv4/issues/435
# label: GG203 35
# effect: raises "a view of a leaf Variable that requires grad is being used in an in-place operation"
# note: Model.__init__ initialises the detection biases through `mi.bias.view(m.na, -1)` and adds to it in place outside no_grad; since torch 1.8 this stops training before it starts
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
        self.detect = Detect(nc=nc)
        self._initialize_biases()  # only run once

    def _initialize_biases(self, cf=None):
        m = self.detect
        for mi, s in zip(m.m, m.stride):
            b = mi.bias.view(m.na, -1)
            b[:, 4] += math.log(8 / (640 / s) ** 2)
            b[:, 5:] += math.log(0.6 / (m.nc - 0.99)) if cf is None else torch.log(cf / cf.sum())
            mi.bias = torch.nn.Parameter(b.view(-1), requires_grad=True)

    def forward(self, x):
        p3 = self.backbone[0](x)
        p4 = self.backbone[1](p3)
        return self.detect([p3, p4])


def observe():
    Model(nc=2)
    return {}
