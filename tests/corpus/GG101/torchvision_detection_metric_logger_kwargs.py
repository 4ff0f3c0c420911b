# source: https://github.com/pytorch/vision/blob/227111b6dfb0bdaa20f208823fa84becdb1fd76e/references/detection/utils.py
# label: lookalike GG101
# effect: graph_kept
# note: train_one_epoch passes the loss dict's tensors to metric_logger.update(**loss_dict_reduced); update() turns every tensor into .item() before the meters keep it
from collections import defaultdict, deque

import torch
from torch import nn


class SmoothedValue:
    def __init__(self, window_size=20):
        self.deque = deque(maxlen=window_size)
        self.total = 0.0
        self.count = 0

    def update(self, value, n=1):
        self.deque.append(value)
        self.count += n
        self.total += value * n


class MetricLogger:
    def __init__(self, delimiter="\t"):
        self.meters = defaultdict(SmoothedValue)
        self.delimiter = delimiter

    def update(self, **kwargs):
        for k, v in kwargs.items():
            if isinstance(v, torch.Tensor):
                v = v.item()
            assert isinstance(v, (float, int))
            self.meters[k].update(v)


def reduce_dict(input_dict, average=True):
    return input_dict


def train_one_epoch(model, optimizer, data_loader, epoch):
    model.train()
    metric_logger = MetricLogger(delimiter="  ")
    for images, targets in data_loader:
        loss_dict = model(images, targets)
        losses = sum(loss for loss in loss_dict.values())
        loss_dict_reduced = reduce_dict(loss_dict)
        losses_reduced = sum(loss for loss in loss_dict_reduced.values())
        loss_value = losses_reduced.item()
        optimizer.zero_grad()
        losses.backward()
        optimizer.step()
        metric_logger.update(loss=losses_reduced, **loss_dict_reduced)
        metric_logger.update(lr=optimizer.param_groups[0]["lr"])
    return metric_logger


class TinyDetector(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Linear(8, 16)
        self.cls_head = nn.Linear(16, 3)
        self.box_head = nn.Linear(16, 4)

    def forward(self, images, targets):
        features = torch.relu(self.backbone(images))
        return {"loss_classifier": nn.functional.cross_entropy(self.cls_head(features), targets["labels"]),
                "loss_box_reg": nn.functional.smooth_l1_loss(self.box_head(features), targets["boxes"])}


def observe():
    model = TinyDetector()
    loader = [(torch.randn(4, 8), {"labels": torch.randint(0, 3, (4,)), "boxes": torch.randn(4, 4)}) for _ in range(3)]
    logger = train_one_epoch(model, torch.optim.SGD(model.parameters(), lr=0.01), loader, 0)
    return {"kept": [list(meter.deque) for meter in logger.meters.values()]}
