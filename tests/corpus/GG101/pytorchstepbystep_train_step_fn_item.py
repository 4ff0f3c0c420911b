# source: https://github.com/dvgodoy/PyTorchStepByStep/blob/1bef4140dc07e6e1ac4a479264ea89b6a0a0c98e/model_training/v2.py
# label: lookalike GG101
# effect: graph_kept
# note: the step function is built by a factory and passed in as a parameter; it returns loss.item(), so the mini-batch losses kept across the epoch are Python floats
import numpy as np
import torch
import torch.nn as nn


def make_train_step_fn(model, loss_fn, optimizer):
    def perform_train_step_fn(x, y):
        model.train()
        yhat = model(x)
        loss = loss_fn(yhat, y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        return loss.item()
    return perform_train_step_fn


def mini_batch(data_loader, step_fn):
    mini_batch_losses = []
    for x_batch, y_batch in data_loader:
        mini_batch_loss = step_fn(x_batch, y_batch)
        mini_batch_losses.append(mini_batch_loss)
    return np.mean(mini_batch_losses)


def train(model, train_loader, n_epochs=3, lr=0.1):
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    train_step_fn = make_train_step_fn(model, nn.MSELoss(reduction='mean'), optimizer)
    losses = []
    for epoch in range(n_epochs):
        loss = mini_batch(train_loader, train_step_fn)
        losses.append(loss)
    return losses


def observe():
    model = nn.Sequential(nn.Linear(1, 1))
    loader = [(torch.randn(4, 1), torch.randn(4, 1)) for _ in range(3)]
    return {"kept": train(model, loader)}
