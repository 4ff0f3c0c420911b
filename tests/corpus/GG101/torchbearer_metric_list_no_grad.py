# source: https://github.com/pytorchbearer/torchbearer/pull/533
# label: lookalike GG101
# effect: graph_kept
# note: the metrics are processed through MetricList.process, decorated with torch.no_grad(): the mse and loss values summed into the Mean aggregators over the epoch are computed without a graph, so the running tensor totals keep nothing alive
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
    def __init__(self, pred_key="y_pred", target_key="y_true"):
        super().__init__("mse")
        self.pred_key = pred_key
        self.target_key = target_key

    def process(self, *args):
        state = args[0]
        y_pred = state[self.pred_key]
        y_true = state[self.target_key]
        return torch.pow(y_pred - y_true.view_as(y_pred), 2)


class Loss(Metric):
    def __init__(self):
        super().__init__("loss")

    def process(self, *args):
        return args[0]["loss"]


class Mean(Metric):
    def __init__(self, name):
        super().__init__(name)
        self._sum = 0.0
        self._count = 0

    def process(self, *args):
        data = args[0]
        self._sum += data.sum()
        self._count += data.size(0) if data.dim() > 0 else 1

    def process_final(self, *args):
        return (self._sum / self._count).item()

    def reset(self, state):
        self._sum = 0.0
        self._count = 0


class Aggregated(Metric):
    def __init__(self, metric, aggregator):
        super().__init__(metric.name)
        self.metric = metric
        self.aggregator = aggregator

    def process(self, *args):
        self.aggregator.process(self.metric.process(*args))

    def process_final(self, *args):
        return self.aggregator.process_final()

    def reset(self, state):
        self.aggregator.reset(state)


class MetricList(Metric):
    def __init__(self, metric_list):
        super().__init__("metric_list")
        self.metric_list = metric_list

    @torch.no_grad()
    def process(self, *args):
        for metric in self.metric_list:
            metric.process(*args)

    @torch.no_grad()
    def process_final(self, *args):
        return {metric.name: metric.process_final(*args) for metric in self.metric_list}

    def reset(self, state):
        for metric in self.metric_list:
            metric.reset(state)


class Trial:
    def __init__(self, model, optimizer, criterion, metrics):
        self.model = model
        self.optimizer = optimizer
        self.criterion = criterion
        self.metrics = MetricList(metrics)

    def run(self, loader, epochs=1):
        history = []
        for epoch in range(epochs):
            state = {"epoch": epoch}
            self.metrics.reset(state)
            for x, y in loader:
                state["y_true"] = y
                state["y_pred"] = self.model(x)
                state["loss"] = self.criterion(state["y_pred"], y)
                self.optimizer.zero_grad()
                state["loss"].backward()
                self.optimizer.step()
                self.metrics.process(state)
            history.append(self.metrics.process_final(state))
        return history


def observe():
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
    mse_mean, loss_mean = Mean("mse"), Mean("loss")
    trial = Trial(model, torch.optim.SGD(model.parameters(), lr=0.01), torch.nn.MSELoss(),
                  [Aggregated(MeanSquaredError(), mse_mean), Aggregated(Loss(), loss_mean)])
    trial.run([(torch.randn(5, 4), torch.randn(5, 2)) for _ in range(4)])
    return {"kept": [mse_mean._sum, loss_mean._sum]}
