# source: https://github.com/Lightning-AI/pytorch-lightning/issues/18222
# label: lookalike GG302
# effect: raises "element 0 of tensors does not require grad"
# note: the same closure handed to torch's own optimizers: their step() is no_grad too, but it runs the closure inside torch.enable_grad(), so the closure's loss has a graph
import torch
import torch.nn as nn
import torch.nn.functional as F


def fit(model, batches, optimizer):
    model.train()
    for x, y in batches:
        def closure():
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            return loss
        optimizer.step(closure)


def observe():
    model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))
    batches = [(torch.randn(4, 6), torch.randint(0, 3, (4,)))]
    fit(model, batches, torch.optim.LBFGS(model.parameters(), lr=0.1, max_iter=2))
    fit(model, batches, torch.optim.AdamW(model.parameters(), lr=1e-3))
    return {}
