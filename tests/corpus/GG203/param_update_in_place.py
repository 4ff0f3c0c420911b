# source: https://discuss.pytorch.org/t/leaf-variable-was-used-in-an-inplace-operation/308/2
# label: GG203 13
# effect: raises "a leaf Variable that requires grad is being used in an in-place operation"
# note: a hand-written update p -= lr * p.grad outside no_grad
import torch


def manual_step(model, x, y, lr):
    loss = ((model(x) - y) ** 2).mean()
    model.zero_grad()
    loss.backward()
    for p in model.parameters():
        p -= lr * p.grad


def observe():
    model = torch.nn.Linear(4, 2)
    manual_step(model, torch.randn(3, 4), torch.randn(3, 2), 0.1)
    return {}
