# source: https://github.com/pytorch/examples/blob/main/reinforcement_learning/reinforce.py
# label: lookalike GG103
# effect: no_grad_arrived
# note: select_action() runs the policy with grad on and returns action.item(), but it keeps m.log_prob(action) in policy.saved_log_probs, which finish_episode() back-propagates
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical

eps = np.finfo(np.float32).eps.item()


class Policy(nn.Module):
    def __init__(self):
        super(Policy, self).__init__()
        self.affine1 = nn.Linear(4, 16)
        self.dropout = nn.Dropout(p=0.6)
        self.affine2 = nn.Linear(16, 2)
        self.saved_log_probs = []
        self.rewards = []

    def forward(self, x):
        x = self.affine1(x)
        x = self.dropout(x)
        x = F.relu(x)
        action_scores = self.affine2(x)
        return F.softmax(action_scores, dim=1)


def select_action(policy, state):
    state = torch.from_numpy(state).float().unsqueeze(0)
    probs = policy(state)
    m = Categorical(probs)
    action = m.sample()
    policy.saved_log_probs.append(m.log_prob(action))
    return action.item()


def finish_episode(policy, optimizer, gamma=0.99):
    R = 0
    policy_loss = []
    returns = []
    for r in policy.rewards[::-1]:
        R = r + gamma * R
        returns.insert(0, R)
    returns = torch.tensor(returns)
    returns = (returns - returns.mean()) / (returns.std() + eps)
    for log_prob, R in zip(policy.saved_log_probs, returns):
        policy_loss.append(-log_prob * R)
    optimizer.zero_grad()
    policy_loss = torch.cat(policy_loss).sum()
    policy_loss.backward()
    optimizer.step()
    del policy.rewards[:]
    del policy.saved_log_probs[:]


def observe():
    from corpus.oracle import grad_arrivals

    policy = Policy()
    optimizer = torch.optim.Adam(policy.parameters(), lr=1e-2)
    arrived = grad_arrivals([policy.affine1.weight])
    rng = np.random.RandomState(0)
    for t in range(5):
        select_action(policy, rng.randn(4))
        policy.rewards.append(float(t % 2))
    finish_episode(policy, optimizer)
    return {"arrived": arrived}
