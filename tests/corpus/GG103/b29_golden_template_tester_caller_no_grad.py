# source: https://github.com/amjltc295/pytorch-golden-template/pull/66
# label: lookalike GG103
# effect: graph_built
# note: the shared `_run_and_optimize_model()` runs the network with grad on (the trainer back-propagates its loss); the tester calls it inside `with torch.no_grad():`, the PR's fix, so its forwards build no graph
import torch
from torch import nn


class BasePipeline:
    def __init__(self, net, loss_functions, optimizer=None):
        self.net = net
        self.loss_functions = loss_functions
        self.optimizer = optimizer
        self.training = optimizer is not None

    def _get_loss(self, data, model_output):
        return sum(fn(model_output, data["target"]) for fn in self.loss_functions)

    def _run_and_optimize_model(self, data):
        model_output = self.net(data["input"])
        loss = self._get_loss(data, model_output)
        if self.training:
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
        return model_output, loss


class Trainer(BasePipeline):
    def _iter_data(self, data_loader):
        self.net.train()
        total = 0.0
        for data in data_loader:
            _, loss = self._run_and_optimize_model(data)
            total += loss.item()
        return total / len(data_loader)


class Tester(BasePipeline):
    def _iter_data(self, data_loader):
        self.net.eval()
        total, correct, seen = 0.0, 0, 0
        for data in data_loader:
            with torch.no_grad():
                model_output, loss = self._run_and_optimize_model(data)
            total += loss.item()
            correct += (model_output.argmax(1) == data["target"]).sum().item()
            seen += data["target"].numel()
        return {"loss": total / len(data_loader), "accuracy": correct / seen}


def observe():
    from corpus.oracle import hook_outputs

    net = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))
    loader = [{"input": torch.randn(4, 6), "target": torch.randint(0, 3, (4,))} for _ in range(2)]
    Trainer(net, [nn.CrossEntropyLoss()], torch.optim.SGD(net.parameters(), lr=0.1))._iter_data(loader)
    built = hook_outputs(net)
    Tester(net, [nn.CrossEntropyLoss()])._iter_data(loader)
    return {"built": built}
