# source: https://github.com/pytorch/examples/pull/779
# label: lookalike GG203
# effect: raises "a leaf Variable that requires grad is being used in an in-place operation"
# note: the PR's fix: the step goes through p.data, which autograd does not track (the optimizer idiom)
import torch
from torch import nn


def train_epoch(model, batches, criterion, lr, clip=0.25):
    model.train()
    total_loss = 0.0
    for data, targets in batches:
        model.zero_grad()
        output = model(data)
        loss = criterion(output, targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        for p in model.parameters():
            if p.grad is None:
                continue
            p.data.add_(p.grad, alpha=-lr)
        total_loss += loss.item()
    return total_loss


def observe():
    torch.manual_seed(0)
    model = nn.Linear(5, 3)
    batches = [(torch.randn(4, 5), torch.randint(0, 3, (4,))) for _ in range(2)]
    return {"loss": train_epoch(model, batches, nn.CrossEntropyLoss(), lr=0.1)}
