# source: https://github.com/source-separation/tutorial/issues/28
# label: GG401 49
# effect: raises "Can't call numpy() on Tensor that requires grad"
# note: the training loop keeps each step's loss tensor, and the loss curve is taken with np.log10 of that list: NumPy converts tensors that still require grad and raises ("We need to detach a tensor")
import numpy as np
import torch
import torch.nn as nn

LEARNING_RATES = [1e-4, 1e-3, 1e-2]


class MaskInference(nn.Module):
    def __init__(self, num_features=8, hidden_size=16):
        super().__init__()
        self.recurrent_stack = nn.GRU(num_features, hidden_size, batch_first=True)
        self.embedding = nn.Linear(hidden_size, num_features)

    def forward(self, mix_magnitude):
        data, _ = self.recurrent_stack(torch.log1p(mix_magnitude))
        mask = torch.sigmoid(self.embedding(data))
        return mask * mix_magnitude


def train_with_lr(data, lr, n_iter):
    model = MaskInference()
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    grad_norms, losses = [], []
    for _ in range(n_iter):
        for mix, source in data:
            estimate = model(mix)
            loss = nn.functional.l1_loss(estimate, source)
            optimizer.zero_grad()
            loss.backward()
            grad_norm = sum(p.grad.norm(2).item() ** 2 for p in model.parameters()) ** 0.5
            grad_norms.append(grad_norm)
            losses.append(loss)
            optimizer.step()
    return grad_norms, losses


def signs_of_healthy_training(data, n_iter=2):
    grad_norms, losses = [], []
    for lr in LEARNING_RATES:
        g, l = train_with_lr(data, lr, n_iter)
        grad_norms.append(g)
        losses.append(l)
    curves = {}
    for j, lr in enumerate(LEARNING_RATES):
        curves[lr] = {"grad_norm": np.array(grad_norms[j]), "log_loss": np.log10(losses[j])}
    return curves


def observe():
    torch.manual_seed(0)
    mix = torch.rand(2, 5, 8)
    data = [(mix, mix * torch.rand(2, 5, 8))]
    return {"curves": signs_of_healthy_training(data)}
