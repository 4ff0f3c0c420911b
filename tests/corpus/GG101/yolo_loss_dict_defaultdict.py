# source: https://github.com/MultimediaTechLab/YOLO/pull/83
# label: GG101 27
# effect: graph_kept
# note: per-component losses summed into a defaultdict of tensors for the epoch log: each += chains the step's graph
from collections import defaultdict

import torch


def detection_loss(pred, target):
    box = torch.nn.functional.smooth_l1_loss(pred[:, :4], target[:, :4])
    cls = torch.nn.functional.binary_cross_entropy_with_logits(pred[:, 4:], target[:, 4:])
    return box + cls, {"box": box, "cls": cls}


def train_one_epoch(model, dataloader, optimizer):
    model.train()
    total_loss = defaultdict(lambda: torch.tensor(0.0))
    seen = 0
    for images, targets in dataloader:
        batch_size = images.shape[0]
        optimizer.zero_grad()
        loss, loss_items = detection_loss(model(images), targets)
        loss.backward()
        optimizer.step()
        for loss_name, loss_val in loss_items.items():
            total_loss[loss_name] += loss_val * batch_size
        seen += batch_size
    return {name: value / seen for name, value in total_loss.items()}


def observe():
    model = torch.nn.Linear(6, 6)
    loader = [(torch.randn(4, 6), torch.rand(4, 6)) for _ in range(3)]
    return {"kept": train_one_epoch(model, loader, torch.optim.SGD(model.parameters(), lr=0.05))}
