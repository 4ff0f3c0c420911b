# source: https://discuss.pytorch.org/t/how-to-learn-the-weights-between-two-losses/39681
# label: GG301 18
# effect: no_grad
# note: the task losses are copied into a new torch.Tensor before they are weighted: backward still runs (sigma has a graph) but reaches only sigma, the task heads never learn
import torch
import torch.nn as nn


class MultiTaskLoss(nn.Module):
    def __init__(self, tasks):
        super(MultiTaskLoss, self).__init__()
        self.tasks = nn.ModuleList(tasks)
        self.sigma = nn.Parameter(torch.ones(len(tasks)))
        self.mse = nn.MSELoss()

    def forward(self, x, targets):
        l = [self.mse(f(x), y) for y, f in zip(targets, self.tasks)]
        l = 0.5 * torch.Tensor(l) / self.sigma ** 2
        l = l.sum() + torch.log(self.sigma.prod())
        return l


def train_epoch(mtl, loader, optimizer):
    total = 0.0
    for x, targets in loader:
        optimizer.zero_grad()
        loss = mtl(x, targets)
        loss.backward()
        optimizer.step()
        total += loss.item()
    return total / len(loader)


def observe():
    torch.manual_seed(0)
    f1 = nn.Linear(5, 1, bias=False)
    f2 = nn.Linear(5, 1, bias=False)
    mtl = MultiTaskLoss([f1, f2])
    loader = [(torch.randn(3, 5), [torch.randn(3, 1), torch.randn(3, 1)])]
    train_epoch(mtl, loader, torch.optim.SGD(mtl.parameters(), lr=0.1))
    return {"params": [f1.weight, f2.weight]}
