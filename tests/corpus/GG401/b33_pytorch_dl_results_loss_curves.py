# source: https://github.com/mrdbourke/pytorch-deep-learning/issues/583
# label: GG401 49
# effect: raises "Can't call numpy() on Tensor that requires grad"
# note: train_step() sums the loss tensors without .item(), so results["train_loss"] holds tensors that require grad; converting the curves for plotting raises (the issue: plot_loss_curves() fails, fixed by .item() in the train step)
import numpy as np
import torch
import torch.nn as nn


def train_step(model, dataloader, loss_fn, optimizer):
    model.train()
    train_loss, train_acc = 0, 0
    for X, y in dataloader:
        y_pred = model(X)
        loss = loss_fn(y_pred, y)
        train_loss += loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        y_pred_class = torch.argmax(torch.softmax(y_pred, dim=1), dim=1)
        train_acc += (y_pred_class == y).sum().item() / len(y_pred)
    return train_loss / len(dataloader), train_acc / len(dataloader)


def test_step(model, dataloader, loss_fn):
    model.eval()
    test_loss, test_acc = 0, 0
    with torch.inference_mode():
        for X, y in dataloader:
            test_pred_logits = model(X)
            test_loss += loss_fn(test_pred_logits, y).item()
            test_acc += (test_pred_logits.argmax(dim=1) == y).sum().item() / len(test_pred_logits)
    return test_loss / len(dataloader), test_acc / len(dataloader)


def train(model, train_dataloader, test_dataloader, optimizer, loss_fn=nn.CrossEntropyLoss(), epochs=5):
    results = {"train_loss": [], "train_acc": [], "test_loss": [], "test_acc": []}
    for _epoch in range(epochs):
        train_loss, train_acc = train_step(model, train_dataloader, loss_fn, optimizer)
        test_loss, test_acc = test_step(model, test_dataloader, loss_fn)
        results["train_loss"].append(train_loss)
        results["train_acc"].append(train_acc)
        results["test_loss"].append(test_loss)
        results["test_acc"].append(test_acc)
    return results


def plot_loss_curves(results):
    loss = np.array(results["train_loss"])
    test_loss = np.array(results["test_loss"])
    epochs = np.arange(len(loss))
    return {"epochs": epochs, "train_loss": loss, "test_loss": test_loss, "best_epoch": int(np.argmin(test_loss))}


def observe():
    model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))
    data = [(torch.randn(4, 6), torch.randint(0, 3, (4,))) for _ in range(2)]
    results = train(model, data, data, torch.optim.SGD(model.parameters(), lr=0.1), epochs=2)
    plot_loss_curves(results)
    return {}
