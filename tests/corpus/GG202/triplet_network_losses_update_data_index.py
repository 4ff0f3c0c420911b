# source: https://github.com/andreasveit/triplet-network-pytorch/issues/8
# label: GG202 57
# effect: raises "invalid index of a 0-dim tensor"
# note: a pre-0.4 training loop feeds its meters with loss.data[0]; the loss is 0-dim, so indexing it raises IndexError on every torch since 0.5 (the fix: loss.item())
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable


class AverageMeter(object):
    def __init__(self):
        self.reset()

    def reset(self):
        self.val, self.avg, self.sum, self.count = 0, 0, 0, 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


class Tripletnet(nn.Module):
    def __init__(self, embeddingnet):
        super(Tripletnet, self).__init__()
        self.embeddingnet = embeddingnet

    def forward(self, x, y, z):
        embedded_x, embedded_y, embedded_z = self.embeddingnet(x), self.embeddingnet(y), self.embeddingnet(z)
        dist_a = F.pairwise_distance(embedded_x, embedded_y, 2)
        dist_b = F.pairwise_distance(embedded_x, embedded_z, 2)
        return dist_a, dist_b, embedded_x, embedded_y, embedded_z


def accuracy(dista, distb):
    margin = 0
    pred = (dista - distb - margin).cpu().data
    return (pred > 0).sum().item() * 1.0 / dista.size()[0]


def train(train_loader, tnet, criterion, optimizer, epoch):
    losses = AverageMeter()
    accs = AverageMeter()
    emb_norms = AverageMeter()
    tnet.train()
    for batch_idx, (data1, data2, data3) in enumerate(train_loader):
        data1, data2, data3 = Variable(data1), Variable(data2), Variable(data3)
        dista, distb, embedded_x, embedded_y, embedded_z = tnet(data1, data2, data3)
        target = torch.FloatTensor(dista.size()).fill_(1)
        target = Variable(target)
        loss_triplet = criterion(dista, distb, target)
        loss_embedd = embedded_x.norm(2) + embedded_y.norm(2) + embedded_z.norm(2)
        loss = loss_triplet + 0.001 * loss_embedd
        acc = accuracy(dista, distb)
        losses.update(loss_triplet.data[0], data1.size(0))
        accs.update(acc, data1.size(0))
        emb_norms.update(loss_embedd.data[0] / 3, data1.size(0))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def observe():
    tnet = Tripletnet(nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 4)))
    loader = [(torch.randn(3, 6), torch.randn(3, 6), torch.randn(3, 6)) for _ in range(2)]
    train(loader, tnet, nn.MarginRankingLoss(margin=0.2), torch.optim.SGD(tnet.parameters(), lr=0.01), 1)
    return {}
