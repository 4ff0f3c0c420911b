# source: https://github.com/pfnet/pytorch-pfn-extras/pull/49
# label: GG101 58
# effect: graph_kept
# note: the reporter copies reported tensors with clone(), which keeps their graph; the summary then sums every iteration's observation until the next log, holding each iteration's graph (the PR uses detach() instead of clone())
from collections import defaultdict

import torch
import torch.nn.functional as F


class Summary:
    def __init__(self):
        self._x = 0.0
        self._x2 = 0.0
        self._n = 0

    def add(self, value, weight=1):
        self._x += weight * value
        self._x2 += weight * value * value
        self._n += weight

    def compute_mean(self):
        return self._x / self._n


class DictSummary:
    def __init__(self):
        self._summaries = defaultdict(Summary)

    def add(self, d):
        for key, value in d.items():
            self._summaries[key].add(value)

    def compute_mean(self):
        return {key: float(s.compute_mean()) for key, s in self._summaries.items()}


class Reporter:
    def __init__(self):
        self.observation = {}

    def report(self, values):
        for key, value in values.items():
            if isinstance(value, torch.Tensor):
                value = value.clone()
            self.observation[key] = value


def train_epoch(model, loader, optimizer, reporter, summary):
    model.train()
    for x, y in loader:
        reporter.observation = {}
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        reporter.report({"train/loss": loss})
        summary.add(reporter.observation)
    return summary.compute_mean()


def observe():
    model = torch.nn.Linear(4, 3)
    summary = DictSummary()
    loader = [(torch.randn(5, 4), torch.randint(0, 3, (5,))) for _ in range(3)]
    train_epoch(model, loader, torch.optim.SGD(model.parameters(), lr=0.1), Reporter(), summary)
    return {"kept": summary._summaries["train/loss"]._x}
