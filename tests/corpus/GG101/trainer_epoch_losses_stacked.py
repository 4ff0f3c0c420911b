# source: https://github.com/pnnl/neuromancer/pull/292
# label: GG101 28
# effect: graph_kept
# note: a Trainer collects each batch's loss tensor (already back-propagated) and keeps the stacked epoch mean in its history: the graphs stay alive
from collections import defaultdict

import torch


class Trainer:
    def __init__(self, problem, train_data, optimizer, epochs=1, train_metric="train_loss"):
        self.problem = problem
        self.train_data = train_data
        self.optimizer = optimizer
        self.epochs = epochs
        self.train_metric = train_metric
        self.history = defaultdict(list)

    def train(self):
        for i in range(self.epochs):
            losses = []
            for t_batch in self.train_data:
                t_batch["epoch"] = i
                output = self.problem(t_batch)
                self.optimizer.zero_grad()
                output[self.train_metric].backward()
                self.optimizer.step()
                losses.append(output[self.train_metric])
            self.history[f"mean_{self.train_metric}"].append(torch.mean(torch.stack(losses)))
        return self.history


class Problem(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.policy = torch.nn.Sequential(torch.nn.Linear(3, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))

    def forward(self, batch):
        x_next = batch["x"] + 0.1 * self.policy(batch["x"])
        return {"train_loss": (x_next - batch["x_ref"]).pow(2).mean()}


def observe():
    problem = Problem()
    data = [{"x": torch.randn(4, 3), "x_ref": torch.zeros(4, 3)} for _ in range(3)]
    trainer = Trainer(problem, data, torch.optim.AdamW(problem.parameters(), lr=1e-3))
    history = trainer.train()
    return {"kept": history["mean_train_loss"]}
