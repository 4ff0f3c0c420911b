# source: https://php.bkmy88.com/faq/1835025.html
# label: GG302 15
# effect: raises "element 0 of tensors does not require grad"
# note: the whole step was wrapped in no_grad to save memory
import torch
import torch.nn.functional as F


def train_step(model, x, y, optimizer):
    model.train()
    with torch.no_grad():
        out = model(x)
    loss = F.mse_loss(out, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()


def observe():
    model = torch.nn.Linear(4, 2)
    train_step(model, torch.randn(3, 4), torch.randn(3, 2), torch.optim.SGD(model.parameters(), lr=0.1))
    return {}
