"""A model two subclasses away from nn.Module, and objects that only look like tensors."""

from torch import nn


class Backbone(nn.Module):
    pass


class Net(Backbone):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(x)


class Checkout:
    """Has its own clone() and detach(), nothing to do with autograd."""

    def clone(self):
        return Checkout()

    def detach(self):
        return self

    def add_(self, n):
        return self


def accuracy(out, y):
    return 0.5
