# source: https://github.com/vturrisi/solo-learn/issues/135
# label: lookalike GG301
# effect: no_grad
# note: the online linear classifier is trained on feats.detach(), but the same feats feed the projector and the self-supervised loss, so the backbone still learns ("detach() is not done in-place, so only for self.classifier() the features are detached")
import torch
import torch.nn as nn
import torch.nn.functional as F


def nt_xent(z1, z2, temperature=0.1):
    z = F.normalize(torch.cat([z1, z2]), dim=1)
    sim = z @ z.t() / temperature
    sim.fill_diagonal_(-1e9)
    n = z1.size(0)
    targets = torch.cat([torch.arange(n, 2 * n), torch.arange(0, n)])
    return F.cross_entropy(sim, targets)


class BaseMethod(nn.Module):
    def __init__(self, backbone, feat_dim, num_classes):
        super().__init__()
        self.backbone = backbone
        self.classifier = nn.Linear(feat_dim, num_classes)

    def forward(self, X):
        feats = self.backbone(X)
        logits = self.classifier(feats.detach())
        return {"logits": logits, "feats": feats}

    def _base_shared_step(self, X, targets):
        out = self(X)
        loss = F.cross_entropy(out["logits"], targets, ignore_index=-1)
        return {**out, "loss": loss}


class SimCLR(BaseMethod):
    def __init__(self, backbone, feat_dim=8, proj_dim=4, num_classes=3):
        super().__init__(backbone, feat_dim, num_classes)
        self.projector = nn.Sequential(nn.Linear(feat_dim, 8), nn.ReLU(), nn.Linear(8, proj_dim))

    def training_step(self, batch):
        (x1, x2), targets = batch
        outs = [self._base_shared_step(x, targets) for x in (x1, x2)]
        class_loss = sum(o["loss"] for o in outs) / len(outs)
        z1, z2 = (self.projector(o["feats"]) for o in outs)
        return nt_xent(z1, z2) + class_loss


def observe():
    backbone = nn.Sequential(nn.Linear(6, 8), nn.ReLU())
    method = SimCLR(backbone)
    optimizer = torch.optim.SGD(method.parameters(), lr=0.1)
    x = torch.randn(4, 6)
    loss = method.training_step(((x + 0.1 * torch.randn(4, 6), x + 0.1 * torch.randn(4, 6)), torch.randint(0, 3, (4,))))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return {"params": [backbone[0].weight]}
