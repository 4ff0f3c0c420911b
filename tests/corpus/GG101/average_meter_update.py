# source: http://kler.cn/a/413046.html
# label: GG101 25
# effect: graph_kept
# note: an AverageMeter given the loss tensor: self.sum += val keeps every graph
import torch


class AverageMeter:
    def __init__(self):
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        self.sum += val * n
        self.count += n


def train(model, loader, optimizer, criterion, meter):
    model.train()
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        meter.update(loss, x.size(0))


def observe():
    model = torch.nn.Linear(4, 2)
    meter = AverageMeter()
    train(model, [(torch.randn(3, 4), torch.randn(3, 2))] * 3, torch.optim.SGD(model.parameters(), lr=0.1),
          torch.nn.MSELoss(), meter)
    return {"kept": meter.sum}
