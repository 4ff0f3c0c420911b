# source: https://github.com/fastai/course-v3/issues/455
# label: lookalike GG401
# effect: raises "Can't call numpy() on Tensor that requires grad"
# note: the fix in the issue: the fitted line x@a (a is an nn.Parameter) is computed for plotting under torch.no_grad(), so converting it to NumPy works
import torch
import torch.nn as nn


class LinearFit:
    def __init__(self, n=100, lr=1e-1):
        self.x = torch.ones(n, 2)
        self.x[:, 0].uniform_(-1.0, 1)
        self.y = self.x @ torch.tensor([3.0, 2]) + torch.rand(n)
        self.a = nn.Parameter(torch.tensor([-1.0, 1]))
        self.lr = lr

    def mse(self, y_hat):
        return ((y_hat - self.y) ** 2).mean()

    def update(self):
        loss = self.mse(self.x @ self.a)
        loss.backward()
        with torch.no_grad():
            self.a.sub_(self.lr * self.a.grad)
            self.a.grad.zero_()
        return loss.item()

    def line_for_plot(self):
        with torch.no_grad():
            return self.x[:, 0].numpy(), (self.x @ self.a).numpy()

    def fit(self, steps=10):
        frames = []
        for _ in range(steps):
            self.update()
            frames.append(self.line_for_plot()[1])
        return frames


def observe():
    fit = LinearFit(n=20)
    fit.fit(steps=3)
    return {}
