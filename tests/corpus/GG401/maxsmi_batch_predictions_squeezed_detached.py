# source: https://github.com/volkamerlab/maxsmi/pull/26
# label: lookalike GG401
# effect: raises "Can't call numpy() on Tensor that requires grad"
# note: the model comes in as a parameter and its output is squeezed before the metrics; each training batch's predictions leave torch through .cpu().detach().numpy() for scikit-learn style metrics
import numpy as np
import torch
import torch.nn as nn


def r2_score(y_true, y_pred):
    ss_res = np.sum((y_true - y_pred) ** 2)
    ss_tot = np.sum((y_true - y_true.mean()) ** 2)
    return 1 - ss_res / ss_tot


def model_training(data_loader, ml_model, loss_function, optimizer, nb_epochs=2):
    epoch_metrics = []
    for epoch in range(nb_epochs):
        y_true, y_pred = [], []
        for smiles_features, target in data_loader:
            optimizer.zero_grad()
            output_pred = ml_model(smiles_features).squeeze(-1)
            loss = loss_function(output_pred, target)
            loss.backward()
            optimizer.step()
            y_true.append(target.cpu().numpy())
            y_pred.append(output_pred.cpu().detach().numpy())
        epoch_metrics.append(r2_score(np.concatenate(y_true), np.concatenate(y_pred)))
    return epoch_metrics


def observe():
    model = nn.Sequential(nn.Linear(10, 8), nn.ReLU(), nn.Linear(8, 1))
    loader = [(torch.randn(4, 10), torch.randn(4)) for _ in range(3)]
    model_training(loader, model, nn.MSELoss(), torch.optim.Adam(model.parameters(), lr=1e-3))
    return {}
