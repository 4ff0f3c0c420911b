# source: https://machinelearningreference-raw.pages.dev/03-Computer-programming/01-Python/01-Python-libraries/4-Data-science-and-machine-learning/PyTorch/00-Skeleton-of-a-PyTorch-script/04-PyTorch-test-function
# label: lookalike GG101
# effect: graph_kept
# note: correct += (pred.argmax(1) == y).sum() inside the training loop: a count tensor, never a graph
import torch


def train_epoch(dataloader, model, loss_fn, optimizer):
    model.train()
    train_loss, correct, size = 0.0, 0, 0
    for X, y in dataloader:
        pred = model(X)
        loss = loss_fn(pred, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        train_loss += loss.item()
        correct += (pred.argmax(1) == y).type(torch.float).sum()
        size += len(y)
    return train_loss / len(dataloader), correct / size


def observe():
    model = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(16, 10))
    loader = [(torch.randn(4, 4, 4), torch.randint(0, 10, (4,))) for _ in range(3)]
    kept = train_epoch(loader, model, torch.nn.CrossEntropyLoss(), torch.optim.SGD(model.parameters(), lr=1e-2))
    return {"kept": list(kept)}
