# source: https://pytorch.org/docs/stable/notes/faq.html
# label: GG101 16
# effect: graph_kept
# note: the FAQ's total_loss += loss, after backward, returned as the epoch's average
import torch


def train_one_epoch(model, loader, optimizer, criterion):
    model.train()
    total_loss = 0
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        total_loss += loss
    return total_loss / len(loader)


def observe():
    model = torch.nn.Linear(4, 2)
    loader = [(torch.randn(3, 4), torch.randn(3, 2)) for _ in range(3)]
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    return {"kept": train_one_epoch(model, loader, opt, torch.nn.MSELoss())}
