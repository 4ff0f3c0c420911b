# source: https://github.com/ronghuaiyang/arcface-pytorch/issues/56
# label: lookalike GG303
# effect: no_grad
# note: requires_grad_ on the input batch (a leaf by construction), not on the loss: the loss keeps its graph and the model learns
import torch
import torch.nn.functional as F


def train_one_epoch(model, loader, optimizer):
    model.train()
    for data_input, label in loader:
        x = data_input.clone().requires_grad_(True)
        output = model(x)
        loss = F.cross_entropy(output, label)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def observe():
    model = torch.nn.Linear(4, 3)
    loader = [(torch.randn(2, 4), torch.tensor([0, 2]))]
    train_one_epoch(model, loader, torch.optim.SGD(model.parameters(), lr=0.1))
    return {"params": list(model.parameters())}
