# source: https://github.com/pytorchbearer/torchbearer/issues/506
# label: GG101 47
# effect: graph_kept
# note: the mse metric returns torch.pow(y_pred - y_true, 2) with its graph, and the Mean aggregator sums it into self._sum over the whole epoch: every batch's graph stays reachable from the running total ("Memory leak in the mse metric")
import torch


class Metric(object):
    def __init__(self, name):
        self.name = name

    def process(self, *args):
        pass

    def process_final(self, *args):
        pass

    def reset(self, state):
        pass


class MeanSquaredError(Metric):
    """Pixelwise squared error, averaged by the Mean aggregator below."""

    def __init__(self, pred_key="y_pred", target_key="y_true"):
        super(MeanSquaredError, self).__init__("mse")
        self.pred_key = pred_key
        self.target_key = target_key

    def process(self, *args):
        state = args[0]
        y_pred = state[self.pred_key]
        y_true = state[self.target_key]
        return torch.pow(y_pred - y_true.view_as(y_pred), 2)


class Mean(Metric):
    def __init__(self, name, dim=None):
        super(Mean, self).__init__(name)
        self._kwargs = {"dim": dim} if dim is not None else {}
        self._sum = 0.0
        self._count = 0

    def process(self, *args):
        data = args[0]
        tot = data.sum(**self._kwargs)
        self._sum += tot
        self._count += data.size(0) if data.dim() > 0 else 1

    def process_final(self, *args):
        res = self._sum / self._count
        return res.item() if res.numel() <= 1 else res.tolist()

    def reset(self, state):
        super(Mean, self).reset(state)
        self._sum = 0.0
        self._count = 0


class MetricTree(Metric):
    """Feeds the output of a root metric to its children (aggregators)."""

    def __init__(self, metric, children):
        super(MetricTree, self).__init__(metric.name)
        self.root = metric
        self.children = children

    def process(self, *args):
        value = self.root.process(*args)
        for child in self.children:
            child.process(value)

    def process_final(self, *args):
        return {child.name: child.process_final() for child in self.children}

    def reset(self, state):
        for child in self.children:
            child.reset(state)


def fit(model, loader, optimizer, criterion, metrics, epochs=1):
    history = []
    for epoch in range(epochs):
        state = {"epoch": epoch}
        for metric in metrics:
            metric.reset(state)
        for x, y in loader:
            state["x"], state["y_true"] = x, y
            state["y_pred"] = model(x)
            state["loss"] = criterion(state["y_pred"], y)
            optimizer.zero_grad()
            state["loss"].backward()
            optimizer.step()
            for metric in metrics:
                metric.process(state)
        history.append({metric.name: metric.process_final(state) for metric in metrics})
    return history


def observe():
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
    mean = Mean("mse")
    metrics = [MetricTree(MeanSquaredError(), [mean])]
    loader = [(torch.randn(5, 4), torch.randn(5, 2)) for _ in range(4)]
    fit(model, loader, torch.optim.SGD(model.parameters(), lr=0.01), torch.nn.MSELoss(), metrics)
    return {"kept": [mean._sum]}
