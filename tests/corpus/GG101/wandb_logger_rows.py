# source: https://github.com/wandb/wandb/issues/354
# label: GG101 25
# effect: graph_kept
# note: the loss tensor handed to a logger that keeps every row: the graphs pile up (the fix: log loss.item())
import torch


class RunLogger:
    """Buffers metric rows and flushes them to the tracking server at the end of the run."""

    def __init__(self):
        self.rows = []

    def log(self, metrics):
        self.rows.append(dict(metrics))


def train(model, loader, optimizer, loss_fn, logger, epoch):
    model.train()
    for step, (inputs, targets) in enumerate(loader):
        optimizer.zero_grad()
        loss = loss_fn(model(inputs), targets)
        loss.backward()
        optimizer.step()
        logger.log({"train/loss": loss, "epoch": epoch, "step": step})


def observe():
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
    logger = RunLogger()
    loader = [(torch.randn(3, 4), torch.randn(3, 2)) for _ in range(3)]
    train(model, loader, torch.optim.SGD(model.parameters(), lr=0.1), torch.nn.MSELoss(), logger, 0)
    return {"kept": [row["train/loss"] for row in logger.rows]}
