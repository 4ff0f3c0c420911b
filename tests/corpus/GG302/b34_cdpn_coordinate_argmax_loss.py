# source: https://github.com/LZGMatrix/BOP19_CDPN_2019ICCV/issues/4
# label: GG302 39
# effect: raises "element 0 of tensors does not require grad"
# note: a train step written from CDPN's test.py: the coordinate maps are decoded with torch.argmax over the bins (as test.py does) and the loss is taken on the decoded coordinates; argmax carries no graph, so loss.backward() raises (the maintainer: take the loss before torch.argmax)
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


def train_step(model, optimizer, inp, coor_gt, mask_gt, coor_bin):
    output_coor_x_, output_coor_y_, output_coor_z_, output_conf_ = model(inp)
    output_coor_x_ = output_coor_x_.squeeze()
    output_coor_y_ = output_coor_y_.squeeze()
    output_coor_z_ = output_coor_z_.squeeze()

    output_coor_ = torch.stack([torch.argmax(output_coor_x_, axis=0),
                                torch.argmax(output_coor_y_, axis=0),
                                torch.argmax(output_coor_z_, axis=0)], axis=2)
    output_coor_[output_coor_ == coor_bin] = 0
    output_coor_ = 2.0 * output_coor_.float() / (coor_bin - 1.0) - 1.0  # [-1,1]

    loss = F.l1_loss(output_coor_ * mask_gt.unsqueeze(-1), coor_gt * mask_gt.unsqueeze(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()


def observe():
    model = CDPNRotHead()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    inp = torch.randn(1, 3, 8, 8)
    coor_gt = torch.rand(8, 8, 3) * 2 - 1
    mask_gt = (torch.rand(8, 8) > 0.3).float()
    train_step(model, optimizer, inp, coor_gt, mask_gt, coor_bin=8)
    return {}
