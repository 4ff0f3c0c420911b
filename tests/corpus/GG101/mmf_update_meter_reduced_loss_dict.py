# source: https://github.com/facebookresearch/mmf/pull/560
# label: GG101 43
# effect: graph_kept
# note: the trainer's meter_update_dict (an attribute, alive between iterations) is updated with the dict of back-propagated losses itself: `update(reduced_loss_dict)` stores tensors that carry their graphs (the PR stores .item() values)
from collections import defaultdict

import torch
from torch import nn


def reduce_dict(dictionary):
    return {key: value.mean() for key, value in dictionary.items()}


class SmoothedValue:
    def __init__(self):
        self.total, self.count = 0.0, 0

    def update(self, value, n=1):
        self.total += value * n
        self.count += n


class Meter:
    def __init__(self):
        self.meters = defaultdict(SmoothedValue)

    def update(self, update_dict, batch_size=1):
        for k, v in update_dict.items():
            if isinstance(v, torch.Tensor):
                if v.dim() != 0:
                    v = v.mean()
                v = v.item()
            self.meters[k].update(v, batch_size)


class TrainerReportingMixin:
    def update_meter(self, report, meter):
        loss_key = "train/total_loss"
        reduced_loss_dict = reduce_dict(report["losses"])
        reduced_loss = sum([loss.mean() for loss in reduced_loss_dict.values()])
        self.meter_update_dict.update({loss_key: reduced_loss.detach()})
        self.meter_update_dict.update(reduced_loss_dict)
        meter.update(self.meter_update_dict, report["batch_size"])


class MMFTrainer(TrainerReportingMixin):
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer
        self.meter = Meter()
        self.meter_update_dict = {}

    def run_training_batch(self, batch):
        report = self.model(batch)
        loss = sum(value.mean() for value in report["losses"].values())
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return report

    def training_loop(self, batches):
        for batch in batches:
            report = self.run_training_batch(batch)
            self.update_meter(report, self.meter)


class VQAModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.classifier = nn.Linear(6, 3)

    def forward(self, batch):
        logits = self.classifier(batch["features"])
        return {"losses": {"train/vqa/logit_bce": nn.functional.binary_cross_entropy_with_logits(
            logits, batch["targets"], reduction="none")}, "batch_size": logits.size(0)}


def observe():
    model = VQAModel()
    trainer = MMFTrainer(model, torch.optim.SGD(model.parameters(), lr=0.1))
    trainer.training_loop([{"features": torch.randn(4, 6), "targets": torch.rand(4, 3).round()} for _ in range(3)])
    return {"kept": trainer.meter_update_dict}
