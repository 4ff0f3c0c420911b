# source: https://github.com/zhuangdizhu/FedGen/issues/1
# label: GG401 34
# effect: raises "Can't call numpy() on Tensor that requires grad"
# note: the server averages the users' test losses with np.sum; each loss was computed with grad on, so NumPy's conversion raises
import numpy as np
import torch
from torch import nn


class User:
    def __init__(self, model, test_loader):
        self.model = model
        self.test_loader = test_loader
        self.loss = nn.CrossEntropyLoss()

    def test(self):
        self.model.eval()
        correct, loss = 0, 0
        for x, y in self.test_loader:
            output = self.model(x)
            loss += self.loss(output, y)
            correct += (torch.argmax(output, dim=1) == y).sum().item()
        return correct, loss, y.shape[0]


def evaluate(users):
    test_samples, test_accs, test_losses = [], [], []
    for user in users:
        ct, loss, ns = user.test()
        test_accs.append(ct * 1.0)
        test_losses.append(loss)
        test_samples.append(ns)
    glob_acc = np.sum(test_accs) * 1.0 / np.sum(test_samples)
    glob_loss = np.sum([x * y for (x, y) in zip(test_samples, test_losses)]).item() / np.sum(test_samples)
    return glob_acc, glob_loss


def observe():
    torch.manual_seed(0)
    loaders = [[(torch.randn(4, 6), torch.randint(0, 3, (4,)))] for _ in range(2)]
    users = [User(nn.Linear(6, 3), loader) for loader in loaders]
    return {"result": evaluate(users)}
