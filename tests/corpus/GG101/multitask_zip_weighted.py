# source: https://learn-pytorch.oneoffcoder.com/multi-task-learning.html
# label: lookalike GG101
# effect: activations_alive
# note: per-task losses summed over zip(heads, criteria, weights) into the loss that is back-propagated; logged as floats
import torch
from torch import nn


def train_multitask(model, loader, optimizer, criteria, weights):
    model.train()
    history = {"total": [], "tasks": []}
    task_losses = []
    for x, targets in loader:
        optimizer.zero_grad(set_to_none=True)
        task_losses = [crit(out, tgt) for crit, out, tgt in zip(criteria, model(x), targets)]
        loss = 0.0
        for weight, task_loss in zip(weights, task_losses):
            loss = loss + weight * task_loss
        loss.backward()
        optimizer.step()
        history["total"].append(loss.item())
        history["tasks"].append([t.item() for t in task_losses])
    return history, task_losses


class MultiTaskModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(6, 16), nn.ReLU())
        self.class_head = nn.Linear(16, 2)
        self.regression_head = nn.Linear(16, 1)

    def forward(self, x):
        features = self.backbone(x)
        return self.class_head(features), self.regression_head(features)


def observe():
    model = MultiTaskModel()
    loader = [(torch.randn(8, 6), (torch.randint(0, 2, (8,)), torch.randn(8, 1))) for _ in range(3)]
    history, last = train_multitask(model, loader, torch.optim.AdamW(model.parameters(), lr=0.03),
                                    [nn.CrossEntropyLoss(), nn.MSELoss()], [1.0, 0.5])
    return {"kept": [history["total"], last]}
