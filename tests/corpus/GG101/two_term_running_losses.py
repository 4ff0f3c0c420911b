# source: https://github.com/samuelyu2002/ImVisible/issues/2
# label: GG101 21
# effect: graph_kept
# note: running_loss += loss (and the two parts) per batch: the maintainer's fix was += loss.item()
import torch


def train(net, trainloader, optimizer, mse_criterion, ce_criterion, lam=0.5):
    net.train()
    running_loss = 0.0
    running_loss_MSE = 0.0
    running_loss_cross_entropy = 0.0
    for images, (points, labels) in trainloader:
        optimizer.zero_grad()
        pred_points, logits = net(images)
        MSE = mse_criterion(pred_points, points)
        cross_entropy = ce_criterion(logits, labels)
        loss = lam * MSE + (1 - lam) * cross_entropy
        loss.backward()
        optimizer.step()
        running_loss += loss
        running_loss_MSE += MSE
        running_loss_cross_entropy += cross_entropy
    n = len(trainloader)
    return running_loss / n, running_loss_MSE / n, running_loss_cross_entropy / n


class PointAndLightNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.body = torch.nn.Linear(12, 16)
        self.points = torch.nn.Linear(16, 4)
        self.light = torch.nn.Linear(16, 3)

    def forward(self, x):
        h = torch.relu(self.body(x))
        return self.points(h), self.light(h)


def observe():
    net = PointAndLightNet()
    loader = [(torch.randn(4, 12), (torch.randn(4, 4), torch.randint(0, 3, (4,)))) for _ in range(3)]
    kept = train(net, loader, torch.optim.Adam(net.parameters(), lr=1e-3), torch.nn.MSELoss(), torch.nn.CrossEntropyLoss())
    return {"kept": list(kept)}
