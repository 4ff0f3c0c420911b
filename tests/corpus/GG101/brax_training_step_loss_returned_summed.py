# source: https://github.com/google/brax/pull/152
# label: GG101 14
# effect: graph_kept
# note: the PyTorch FAQ leak behind the PR, through a helper defined below its caller: train_step() back-propagates and returns the loss tensor, and fit() adds every step's loss into total_loss
import torch
import torch.nn.functional as F
from torch import nn


def fit(policy, optimizer, batches, epochs):
    total_loss = 0
    for _ in range(epochs):
        for observation, target_action in batches:
            total_loss = total_loss + train_step(policy, optimizer, observation, target_action)
    return total_loss / (epochs * len(batches))


def train_step(policy, optimizer, observation, target_action):
    optimizer.zero_grad()
    loss = F.huber_loss(policy(observation), target_action)
    loss.backward()
    optimizer.step()
    return loss


def observe():
    policy = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 2))
    batches = [(torch.randn(4, 8), torch.randn(4, 2)) for _ in range(3)]
    average = fit(policy, torch.optim.Adam(policy.parameters(), lr=1e-3), batches, epochs=2)
    return {"kept": average}
