# source: https://github.com/XiaMooo/Yolo-Detect-Layer-Visualization/issues/1
# label: GG401 29
# effect: raises "Can't call numpy() on Tensor that requires grad"
# note: the visualisation's plot_multi_heatmap() converts each detect-layer map with `array.cpu().numpy()`; the maps come from a YOLO forward run with grad on, so the conversion raises (the author's fix: array.detach().cpu().numpy()). seaborn is not installed here: the converted arrays are collected where sns.heatmap would draw them
import numpy as np
import torch
import torch.nn as nn


class Detect(nn.Module):
    def __init__(self, nc=2, na=3, ch=(8,)):
        super().__init__()
        self.no = nc + 5
        self.na = na
        self.m = nn.ModuleList(nn.Conv2d(x, self.no * self.na, 1) for x in ch)

    def forward(self, x):
        z = []
        for i in range(len(self.m)):
            bs, _, ny, nx = x[i].shape
            z.append(self.m[i](x[i]).view(bs, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2).contiguous())
        return z


def plot_multi_heatmap(*arrays, cmap='viridis', title=None, row=None, col=None):
    drawn = []
    for i, array in enumerate(arrays):
        if isinstance(array, torch.Tensor):
            array = array.cpu().numpy()
        r = i // col
        c = i % col
        drawn.append((r, c, np.asarray(array)))
    return drawn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.SiLU())
        self.detect = Detect()

    def forward(self, img):
        return self.detect([self.backbone(img)])


def visualize_objectness(model, img):
    model.eval()
    outputs = model(img)
    heatmaps = []
    for out in outputs:
        for a in range(out.shape[1]):
            heatmaps.append(out[0, a, ..., 4].sigmoid())
    return plot_multi_heatmap(*heatmaps, row=len(outputs), col=outputs[0].shape[1])


def observe():
    visualize_objectness(Model(), torch.randn(1, 3, 16, 16))
    return {}
