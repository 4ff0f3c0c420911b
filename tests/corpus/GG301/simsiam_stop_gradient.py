# source: https://github.com/PatrickHua/SimSiam/issues/39
# label: lookalike GG301
# effect: no_grad
# note: SimSiam's stop-gradient: the projection z is detached inside the loss D(p, z), so it is the target; the prediction p keeps its graph and the encoder and predictor both learn
import torch
import torch.nn.functional as F
from torch import nn


def D(p, z, version='simplified'):  # negative cosine similarity
    if version == 'original':
        z = z.detach()  # stop gradient
        p = F.normalize(p, dim=1)  # l2-normalize
        z = F.normalize(z, dim=1)  # l2-normalize
        return -(p * z).sum(dim=1).mean()
    elif version == 'simplified':
        return - F.cosine_similarity(p, z.detach(), dim=-1).mean()
    else:
        raise Exception


class SimSiam(nn.Module):
    def __init__(self, backbone, feature_dim=8, proj_dim=8, pred_dim=4):
        super().__init__()
        self.backbone = backbone
        self.projector = nn.Sequential(nn.Linear(feature_dim, proj_dim), nn.ReLU(), nn.Linear(proj_dim, proj_dim))
        self.encoder = nn.Sequential(self.backbone, self.projector)
        self.predictor = nn.Sequential(nn.Linear(proj_dim, pred_dim), nn.ReLU(), nn.Linear(pred_dim, proj_dim))

    def forward(self, x1, x2):
        f, h = self.encoder, self.predictor
        z1, z2 = f(x1), f(x2)
        p1, p2 = h(z1), h(z2)
        L = D(p1, z2) / 2 + D(p2, z1) / 2
        return {'loss': L}


def train_one_epoch(model, train_loader, optimizer):
    model.train()
    for (images1, images2), labels in train_loader:
        model.zero_grad()
        data_dict = model.forward(images1, images2)
        loss = data_dict['loss'].mean()
        loss.backward()
        optimizer.step()


def observe():
    torch.manual_seed(0)
    model = SimSiam(nn.Sequential(nn.Linear(10, 8), nn.ReLU()))
    x = torch.randn(4, 10)
    loader = [((x + 0.1 * torch.randn_like(x), x + 0.1 * torch.randn_like(x)), torch.zeros(4))]
    train_one_epoch(model, loader, torch.optim.SGD(model.parameters(), lr=0.05))
    return {"params": list(model.parameters())}
