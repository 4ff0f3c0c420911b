# source: https://github.com/open-mmlab/mmsegmentation/pull/2477
# label: lookalike GG104
# effect: graph_kept
# note: the head updates its class prototypes in forward() from the batch's features (a momentum update that carries a graph), then stores them as nn.Parameter(..., requires_grad=False), a new leaf with no history
import torch
import torch.nn as nn
import torch.nn.functional as F


def l2_normalize(x):
    return F.normalize(x, p=2, dim=-1)


def momentum_update(old_value, new_value, momentum):
    return old_value * momentum + new_value * (1 - momentum)


class ProtoSegHead(nn.Module):
    def __init__(self, in_channels=6, num_classes=3, num_prototype=2, gamma=0.99):
        super().__init__()
        self.gamma = gamma
        self.num_classes = num_classes
        self.num_prototype = num_prototype
        self.proj = nn.Linear(in_channels, 8)
        self.prototypes = nn.Parameter(torch.randn(num_classes, num_prototype, 8), requires_grad=False)

    def prototype_learning(self, _c, gt_seg):
        protos = self.prototypes.data.clone()
        for k in range(self.num_classes):
            mask = gt_seg == k
            if mask.sum() == 0:
                continue
            f = _c[mask].mean(0, keepdim=True)
            new_value = momentum_update(old_value=protos[k], new_value=f, momentum=self.gamma)
            protos[k] = new_value
        self.prototypes = nn.Parameter(l2_normalize(protos), requires_grad=False)

    def forward(self, inputs, gt_seg=None):
        _c = l2_normalize(self.proj(inputs))
        masks = torch.einsum('nd,kmd->nmk', _c, self.prototypes)
        out_seg = masks.amax(dim=1)
        if gt_seg is not None:
            self.prototype_learning(_c, gt_seg)
        return out_seg


def observe():
    head = ProtoSegHead()
    opt = torch.optim.SGD(head.parameters(), lr=0.1)
    for _ in range(3):
        feats, gt = torch.randn(10, 6), torch.randint(0, 3, (10,))
        loss = F.cross_entropy(head(feats, gt), gt)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return {"kept": head.prototypes}
