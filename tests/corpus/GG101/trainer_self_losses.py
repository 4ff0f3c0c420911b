# source: https://discuss.pytorch.org/t/optimizing-training-recording-batch-statistics/22649
# label: GG101 22
# effect: graph_kept
# note: a Trainer keeps each batch's loss tensor in self.losses for the plot
import torch


class Trainer:
    def __init__(self, model, optimizer, criterion):
        self.model = model
        self.optimizer = optimizer
        self.criterion = criterion
        self.losses = []

    def train_epoch(self, loader):
        self.model.train()
        for x, y in loader:
            self.optimizer.zero_grad()
            loss = self.criterion(self.model(x), y)
            loss.backward()
            self.optimizer.step()
            self.losses.append(loss)


def observe():
    model = torch.nn.Linear(4, 2)
    t = Trainer(model, torch.optim.SGD(model.parameters(), lr=0.1), torch.nn.MSELoss())
    t.train_epoch([(torch.randn(3, 4), torch.randn(3, 2))] * 3)
    return {"kept": t.losses}
