# source: https://github.com/IBM/mi-prometheus/issues/111
# label: GG101 39
# effect: graph_kept
# note: the worker hands the loss to a statistics collector through **kwargs; the collector appends every value to its lists, so each episode's loss tensor (and graph) outlives the episode
from collections import defaultdict

import torch
from torch import nn


class StatisticsCollector:
    def __init__(self):
        self.statistics = defaultdict(list)

    def collect(self, **stats):
        for key, value in stats.items():
            self.statistics[key].append(value)

    def export(self):
        return {key: values[-1] for key, values in self.statistics.items()}


class Trainer:
    def __init__(self, model, loss_function, optimizer):
        self.model = model
        self.loss_function = loss_function
        self.optimizer = optimizer
        self.stat_col = StatisticsCollector()

    def train(self, data_loader):
        self.model.train()
        for episode, (inputs, targets) in enumerate(data_loader):
            self.optimizer.zero_grad()
            logits = self.model(inputs)
            loss = self.loss_function(logits, targets)
            loss.backward()
            self.optimizer.step()
            accuracy = (logits.argmax(dim=1) == targets).float().mean().item()
            self.stat_col.collect(episode=episode, loss=loss, acc=accuracy)
        return self.stat_col.export()


def observe():
    model = nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 3))
    trainer = Trainer(model, nn.CrossEntropyLoss(), torch.optim.Adam(model.parameters(), lr=1e-3))
    trainer.train([(torch.randn(4, 6), torch.randint(0, 3, (4,))) for _ in range(3)])
    return {"kept": trainer.stat_col.statistics["loss"]}
