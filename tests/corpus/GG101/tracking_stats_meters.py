# source: https://github.com/visionml/pytracking/pull/313
# label: GG101 44
# effect: graph_kept
# note: the actor's stats dict carries tensors with gradients; _update_stats feeds them to AverageMeters that sum them for the whole epoch
from collections import OrderedDict

import torch


class AverageMeter:
    def __init__(self):
        self.reset()

    def reset(self):
        self.val, self.avg, self.sum, self.count = 0, 0, 0, 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


class LTRTrainer:
    def __init__(self, actor, optimizer):
        self.actor = actor
        self.optimizer = optimizer
        self.stats = OrderedDict()

    def cycle_dataset(self, loader, name="train"):
        for i, data in enumerate(loader, 1):
            loss, stats = self.actor(data)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            self._update_stats(stats, data["train_images"].shape[0], name)

    def _update_stats(self, new_stats, batch_size, name):
        if name not in self.stats or self.stats[name] is None:
            self.stats[name] = OrderedDict({key: AverageMeter() for key in new_stats.keys()})
        for key, val in new_stats.items():
            if key not in self.stats[name]:
                self.stats[name][key] = AverageMeter()
            self.stats[name][key].update(val, batch_size)


class IoUActor:
    def __init__(self, net):
        self.net = net

    def __call__(self, data):
        iou_pred = self.net(data["train_images"]).squeeze(-1)
        loss = torch.nn.functional.mse_loss(iou_pred, data["proposal_iou"])
        return loss, {"Loss/total": loss, "Loss/iou": loss}


def observe():
    net = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))
    trainer = LTRTrainer(IoUActor(net), torch.optim.Adam(net.parameters(), lr=1e-3))
    loader = [{"train_images": torch.randn(4, 6), "proposal_iou": torch.rand(4)} for _ in range(3)]
    trainer.cycle_dataset(loader)
    return {"kept": [m.sum for m in trainer.stats["train"].values()]}
