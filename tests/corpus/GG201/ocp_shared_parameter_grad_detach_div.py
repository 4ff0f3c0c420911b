# source: https://github.com/Open-Catalyst-Project/ocp/blob/599ba4fcb69ab2bb648f98b34a781a2ee8852a35/ocpmodels/trainers/base_trainer.py#L607
# label: lookalike GG201
# effect: wrong_grad
# note: the trainer scales the gradients of shared parameters in place through p.grad.detach().div_(factor): writing through the alias is the point, and the optimizer then reads the scaled gradient
import torch
from torch import nn


class SharedEmbeddingModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = nn.Linear(3, 4)
        self.blocks = nn.ModuleList([nn.Linear(4, 4) for _ in range(2)])
        self.shared_parameters = [(self.embedding.weight, 2)]

    def forward(self, x):
        h = self.embedding(x)
        for block in self.blocks:
            h = h + torch.tanh(block(h)) + self.embedding(x)
        return h.sum(-1)


class BaseTrainer:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer

    def _backward(self, loss):
        self.optimizer.zero_grad()
        loss.backward()
        if hasattr(self.model, "shared_parameters"):
            for p, factor in self.model.shared_parameters:
                if hasattr(p, "grad") and p.grad is not None:
                    p.grad.detach().div_(factor)
                else:
                    print("Some shared parameters do not have a gradient.")
        self.optimizer.step()


def observe():
    model = SharedEmbeddingModel()
    x, y = torch.randn(2, 3), torch.randn(2)
    trainer = BaseTrainer(model, torch.optim.SGD(model.parameters(), lr=0.0))
    loss = ((model(x) - y) ** 2).mean()
    raw = torch.autograd.grad(loss, model.embedding.weight, retain_graph=True)[0]
    trainer._backward(loss)
    return {"grad": model.embedding.weight.grad, "expected": raw / 2}
