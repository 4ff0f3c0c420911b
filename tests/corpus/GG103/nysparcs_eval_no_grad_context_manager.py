# source: https://github.com/elicutler/nysparcs/blob/d3799e5ea19a10b2f92b03ceccf441677c5ca974/eval_no_grad.py
# label: lookalike GG103
# effect: graph_built
# note: the project's own context manager puts the model in eval mode and calls torch.set_grad_enabled(False) in __enter__; the validation forwards run inside it
import torch
from torch import nn


class EvalNoGrad:
    '''
    Context manager to run pytorch model in eval mode without gradient tracking.
    Upon exit, restore whichever train/eval and grad enabled/disabled modes
    were previously set.
    '''

    def __init__(self, model):
        self.model = model
        self.prevModeTrain = self.model.training
        self.prevGradEnabled = torch.is_grad_enabled()

    def __enter__(self) -> None:
        self.model.train(False)
        torch.set_grad_enabled(False)

    def __exit__(self, *args) -> None:
        self.model.train(self.prevModeTrain)
        torch.set_grad_enabled(self.prevGradEnabled)


class ModelTrainer:
    def __init__(self, model, lossFunc, optimizer):
        self.model = model
        self.lossFunc = lossFunc
        self.optimizer = optimizer

    def train(self, trainLoader, valLoader, numEpochs=2):
        history = []
        for epoch in range(numEpochs):
            self.model.train()
            for X, y in trainLoader:
                self.optimizer.zero_grad()
                loss = self.lossFunc(self.model(X).squeeze(1), y)
                loss.backward()
                self.optimizer.step()
            with EvalNoGrad(self.model):
                valLoss = sum(self.lossFunc(self.model(X).squeeze(1), y).item() for X, y in valLoader)
            history.append(valLoss / len(valLoader))
        return history


def observe():
    from corpus.oracle import hook_outputs

    model = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 1))
    built = hook_outputs(model, where=lambda inputs: inputs[0].shape[0] == 3)
    trainer = ModelTrainer(model, nn.BCEWithLogitsLoss(), torch.optim.Adam(model.parameters(), lr=1e-3))
    trainer.train([(torch.randn(4, 5), torch.rand(4).round()) for _ in range(2)],
                  [(torch.randn(3, 5), torch.rand(3).round()) for _ in range(2)])
    return {"built": built}
