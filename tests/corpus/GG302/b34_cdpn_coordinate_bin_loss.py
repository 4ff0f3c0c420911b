# source: https://github.com/LZGMatrix/BOP19_CDPN_2019ICCV/issues/4
# label: lookalike GG302
# effect: raises "element 0 of tensors does not require grad"
# note: the maintainer's answer: torch.argmax is not differentiable, take the loss before it; the bin logits get a cross-entropy against the ground-truth bins, and the argmax-decoded coordinates are only reported
import torch
import torch.nn as nn
import torch.nn.functional as F


class CDPNRotHead(nn.Module):
    def __init__(self, in_channels=3, feat=16, coor_bin=8):
        super().__init__()
        self.coor_bin = coor_bin
        self.features = nn.Sequential(nn.Conv2d(in_channels, feat, 3, padding=1), nn.ReLU())
        self.coor_x = nn.Conv2d(feat, coor_bin + 1, 1)
        self.coor_y = nn.Conv2d(feat, coor_bin + 1, 1)
        self.coor_z = nn.Conv2d(feat, coor_bin + 1, 1)
        self.conf = nn.Conv2d(feat, 1, 1)

    def forward(self, x):
        f = self.features(x)
        return self.coor_x(f), self.coor_y(f), self.coor_z(f), self.conf(f)


def coor_to_bins(coor_gt, mask_gt, coor_bin):
    bins = ((coor_gt + 1.0) / 2.0 * (coor_bin - 1.0)).round().long().clamp(0, coor_bin - 1)
    bins[mask_gt == 0] = coor_bin  # background bin
    return bins


def train_step(model, optimizer, inp, coor_gt, mask_gt, coor_bin):
    output_coor_x_, output_coor_y_, output_coor_z_, output_conf_ = model(inp)
    gt_bins = coor_to_bins(coor_gt, mask_gt, coor_bin)

    loss = (F.cross_entropy(output_coor_x_, gt_bins[None, :, :, 0])
            + F.cross_entropy(output_coor_y_, gt_bins[None, :, :, 1])
            + F.cross_entropy(output_coor_z_, gt_bins[None, :, :, 2]))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

    output_coor_ = torch.stack([torch.argmax(output_coor_x_.squeeze(), axis=0),
                                torch.argmax(output_coor_y_.squeeze(), axis=0),
                                torch.argmax(output_coor_z_.squeeze(), axis=0)], axis=2)
    output_coor_[output_coor_ == coor_bin] = 0
    output_coor_ = 2.0 * output_coor_.float() / (coor_bin - 1.0) - 1.0  # [-1,1]
    coor_err = (output_coor_ - coor_gt).abs().mean().item()
    return loss.item(), coor_err


def observe():
    model = CDPNRotHead()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    inp = torch.randn(1, 3, 8, 8)
    coor_gt = torch.rand(8, 8, 3) * 2 - 1
    mask_gt = (torch.rand(8, 8) > 0.3).float()
    train_step(model, optimizer, inp, coor_gt, mask_gt, coor_bin=8)
    return {}
