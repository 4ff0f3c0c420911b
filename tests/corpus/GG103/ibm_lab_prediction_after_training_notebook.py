# source: http://science.dataidea.org/Pytorch-Deep-Learning/Week2-Linear-Regression/2.1Prediction1Dregression_v3.html
# label: GG103 35
# effect: graph_kept
# note: a notebook: the hand-written model forward(x) over w, b (requires_grad=True) is trained by hand, then a one-off prediction is printed - it carries a graph (grad_fn=<AddBackward0> in the lab's own output)
import torch

w = torch.tensor(-10.0, requires_grad=True)
b = torch.tensor(-1.0, requires_grad=True)
X = torch.arange(-3, 3, 0.1).view(-1, 1)
Y = 2 * X - 1 + 0.1 * torch.randn(X.size())
lr = 0.1


def forward(x):
    yhat = w * x + b
    return yhat


def criterion(yhat, y):
    return torch.mean((yhat - y) ** 2)


LOSS = []
for epoch in range(4):
    Yhat = forward(X)
    loss = criterion(Yhat, Y)
    LOSS.append(loss.item())
    loss.backward()
    w.data = w.data - lr * w.grad.data
    b.data = b.data - lr * b.grad.data
    w.grad.data.zero_()
    b.grad.data.zero_()

x = torch.tensor([[1.0], [2.0]])
yhat = forward(x)
print("The prediction: ", yhat)


def observe():
    return {"kept": yhat}
