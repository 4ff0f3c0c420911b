# source: https://discuss.pytorch.org/t/leaf-variable-was-used-in-an-inplace-operation/308/4?u=ptrblck
# label: lookalike GG202
# effect: no_grad
# note: a hand-written SGD step through .data after backward: the legacy idiom, correct
import torch


def sgd_step(model, x, y, lr):
    loss = ((model(x) - y) ** 2).mean()
    model.zero_grad()
    loss.backward()
    for p in model.parameters():
        p.data -= lr * p.grad.data
    return loss.item()


def observe():
    model = torch.nn.Linear(4, 2)
    sgd_step(model, torch.randn(3, 4), torch.randn(3, 2), 0.1)
    return {"params": list(model.parameters())}
