# source: https://discuss.pytorch.org/t/bit-of-fun-with-gradients/34398
# label: lookalike GG303
# effect: no_grad
# note: the graph is cut at the stage boundary on purpose: the second stage back-propagates into a fresh leaf made from the first stage's output, and that leaf's gradient is fed back with act.backward(boundary.grad), so the first stage learns too (the thread: pull a tensor out of the middle and put the gradient back in)
import torch
import torch.nn as nn


class TwoStageModel(nn.Module):
    def __init__(self, in_dim=8, hidden=16, out_dim=4):
        super().__init__()
        self.stage0 = nn.Sequential(nn.Linear(in_dim, hidden), nn.ReLU())
        self.stage1 = nn.Sequential(nn.Linear(hidden, hidden), nn.Tanh(), nn.Linear(hidden, out_dim))


def train_step(model, optimizer, criterion, x, y):
    optimizer.zero_grad()
    act = model.stage0(x)
    boundary = act.detach().requires_grad_()
    loss = criterion(model.stage1(boundary), y)
    loss.backward()
    act.backward(boundary.grad)
    optimizer.step()
    return loss.item()


def observe():
    model = TwoStageModel()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    train_step(model, optimizer, nn.MSELoss(), torch.randn(5, 8), torch.randn(5, 4))
    return {"params": list(model.stage0.parameters())}
