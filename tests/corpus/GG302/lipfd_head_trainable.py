# source: https://github.com/AaronComo/LipFD/issues/18
# label: lookalike GG302
# effect: raises "element 0 of tensors does not require grad"
# note: the fix: the head's parameters keep requires_grad = True, the backbone is frozen
import torch
from torch import nn


class Trainer:
    def __init__(self, model, lr=0.01):
        self.model = model
        params = []
        for name, p in model.named_parameters():
            if name.startswith("head"):
                params.append(p)
                p.requires_grad = True
            else:
                p.requires_grad = False
        self.optimizer = torch.optim.AdamW(params, lr=lr)

    def step(self, x, y):
        self.optimizer.zero_grad()
        loss = nn.functional.cross_entropy(self.model(x), y)
        loss.backward()
        self.optimizer.step()
        return loss.item()


def observe():
    torch.manual_seed(0)
    model = nn.Sequential()
    model.add_module("backbone", nn.Linear(4, 6))
    model.add_module("head", nn.Linear(6, 2))
    Trainer(model).step(torch.randn(3, 4), torch.randint(0, 2, (3,)))
    return {}
