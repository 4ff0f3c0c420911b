# source: https://machinelearningmastery.com/understand-model-behavior-during-training-by-visualizing-metrics/
# label: GG103 26
# effect: graph_built
# note: after each epoch's mini-batch loop the function scores the whole training and test sets for the history plot; those two forwards run with grad on and only `float(...)` of them is kept
import numpy as np
import torch
from torch import nn


def fit_with_history(regressor, X_train, y_train, X_test, y_test, n_epochs=3, batch_size=4):
    loss_fn = nn.MSELoss()
    optimizer = torch.optim.Adam(regressor.parameters(), lr=0.001)
    history = {"train_mse": [], "test_mse": []}
    batch_start = torch.arange(0, len(X_train), batch_size)
    for epoch in range(n_epochs):
        regressor.train()
        for start in batch_start:
            X_batch = X_train[start:start + batch_size]
            y_batch = y_train[start:start + batch_size]
            y_pred = regressor(X_batch)
            loss = loss_fn(y_pred, y_batch)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        regressor.eval()
        y_pred = regressor(X_train)
        history["train_mse"].append(float(loss_fn(y_pred, y_train)))
        y_pred = regressor(X_test)
        history["test_mse"].append(float(loss_fn(y_pred, y_test)))
    return {k: np.array(v) for k, v in history.items()}


def observe():
    from corpus.oracle import hook_outputs

    regressor = nn.Sequential(nn.Linear(8, 12), nn.ReLU(), nn.Linear(12, 1))
    X_train, y_train = torch.randn(10, 8), torch.randn(10, 1)
    X_test, y_test = torch.randn(6, 8), torch.randn(6, 1)
    built = hook_outputs(regressor, where=lambda inputs: inputs[0].shape[0] == 10)
    fit_with_history(regressor, X_train, y_train, X_test, y_test)
    return {"built": built}
