# source: https://github.com/open-mmlab/mmpose/issues/2788
# label: GG302 94
# effect: raises "element 0 of tensors does not require grad"
# note: a classification branch added to RTMCCHead: its loss is taken on `pre_cls1 = torch.tensor(pre_cls, device=gt_x.device)`, a copy with no graph, and the keypoint loss is commented out while trying it, so the only loss has no graph and the backward raises (mmengine's optim wrapper does the backward; here a train step does it). Head, data samples and the wrapper are cut down
from types import SimpleNamespace
from typing import Tuple

import torch
import torch.nn as nn
from torch import Tensor


class RTMCCHead(nn.Module):
    def __init__(self, in_channels=8, num_keypoints=4, simcc_bins=(12, 12), num_classes=3):
        super().__init__()
        self.final_layer = nn.Conv2d(in_channels, num_keypoints, 1)
        self.mlp = nn.Linear(16, 16)
        self.cls_x = nn.Linear(16, simcc_bins[0])
        self.cls_y = nn.Linear(16, simcc_bins[1])
        self.cls_head = nn.Linear(num_keypoints * 16, num_classes)
        self.loss_module = nn.KLDivLoss(reduction="batchmean")
        self.cls_loss = nn.CrossEntropyLoss()

    def forward(self, feats: Tuple[Tensor]):
        feats = feats[-1]
        feats = self.final_layer(feats)
        feats = torch.flatten(feats, 2)
        feats = self.mlp(feats)
        pred_x = self.cls_x(feats)
        pred_y = self.cls_y(feats)
        pre_cls = self.cls_head(feats.flatten(1))
        return pred_x, pred_y, pre_cls

    def loss(self, feats, batch_data_samples, train_cfg={}):
        """Calculate losses from a batch of inputs and data samples."""

        pred_x, pred_y, pre_cls = self.forward(feats)

        gt_x = torch.cat([
            d.gt_instance_labels.keypoint_x_labels for d in batch_data_samples
        ],
                         dim=0)

        gt_y = torch.cat([
            d.gt_instance_labels.keypoint_y_labels for d in batch_data_samples
        ],
                         dim=0)

        cls_label = torch.tensor([
            d.gt_instances.category_id[0] for d in batch_data_samples
        ], device=gt_x.device)

        pre_cls1 = torch.tensor(pre_cls, device=gt_x.device)

        keypoint_weights = torch.cat(
            [
                d.gt_instance_labels.keypoint_weights
                for d in batch_data_samples
            ],
            dim=0,
        )

        pred_simcc = (pred_x, pred_y)
        gt_simcc = (gt_x, gt_y)

        # calculate losses
        losses = dict()

        # loss = self.loss_module(pred_simcc, gt_simcc, keypoint_weights)

        # losses.update(loss_kpt=loss)

        loss_cls = self.cls_loss(pre_cls1, cls_label)
        losses.update(loss_cls=loss_cls)

        return losses


def parse_losses(losses):
    log_vars = []
    for loss_name, loss_value in losses.items():
        if isinstance(loss_value, torch.Tensor):
            log_vars.append([loss_name, loss_value.mean()])
        else:
            log_vars.append([loss_name, sum(_loss.mean() for _loss in loss_value)])
    loss = sum(value for key, value in log_vars if 'loss' in key)
    return loss, {key: value.item() for key, value in log_vars}


def train_step(head, feats, batch_data_samples, optimizer):
    losses = head.loss(feats, batch_data_samples)
    parsed_losses, log_vars = parse_losses(losses)
    optimizer.zero_grad()
    parsed_losses.backward()
    optimizer.step()
    return log_vars


def observe():
    head = RTMCCHead()
    optimizer = torch.optim.AdamW(head.parameters(), lr=1e-3)
    feats = (torch.randn(2, 8, 4, 4),)
    samples = [SimpleNamespace(
        gt_instance_labels=SimpleNamespace(keypoint_x_labels=torch.rand(1, 4, 12), keypoint_y_labels=torch.rand(1, 4, 12),
                                           keypoint_weights=torch.ones(1, 4)),
        gt_instances=SimpleNamespace(category_id=[i % 3])) for i in range(2)]
    train_step(head, feats, samples, optimizer)
    return {}
