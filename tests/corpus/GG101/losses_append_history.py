# source: https://discuss.pytorch.org/t/cuda-out-of-memory-after-more-than-8000-iterators/27253
# label: GG101 15
# effect: graph_kept
# note: the loss tensor itself appended to the history list every step
import torch


def fit(model, loader, optimizer, criterion, history):
    model.train()
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        history.append(loss)


def observe():
    model = torch.nn.Linear(4, 2)
    history = []
    fit(model, [(torch.randn(3, 4), torch.randn(3, 2))] * 3, torch.optim.SGD(model.parameters(), lr=0.1),
        torch.nn.MSELoss(), history)
    return {"kept": history}
