# source: https://github.com/mrdbourke/pytorch-deep-learning/issues/583
# label: lookalike GG401
# effect: raises "Can't call numpy() on Tensor that requires grad"
# note: the course's train_step accumulates loss.item() (the reporter had missed the .item()), so the results dict holds floats and the NumPy summary of the loss curves converts nothing that requires grad
import numpy as np
import torch
from torch import nn


def train_step(model, dataloader, loss_fn, optimizer):
    model.train()
    train_loss, train_acc = 0, 0
    for batch, (X, y) in enumerate(dataloader):
        y_pred = model(X)
        loss = loss_fn(y_pred, y)
        train_loss += loss.item()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        y_pred_class = torch.argmax(torch.softmax(y_pred, dim=1), dim=1)
        train_acc += (y_pred_class == y).sum().item() / len(y_pred)
    train_loss = train_loss / len(dataloader)
    train_acc = train_acc / len(dataloader)
    return train_loss, train_acc


def train(model, train_dataloader, optimizer, loss_fn=nn.CrossEntropyLoss(), epochs=3):
    results = {"train_loss": [], "train_acc": []}
    for epoch in range(epochs):
        train_loss, train_acc = train_step(model=model, dataloader=train_dataloader,
                                           loss_fn=loss_fn, optimizer=optimizer)
        results["train_loss"].append(train_loss)
        results["train_acc"].append(train_acc)
    return results


def loss_curve_summary(results):
    loss = np.array(results["train_loss"])
    accuracy = np.array(results["train_acc"])
    return {"best_epoch": int(np.argmin(loss)), "final_acc": float(accuracy[-1]),
            "smoothed_loss": np.convolve(loss, np.ones(2) / 2, mode="valid")}


def observe():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Flatten(), nn.Linear(12, 3))
    loader = [(torch.randn(4, 3, 2, 2), torch.randint(0, 3, (4,))) for _ in range(2)]
    results = train(model, loader, torch.optim.SGD(model.parameters(), lr=0.1))
    return {"summary": loss_curve_summary(results)}
