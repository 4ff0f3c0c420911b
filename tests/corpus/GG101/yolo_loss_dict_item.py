# source: https://github.com/MultimediaTechLab/YOLO/pull/83
# label: lookalike GG101
# effect: graph_kept
# note: the PR's fix: a defaultdict(float) fed loss_val.item() * batch_size, numbers only
from collections import defaultdict

import torch


def detection_loss(pred, target):
    box = torch.nn.functional.smooth_l1_loss(pred[:, :4], target[:, :4])
    cls = torch.nn.functional.binary_cross_entropy_with_logits(pred[:, 4:], target[:, 4:])
    return box + cls, {"box": box, "cls": cls}


def train_one_epoch(model, dataloader, optimizer):
    model.train()
    total_loss = defaultdict(float)
    seen = 0
    for images, targets in dataloader:
        batch_size = images.shape[0]
        optimizer.zero_grad()
        loss, loss_items = detection_loss(model(images), targets)
        loss.backward()
        optimizer.step()
        for loss_name, loss_val in loss_items.items():
            total_loss[loss_name] += loss_val.item() * batch_size
        seen += batch_size
    return {name: value / seen for name, value in total_loss.items()}


def observe():
    model = torch.nn.Linear(6, 6)
    loader = [(torch.randn(4, 6), torch.rand(4, 6)) for _ in range(3)]
    return {"kept": train_one_epoch(model, loader, torch.optim.SGD(model.parameters(), lr=0.05))}
