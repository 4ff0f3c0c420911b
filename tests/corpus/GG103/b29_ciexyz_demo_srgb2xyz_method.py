# source: https://github.com/mahmoudnafifi/CIE_XYZ_NET/issues/2
# label: GG103 44
# effect: graph_built
# note: the demo runs the network's own conversion methods (not forward) on an image with grad on and only writes the result out; the issue asks for torch.no_grad() around the demo's inference
import numpy as np
import torch
from torch import nn


class CIEXYZNet(nn.Module):
    def __init__(self, scale=1):
        super().__init__()
        self.srgb2xyz_local = nn.Sequential(nn.Conv2d(3, 8 * scale, 3, padding=1), nn.ReLU(), nn.Conv2d(8 * scale, 3, 3, padding=1))
        self.srgb2xyz_global = nn.Linear(3, 9)
        self.xyz2srgb_local = nn.Sequential(nn.Conv2d(3, 8 * scale, 3, padding=1), nn.ReLU(), nn.Conv2d(8 * scale, 3, 3, padding=1))
        self.xyz2srgb_global = nn.Linear(3, 9)

    def _global(self, layer, x):
        m = layer(x.mean(dim=(2, 3))).view(-1, 3, 3)
        return torch.einsum("bij,bjhw->bihw", m, x)

    def forward_srgb2xyz(self, srgb):
        return self._global(self.srgb2xyz_global, srgb - self.srgb2xyz_local(srgb))

    def forward_xyz2srgb(self, xyz):
        return self._global(self.xyz2srgb_global, xyz + self.xyz2srgb_local(xyz))

    def forward(self, x):
        xyz = self.forward_srgb2xyz(x)
        return xyz, self.forward_xyz2srgb(xyz)


def to_tensor(img):
    return torch.from_numpy(img.transpose(2, 0, 1).copy()).unsqueeze(0).float()


def from_tensor(t):
    return t.squeeze(0).cpu().numpy().transpose(1, 2, 0)


def demo(net, image, task="srgb-2-xyz"):
    x = to_tensor(image)
    if task == "srgb-2-xyz":
        out = net.forward_srgb2xyz(x)
    else:
        out = net.forward_xyz2srgb(x)
    return np.clip(from_tensor(out.detach()), 0, 1)


def observe():
    from corpus.oracle import hook_outputs

    net = CIEXYZNet()
    built = hook_outputs(net.srgb2xyz_global)
    net.eval()
    demo(net, np.random.RandomState(0).rand(6, 6, 3))
    return {"built": built}
